// HTTP around a ledger, assembled one way for everything that serves one: `folio serve` as a single node
// (serve.ts) and as a node of a replicated group (replicated-serve.ts), the test servers and the benches.
// It wires the apps, their metrics and the server's limits, and stops them in order. Two shapes:
//   - on `workers` HTTP threads (workers/http-workers.ts), the engine host answering them here
//     (workers/engine-host.ts): each worker builds its own app once and keeps it;
//   - with 0, on this thread: an app over the ledger, with its own metrics.
// A single node serves one ledger for its whole life. A replicated node starts refusing (503
// REPL_REJOINING) and is pointed at a new ledger each time it joins its group (`serve`), refusing again
// between ledgers (`unavailable`): on workers the engine host switches, on this thread a request switch
// (http/server/request-switch.ts) in front of a new app each time.

import assert from 'node:assert/strict';
import type pino from 'pino';
import type { Clock } from '../engine/ports.js';
import type { TargetPolicy } from '../hooks/hook-targets.js';
import type { NodeRefusal } from '../http/ports/node-refusal.js';
import { createApp, type AppOptions, type FolioApp } from '../http/app.js';
import { Metrics } from '../http/metrics.js';
import type { ReplicationInspector, ReplicationPort } from '../http/ports/replication-port.js';
import type { BackupPort } from '../http/routes/backup-routes.js';
import type { AddressConnections } from '../http/server/address-connections.js';
import { BodyBytesInFlight } from '../http/server/body-bytes-in-flight.js';
import { BucketCells, type RateLimitSettings } from '../http/access/rate-buckets.js';
import { closeServer, createHttpServer } from '../http/server/http-server.js';
import { RequestSwitch } from '../http/server/request-switch.js';
import type { ConnectionLimits } from '../http/server/server-limits.js';
import type { CutoverControl } from '../cutover/cutover-control.js';
import { ChangeFeed } from '../runtime/change-feed.js';
import type { LedgerRuntime } from '../runtime/ledger-runtime.js';
import { snapshotAdmin } from '../runtime/snapshot-admin.js';
import { EngineHost, type ServedParts } from '../workers/engine-host.js';
import { HttpWorkers, type RestartBudget } from '../workers/http-workers.js';

/** How long a replicated node that steps down waits for the requests (on workers: the calls) under way. */
export const DRAIN_MS_MAX = 5_000;

export interface LedgerHttpOptions {
  host: string;
  port: number;
  /** HTTP worker threads; 0 serves HTTP on this thread. */
  workers: number;
  limits: ConnectionLimits;
  bodyBytesInFlightMax: number;
  /** The largest request body (http/middleware/json-body.ts BODY_BYTES_MAX unless set). */
  bodyBytesMax?: number;
  version: string;
  logger: pino.Logger;
  logLevel: string;
  /** The master key; empty leaves authentication off. */
  secretKey: string;
  tokenizationKey?: Buffer;
  hookTargets: TargetPolicy;
  /** POST /backup; absent, the route says no backup is configured. */
  backup?: BackupPort;
  /** The data directory: the change feed's log on workers, and the operator's snapshots. */
  dataDir: string;
  /** The operator's snapshot routes (/admin/snapshots). */
  snapshots: boolean;
  /** The query index runs (filters, search, reconciliation). */
  index: boolean;
  /**
   * The balance history HTTP workers read themselves (index/history-reader.ts): its directory and the
   * process's memory its progress is published in (RuntimeOptions.historyProgress, the same for every
   * ledger a replicated node serves). Absent: the first ledger's own (LedgerRuntime.historyShare).
   */
  history?: { dir: string; progress: SharedArrayBuffer };
  /** A replicated node: it starts refusing, and serves a new ledger each time it joins its group. */
  replication: boolean;
  /** The process's count of connections per client address (a new one unless given). */
  addresses?: AddressConnections;
  restartBudget?: RestartBudget;
  /** HTTP workers failed more often than their restart budget allows: the process must stop. */
  onWorkersFailed(error: Error): void;
  /**
   * On this thread only (tests of expiry and key use): the clock API keys are checked with, and how
   * often their uses are written to the log. Workers use the system clock and the default.
   */
  clock?: Clock;
  apiKeyUseFlushMs?: number;
  /** Fair use: the default rate of API keys and the master key's (http/access/rate-buckets.ts); absent, none. */
  rateLimits?: RateLimitSettings;
}

