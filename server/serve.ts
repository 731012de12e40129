// `folio serve`: open the ledger in the data directory, serve the API, and shut down cleanly on
// SIGTERM/SIGINT (stop accepting, let in-flight requests finish, make the log durable, exit 0). With
// follow_data_dir it opens as a follower of that ledger's log, to be promoted by a control plane. With
// replication.postgres_url it joins a replicated group instead (replicated-serve.ts, loaded only then,
// with the PostgreSQL client it needs). HTTP is assembled by ledger-http.ts: on server.workers threads
// around the engine on this one, or with 0 on this thread (docs/decisions-threads.md).

import { CutoverControl } from '../cutover/cutover-control.js';
import { LogFollower } from '../cutover/log-follower.js';
import { LedgerRuntime } from '../runtime/ledger-runtime.js';
import type { FolioConfig } from './config.js';
import { startLedgerHttp } from './ledger-http.js';
import { nodeInspector } from './node-inspector.js';
import { onShutdownSignals, printListening, serveParts, warnAboutSettings, type BackupCopier } from './serve-parts.js';

export async function serve(config: FolioConfig, backupCopier?: BackupCopier): Promise<void> {
  const parts = serveParts(config, backupCopier);
  if (config.replication.postgres_url !== '') {
    const { serveReplicated } = await import('./replicated-serve.js');
    await serveReplicated(config, parts);
    return;
  }
  const { logger } = parts;
  let runtime: LedgerRuntime;
  try {
    runtime = await LedgerRuntime.open({ ...parts.runtimeOptions, follower: config.follow_data_dir !== '' });
  } catch (error) {
    // What start-up logged (snapshots skipped on the way) must reach the operator before the exit.
    parts.destination.flushSync();
    throw error;
  }
  logger.info({ ...runtime.startup, seq: runtime.log.appendedSeq }, 'ledger ready');
  const cutover = config.follow_data_dir === ''
    ? CutoverControl.forLeader(runtime)
    : CutoverControl.forFollower(runtime, LogFollower.start(runtime, config.follow_data_dir), config.follow_data_dir);
  const inspector = nodeInspector(() => ({ runtime, status: () => ({ role: 'single', term: 0, applied_seq: runtime.visibleSeq() }) }));
  warnAboutSettings(config, logger);
  const http = await startLedgerHttp({ ...parts.http, replication: false }, { runtime, cutover, inspector });
  printListening(http.address);
  onShutdownSignals(config, logger, async () => {
    await http.close();
    await cutover.close();
    await runtime.close();
  });
}
