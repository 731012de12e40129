// `folio serve` as a node of a replicated group (replication.postgres_url set). The HTTP server listens
// first, answering 503 REPL_REJOINING until the node has joined (so the address it advertises is known
// even for port 0), then the replication node (replication-node.ts) opens the ledger and serves it
// through a request switch (request-switch.ts), which it points at a new app each time it rejoins.
// SIGTERM: stop accepting, let requests under way finish, give the lease up if leading (after what was
// appended is committed), close the ledger, exit 0. Loaded only when replication is on, so a single node
// never loads the PostgreSQL client.

import os from 'node:os';
import { ApiError, BACKPRESSURE_RETRY_AFTER_SECONDS } from '../http/api-error.js';
import type { FolioConfig } from './config.js';
import { closeServer, createHttpServer } from './http-server.js';
import { LedgerRuntime } from './ledger-runtime.js';
import { nodeInspector } from './node-inspector.js';
import { ReplicationNode } from './replication-node.js';
import { replicationSettings } from './replication-settings.js';
import { RequestSwitch } from './request-switch.js';
import { listen, onShutdownSignals, warnAboutSettings, type ServeParts } from './serve.js';

/** How long a node that steps down waits for the requests under way before it closes its ledger. */
const DRAIN_MS_MAX = 5_000;
/** Records written to the local disk at once: as a single node (wal/lmdb-log.ts), so the disk's pipeline is the same. */
const LOG_RECORDS_IN_FLIGHT_MAX = 2;
/**
 * Records sealed and not yet committed by both the disk and PostgreSQL. PostgreSQL's commits gather
 * whatever is waiting (app/record-replicator.ts), so this only bounds how far the disk may run ahead of
 * the group: the records a leader that dies may have to drop on rejoining (at most records_dropped_max,
 * 64, are dropped without an operator).
 */
const LOG_RECORDS_REPLICATING_MAX = 32;

export async function serveReplicated(config: FolioConfig, parts: ServeParts): Promise<void> {
  const { logger } = parts;
  const starting = new ApiError('REPL_REJOINING', 'this node is joining its replication group; retry shortly', undefined, {
    'Retry-After': String(BACKPRESSURE_RETRY_AFTER_SECONDS),
  });
  const requests = new RequestSwitch(starting);
  const server = createHttpServer(requests.listener, config.server);
  warnAboutSettings(config, logger);
  const address = await listen(server, config);
  const advertised = config.replication.advertise_url !== '' ? config.replication.advertise_url : `http://${advertisedHost(address.address)}:${address.port}`;
  const settings = replicationSettings({ ...config.replication, advertise_url: advertised });
  logger.info({ node: settings.node_name, advertise_url: advertised, lease_ms: settings.timings.lease_ms }, 'joining the replication group');
  let current: { runtime: LedgerRuntime; node: ReplicationNode } | undefined;
  const inspector = nodeInspector(() => current && {
    runtime: current.runtime,
    status: () => current!.node.status(),
    details: (lagWindowMs) => current!.node.details(lagWindowMs),
  });
  const node = await ReplicationNode.start(settings, {
    dataDir: config.data_dir,
    openRuntime: ({ beforeOpen, onHookProgress }) => LedgerRuntime.open({ ...parts.runtimeOptions, follower: true, beforeOpen, onHookProgress, logRecordsInFlightMax: LOG_RECORDS_IN_FLIGHT_MAX, logRecordsReplicatingMax: LOG_RECORDS_REPLICATING_MAX }),
    serve: (runtime, servedBy) => {
      const app = parts.makeApp(runtime, { replication: servedBy, inspector });
      current = { runtime, node: servedBy };
      requests.serve(app);
      return { holdWrites: () => app.apiKeyUsage.hold(), releaseWrites: () => app.apiKeyUsage.release() };
    },
    unavailable: async (refusal) => {
      current = undefined;
      requests.current?.endStreams();
      requests.refuse(refusal);
      await requests.drain(DRAIN_MS_MAX);
    },
    logger,
    fatal: (error) => {
      logger.fatal({ err: error.message }, 'this node cannot join its replication group; stopping');
      logger.flush();
      process.exit(78);
    },
  });
  onShutdownSignals(config, logger, async () => {
    requests.current?.beginShutdown();
    await closeServer(server);
    const runtime = await node.stop();
    await runtime?.close();
  });
}

/** The host others reach this node at when no advertise_url is set: the listening address, or the host's name for a wildcard. */
function advertisedHost(listening: string): string {
  if (listening === '0.0.0.0' || listening === '::') return os.hostname();
  return listening.includes(':') ? `[${listening}]` : listening;
}
