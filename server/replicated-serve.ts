// `folio serve` as a node of a replicated group (replication.postgres_url set). HTTP listens first,
// answering 503 REPL_REJOINING until the node has joined (so the address it advertises is known even for
// port 0), then the replication node (replication-node.ts) opens the ledger and serves it, pointing the
// HTTP side at a new ledger each time it rejoins. With server.workers > 0, as a single node, HTTP runs
// on worker threads and the engine host (engine-host.ts) is what switches: it refuses every call while
// no ledger is served, and tells the workers, which refuse every request (docs/decisions-threads.md);
// with 0, on this thread through a request switch (request-switch.ts) in front of a new app each time.
// SIGTERM: stop accepting, let requests under way finish, give the lease up if leading (after what was
// appended is committed), close the ledger, exit 0. Loaded only when replication is on, so a single node
// never loads the PostgreSQL client.

import os from 'node:os';
import { ApiError, BACKPRESSURE_RETRY_AFTER_SECONDS } from '../http/api-error.js';
import type { ReplicationInspector } from '../http/ports/replication-port.js';
import type { FolioConfig } from './config.js';
import { EngineHost } from '../workers/engine-host.js';
import { closeServer, createHttpServer } from './http-server.js';
import { LedgerRuntime } from '../runtime/ledger-runtime.js';
import { nodeInspector } from './node-inspector.js';
import { ReplicationNode } from '../replication/replication-node.js';
import { replicationSettings } from '../replication/replication-settings.js';
import { RequestSwitch } from './request-switch.js';
import { listen, onShutdownSignals, startHttpWorkers, warnAboutSettings, type ServeParts } from './serve.js';
import { snapshotAdmin } from '../runtime/snapshot-admin.js';

/** How long a node that steps down waits for the requests (on workers: the calls) under way before it closes its ledger. */
const DRAIN_MS_MAX = 5_000;
/**
 * The log's pipeline on a replicated node (wal/lmdb-log.ts). records_in_flight_max: records written to
 * the local disk at once, as on a single node, so the disk's pipeline is the same. records_replicating_max:
 * records sealed and not yet committed by both the disk and PostgreSQL. PostgreSQL's commits gather
 * whatever is waiting (replication/record-replicator.ts), so this only bounds how far the disk may run ahead of
 * the group: the records a leader that dies may have to drop on rejoining (at most records_dropped_max,
 * 64, are dropped without an operator).
 */
const LOG_LIMITS = { records_in_flight_max: 2, records_replicating_max: 32 };

/** The HTTP side of a replicated node: what serves each ledger the node opens, and refuses between them. */
interface ReplicatedHttp {
  address: { address: string; port: number };
  serve(runtime: LedgerRuntime, node: ReplicationNode): { holdWrites(): void; releaseWrites(): void };
  /** Refuses every request with `refusal`, ends the change feed's streams, waits (bounded) for what is under way. */
  unavailable(refusal: ApiError): Promise<void>;
  /** Stops accepting and finishes the requests under way. */
  close(): Promise<void>;
}

export async function serveReplicated(config: FolioConfig, parts: ServeParts): Promise<void> {
  const { logger } = parts;
  const starting = new ApiError('REPL_REJOINING', 'this node is joining its replication group; retry shortly', undefined, {
    'Retry-After': String(BACKPRESSURE_RETRY_AFTER_SECONDS),
  });
  let current: { runtime: LedgerRuntime; node: ReplicationNode } | undefined;
  const inspector = nodeInspector(() => current && {
    runtime: current.runtime,
    status: () => current!.node.status(),
    details: (lagWindowMs) => current!.node.details(lagWindowMs),
    group: () => current!.node.groupStatus(),
  });
  warnAboutSettings(config, logger);
  const http = config.server.workers > 0
    ? await onWorkers(config, parts, starting, inspector)
    : await onThisThread(config, parts, starting, inspector);
  const { address } = http;
  const advertised = config.replication.advertise_url !== '' ? config.replication.advertise_url : `http://${advertisedHost(address.address)}:${address.port}`;
  const settings = replicationSettings({ ...config.replication, advertise_url: advertised });
  logger.info({ node: settings.node_name, advertise_url: advertised, lease_ms: settings.timings.lease_ms }, 'joining the replication group');
  const node = await ReplicationNode.start(settings, {
    dataDir: config.data_dir,
    openRuntime: ({ beforeOpen, onHookProgress }) => LedgerRuntime.open({ ...parts.runtimeOptions, follower: true, replicated: true, beforeOpen, onHookProgress, logLimits: LOG_LIMITS }),
    serve: (runtime, servedBy) => {
      current = { runtime, node: servedBy };
      return http.serve(runtime, servedBy);
    },
    unavailable: async (refusal) => {
      current = undefined;
      await http.unavailable(refusal);
    },
    logger,
    fatal: (error) => {
      logger.fatal({ err: error.message }, 'this node cannot join its replication group; stopping');
      logger.flush();
      process.exit(78);
    },
  });
  onShutdownSignals(config, logger, async () => {
    await http.close();
    const runtime = await node.stop();
    await runtime?.close();
  });
}

/** server.workers 0: one server on this thread, a new app per ledger behind a request switch. */
async function onThisThread(config: FolioConfig, parts: ServeParts, starting: ApiError, inspector: ReplicationInspector): Promise<ReplicatedHttp> {
  const requests = new RequestSwitch(starting);
  const server = createHttpServer(requests.listener, config.server, parts.addresses);
  const address = await listen(server, config);
  return {
    address,
    serve: (runtime, node) => {
      const app = parts.makeApp(runtime, { replication: node, inspector });
      requests.serve(app);
      return { holdWrites: () => app.apiKeyUsage.hold(), releaseWrites: () => app.apiKeyUsage.release() };
    },
    unavailable: async (refusal) => {
      requests.current?.endStreams();
      requests.refuse(refusal);
      await requests.drain(DRAIN_MS_MAX);
    },
    close: async () => {
      requests.current?.beginShutdown();
      await closeServer(server);
    },
  };
}

/**
 * server.workers threads, as a single node: one app per worker for the node's whole life, the engine
 * host switching the ledger under them. A worker's API key uses hold while the host says writes are held.
 */
async function onWorkers(config: FolioConfig, parts: ServeParts, starting: ApiError, inspector: ReplicationInspector): Promise<ReplicatedHttp> {
  const engine = new EngineHost({ logger: parts.logger, refusal: starting });
  const workers = await startHttpWorkers(config, parts, engine, { index: parts.runtimeOptions.index !== false, cutover: false, replication: true });
  return {
    address: workers.address,
    serve: (runtime, node) => {
      engine.serve({ runtime, snapshots: snapshotAdmin(runtime, config.data_dir), backup: parts.backup, inspector, replication: node });
      return { holdWrites: () => engine.holdWrites(true), releaseWrites: () => engine.holdWrites(false) };
    },
    unavailable: async (refusal) => {
      // The workers end their streams and refuse every request once they hear of it (at once).
      engine.refuse(refusal);
      await engine.drain(DRAIN_MS_MAX);
    },
    close: async () => {
      await workers.close();
      engine.close();
    },
  };
}

/** The host others reach this node at when no advertise_url is set: the listening address, or the host's name for a wildcard. */
function advertisedHost(listening: string): string {
  if (listening === '0.0.0.0' || listening === '::') return os.hostname();
  return listening.includes(':') ? `[${listening}]` : listening;
}
