// A core's environment (cloud/core-process.ts) is built from an allow-list: from a control plane's
// environment full of settings and secrets, only what a process needs to run on the machine passes, and
// the FOLIO_* settings are the ones the control plane sets for that core. (The real cores' environments
// are read from /proc in test/cloud-proxy-safety.int.test.ts; here the function is checked alone, with
// no test harness adding variables of its own to the child.)

import t from 'tap';
import { childEnvironment, type CoreLaunch } from '../cloud/core-process.js';
import { MALLOC_SETTING } from '../threads/node-flags.js';

const LAUNCH: CoreLaunch = {
  dataDir: '/data/instances/ins_1', secretKey: 'core-master-key-0123456789-0123456789', tokenizationSecret: 'cd'.repeat(32),
  hooksAllowPrivateNetworks: false, logLevel: 'warn',
};

const OPERATOR: NodeJS.ProcessEnv = {
  PATH: '/usr/bin:/bin', HOME: '/root', TZ: 'UTC', LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', TMPDIR: '/tmp', NODE_EXTRA_CA_CERTS: '/etc/ca.pem',
  NODE_OPTIONS: '--require /operator/hook.js', NODE_ENV: 'production', NODE_V8_COVERAGE: '/tmp/coverage',
  FOLIO_CLOUD_API_KEY: 'cloud-key', FOLIO_CLOUD_DATA_DIR: '/cloud', FOLIO_SECRET_KEY: 'operator master key', FOLIO_WEBHOOK_URL: 'https://operator.example/hook',
  FOLIO_WEBHOOK_SECRET: 'operator webhook secret', FOLIO_TOKENIZATION_SECRET: 'ab'.repeat(32), FOLIO_BACKUP_DIR: '/backups',
  FOLIO_HOOKS_ALLOW_PRIVATE_NETWORKS: 'true', FOLIO_SNAPSHOT_EVERY_EVENTS: '3', FOLIO_FOLLOW_DATA_DIR: '/elsewhere', FOLIO_PORT: '5001',
  AWS_SECRET_ACCESS_KEY: 'operator cloud credentials', DATABASE_URL: 'postgres://operator@db/prod',
};

t.test('only the machine\'s basics and the core\'s own settings pass', async (t) => {
  const env = childEnvironment(LAUNCH, OPERATOR);
  t.same(env, {
    PATH: '/usr/bin:/bin', HOME: '/root', TZ: 'UTC', LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', TMPDIR: '/tmp', NODE_EXTRA_CA_CERTS: '/etc/ca.pem',
    FOLIO_HOST: '127.0.0.1', FOLIO_PORT: '0', FOLIO_DATA_DIR: '/data/instances/ins_1', FOLIO_SECRET_KEY: 'core-master-key-0123456789-0123456789',
    FOLIO_TOKENIZATION_SECRET: 'cd'.repeat(32), FOLIO_HOOKS_ALLOW_PRIVATE_NETWORKS: 'false', FOLIO_LOG_LEVEL: 'warn', FOLIO_STOP_ON_STDIN_END: '1',
    GLIBC_TUNABLES: MALLOC_SETTING,
  });
});

t.test('a follower is told whom to follow; the control plane\'s setting for private hook targets is passed as set', async (t) => {
  const env = childEnvironment({ ...LAUNCH, followDataDir: '/data/instances/ins_0', hooksAllowPrivateNetworks: true }, OPERATOR);
  t.equal(env.FOLIO_FOLLOW_DATA_DIR, '/data/instances/ins_0');
  t.equal(env.FOLIO_HOOKS_ALLOW_PRIVATE_NETWORKS, 'true');
});
