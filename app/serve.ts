// `folio serve`: open the ledger in the data directory, serve the API, and shut down cleanly on
// SIGTERM/SIGINT (stop accepting, let in-flight requests finish, make the log durable, exit 0). With
// follow_data_dir it opens as a follower of that ledger's log, to be promoted by a control plane. With
// replication.postgres_url it joins a replicated group instead (replicated-serve.ts, loaded only then,
// with the PostgreSQL client it needs). HTTP runs on server.workers threads around the engine on this
// one (http-workers.ts); with 0, on this thread (docs/decisions-threads.md).

import type http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { createApp, type AppOptions, type FolioApp } from '../http/app.js';
import { closeServer, createHttpServer } from './http-server.js';
import { REDACTED_LOG_PATHS } from '../http/log-redaction.js';
import { isLoopback } from '../http/loopback-host.js';
import { Metrics } from '../http/metrics.js';
import { notificationTarget, tokenizationKey, type FolioConfig } from './config.js';
import type { BackupPort } from '../http/routes/backup-routes.js';
import type { ReplicationInspector } from '../http/replication-port.js';
import { CutoverControl } from './cutover-control.js';
import { LedgerRuntime, type RuntimeOptions } from './ledger-runtime.js';
import { LogFollower } from './log-follower.js';
import { nodeInspector } from './node-inspector.js';
import { ChangeFeed } from './change-feed.js';
import { EngineHost } from './engine-host.js';
import { HttpWorkers } from './http-workers.js';
import { snapshotAdmin } from './snapshot-admin.js';
import { FOLIO_VERSION } from './version.js';
import { HistoryProgress } from '../index/history-progress.js';
import { historyDirIn } from '../index/history-store.js';

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

/** What serving needs beside the configuration, the same for a single node and a replicated one. */
export interface ServeParts {
  logger: pino.Logger;
  destination: pino.DestinationStream & { flushSync(): void };
  /** The options every runtime of this process opens with. */
  runtimeOptions: RuntimeOptions;
  /** A new app over `runtime`, with its own metrics. */
  makeApp(runtime: LedgerRuntime, extra: Pick<AppOptions, 'replication' | 'inspector' | 'cutover'>): FolioApp;
  /** POST /backup's port. */
  backup: BackupPort;
  /** Ends the process: the log failed, or an HTTP worker did. */
  fatal(error: Error): void;
}

export async function serve(config: FolioConfig, backupCopier?: BackupCopier): Promise<void> {
  const destination = pino.destination({ dest: 2, sync: false });
  const logger = pino({ level: config.log_level, base: { service: 'folio' }, redact: REDACTED_LOG_PATHS }, destination);
  const fatal = (error: Error): void => {
    logger.fatal({ err: error }, 'write-ahead log failed; stopping so the log can be replayed');
    logger.flush();
    process.exit(70);
  };
  const parts: ServeParts = {
    logger,
    destination,
    runtimeOptions: {
      dataDir: config.data_dir, onFatal: fatal, snapshots: config.snapshots, logger,
      hookTargets: { allowPrivateNetworks: config.hooks.allow_private_networks },
      notifications: notificationTarget(config),
      onIndexError: (error) => logger.error({ err: error }, 'query index projection failed; retrying'),
      settings: { queued_checks: config.transaction.enable_queued_checks },
      indexOptions: { writeHold: { lag_ms_max: config.index.lag_ms_max, wait_ms_max: config.index.write_wait_ms_max } },
      // One for the process: the HTTP workers read the balance history's progress from it (and a
      // replicated node keeps it across the ledgers it serves).
      historyProgress: new HistoryProgress().buffer,
      hookSealKey: config.hooks.seal_key === '' ? undefined : Buffer.from(config.hooks.seal_key, 'hex'),
    },
    makeApp: (runtime, extra) => makeApp(config, backupCopier, runtime, logger, extra),
    backup: backupPort(config, backupCopier),
    fatal,
  };
  if (config.replication.postgres_url !== '') {
    const { serveReplicated } = await import('./replicated-serve.js');
    await serveReplicated(config, parts);
    return;
  }
  let runtime: LedgerRuntime;
  try {
    runtime = await LedgerRuntime.open({ ...parts.runtimeOptions, follower: config.follow_data_dir !== '' });
  } catch (error) {
    // What start-up logged (snapshots skipped on the way) must reach the operator before the exit.
    destination.flushSync();
    throw error;
  }
  logger.info({ ...runtime.startup, seq: runtime.log.appendedSeq }, 'ledger ready');
  const cutover = config.follow_data_dir === ''
    ? CutoverControl.forLeader(runtime)
    : CutoverControl.forFollower(runtime, LogFollower.start(runtime, config.follow_data_dir), config.follow_data_dir);
  const inspector = nodeInspector(() => ({ runtime, status: () => ({ role: 'single', term: 0, applied_seq: runtime.visibleSeq() }) }));
  warnAboutSettings(config, logger);
  if (config.server.workers > 0) {
    await serveOnWorkers(config, parts, runtime, cutover, inspector);
    return;
  }
  const app = parts.makeApp(runtime, { cutover, inspector });
  const server = createHttpServer(app, config.server);
  await listen(server, config);
  onShutdownSignals(config, logger, async () => {
    app.beginShutdown();
    await closeServer(server);
    await cutover.close();
    await runtime.close();
  });
}

