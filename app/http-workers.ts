// The HTTP worker threads of `folio serve` (server.workers of them, app/config.ts): each runs the Koa app
// (http-worker.ts) on the server's port with SO_REUSEPORT, and talks to the engine on this, the
// process's main thread, through a channel of its own that EngineHost serves (engine-host.ts). The first
// worker binds the configured port (0: one the OS picks) and the others the port it got. A worker that
// fails ends the process, as an uncaught error on the engine's thread would: the ledger is replayed on
// restart and nothing acknowledged depends on a worker. docs/decisions-threads.md says why.

import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import type { TargetPolicy } from '../hooks/hook-targets.js';
import type { ConnectionLimits } from '../http/server-limits.js';
import { workerEntry } from '../threads/worker-entry.js';
import { WORKER_YOUNG_GENERATION_MB } from './node-flags.js';
import type { WorkerOrder, WorkerReport } from './engine-channel.js';
import type { EngineHost } from './engine-host.js';

const ENTRY = workerEntry(import.meta.url, 'http-worker');
/** The prefix of the workers' thread names; the engine's thread is the process's main thread. */
export const HTTP_THREAD_NAME = 'folio-http-';
/** How long a worker may take to start listening (it loads the app's modules first). */
const WORKER_START_MS_MAX = 60_000;
/** How long shutdown waits for a worker to finish its requests (it closes their connections after 10 s). */
const WORKER_STOP_MS_MAX = 15_000;

/** What every worker's app is built with: plain data, as it crosses to the thread. */
export interface WorkerSettings {
  version: string;
  logLevel: string;
  secretKey: string;
  tokenizationKey?: Uint8Array;
  bodyBytesMax?: number;
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
  feed: boolean;
  inspector: boolean;
  /** A replicated node: requests are switched on the engine's state, and replication answered from it. */
  replication: boolean;
  /** The limits of each worker's server; connections_max is the process's, shared out. */
  limits: ConnectionLimits;
}

export interface WorkerData {
  index: number;
  settings: WorkerSettings;
  channel: MessagePort;
  listen: { host: string; port: number };
}

export interface HttpWorkersOptions {
  count: number;
  host: string;
  port: number;
  settings: WorkerSettings;
  engine: EngineHost;
  /** A worker failed after it started: the process must stop. */
  onFailure(error: Error): void;
}

export class HttpWorkers {
  private stopping = false;
  private closing: Promise<void> | undefined;

  private constructor(private readonly workers: Worker[], readonly address: { address: string; port: number }) {}

  static async start(options: HttpWorkersOptions): Promise<HttpWorkers> {
    const { count } = options;
    // Each worker's server admits its share, so the process as a whole admits connections_max.
    const limits = { ...options.settings.limits, connections_max: Math.max(1, Math.floor(options.settings.limits.connections_max / count)) };
    const settings = { ...options.settings, limits };
    const workers: Worker[] = [];
    let address = { address: options.host, port: options.port };
    let pool: HttpWorkers | undefined;
    const failed = (error: Error): void => {
      if (pool?.stopping) return;
      options.onFailure(error);
    };
    try {
      for (let index = 0; index < count; index += 1) {
        const { worker, listening } = startWorker(index, settings, options, address.port, failed);
        workers.push(worker);
        address = await listening;
      }
    } catch (error) {
      await Promise.all(workers.map((worker) => worker.terminate()));
      throw error;
    }
    pool = new HttpWorkers(workers, address);
    return pool;
  }

  /** Every worker stops accepting, finishes its requests (bounded) and ends; again, the same wait. */
  close(): Promise<void> {
    this.closing ??= this.closeAll();
    return this.closing;
  }

  private async closeAll(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.workers.map(async (worker) => {
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
}

function startWorker(
  index: number, settings: WorkerSettings, options: HttpWorkersOptions, port: number, failed: (error: Error) => void,
): { worker: Worker; listening: Promise<{ address: string; port: number }> } {
  const channel = new MessageChannel();
  const data: WorkerData = { index, settings, channel: channel.port2, listen: { host: options.host, port } };
  // The thread's name is what the OS shows (and the bench reads, bench/process-cpu.ts): 15 characters at most.
  const worker = new Worker(ENTRY.file, { name: `${HTTP_THREAD_NAME}${index}`, workerData: data, transferList: [channel.port2], execArgv: ENTRY.execArgv, resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB } });
  options.engine.attach(channel.port1);
  const listening = new Promise<{ address: string; port: number }>((resolve, reject) => {
    let started = false;
    const timer = setTimeout(() => reject(new Error(`HTTP worker ${index} did not start listening in ${WORKER_START_MS_MAX} ms`)), WORKER_START_MS_MAX);
    worker.on('message', (message: WorkerReport) => {
      if (message.kind === 'listening') {
        started = true;
        clearTimeout(timer);
        resolve({ address: message.address, port: message.port });
      } else if (message.kind === 'failed') {
        clearTimeout(timer);
        const error = new Error(`HTTP worker ${index}: ${message.message}`);
        if (started) failed(error);
        else reject(error);
      }
    });
    worker.on('error', (error) => {
      clearTimeout(timer);
      if (started) failed(error);
      else reject(error);
    });
    worker.on('exit', (code) => {
      clearTimeout(timer);
      const error = new Error(`HTTP worker ${index} exited (code ${code})`);
      if (started) failed(error);
      else reject(error);
    });
  });
  return { worker, listening };
}
