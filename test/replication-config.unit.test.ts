// The replication settings as loadConfig reads them: off unless a PostgreSQL URL is given; a URL that is
// not one is refused without echoing it (it holds a password); node names, advertised addresses, lease
// lengths and the hook sealing key are checked; a replicated node cannot also follow a data directory.

import t from 'tap';
import { ConfigError, loadConfig } from '../server/config.js';
import { replicationSettings } from '../replication/replication-settings.js';
import { usableLeaseMs } from '../replication/lease-rules.js';

const URL = 'postgres://folio:s3cret@127.0.0.1:5432/postgres';
const load = (env: Record<string, string>) => loadConfig(undefined, { FOLIO_DATA_DIR: '/tmp/x', ...env });

t.test('replication is off by default', async (t) => {
  const config = load({});
  t.equal(config.replication.postgres_url, '');
  t.equal(config.hooks.seal_key, '');
});

t.test('a replicated node is named and placed', async (t) => {
  const config = load({ FOLIO_REPLICATION_URL: URL, FOLIO_NODE_NAME: 'node-a', FOLIO_ADVERTISE_URL: 'http://10.0.0.5:5001/', FOLIO_REPLICATION_LEASE_MS: '3000' });
  t.same(config.replication, { postgres_url: URL, node_name: 'node-a', advertise_url: 'http://10.0.0.5:5001', lease_ms: 3000 });
  t.match(load({ FOLIO_REPLICATION_URL: URL }).replication.node_name, /^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'named by the host when no name is given');
  const settings = replicationSettings(config.replication);
  t.ok(settings.timings.renew_every_ms * 2 <= usableLeaseMs(settings.timings), 'renewals fit the usable lease twice');
  t.ok(settings.lease_connection.query_timeout_ms < usableLeaseMs(settings.timings), 'a lease query gives up within the lease');
});

t.test('bad replication settings are refused, and the URL is never echoed', async (t) => {
  const refusals: Array<[Record<string, string>, RegExp]> = [
    [{ FOLIO_REPLICATION_URL: 'mysql://folio:s3cret@db/x' }, /must be a postgres:\/\/ or postgresql:\/\/ URL/],
    [{ FOLIO_REPLICATION_URL: URL, FOLIO_NODE_NAME: 'a b' }, /node_name/],
    [{ FOLIO_REPLICATION_URL: URL, FOLIO_NODE_NAME: 'x'.repeat(64) }, /node_name/],
    [{ FOLIO_REPLICATION_URL: URL, FOLIO_ADVERTISE_URL: 'ftp://a' }, /advertise_url/],
    [{ FOLIO_REPLICATION_URL: URL, FOLIO_ADVERTISE_URL: 'http://user:pw@a:1' }, /advertise_url/],
    [{ FOLIO_REPLICATION_URL: URL, FOLIO_ADVERTISE_URL: 'http://a:1/path' }, /advertise_url/],
    [{ FOLIO_REPLICATION_URL: URL, FOLIO_REPLICATION_LEASE_MS: '10' }, /LEASE_MS/],
    [{ FOLIO_REPLICATION_URL: URL, FOLIO_REPLICATION_LEASE_MS: '600000' }, /lease_ms/],
    [{ FOLIO_REPLICATION_URL: URL, FOLIO_FOLLOW_DATA_DIR: '/tmp/y' }, /does not follow/],
    [{ FOLIO_HOOK_SEAL_KEY: 'abc' }, /64 hex digits/],
  ];
  for (const [env, message] of refusals) {
    const error = (() => {
      try {
        load(env);
        return undefined;
      } catch (caught) {
        return caught as Error;
      }
    })();
    t.ok(error instanceof ConfigError, `${JSON.stringify(env)} is refused`);
    t.match(error?.message, message);
    t.notMatch(error?.message ?? '', /s3cret/, 'without the password');
  }
});
