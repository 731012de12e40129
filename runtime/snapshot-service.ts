// The server's side of snapshotting: decides when a snapshot is due (every N durable events, every T
// seconds when anything changed, on request) and runs each one as a job in a short-lived worker thread
// (snapshot-worker.ts), one job at a time. Between jobs nothing is kept: no second copy of the state,
// no per-commit work beyond comparing two numbers. Snapshots are an accelerator for start-up, not part
// of the write path: a failed job is logged, the server keeps serving, and the next trigger tries again.

import { Worker } from 'node:worker_threads';
import { workerEntry } from '../threads/worker-entry.js';
import { WORKER_YOUNG_GENERATION_MB } from '../threads/node-flags.js';
import { newCrashCounter } from '../snapshots/crash-points.js';
import { listSnapshots, snapshotDirectoryIn } from '../snapshots/snapshot-directory.js';
import type { SnapshotInfo, SnapshotSchedule, ToMain, WorkerConfig } from './snapshot-messages.js';

export type { SnapshotInfo, SnapshotSchedule } from './snapshot-messages.js';

const WORKER = workerEntry(import.meta.url, 'snapshot-worker');

/**
 * Production defaults. A replay runs at a few hundred thousand events a second, so a snapshot every
 * 500,000 events keeps the replay part of a restart to seconds; ten minutes covers quiet periods;
 * three snapshots leave two older fallbacks should the newest be damaged.
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
  /** How long a request waits for its snapshot (default SNAPSHOT_REQUEST_WAIT_MS). */
  requestWaitMs?: number;
}

interface Job {
  targetSeq: number;
  worker: Worker;
  done: Promise<SnapshotInfo | undefined>;
}

export class SnapshotError extends Error {
  override readonly name = 'SnapshotError';
  /** Set when asking again later can succeed (the jobs ahead of this request took too long). */
  retryAfterSeconds?: number;
}

/**
 * How long a request for a snapshot waits for one at or past its seq. Jobs run one at a time and a
 * request may queue behind others; past this it is told to come back rather than held without bound.
 */
export const SNAPSHOT_REQUEST_WAIT_MS = 30_000;
const SNAPSHOT_RETRY_AFTER_SECONDS = 5;

export class SnapshotService {
  private durableSeq: number;
  /** Seq of the newest snapshot written or found; what "events since the last snapshot" counts from. */
  private lastSeq: number;
  private job: Job | undefined;
  private interval: NodeJS.Timeout | undefined;
  private stopped = false;
  private _latest: SnapshotInfo | undefined;
  private readonly crashCounter = newCrashCounter();

  private constructor(private readonly options: SnapshotServiceOptions) {
    this.durableSeq = options.durableSeq;
    this.lastSeq = listSnapshots(snapshotDirectoryIn(options.dataDir))[0]?.seq ?? 0;
    if (options.schedule.every_seconds > 0) {
      this.interval = setInterval(() => {
        if (this.durableSeq > this.lastSeq) void this.startJob(this.durableSeq, 'interval').catch(() => undefined);
      }, options.schedule.every_seconds * 1000);
      this.interval.unref();
    }
  }

  static start(options: SnapshotServiceOptions): SnapshotService {
    return new SnapshotService(options);
  }

  /** The newest snapshot this service wrote or found. */
  get latest(): SnapshotInfo | undefined {
    return this._latest;
  }

  /** The log made more events durable: a snapshot is due once enough accumulated since the last. */
  durable(seq: number): void {
    if (seq > this.durableSeq) this.durableSeq = seq;
    const every = this.options.schedule.every_events;
    if (every > 0 && !this.job && !this.stopped && this.durableSeq - this.lastSeq >= every) {
      void this.startJob(this.durableSeq, 'events').catch(() => undefined);
    }
  }

  /** Writes a snapshot of everything durable up to `seq` (or finds one already written there). */
  async snapshotNow(seq: number): Promise<SnapshotInfo> {
    if (seq > this.durableSeq) this.durableSeq = seq;
    const waitMs = this.options.requestWaitMs ?? SNAPSHOT_REQUEST_WAIT_MS;
    const deadline = Date.now() + waitMs;
    const late = `no snapshot reached seq ${seq} within ${waitMs} ms`;
    while (this.job) {
      const running = this.job;
      const info = await beforeDeadline(running.done.catch(() => undefined), deadline, late);
      if (info && info.seq >= seq) return { ...info, created: false };
    }
    const info = await beforeDeadline(this.startJob(seq, 'request'), deadline, late);
    if (!info) throw new SnapshotError('the log is empty: nothing to snapshot');
    return info;
  }

  /** Lets a job in progress finish (bounded wait), then ends it. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.interval);
    const job = this.job;
    if (!job) return;
    job.worker.ref();
    const timer = setTimeout(() => void job.worker.terminate(), STOP_WAIT_MS);
    await job.done.catch(() => undefined);
    clearTimeout(timer);
  }

  private startJob(targetSeq: number, reason: string): Promise<SnapshotInfo | undefined> {
    if (this.stopped) return Promise.reject(new SnapshotError('the server is shutting down'));
    if (this.job) return this.job.done;
    const config: WorkerConfig = {
      dataDir: this.options.dataDir, targetSeq, keep: this.options.schedule.keep, reason, crashCounter: this.crashCounter,
    };
    const worker = new Worker(WORKER.file, { workerData: config, execArgv: WORKER.execArgv, resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB } });
    // A job must never keep a stopping server alive.
    worker.unref();
    const done = new Promise<SnapshotInfo | undefined>((resolve, reject) => {
      let answered = false;
      worker.on('message', (message: ToMain) => {
        if (message.type === 'log') {
          this.options.logger?.[message.level](message.fields, message.msg);
          return;
        }
        answered = true;
        if (message.type === 'failed') {
          this.options.logger?.error({ err: message.message, reason }, 'snapshot failed; the server goes on without it');
          reject(new SnapshotError(message.message));
          return;
        }
        this._latest = message.info;
        this.lastSeq = Math.max(this.lastSeq, message.info.seq);
        if (message.info.created) {
          this.options.logger?.info({ ...message.info, reason, removed: message.removed?.length ?? 0 }, 'snapshot written');
        }
        resolve(message.info);
      });
      worker.on('error', (error) => {
        answered = true;
        this.options.logger?.error({ err: error.message, reason }, 'snapshot job failed; the server goes on without it');
        reject(new SnapshotError(error.message));
      });
      worker.on('exit', (code) => {
        if (!answered) reject(new SnapshotError(`snapshot job ended (${code}) before answering`));
      });
    });
    const job: Job = { targetSeq, worker, done };
    this.job = job;
    void done.catch(() => undefined).finally(() => {
      if (this.job === job) this.job = undefined;
      // Events that arrived during the job may already make the next one due.
      this.durable(this.durableSeq);
    });
    return done;
  }
}

/** The job's answer, or a SnapshotError asking to retry once the deadline has passed (the job runs on). */
async function beforeDeadline<T>(work: Promise<T>, deadline: number, late: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new SnapshotError(`${late}; one is being written, ask again`);
      error.retryAfterSeconds = SNAPSHOT_RETRY_AFTER_SECONDS;
      reject(error);
    }, Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}
