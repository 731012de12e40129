// The HTTP worker threads of `folio serve` (server.workers of them, server/config.ts): each runs the Koa app
// (http-worker.ts) on the server's port with SO_REUSEPORT, and talks to the engine on this, the
// process's main thread, through a channel of its own that EngineHost serves (engine-host.ts). The first
// worker binds the configured port (0: one the OS picks) and the others the port it got. Every worker
// counts the request body bytes it holds in one shared count (http/server/body-bytes-in-flight.ts), a slot each.
// server.connections_max is shared out: each worker's server admits its share. The cap per client address
// is the process's: every worker counts into one table in shared memory (http/server/address-connections.ts).
//
// A worker that fails after it started (out of memory, an uncaught error, an exit) is logged with its
// cause and replaced by a new one on the same port: nothing acknowledged depends on a worker (a write is
// acknowledged only once its record is durable, and a client whose connection the dead worker held sees
// it reset, as in a crash). What the dead worker held is given back first: its share of the body bytes,
// and on the engine's thread whatever its calls held there (EngineHost.detach: fence counts, seq
// waits). Replacements are bounded: more than `restartBudget.restarts` failures within its window means
// something fails every time, and the process stops (exit 70) rather than fail on in a loop.
// docs/decisions-threads.md says why.

import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import type { TargetPolicy } from '../hooks/hook-targets.js';
import { AddressConnections } from '../http/server/address-connections.js';
import { BodyBytesInFlight } from '../http/server/body-bytes-in-flight.js';
import type { RateLimitSettings } from '../http/access/rate-buckets.js';
import type { ConnectionLimits } from '../http/server/server-limits.js';
import { workerEntry } from '../threads/worker-entry.js';
import { WORKER_YOUNG_GENERATION_MB } from '../threads/node-flags.js';
import type { WorkerOrder, WorkerReport } from './engine-channel.js';
import type { EngineHost } from './engine-host.js';

const ENTRY = workerEntry(import.meta.url, 'http-worker');
/** The prefix of the workers' thread names; the engine's thread is the process's main thread. */
export const HTTP_THREAD_NAME = 'folio-http-';
/** How long a worker may take to start listening (it loads the app's modules first). */
const WORKER_START_MS_MAX = 60_000;
/** How long shutdown waits for a worker to finish its requests (it closes their connections after 10 s). */
const WORKER_STOP_MS_MAX = 15_000;

/** How many failed workers are replaced within a window before the process gives up. */
export interface RestartBudget {
  restarts: number;
  windowMs: number;
}

export const WORKER_RESTART_BUDGET: RestartBudget = { restarts: 5, windowMs: 60_000 };

/** What every worker's app is built with: plain data, as it crosses to the thread. */
export interface WorkerSettings {
  version: string;
  logLevel: string;
  secretKey: string;
  tokenizationKey?: Uint8Array;
  bodyBytesMax?: number;
  /** The request body bytes the process holds at once, all workers together (server.body_bytes_in_flight_max). */
  bodyBytesInFlightMax: number;
  hookTargets: TargetPolicy;
  /** The query index runs (filters, search, reconciliation). */
  index: boolean;
  /**
   * The balance history, which the worker reads itself (index/history-reader.ts): its directory and the
   * shared memory its progress is published in. Absent without the index.
   */
  history?: { dir: string; progress: SharedArrayBuffer };
  snapshots: boolean;
  cutover: boolean;
  backupDir?: string;
  /** The data directory whose log the change feed reads in the worker (runtime/change-feed.ts); absent, no feed. */
  feedDataDir?: string;
  inspector: boolean;
  /** A replicated node: requests are switched on the engine's state, and replication answered from it. */
  replication: boolean;
  /** The limits of each worker's server; connections_max is the process's, shared out. */
  limits: ConnectionLimits;
  /** Fair use: the default rate of API keys and the master key's (http/access/rate-buckets.ts); absent, none. */
  rateLimits?: RateLimitSettings;
}

