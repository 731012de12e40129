// The main thread's handle on a projector running in its own worker thread (runtime/index-projector-worker.ts): it
// passes on how far the log is durable, mirrors the checkpoint from the worker's batch reports, and
// stops or finishes the worker. A worker that dies unexpectedly is reported as an error and started
// again from its checkpoint after a pause. A worker that keeps dying at the same checkpoint (an event
// too large for its heap, say) is restarted with growing pauses, taking one event per batch, and after
// POISON_ATTEMPTS deaths the event after its checkpoint is reported as poison: no crash loop.

import { Worker } from 'node:worker_threads';
import type { WorkerEntry } from '../threads/worker-entry.js';
import { POISON_ATTEMPTS, type BatchReport, type PoisonReport, type ProjectorLimits } from './projector.js';
import type { FromWorker, ProjectorWorkerSettings, ToWorker } from './projector-messages.js';
import type { RecordBatch } from './pushed-records.js';
import { backoffMs } from '../engine/backoff.js';

const RESTART_DELAY_MS = 1_000;
const RESTART_DELAY_MS_MAX = 60_000;
/**
 * The projector allocates a lot of short-lived objects (decoded events, rows, JSON); a larger young
 * generation than the default lets more of them die young instead of being promoted. 64 MB cut its GC
 * time by about a third against the default; 32 MB keeps most of that and about 60 MB less resident.
 */
const YOUNG_GENERATION_MB = 32;
/**
 * The projector's live data is small (the balance cache and one batch, about a hundred megabytes at
 * most), but V8 lets an uncapped heap fill with garbage to several times that before collecting: with a
 * million balances the thread held over 300 MB for 100 MB live. The cap makes it collect sooner.
 * Exceeding it ends the thread, which is restarted from its checkpoint (see the exit handler).
 */
const OLD_GENERATION_MB = 192;

export interface ProjectorThreadOptions {
  /** The thread's module (runtime/index-projector-worker.ts: it opens the log, which the index does not know). */
  worker: WorkerEntry;
  walDir: string;
  indexFile: string;
  build: boolean;
  durableSeq: () => number;
  limits?: Partial<ProjectorLimits>;
  onError?: (error: Error) => void;
  /** A poison event found by the worker or by its deaths, or (undefined) got past. */
  onPoison?: (poison: PoisonReport | undefined) => void;
}

export class ProjectorThread {
  private worker!: Worker;
  private _checkpoint = 0;
  private _textCheckpoint = 0;
  private postedSeq = 0;
  private ending: 'stop' | 'finish' | undefined;
  private settle: { resolve: (checkpoint: number) => void; reject: (error: Error) => void } | undefined;
  private readonly batchListeners: Array<(report: BatchReport) => void> = [];
  private restartTimer: NodeJS.Timeout | undefined;
  private exited = false;
  private readonly seqWaiters: Array<{ seq: number; resolve: () => void; reject: (error: Error) => void }> = [];
  /** Unexpected deaths in a row without the checkpoint moving, and the checkpoint they happened at. */
  private deaths = { count: 0, checkpoint: -1, since: 0 };
  private deathPoison = false;
  /** Set once the first worker was ready: later deaths, even before ready, are restarted. */
  private everReady = false;

  private constructor(private readonly options: ProjectorThreadOptions) {}

  /** Starts the worker; resolves once it has opened the index (its schema exists from then on). */
  static async start(options: ProjectorThreadOptions): Promise<ProjectorThread> {
    const thread = new ProjectorThread(options);
    await thread.spawn(options.build);
    return thread;
  }

  get checkpoint(): number {
    return this._checkpoint;
  }

  /** The seq every row of which is in the full-text indexes (as the worker last reported it). */
  get textCheckpoint(): number {
    return this._textCheckpoint;
  }

  /** Someone waits for the full-text indexes: they take the projector's next turn. */
  wantText(): void {
    if (!this.ending && !this.exited) this.post({ type: 'text' });
  }

  onBatch(listener: (report: BatchReport) => void): void {
    this.batchListeners.push(listener);
  }

  /** Resolves once the worker's checkpoint reaches `seq`; rejects if the worker fails first. */
  reached(seq: number): Promise<void> {
    if (this._checkpoint >= seq) return Promise.resolve();
    this.wake();
    return new Promise((resolve, reject) => this.seqWaiters.push({ seq, resolve, reject }));
  }

  private advanced(checkpoint: number): void {
    this._checkpoint = checkpoint;
    if (this.deaths.count > 0 && checkpoint > this.deaths.checkpoint) {
      this.deaths = { count: 0, checkpoint: -1, since: 0 };
      if (this.deathPoison) this.options.onPoison?.(undefined);
      this.deathPoison = false;
    }
    for (let index = this.seqWaiters.length - 1; index >= 0; index -= 1) {
      const waiter = this.seqWaiters[index] as (typeof this.seqWaiters)[number];
      if (waiter.seq > checkpoint) continue;
      this.seqWaiters.splice(index, 1);
      waiter.resolve();
    }
  }

  private failed(error: Error): void {
    for (const waiter of this.seqWaiters.splice(0)) waiter.reject(error);
  }