/** One ledger as it is served. */
export interface ServedLedger {
  runtime: LedgerRuntime;
  /** Fence, follow and promote for a control plane's cutover (/admin/cutover/*). */
  cutover?: CutoverControl;
  /** GET /admin/replication. */
  inspector?: ReplicationInspector;
  /** A replicated node's replication (the node itself). */
  replication?: ReplicationPort & { leadingUntilMs(): number | undefined };
}

/** What holds a node's own appenders (API key use stamps) while it does not lead. */
export interface WritesHold {
  holdWrites(): void;
  releaseWrites(): void;
}

export interface LedgerHttp {
  readonly address: { address: string; port: number };
  /** The HTTP worker threads, when HTTP runs on them. */
  readonly workers?: HttpWorkers;
  /** The app serving now, when HTTP runs on this thread. */
  readonly app?: FolioApp;
  /** Serves `ledger` from now on (a replicated node that has joined its group). */
  serve(ledger: ServedLedger): WritesHold;
  /** Refuses every request with `refusal`, ends the change feed's streams, waits (bounded) for what is under way. */
  unavailable(refusal: NodeRefusal): Promise<void>;
  /** Stops accepting and finishes the requests under way (bounded). */
  close(): Promise<void>;
}

/**
 * Starts HTTP around `first`, a ledger to serve, or the refusal every request gets until `serve` (a
 * replicated node joining its group).
 */
export async function startLedgerHttp(options: LedgerHttpOptions, first: ServedLedger | NodeRefusal): Promise<LedgerHttp> {
  assert(('runtime' in first) !== options.replication, 'a single node starts with its ledger, a replicated node with the refusal it answers until it joins');
  if (options.workers > 0) return OnWorkers.start(options, first);
  return OnThisThread.start(options, first);
}

/** The metrics of an app on this thread, from the ledger it serves. */
function metricsOf(runtime: LedgerRuntime, addresses: AddressConnections | undefined): Metrics {
  const metrics = new Metrics({
    queuedTransactions: () => runtime.view.queuedCount(),
    lookupBacklog: () => runtime.store.backlog,
    unflushedEvents: () => runtime.log.unflushedEvents,
  });
  runtime.onCommit((stats) => metrics.observeWalCommit(stats.events, stats.milliseconds));
  if (addresses) metrics.watchConnections(addresses);
  return metrics;
}

class OnThisThread implements LedgerHttp {
  app: FolioApp | undefined;

  private constructor(
    private readonly options: LedgerHttpOptions,
    /** A replicated node's: requests go to the app of the ledger served now, or are refused. */
    private readonly requests: RequestSwitch | undefined,
    private readonly server: ReturnType<typeof createHttpServer>,
    readonly address: { address: string; port: number },
    private readonly bodyBytesInFlight: BodyBytesInFlight,
    /** The process's rate buckets, kept across the ledgers a replicated node serves. */
    private readonly rateCells: BucketCells,
  ) {}

  static async start(options: LedgerHttpOptions, first: ServedLedger | NodeRefusal): Promise<OnThisThread> {
    // A single node's one app is the server's listener; a replicated node's go behind a switch.
    const requests = 'runtime' in first ? undefined : new RequestSwitch(first);
    const bodyBytesInFlight = BodyBytesInFlight.local(options.bodyBytesInFlightMax);
    const rateCells = new BucketCells();
    const single = 'runtime' in first ? createApp(appOptions(options, first, bodyBytesInFlight, rateCells)) : undefined;
    const server = createHttpServer(requests ? requests.listener : (single as FolioApp).koa.callback(), options.limits, options.addresses);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, () => resolve());
    });
    const { address, port } = server.address() as { address: string; port: number };
    const http = new OnThisThread(options, requests, server, { address, port }, bodyBytesInFlight, rateCells);
    http.app = single;
    return http;
  }

  serve(ledger: ServedLedger): WritesHold {
    const requests = this.requests as RequestSwitch;
    const app = createApp(appOptions(this.options, ledger, this.bodyBytesInFlight, this.rateCells));
    this.app = app;
    requests.serve(app);
    return { holdWrites: () => app.apiKeyUsage.hold(), releaseWrites: () => app.apiKeyUsage.release() };
  }

  async unavailable(refusal: NodeRefusal): Promise<void> {
    const requests = this.requests as RequestSwitch;
    this.app?.endStreams();
    this.app = undefined;
    requests.refuse(refusal);
    await requests.drain(DRAIN_MS_MAX);
  }

  async close(): Promise<void> {
    this.app?.beginShutdown();
    await closeServer(this.server);
  }

}

