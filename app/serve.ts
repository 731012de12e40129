// `folio serve`: open the ledger in the data directory, serve the API, and shut down cleanly on
// SIGTERM/SIGINT (stop accepting, let in-flight requests finish, make the log durable, exit 0). With
// follow_data_dir it opens as a follower of that ledger's log, to be promoted by a control plane.

import path from 'node:path';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { createApp } from '../http/app.js';
import { createHttpServer } from './http-server.js';
import { REDACTED_LOG_PATHS } from '../http/log-redaction.js';
import { isLoopback } from '../http/loopback-host.js';
import { Metrics } from '../http/metrics.js';
import { notificationTarget, tokenizationKey, type FolioConfig } from './config.js';
import type { BackupPort } from '../http/routes/backup-routes.js';
import { CutoverControl } from './cutover-control.js';
import { LedgerRuntime } from './ledger-runtime.js';
import { LogFollower } from './log-follower.js';
import { snapshotAdmin } from './snapshot-admin.js';
import { FOLIO_VERSION } from './version.js';

/** How long shutdown waits for in-flight requests before closing their connections. */
const SHUTDOWN_GRACE_MS = 10_000;

/** The warning for a server anyone on the network can reach and that asks for no key, if it is one. */
export function exposureWarning(host: string, secretKey: string): string | undefined {
  if (isLoopback(host) || secretKey !== '') return undefined;
  return `listening on ${host}, beyond loopback, with no secret key: anyone who can reach this address can move money; set server.secret_key (FOLIO_SECRET_KEY)`;
}

/** Copies a data directory while the server runs (ops/backup.ts, handed in by bin/: app/ does not import ops/). */
export type BackupCopier = (dataDir: string, outDir: string) => Promise<{ outDir: string; logEndSeq: number }>;

/** POST /backup: each backup in a new directory under backup.dir, named by its time. */
function backupPort(config: FolioConfig, copy: BackupCopier | undefined): BackupPort {
  const dir = config.backup.dir === '' || !copy ? undefined : config.backup.dir;
  return {
    dir,
    run: async () => {
      const outDir = path.join(dir as string, `backup_${new Date().toISOString().replace(/[:.]/g, '-')}`);
      const report = await (copy as BackupCopier)(config.data_dir, outDir);
      return { out_dir: report.outDir, log_end_seq: report.logEndSeq };
    },
  };
}

export async function serve(config: FolioConfig, backupCopier?: BackupCopier): Promise<void> {
  const destination = pino.destination({ dest: 2, sync: false });
  const logger = pino({ level: config.log_level, base: { service: 'folio' }, redact: REDACTED_LOG_PATHS }, destination);
  const fatal = (error: Error): void => {
    logger.fatal({ err: error }, 'write-ahead log failed; stopping so the log can be replayed');
    logger.flush();
    process.exit(70);
  };
  let runtime: LedgerRuntime;
  try {
    runtime = await LedgerRuntime.open({
      dataDir: config.data_dir, onFatal: fatal, snapshots: config.snapshots, logger,
      hookTargets: { allowPrivateNetworks: config.hooks.allow_private_networks },
      notifications: notificationTarget(config),
      onIndexError: (error) => logger.error({ err: error }, 'query index projection failed; retrying'),
      follower: config.follow_data_dir !== '',
      settings: { queued_checks: config.transaction.enable_queued_checks },
    });
  } catch (error) {
    // What start-up logged (snapshots skipped on the way) must reach the operator before the exit.
    destination.flushSync();
    throw error;
  }
  logger.info({ ...runtime.startup, seq: runtime.log.appendedSeq }, 'ledger ready');
  const cutover = config.follow_data_dir === ''
    ? CutoverControl.forLeader(runtime)
    : CutoverControl.forFollower(runtime, LogFollower.start(runtime, config.follow_data_dir), config.follow_data_dir);
  const metrics = new Metrics({
    queuedTransactions: () => runtime.view.queuedCount(),
    lookupBacklog: () => runtime.store.backlog,
    unflushedEvents: () => runtime.log.unflushedEvents,
  });
  runtime.onCommit((stats) => metrics.observeWalCommit(stats.events, stats.milliseconds));
  const app = createApp({
    core: runtime, logger, metrics, version: FOLIO_VERSION,
    snapshots: snapshotAdmin(runtime, config.data_dir), secretKey: config.server.secret_key, listenHost: config.server.host, cutover,
    tokenizationKey: tokenizationKey(config), backup: backupPort(config, backupCopier),
  });
  if (config.notifications.webhook_url !== '' && config.notifications.webhook_secret === '') {
    logger.warn('notifications.webhook_url is set without notifications.webhook_secret: notifications go out unsigned');
  }
  const warning = exposureWarning(config.server.host, config.server.secret_key);
  if (warning) logger.warn({ host: config.server.host }, warning);
  const server = createHttpServer(app, config.server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.server.port, config.server.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  process.stdout.write(`listening on http://${address.address}:${address.port}\n`);

  let stopping = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    app.beginShutdown();
    const forced = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    clearTimeout(forced);
    await cutover.close();
    await runtime.close();
    logger.info('stopped');
    logger.flush();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  if (config.stop_on_stdin_end) {
    process.stdin.on('end', () => void shutdown('stdin ended'));
    process.stdin.on('error', () => void shutdown('stdin failed'));
    process.stdin.resume();
  }
}
