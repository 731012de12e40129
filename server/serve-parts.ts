// What `folio serve` needs beside its configuration, the same for a single node (serve.ts) and a node of
// a replicated group (replicated-serve.ts): the logger, the options every ledger of the process opens
// with, the options of its HTTP (ledger-http.ts), POST /backup, the warnings at start-up, and the
// shutdown on SIGTERM/SIGINT.

import path from 'node:path';
import pino from 'pino';
import { REDACTED_LOG_PATHS } from '../http/log-redaction.js';
import { isLoopback } from '../http/middleware/loopback-host.js';
import type { BackupPort } from '../http/routes/backup-routes.js';
import { AddressConnections } from '../http/server/address-connections.js';
import { HistoryProgress } from '../index/history-progress.js';
import { historyDirIn } from '../index/history-store.js';
import type { RuntimeOptions } from '../runtime/ledger-runtime.js';
import { testClockFile } from '../runtime/system-clock.js';
import { exitWithin } from '../threads/exit-watchdog.js';
import { injectedDiskFull, testDiskFullFile } from '../wal/injected-disk-full.js';
import { notificationTarget, rateLimitSettings, tokenizationKey, type FolioConfig } from './config.js';
import type { LedgerHttpOptions } from './ledger-http.js';
import { FOLIO_VERSION } from './version.js';

/** Copies a data directory while the server runs (ops/backup.ts, handed in by bin/: server/ does not import ops/). */
export type BackupCopier = (dataDir: string, outDir: string) => Promise<{ outDir: string; logEndSeq: number }>;

export interface ServeParts {
  logger: pino.Logger;
  destination: pino.DestinationStream & { flushSync(): void };
  /** The options every ledger of this process opens with. */
  runtimeOptions: RuntimeOptions;
  /** The options of its HTTP, but for `replication` (whether the node belongs to a group). */
  http: Omit<LedgerHttpOptions, 'replication'>;
}

export function serveParts(config: FolioConfig, backupCopier?: BackupCopier): ServeParts {
  const destination = pino.destination({ dest: 2, sync: false });
  const logger = pino({ level: config.log_level, base: { service: 'folio' }, redact: REDACTED_LOG_PATHS }, destination);
  // A failure the process cannot go on from stops it with the exit status a supervisor restarts on (70),
  // within a bound (a thread stuck in a native call would hold the exit forever); the next start replays
  // the log, and catches the lookups up from it, as after a crash.
  const stopOn = (message: string) => (error: Error): void => {
    logger.fatal({ err: error }, message);
    logger.flush();
    exitWithin(70);
  };
  // One for the process: the HTTP workers read the balance history's progress from it, and a replicated
  // node keeps it across the ledgers it serves.
  const historyProgress = new HistoryProgress().buffer;
  return {
    logger,
    destination,
    runtimeOptions: {
      dataDir: config.data_dir, snapshots: config.snapshots, logger,
      onFatal: stopOn('write-ahead log failed; stopping so the log can be replayed'),
      onLookupsFailed: stopOn('transaction lookups could not be written; stopping so they can be caught up from the log'),
      hookTargets: { allowPrivateNetworks: config.hooks.allow_private_networks },
      notifications: notificationTarget(config),
      onIndexError: (error) => logger.error({ err: error }, 'query index projection failed; retrying'),
      settings: { queued_checks: config.transaction.enable_queued_checks },
      indexOptions: { writeHold: { lag_ms_max: config.index.lag_ms_max, wait_ms_max: config.index.write_wait_ms_max } },
      historyProgress,
      logWriteFault: injectedDiskFull(),
      hookSealKey: config.hooks.seal_key === '' ? undefined : Buffer.from(config.hooks.seal_key, 'hex'),
    },
    http: {
      host: config.server.host,
      port: config.server.port,
      workers: config.server.workers,
      limits: {
        headers_timeout_ms: config.server.headers_timeout_ms, request_timeout_ms: config.server.request_timeout_ms,
        connections_max: config.server.connections_max, connections_per_address_max: config.server.connections_per_address_max,
      },
      bodyBytesInFlightMax: config.server.body_bytes_in_flight_max,
      version: FOLIO_VERSION,
      logger,
      logLevel: config.log_level,
      secretKey: config.server.secret_key,
      rateLimits: rateLimitSettings(config.rate_limits),
      tokenizationKey: tokenizationKey(config),
      hookTargets: { allowPrivateNetworks: config.hooks.allow_private_networks },
      backup: backupPort(config, backupCopier),
      dataDir: config.data_dir,
      snapshots: true,
      index: true,
      history: { dir: historyDirIn(config.data_dir), progress: historyProgress },
      addresses: AddressConnections.create(config.server.connections_max),
      // Workers failed past their restart budget: something fails every time, and the process stops.
      onWorkersFailed: stopOn('HTTP workers keep failing; stopping'),
    },
  };
}

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

/** The warning for a server anyone on the network can reach and that asks for no key, if it is one. */
export function exposureWarning(host: string, secretKey: string): string | undefined {
  if (isLoopback(host) || secretKey !== '') return undefined;
  return `listening on ${host}, beyond loopback, with no secret key: anyone who can reach this address can move money; set server.secret_key (FOLIO_SECRET_KEY)`;
}

export function warnAboutSettings(config: FolioConfig, logger: pino.Logger): void {
  if (config.notifications.webhook_url !== '' && config.notifications.webhook_secret === '') {
    logger.warn('notifications.webhook_url is set without notifications.webhook_secret: notifications go out unsigned');
  }
  const warning = exposureWarning(config.server.host, config.server.secret_key);
  if (warning) logger.warn({ host: config.server.host }, warning);
  const clockFile = testClockFile();
  if (clockFile !== undefined) logger.warn({ file: clockFile }, 'test hooks on (FOLIO_TEST_HOOKS=1): this process reads its clocks through a skew file; never run so in production');
  const diskFullFile = testDiskFullFile();
  if (diskFullFile !== undefined) logger.warn({ file: diskFullFile }, 'test hooks on (FOLIO_TEST_HOOKS=1): this process fails its log\'s writes while a file exists; never run so in production');
}

/** Says where the server listens (tests and control planes read the line). */
export function printListening(address: { address: string; port: number }): void {
  process.stdout.write(`listening on http://${address.address}:${address.port}\n`);
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