/** An app on this thread over `ledger`, with its own metrics. */
function appOptions(options: LedgerHttpOptions, ledger: ServedLedger, bodyBytesInFlight: BodyBytesInFlight, rateCells: BucketCells): AppOptions {
  const { runtime } = ledger;
  const app: AppOptions = {
    core: runtime, logger: options.logger, metrics: metricsOf(runtime, options.addresses), version: options.version,
    secretKey: options.secretKey, listenHost: options.host, tokenizationKey: options.tokenizationKey, bodyBytesMax: options.bodyBytesMax,
    backup: options.backup, feed: new ChangeFeed(runtime.log), bodyBytesInFlight,
    cutover: ledger.cutover, inspector: ledger.inspector, replication: ledger.replication,
    clock: options.clock, apiKeyUseFlushMs: options.apiKeyUseFlushMs,
    rateLimiting: { buckets: rateCells.buckets, cells: rateCells, settings: options.rateLimits ?? {} },
  };
  if (options.snapshots) app.snapshots = snapshotAdmin(runtime, options.dataDir);
  return app;
}

class OnWorkers implements LedgerHttp {
  private constructor(
    private readonly options: LedgerHttpOptions,
    private readonly engine: EngineHost,
    readonly workers: HttpWorkers,
  ) {}

  get address(): { address: string; port: number } {
    return this.workers.address;
  }

  static async start(options: LedgerHttpOptions, first: ServedLedger | NodeRefusal): Promise<OnWorkers> {
    if (options.clock !== undefined || options.apiKeyUseFlushMs !== undefined) {
      throw new Error('a clock and a key-use interval of their own are for HTTP on this thread only (workers: 0)');
    }
    // A single node's host serves its one ledger; a replicated node's starts refusing and switches.
    const ledger = 'runtime' in first ? first : undefined;
    const engine = ledger
      ? new EngineHost({ ...partsOf(options, ledger), logger: options.logger })
      : new EngineHost({ logger: options.logger, refusal: first as NodeRefusal });
    const workers = await HttpWorkers.start({
      count: options.workers, host: options.host, port: options.port, engine,
      addresses: options.addresses, logger: options.logger, restartBudget: options.restartBudget,
      onFailure: options.onWorkersFailed,
      settings: {
        version: options.version, logLevel: options.logLevel, secretKey: options.secretKey,
        tokenizationKey: options.tokenizationKey ? new Uint8Array(options.tokenizationKey) : undefined,
        bodyBytesMax: options.bodyBytesMax, bodyBytesInFlightMax: options.bodyBytesInFlightMax, hookTargets: options.hookTargets,
        index: options.index, history: options.index ? (options.history ?? ledger?.runtime.historyShare) : undefined,
        snapshots: options.snapshots, cutover: ledger?.cutover !== undefined, backupDir: options.backup?.dir,
        feedDataDir: options.dataDir, inspector: true, replication: options.replication, limits: options.limits,
        rateLimits: options.rateLimits ?? {},
      },
    });
    return new OnWorkers(options, engine, workers);
  }

  serve(ledger: ServedLedger): WritesHold {
    this.engine.serve(partsOf(this.options, ledger));
    return { holdWrites: () => this.engine.holdWrites(true), releaseWrites: () => this.engine.holdWrites(false) };
  }

  async unavailable(refusal: NodeRefusal): Promise<void> {
    // The workers end their streams and refuse every request once they hear of it (at once).
    this.engine.refuse(refusal);
    await this.engine.drain(DRAIN_MS_MAX);
  }

  async close(): Promise<void> {
    await this.workers.close();
    this.engine.close();
  }
}

function partsOf(options: LedgerHttpOptions, ledger: ServedLedger): ServedParts {
  const parts: ServedParts = { runtime: ledger.runtime, backup: options.backup, inspector: ledger.inspector, cutover: ledger.cutover, replication: ledger.replication };
  if (options.snapshots) parts.snapshots = snapshotAdmin(ledger.runtime, options.dataDir);
  return parts;
}
