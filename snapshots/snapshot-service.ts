// The server's side of snapshotting: starts the snapshot worker, tells it each time the log's durable
// seq moves (one small message per commit), and turns on-demand requests into promises. Snapshots are
// an accelerator for start-up, not part of the write path: if the worker fails, the server logs it and
// keeps serving; requests for a snapshot then fail with the reason.

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { SnapshotInfo, SnapshotSchedule, ToMain, ToWorker, WorkerConfig } from './snapshot-messages.js';

export type { SnapshotInfo, SnapshotSchedule } from './snapshot-messages.js';

/**
 * Production defaults. A replay runs at several hundred thousand events a second, so a snapshot every
 * 500,000 events bounds the replay part of a restart to about a second; ten minutes covers quiet
 * periods; three snapshots leave two older fallbacks should the newest be damaged.
 */
export const DEFAULT_SNAPSHOT_SCHEDULE: SnapshotSchedule = { every_events: 500_000, every_seconds: 600, keep: 3 };

/**
 * How long stop() lets a snapshot being written finish before ending the worker. Shutdown should stay
 * quick; a snapshot cut short leaves only a temp file, removed at the next start.
 */
const STOP_WAIT_MS = 2_000;

export interface SnapshotLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface SnapshotServiceOptions {
  dataDir: string;
  schedule: SnapshotSchedule;
  durableSeq: number;
  logger?: SnapshotLogger;
}

interface Waiter {
  resolve(info: SnapshotInfo): void;
  reject(error: Error): void;
}

export class SnapshotError extends Error {
  override readonly name = 'SnapshotError';
}

export class SnapshotService {
  private readonly worker: Worker;
  private readonly waiters = new Map<number, Waiter>();
  private nextId = 1;
  private failure: Error | undefined;
  private stopped = false;
  private _latest: SnapshotInfo | undefined;
  private readonly ready: Promise<void>;
  private readonly exited: Promise<void>;

  private constructor(private readonly options: SnapshotServiceOptions) {
    const config: WorkerConfig = { ...options.schedule, dataDir: options.dataDir, durableSeq: options.durableSeq };
    this.worker = new Worker(workerFile(), { workerData: config });
    // The worker must never keep a stopping server alive.
    this.worker.unref();
    let markReady!: () => void;
    this.ready = new Promise((resolve) => (markReady = resolve));
    this.worker.on('message', (message: ToMain) => this.onMessage(message, markReady));
    this.worker.on('error', (error) => this.fail(error));
    this.exited = new Promise((resolve) => {
      this.worker.on('exit', (code) => {
        if (!this.stopped) this.fail(new SnapshotError(`snapshot worker exited (${code})`));
        markReady();
        resolve();
      });
    });
  }

  static start(options: SnapshotServiceOptions): SnapshotService {
    return new SnapshotService(options);
  }

  /** The newest snapshot the worker knows of. */
  get latest(): SnapshotInfo | undefined {
    return this._latest;
  }

  /** Resolves once the worker's replica has caught up with the log as it was at start. */
  whenReady(): Promise<void> {
    return this.ready;
  }

  durable(seq: number): void {
    if (this.failure || this.stopped) return;
    this.post({ type: 'durable', seq });
  }

  /** Writes a snapshot of everything durable up to `seq` (or finds one already written there). */
  snapshotNow(seq: number): Promise<SnapshotInfo> {
    if (this.failure) return Promise.reject(new SnapshotError(`snapshots are unavailable: ${this.failure.message}`));
    if (this.stopped) return Promise.reject(new SnapshotError('the server is shutting down'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiters.set(id, { resolve, reject });
      this.post({ type: 'snapshot', id, seq });
    });
  }

  /** Lets a snapshot in progress finish (bounded wait), then ends the worker. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.worker.ref();
    this.post({ type: 'stop' });
    const timer = setTimeout(() => void this.worker.terminate(), STOP_WAIT_MS);
    await this.exited;
    clearTimeout(timer);
    for (const waiter of this.waiters.values()) waiter.reject(new SnapshotError('the server is shutting down'));
    this.waiters.clear();
  }

  private post(message: ToWorker): void {
    this.worker.postMessage(message);
  }

  private onMessage(message: ToMain, markReady: () => void): void {
    const logger = this.options.logger;
    switch (message.type) {
      case 'ready':
        this._latest = message.snapshot;
        logger?.info({ seq: message.seq, snapshot_seq: message.snapshot?.seq ?? 0 }, 'snapshot worker ready');
        markReady();
        return;
      case 'written': {
        this._latest = message.info;
        if (message.info.created) {
          logger?.info({ ...message.info, reason: message.reason, removed: message.removed?.length ?? 0 }, 'snapshot written');
        }
        if (message.id !== undefined) this.settle(message.id)?.resolve(message.info);
        return;
      }
      case 'failed':
        this.settle(message.id)?.reject(new SnapshotError(message.message));
        return;
      case 'log':
        logger?.[message.level](message.fields, message.msg);
        return;
      case 'stopped':
        return;
    }
  }

  private settle(id: number): Waiter | undefined {
    const waiter = this.waiters.get(id);
    this.waiters.delete(id);
    return waiter;
  }

  private fail(error: Error): void {
    if (this.failure) return;
    this.failure = error;
    this.options.logger?.error({ err: error.message }, 'snapshot worker failed; the server goes on without snapshots');
    for (const waiter of this.waiters.values()) waiter.reject(new SnapshotError(`snapshots are unavailable: ${error.message}`));
    this.waiters.clear();
  }
}

/** The worker's module beside this one: .js when built, .ts when the tests run the sources. */
function workerFile(): URL {
  const here = fileURLToPath(import.meta.url);
  return new URL('./snapshot-worker' + path.extname(here), import.meta.url);
}