export interface WorkerData {
  index: number;
  settings: WorkerSettings;
  channel: MessagePort;
  listen: { host: string; port: number };
  /** The process's count of body bytes in flight; this worker counts in slot `index`. */
  bodyBytes: SharedArrayBuffer;
  /** The engine thread's seqs in shared memory (engine-channel.ts SharedSeqs). */
  seqs: SharedArrayBuffer;
  /** The process's count of open connections per client address, shared by every worker (AddressConnections). */
  addresses: SharedArrayBuffer;
  /** The process's rate buckets (http/access/rate-buckets.ts), one cell per key, which the engine's thread gives out. */
  rateBuckets: SharedArrayBuffer;
}

interface WorkersLogger {
  error(fields: object, message: string): void;
  info(fields: object, message: string): void;
}

export interface HttpWorkersOptions {
  count: number;
  host: string;
  port: number;
  settings: WorkerSettings;
  engine: EngineHost;
  /** The process's count of connections per client address; a new one when not given. */
  addresses?: AddressConnections;
  /** Where a failed worker and its replacement are told. */
  logger: WorkersLogger;
  /** Workers failed more often than the restart budget allows: the process must stop. */
  onFailure(error: Error): void;
  restartBudget?: RestartBudget;
}

/** One worker as started: its thread and the engine's end of its channel. */
interface Running {
  worker: Worker;
  port: MessagePort;
}

export class HttpWorkers {
  private stopping = false;
  private closing: Promise<void> | undefined;
  private readonly running: Array<Running | undefined>;
  /** When recent workers failed (performance.now()), within the restart budget's window. */
  private failures: number[] = [];
  private listening = { address: '', port: 0 };

  private constructor(
    private readonly options: HttpWorkersOptions,
    private readonly settings: WorkerSettings,
    private readonly bodyBytes: SharedArrayBuffer,
    private readonly addresses: SharedArrayBuffer,
  ) {
    this.running = new Array<Running | undefined>(options.count).fill(undefined);
  }

  static async start(options: HttpWorkersOptions): Promise<HttpWorkers> {
    const { count } = options;
    // Each worker's server admits its share, so the process as a whole admits connections_max.
    const limits = { ...options.settings.limits, connections_max: Math.max(1, Math.floor(options.settings.limits.connections_max / count)) };
    // Sized for the process's connections, not a worker's share: every worker's connections are in it.
    const addresses = (options.addresses ?? AddressConnections.create(options.settings.limits.connections_max)).buffer;
    const pool = new HttpWorkers(options, { ...options.settings, limits }, BodyBytesInFlight.shared(count), addresses);
    pool.listening = { address: options.host, port: options.port };
    try {
      for (let index = 0; index < count; index += 1) pool.listening = await pool.startWorker(index, pool.listening.port);
    } catch (error) {
      pool.stopping = true;
      await Promise.all(pool.running.map((running) => running?.worker.terminate()));
      throw error;
    }
    return pool;
  }

  /** Where the workers listen. */
  get address(): { address: string; port: number } {
    return this.listening;
  }

  /** The worker threads running now, by index (a failed one is replaced by a new thread). */
  get threads(): ReadonlyArray<Worker | undefined> {
    return this.running.map((running) => running?.worker);
  }

  /** The request body bytes every worker holds right now (http/server/body-bytes-in-flight.ts). */
  get bodyBytesHeld(): number {
    return new BodyBytesInFlight(this.bodyBytes, Number.MAX_SAFE_INTEGER).held;
  }

  /** Every worker stops accepting, finishes its requests (bounded) and ends; again, the same wait. */
  close(): Promise<void> {
    this.closing ??= this.closeAll();
    return this.closing;
  }