  /**
   * The log is durable further: let the worker know (once per new seq), with the records that became
   * durable if the caller has them (their buffer is transferred to the worker).
   */
  wake(batch?: RecordBatch): void {
    const seq = this.options.durableSeq();
    if (seq <= this.postedSeq || this.ending) return;
    this.postedSeq = seq;
    if (batch) this.worker.postMessage({ type: 'durable', seq, batch } satisfies ToWorker, [batch.buffer]);
    else this.post({ type: 'durable', seq });
  }

  /** Stops the worker after its current batch; its writer connection is closed when this resolves. */
  stop(): Promise<void> {
    clearTimeout(this.restartTimer);
    if (this.ending || this.exited) {
      this.ending ??= 'stop';
      return Promise.resolve();
    }
    this.ending = 'stop';
    return this.ended(() => this.post({ type: 'stop' })).then(() => undefined);
  }

  /** Build mode: catch up to at least `minSeq`, then close the file so it can be moved. */
  finish(minSeq: number): Promise<number> {
    if (this.exited) return Promise.reject(new Error('the index projector thread has stopped'));
    this.wake();
    this.ending = 'finish';
    return this.ended(() => this.post({ type: 'finish', minSeq }));
  }

  private ended(send: () => void): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      this.settle = { resolve, reject };
      send();
    });
  }

  private post(message: ToWorker): void {
    this.worker.postMessage(message);
  }

  /** Counts a death at the current checkpoint, reports poison when they repeat; returns the restart pause. */
  private noteDeath(): number {
    const same = this.deaths.checkpoint === this._checkpoint;
    this.deaths = same ? { ...this.deaths, count: this.deaths.count + 1 } : { count: 1, checkpoint: this._checkpoint, since: Date.now() };
    if (this.deaths.count >= POISON_ATTEMPTS) {
      this.deathPoison = true;
      this.options.onPoison?.({
        seq: this._checkpoint + 1,
        message: `the index projector thread ended ${this.deaths.count} times in a row on this event (out of memory?)`,
        attempts: this.deaths.count,
        since: this.deaths.since,
      });
    }
    return backoffMs(RESTART_DELAY_MS, RESTART_DELAY_MS_MAX, this.deaths.count);
  }

  private spawn(build: boolean): Promise<void> {
    const settings: ProjectorWorkerSettings = {
      walDir: this.options.walDir,
      indexFile: this.options.indexFile,
      build,
      durableSeq: this.options.durableSeq(),
      // After a second death at one checkpoint, one event per batch: the next death names the event.
      limits: this.deaths.count >= 2 ? { ...this.options.limits, isolate: true } : this.options.limits,
    };
    this.postedSeq = settings.durableSeq;
    this.exited = false;
    const entry = this.options.worker;
    this.worker = new Worker(entry.file, { workerData: settings, execArgv: entry.execArgv, resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB, maxOldGenerationSizeMb: OLD_GENERATION_MB } });
    return new Promise<void>((resolve, reject) => {
      let ready = false;
      this.worker.on('message', (message: FromWorker) => {
        switch (message.type) {
          case 'ready':
            ready = true;
            this.everReady = true;
            this._checkpoint = message.checkpoint;
            this._textCheckpoint = message.text_checkpoint;
            resolve();
            this.wake();
            return;
          case 'batch':
            this._textCheckpoint = message.text_checkpoint;
            this.advanced(message.checkpoint);
            for (const listener of this.batchListeners) listener(message);
            return;
          case 'error':
            this.options.onError?.(new Error(message.message));
            return;
          case 'poison':
            this.options.onPoison?.(message.poison);
            return;
          case 'stopped':
            this.settle?.resolve(this._checkpoint);
            return;
          case 'finished':
            this._checkpoint = message.checkpoint;
            this._textCheckpoint = message.checkpoint;
            this.settle?.resolve(message.checkpoint);
            return;
          case 'failed': {
            const error = new Error(message.message);
            this.failed(error);
            if (!ready) reject(error);
            else if (this.settle) this.settle.reject(error);
            else this.options.onError?.(error);
          }
        }
      });
      this.worker.on('error', (error) => {
        if (!ready) reject(error);
        else this.options.onError?.(error);
      });
      this.worker.on('exit', () => {
        this.exited = true;
        // Before its first start the thread's failure is the caller's (start() rejects); a restarted thread
        // that ends before it is ready is one more death, restarted like the others.
        if ((!ready && !this.everReady) || this.ending) {
          this.settle?.resolve(this._checkpoint);
          this.failed(new Error('the index projector thread has stopped'));
          return;
        }
        const ended = new Error('the index projector thread stopped unexpectedly');
        this.failed(ended);
        if (this.options.build) {
          this.options.onError?.(ended);
          return;
        }
        // The live index starts again from its checkpoint, after a pause that grows while it keeps dying there.
        this.options.onError?.(new Error('the index projector thread stopped unexpectedly; restarting it'));
        this.restartTimer = setTimeout(() => void this.spawn(false).catch((error: Error) => this.options.onError?.(error)), this.noteDeath());
        this.restartTimer.unref();
      });
    });
  }
}