/**
 * HTTP on server.workers threads (http-workers.ts), the engine on this one: the same app and ports as
 * makeApp's, reached through the engine host.
 */
async function serveOnWorkers(
  config: FolioConfig, parts: ServeParts, runtime: LedgerRuntime, cutover: CutoverControl, inspector: ReplicationInspector,
): Promise<void> {
  const engine = new EngineHost({
    runtime, logger: parts.logger, cutover, backup: parts.backup, inspector, snapshots: snapshotAdmin(runtime, config.data_dir), feed: new ChangeFeed(runtime.log),
  });
  const workers = await startHttpWorkers(config, parts, engine, { index: runtime.query !== undefined, cutover: true, replication: false });
  onShutdownSignals(config, parts.logger, async () => {
    await workers.close();
    engine.close();
    await cutover.close();
    await runtime.close();
  });
}

/** Starts server.workers HTTP workers around `engine` and prints the address they listen on. */
export async function startHttpWorkers(
  config: FolioConfig, parts: ServeParts, engine: EngineHost, options: { index: boolean; cutover: boolean; replication: boolean },
): Promise<HttpWorkers> {
  const key = tokenizationKey(config);
  const workers = await HttpWorkers.start({
    count: config.server.workers,
    host: config.server.host,
    port: config.server.port,
    engine,
    onFailure: parts.fatal,
    settings: {
      version: FOLIO_VERSION, logLevel: config.log_level, secretKey: config.server.secret_key,
      tokenizationKey: key ? new Uint8Array(key) : undefined,
      hookTargets: { allowPrivateNetworks: config.hooks.allow_private_networks },
      snapshots: true, backupDir: parts.backup.dir, feed: true, inspector: true, ...options,
      history: options.index && parts.runtimeOptions.historyProgress ? { dir: historyDirIn(config.data_dir), progress: parts.runtimeOptions.historyProgress } : undefined,
      limits: { headers_timeout_ms: config.server.headers_timeout_ms, request_timeout_ms: config.server.request_timeout_ms, connections_max: config.server.connections_max },
    },
  });
  process.stdout.write(`listening on http://${workers.address.address}:${workers.address.port}\n`);
  return workers;
}

function makeApp(
  config: FolioConfig, backupCopier: BackupCopier | undefined, runtime: LedgerRuntime, logger: pino.Logger,
  extra: Pick<AppOptions, 'replication' | 'inspector' | 'cutover'>,
): FolioApp {
  const metrics = new Metrics({
    queuedTransactions: () => runtime.view.queuedCount(),
    lookupBacklog: () => runtime.store.backlog,
    unflushedEvents: () => runtime.log.unflushedEvents,
  });
  runtime.onCommit((stats) => metrics.observeWalCommit(stats.events, stats.milliseconds));
  return createApp({
    core: runtime, logger, metrics, version: FOLIO_VERSION,
    snapshots: snapshotAdmin(runtime, config.data_dir), secretKey: config.server.secret_key, listenHost: config.server.host,
    tokenizationKey: tokenizationKey(config), backup: backupPort(config, backupCopier), feed: new ChangeFeed(runtime.log), ...extra,
  });
}

export function warnAboutSettings(config: FolioConfig, logger: pino.Logger): void {
  if (config.notifications.webhook_url !== '' && config.notifications.webhook_secret === '') {
    logger.warn('notifications.webhook_url is set without notifications.webhook_secret: notifications go out unsigned');
  }
  const warning = exposureWarning(config.server.host, config.server.secret_key);
  if (warning) logger.warn({ host: config.server.host }, warning);
}

/** Listens where the configuration says and prints the address (tests and control planes read it). */
export async function listen(server: http.Server, config: FolioConfig): Promise<AddressInfo> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.server.port, config.server.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  process.stdout.write(`listening on http://${address.address}:${address.port}\n`);
  return address;
}

/** On SIGTERM, SIGINT (or standard input ending, when asked): `stop`, then exit 0. */
export function onShutdownSignals(config: FolioConfig, logger: pino.Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    await stop();
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
