// Fair use: a token bucket per API key (and one for the master key, when one is configured), shared by
// every HTTP thread of the process, so a key's rate holds however many workers serve it.
//
// Each bucket is one BigInt64 cell of a SharedArrayBuffer that every HTTP thread holds (workers get it in
// their workerData, workers/http-workers.ts). The cell keeps the bucket as the generic cell rate
// algorithm does: the "theoretical arrival time" (TAT), in nanoseconds of the process's monotonic clock
// (process.hrtime.bigint(), one clock for all threads). A request at `now` is admitted when
// max(TAT, now) + interval - now <= burst * interval, and moves TAT there; one compareExchange makes the
// check and the take one step, so two threads can never both take the last token. It is a token bucket
// of `burst` tokens refilled one per `interval`: TAT - now is how much of the bucket is used up.
// Everything is integer arithmetic on bigints: interval = ceil(1e9 / requests_per_second) ns (rounded
// up, so a key never gets more than its rate), nothing decides admission with a float.
//
// Which cell is whose: cell 0 is the master key's; an API key's cell is given out, densely, by the one
// owner of the buffer (BucketCells, on the engine's thread: workers ask it once per key through the
// engine channel, HostCalls.rateBucketCell, and remember the answer). The buffer grows as keys take
// cells (a growable SharedArrayBuffer: every thread's view follows), up to RATE_BUCKETS_MAX; keys beyond
// that share the last cell, which only makes them stricter.

import type { ApiKeyRateLimit } from '../../engine/records.js';

/** Bounds of a key's rate and burst (whole numbers). */
export const REQUESTS_PER_SECOND_MAX = 100_000;
export const RATE_BURST_MAX = 100_000;
/** Cells for this many keys at most (8 bytes each: 8 MiB of address space, used as keys take cells). */
export const RATE_BUCKETS_MAX = 1_048_576;
const INITIAL_BUCKETS = 1_024;
const NANOSECONDS_PER_SECOND = 1_000_000_000n;
/** The master key's cell. */
export const MASTER_BUCKET = 0;

/** What a bucket answered: admitted or not, and what the RateLimit-* headers and Retry-After say. */
export interface RateDecision {
  admitted: boolean;
  /** The bucket's size (RateLimit-Limit). */
  limit: number;
  /** Requests it would still admit at once (RateLimit-Remaining). */
  remaining: number;
  /** Whole seconds until the bucket is full again (RateLimit-Reset). */
  resetSeconds: number;
  /** Refused: whole seconds, at least 1, until one request is admitted again (Retry-After). */
  retryAfterSeconds: number;
}

/** Whether `limit` allows no more than `bound` does, in rate and in burst. */
export function withinRateLimit(limit: ApiKeyRateLimit, bound: ApiKeyRateLimit): boolean {
  return limit.requests_per_second <= bound.requests_per_second && limit.burst <= bound.burst;
}

function secondsUp(nanoseconds: bigint): number {
  return Number((nanoseconds + NANOSECONDS_PER_SECOND - 1n) / NANOSECONDS_PER_SECOND);
}

/**
 * The one step of a bucket, for a caller that keeps its TAT itself (the control plane's buckets):
 * the decision and the TAT to keep when admitted.
 */
export function bucketStep(tat: bigint, now: bigint, limit: ApiKeyRateLimit): { decision: RateDecision; next: bigint } {
  const interval = (NANOSECONDS_PER_SECOND + BigInt(limit.requests_per_second) - 1n) / BigInt(limit.requests_per_second);
  const tolerance = interval * BigInt(limit.burst);
  const start = tat > now ? tat : now;
  const next = start + interval;
  if (next - now > tolerance) {
    const remaining = 0;
    return { next: tat, decision: { admitted: false, limit: limit.burst, remaining, resetSeconds: secondsUp(start - now), retryAfterSeconds: Math.max(1, secondsUp(next - tolerance - now)) } };
  }
  const remaining = Number((tolerance - (next - now)) / interval);
  return { next, decision: { admitted: true, limit: limit.burst, remaining, resetSeconds: secondsUp(next - now), retryAfterSeconds: 0 } };
}

/** The buckets' cells as one thread holds them (any thread: the cells are shared). */
export class RateBuckets {
  private readonly cells: BigInt64Array;

  constructor(readonly buffer: SharedArrayBuffer) {
    // Length-tracking: the view follows the buffer as its owner grows it.
    this.cells = new BigInt64Array(buffer);
  }

  /** Takes one request from cell `cell`'s bucket at `now` (nanoseconds, process.hrtime.bigint()). */
  admit(cell: number, limit: ApiKeyRateLimit, now: bigint = process.hrtime.bigint()): RateDecision {
    for (;;) {
      const tat = Atomics.load(this.cells, cell);
      const { decision, next } = bucketStep(tat, now, limit);
      if (!decision.admitted) return decision;
      if (Atomics.compareExchange(this.cells, cell, tat, next) === tat) return decision;
    }
  }
}

/** Where a thread finds the cell of an API key: at once, or after asking the buffer's owner. */
export interface BucketCellSource {
  cellOf(apiKeyId: string): number | Promise<number>;
}

/** The owner of the buckets' buffer: gives out cells (the engine's thread, or HTTP on it). */
export class BucketCells implements BucketCellSource {
  readonly buffer = new SharedArrayBuffer(INITIAL_BUCKETS * BigInt64Array.BYTES_PER_ELEMENT, { maxByteLength: RATE_BUCKETS_MAX * BigInt64Array.BYTES_PER_ELEMENT });
  readonly buckets = new RateBuckets(this.buffer);
  private readonly cells = new Map<string, number>();

  cellOf(apiKeyId: string): number {
    const known = this.cells.get(apiKeyId);
    if (known !== undefined) return known;
    const cell = Math.min(this.cells.size + 1, RATE_BUCKETS_MAX - 1);
    const bytes = (cell + 1) * BigInt64Array.BYTES_PER_ELEMENT;
    if (bytes > this.buffer.byteLength) this.buffer.grow(Math.min(this.buffer.maxByteLength, Math.max(bytes, this.buffer.byteLength * 2)));
    this.cells.set(apiKeyId, cell);
    return cell;
  }
}

/** A worker's cells: asked of the owner once per key, then remembered (a key's cell never changes). */
export class RemoteBucketCells implements BucketCellSource {
  private readonly cells = new Map<string, number>();

  constructor(private readonly ask: (apiKeyId: string) => Promise<number>) {}

  cellOf(apiKeyId: string): number | Promise<number> {
    return this.cells.get(apiKeyId) ?? this.ask(apiKeyId).then((cell) => {
      this.cells.set(apiKeyId, cell);
      return cell;
    });
  }
}

/** What the server limits: a default for keys made without a rate, and the master key (absent: none). */
export interface RateLimitSettings {
  keyDefault?: ApiKeyRateLimit;
  master?: ApiKeyRateLimit;
}

/** The buckets of one HTTP thread: the shared cells, who finds a key's cell, and the settings. */
export interface RateLimiting {
  buckets: RateBuckets;
  cells: BucketCellSource;
  settings: RateLimitSettings;
}

/** The headers every answer to a limited caller carries; a refusal adds Retry-After. */
export function rateLimitHeaders(decision: RateDecision): Record<string, string> {
  const headers: Record<string, string> = {
    'RateLimit-Limit': String(decision.limit),
    'RateLimit-Remaining': String(decision.remaining),
    'RateLimit-Reset': String(decision.resetSeconds),
  };
  if (!decision.admitted) headers['Retry-After'] = String(decision.retryAfterSeconds);
  return headers;
}