  private async closeAll(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.running.map(async (running) => {
      if (!running) return;
      const { worker } = running;
      const closed = new Promise<void>((resolve) => {
        worker.on('message', (message: WorkerReport) => {
          if (message.kind === 'closed') resolve();
        });
        worker.once('exit', () => resolve());
      });
      worker.postMessage({ kind: 'shutdown' } satisfies WorkerOrder);
      const timer = setTimeout(() => void worker.terminate(), WORKER_STOP_MS_MAX);
      await closed;
      clearTimeout(timer);
      await worker.terminate();
    }));
  }

  /** Starts worker `index` on `port`; resolves once it listens, rejects if it fails before. */
  private startWorker(index: number, port: number): Promise<{ address: string; port: number }> {
    const channel = new MessageChannel();
    const data: WorkerData = { index, settings: this.settings, channel: channel.port2, listen: { host: this.options.host, port }, bodyBytes: this.bodyBytes, addresses: this.addresses, seqs: this.options.engine.seqsBuffer, rateBuckets: this.options.engine.rateCells.buffer };
    // The thread's name is what the OS shows (and the bench reads, bench/process-cpu.ts): 15 characters at most.
    const worker = new Worker(ENTRY.file, {
      name: `${HTTP_THREAD_NAME}${index}`, workerData: data, transferList: [channel.port2], execArgv: ENTRY.execArgv,
      resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
    });
    const running: Running = { worker, port: channel.port1 };
    this.running[index] = running;
    this.options.engine.attach(channel.port1);
    return new Promise((resolve, reject) => {
      let started = false;
      let ended = false;
      const end = (error: Error): void => {
        clearTimeout(timer);
        if (ended) return;
        ended = true;
        if (started) this.failed(index, running, error);
        else {
          this.forget(index, running);
          reject(error);
        }
      };
      const timer = setTimeout(() => end(new Error(`HTTP worker ${index} did not start listening in ${WORKER_START_MS_MAX} ms`)), WORKER_START_MS_MAX);
      worker.on('message', (message: WorkerReport) => {
        if (message.kind === 'listening') {
          started = true;
          clearTimeout(timer);
          resolve({ address: message.address, port: message.port });
        } else if (message.kind === 'failed') end(new Error(`HTTP worker ${index}: ${message.message}`));
      });
      // An out-of-memory worker raises ERR_WORKER_OUT_OF_MEMORY here, then exits: the first says why.
      worker.on('error', (error) => end(error));
      worker.on('exit', (code) => end(new Error(`HTTP worker ${index} exited (code ${code})`)));
    });
  }

  /** Gives back what a worker that is gone held: its share of the body bytes, its calls' holds on the engine's thread. */
  private forget(index: number, running: Running): void {
    if (this.running[index] === running) this.running[index] = undefined;
    BodyBytesInFlight.releaseSlot(this.bodyBytes, index);
    this.options.engine.detach(running.port);
    void running.worker.terminate();
  }

  /** A worker failed after it started: it is replaced, within the restart budget. */
  private failed(index: number, running: Running, error: Error): void {
    if (this.stopping || this.running[index] !== running) return;
    this.forget(index, running);
    this.replace(index, error);
  }

  /** Starts a new worker `index` in place of one that failed with `error`, unless the budget is spent. */
  private replace(index: number, error: Error): void {
    const budget = this.options.restartBudget ?? WORKER_RESTART_BUDGET;
    const now = performance.now();
    this.failures = [...this.failures.filter((at) => now - at < budget.windowMs), now];
    if (this.failures.length > budget.restarts) {
      this.stopping = true;
      this.options.onFailure(new Error(
        `HTTP worker ${index} failed (${error.message}): ${this.failures.length} worker failures within ${budget.windowMs} ms, more than the ${budget.restarts} replacements allowed`,
        { cause: error },
      ));
      return;
    }
    this.options.logger.error({ err: error, worker: index, failures_in_window: this.failures.length }, 'an HTTP worker failed; starting a new one in its place');
    this.startWorker(index, this.listening.port).then(
      () => this.options.logger.info({ worker: index }, 'the new HTTP worker listens'),
      // A replacement that fails before it listens is a failure too (startWorker gave back its holds).
      (startError: unknown) => {
        if (!this.stopping) this.replace(index, startError as Error);
      },
    );
  }
}
