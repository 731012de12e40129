// `folio serve` as a node of a replicated group (replication.postgres_url set). HTTP listens first,
// answering 503 REPL_REJOINING until the node has joined (so the address it advertises is known even for
// port 0), then the replication node (replication-node.ts) opens the ledger and serves it, pointing the
// HTTP side at a new ledger each time it rejoins (ledger-http.ts: on server.workers threads the engine
// host switches and tells the workers, which refuse every request meanwhile; with 0, a request switch on
// this thread; docs/decisions-threads.md).
// SIGTERM: stop accepting, let requests under way finish, give the lease up if leading (after what was
// appended is committed), close the ledger, exit 0. Loaded only when replication is on, so a single node
// never loads the PostgreSQL client.

import os from 'node:os';
import { NodeRefusal } from '../http/ports/node-refusal.js';
import { ReplicationNode } from '../replication/replication-node.js';
import { replicationSettings } from '../replication/replication-settings.js';
import { LedgerRuntime } from '../runtime/ledger-runtime.js';
import { monotonicClock } from '../runtime/system-clock.js';
import { exitWithin } from '../threads/exit-watchdog.js';
import type { FolioConfig } from './config.js';
import { startLedgerHttp } from './ledger-http.js';
import { nodeInspector } from './node-inspector.js';
import { onShutdownSignals, printListening, warnAboutSettings, type ServeParts } from './serve-parts.js';

/**
 * The log's pipeline on a replicated node (wal/lmdb-log.ts). records_in_flight_max: records written to
 * the local disk at once, as on a single node, so the disk's pipeline is the same. records_replicating_max:
 * records sealed and not yet committed by both the disk and PostgreSQL. PostgreSQL's commits gather
 * whatever is waiting (replication/record-replicator.ts), so this only bounds how far the disk may run ahead of
 * the group: the records a leader that dies may have to drop on rejoining (at most records_dropped_max,
 * 64, are dropped without an operator).
 */
const LOG_LIMITS = { records_in_flight_max: 2, records_replicating_max: 32 };

export async function serveReplicated(config: FolioConfig, parts: ServeParts): Promise<void> {
  const { logger } = parts;
  const starting = new NodeRefusal('REPL_REJOINING', 'this node is joining its replication group; retry shortly');
  let current: { runtime: LedgerRuntime; node: ReplicationNode } | undefined;
  const inspector = nodeInspector(() => current && {
    runtime: current.runtime,
    status: () => current!.node.status(),
    details: (lagWindowMs) => current!.node.details(lagWindowMs),
    group: () => current!.node.groupStatus(),
  });
  warnAboutSettings(config, logger);
  const http = await startLedgerHttp({ ...parts.http, replication: true, index: parts.runtimeOptions.index !== false }, starting);
  const { address } = http;
  printListening(address);
  const advertised = config.replication.advertise_url !== '' ? config.replication.advertise_url : `http://${advertisedHost(address.address)}:${address.port}`;
  const settings = replicationSettings({ ...config.replication, advertise_url: advertised });
  logger.info({ node: settings.node_name, advertise_url: advertised, lease_ms: settings.timings.lease_ms }, 'joining the replication group');
  const node = await ReplicationNode.start(settings, {
    dataDir: config.data_dir,
    openRuntime: ({ beforeOpen, onHookProgress }) => LedgerRuntime.open({ ...parts.runtimeOptions, follower: true, replicated: true, beforeOpen, onHookProgress, logLimits: LOG_LIMITS }),
    serve: (runtime, servedBy) => {
      current = { runtime, node: servedBy };
      return http.serve({ runtime, inspector, replication: servedBy });
    },
    unavailable: async (refusal) => {
      current = undefined;
      await http.unavailable(refusal);
    },
    logger,
    clock: monotonicClock,
    fatal: (error) => {
      logger.fatal({ err: error.message }, 'this node cannot join its replication group; stopping');
      logger.flush();
      exitWithin(78);
    },
  });
  onShutdownSignals(config, logger, async () => {
    await http.close();
    const runtime = await node.stop();
    await runtime?.close();
  });
}

/** The host others reach this node at when no advertise_url is set: the listening address, or the host's name for a wildcard. */
function advertisedHost(listening: string): string {
  if (listening === '0.0.0.0' || listening === '::') return os.hostname();
  return listening.includes(':') ? `[${listening}]` : listening;
}
