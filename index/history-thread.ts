// The main thread's handle on the balance history's follower, which runs in a thread of its own
// (runtime/history-worker.ts): it hands over each durable record's bytes as the log reports it (a copy, packed
// per turn of the event loop: the query index's projector gets the same records on its own schedule),
// and restarts the thread from its checkpoint if it dies. Nothing here waits for the follower: readers
// learn its progress from shared memory (history-progress.ts).

import { Worker } from 'node:worker_threads';
import type { WorkerEntry } from '../threads/worker-entry.js';
import { backoffMs } from '../engine/backoff.js';
import type { HistoryFollowerLimits } from './history-follower.js';
import { packRecords, type DurableRecord } from './pushed-records.js';

const RESTART_DELAY_MS = 1_000;
const RESTART_DELAY_MS_MAX = 60_000;
/** The follower's heap: its live data is the balances it keeps and one batch of records. */
const YOUNG_GENERATION_MB = 8;
const OLD_GENERATION_MB = 64;
/** Bytes of durable records held between two hand-overs; past it the follower reads the log instead. */
const HELD_BYTES_MAX = 16 * 1024 * 1024;
/** What the follower's thread is called (bench/process-cpu.ts reads thread names). */
export const HISTORY_THREAD_NAME = 'folio-history';

export interface HistoryWorkerSettings {
  walDir: string;
  historyDir: string;
  durableSeq: number;
  progress: SharedArrayBuffer;
  limits?: Partial<HistoryFollowerLimits>;
}

export type ToHistoryWorker = { type: 'durable'; seq: number; batch?: ReturnType<typeof packRecords> } | { type: 'stop' };
export type FromHistoryWorker = { type: 'ready' } | { type: 'error'; message: string } | { type: 'stopped' } | { type: 'failed'; message: string };

export interface HistoryThreadOptions {
  /** The thread's module (runtime/history-worker.ts: it opens the log, which index/ does not know). */
  worker: WorkerEntry;
  walDir: string;
  historyDir: string;
  progress: SharedArrayBuffer;
  durableSeq: () => number;
  limits?: Partial<HistoryFollowerLimits>;
  onError?: (error: Error) => void;
}

export class HistoryThread {
  private worker!: Worker;
  private held: Array<Required<DurableRecord>> = [];
  private heldBytes = 0;
  private handOver: NodeJS.Immediate | undefined;
  private postedSeq = 0;
  private stopping: Promise<void> | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private deaths = 0;
  private exited = false;

  private constructor(private readonly options: HistoryThreadOptions) {}

  /** Starts the follower; resolves once it has opened the store (and emptied one that does not fit the log). */
  static async start(options: HistoryThreadOptions): Promise<HistoryThread> {
    const thread = new HistoryThread(options);
    await thread.spawn();
    return thread;
  }

  /** The log made a record durable: its bytes go to the follower at the end of this turn. */
  logDurable(record: DurableRecord): void {
    if (this.stopping) return;
    const bytes = record.bytes;
    const last = this.held[this.held.length - 1];
    if (!bytes || (last && record.first_seq !== last.last_seq + 1) || this.heldBytes + bytes.length > HELD_BYTES_MAX) {
      // The follower reads what it is not handed from the log.
      this.held = [];
      this.heldBytes = 0;
    } else {
      this.held.push({ ...record, bytes });
      this.heldBytes += bytes.length;
    }
    this.handOver ??= setImmediate(() => this.post());
  }

  private post(): void {
    this.handOver = undefined;
    const seq = this.options.durableSeq();
    const records = this.held;
    this.held = [];
    this.heldBytes = 0;
    if (seq <= this.postedSeq || this.stopping) return;
    this.postedSeq = seq;
    if (records.length === 0) {
      this.worker.postMessage({ type: 'durable', seq } satisfies ToHistoryWorker);
      return;
    }
    const batch = packRecords(records);
    this.worker.postMessage({ type: 'durable', seq, batch } satisfies ToHistoryWorker, [batch.buffer]);
  }

  /** Stops the follower after its current batch; its store is closed when this resolves. */
  stop(): Promise<void> {
    clearTimeout(this.restartTimer);
    if (this.handOver) clearImmediate(this.handOver);
    this.stopping ??= new Promise<void>((resolve) => {
      if (this.exited) {
        resolve();
        return;
      }
      this.worker.once('exit', () => resolve());
      this.worker.postMessage({ type: 'stop' } satisfies ToHistoryWorker);
    });
    return this.stopping;
  }

  private spawn(): Promise<void> {
    const settings: HistoryWorkerSettings = {
      walDir: this.options.walDir,
      historyDir: this.options.historyDir,
      durableSeq: this.options.durableSeq(),
      progress: this.options.progress,
      limits: this.options.limits,
    };
    this.postedSeq = settings.durableSeq;
    this.exited = false;
    const entry = this.options.worker;
    this.worker = new Worker(entry.file, {
      name: HISTORY_THREAD_NAME, workerData: settings, execArgv: entry.execArgv,
      resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB, maxOldGenerationSizeMb: OLD_GENERATION_MB },
    });
    return new Promise<void>((resolve, reject) => {
      let ready = false;
      this.worker.on('message', (message: FromHistoryWorker) => {
        switch (message.type) {
          case 'ready':
            ready = true;
            this.deaths = 0;
            resolve();
            return;
          case 'error':
            this.options.onError?.(new Error(message.message));
            return;
          case 'failed':
            if (!ready) reject(new Error(message.message));
            else this.options.onError?.(new Error(message.message));
            return;
          case 'stopped':
            return;
        }
      });
      this.worker.on('error', (error) => {
        if (!ready) reject(error);
        else this.options.onError?.(error);
      });
      this.worker.on('exit', () => {
        this.exited = true;
        if (this.stopping || !ready) return;
        // Started again from its checkpoint, after a pause that grows while it keeps dying.
        this.deaths += 1;
        this.options.onError?.(new Error('the balance history thread stopped unexpectedly; restarting it'));
        this.restartTimer = setTimeout(() => void this.spawn().catch((error: Error) => this.options.onError?.(error)), backoffMs(RESTART_DELAY_MS, RESTART_DELAY_MS_MAX, this.deaths));
        this.restartTimer.unref();
      });
    });
  }
}
