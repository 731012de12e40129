// A standby's tail of the group's log: reads the records after its own last one from PostgreSQL, in
// order, at most `records_per_read_max` at a time, and hands each to LedgerRuntime.copyRecord, the one
// path copied records take (a cutover's follower uses it too): checksum, position and chain checked,
// events applied as replay applies them, the same bytes appended to the local log. It reads again at
// once while reads come back full, and every `poll_ms` otherwise; it pauses while the node's own log or
// lookups are behind (LedgerRuntime.overloaded). A lost connection is opened again on the next read. A
// record that does not fit the local log (CorruptRecordError) stops the tail and is reported as
// divergence: the node then rejoins, which checks its log against the group's from the start. A record
// that fits but cannot be applied stops the tail as a failure (as it would stop start-up replay): the
// state may hold part of it, so the node must not go on.
//
// Lag: each record's age when read (PostgreSQL's clock: commit to read) plus the time until it was
// applied here (this node's clock), so no two clocks are compared. The percentiles count records applied
// once the tail had caught up (a node catching up after a restart is behind by design, not lagging).

import { CorruptRecordError } from '../wal/log-record-codec.js';
import { dropClient, type PostgresClient } from './postgres/postgres-client.js';
import { recordsAfter } from './postgres/postgres-log-store.js';
import type { LedgerRuntime } from '../runtime/ledger-runtime.js';

export interface TailSettings {
  poll_ms: number;
  records_per_read_max: number;
}

export const DEFAULT_TAIL_SETTINGS: TailSettings = { poll_ms: 10, records_per_read_max: 256 };
/** Lag samples kept for the percentiles the status reports. */
const LAG_SAMPLES_MAX = 4_096;

export class StandbyTail {
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;
  private client: PostgresClient | undefined;
  private reading: Promise<boolean> | undefined;
  private _groupEndSeq = 0;
  private _lagMs = 0;
  /** Recent lags with when they were observed (performance.now()), a ring of LAG_SAMPLES_MAX. */
  private readonly lagSamples: Array<{ at: number; lag: number }> = [];
  private lagSampleAt = 0;
  /** Set at the first read that finds nothing new: records copied while catching up are not lag samples. */
  private caughtUpOnce = false;

  constructor(
    private readonly runtime: LedgerRuntime,
    private readonly connect: () => Promise<PostgresClient>,
    private readonly settings: TailSettings,
    private readonly onDiverged: (error: CorruptRecordError) => void,
    private readonly onFailed: (error: Error) => void,
  ) {
    this._groupEndSeq = runtime.log.appendedSeq;
  }

  /** The end of the group's log as last read (at least what this node has applied). */
  get groupEndSeq(): number {
    return Math.max(this._groupEndSeq, this.runtime.log.appendedSeq);
  }

  /** Lag of the last record applied; 0 once a read finds nothing new. */
  get lagMs(): number {
    return this._lagMs;
  }

  /** Percentiles of the recent lag samples (ms), those of the last `windowMs` when given: for status and the bench. */
  lagPercentiles(windowMs?: number): { p50: number; p99: number; max: number; samples: number } {
    const since = windowMs === undefined ? -Infinity : performance.now() - windowMs;
    const sorted = this.lagSamples.filter((sample) => sample.at >= since).map((sample) => sample.lag).sort((a, b) => a - b);
    const tenths = (ms: number): number => Math.round(ms * 10) / 10;
    const at = (fraction: number): number => tenths(sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ?? 0);
    return { p50: at(0.5), p99: at(0.99), max: tenths(sorted.at(-1) ?? 0), samples: sorted.length };
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  /** Stops reading; a read under way finishes without applying anything more. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.reading?.catch(() => undefined);
    dropClient(this.client);
    this.client = undefined;
  }

  /**
   * Reads until a read finds nothing new (a node that has just taken the next term: no record of an
   * older term can land after that). The tail must be stopped. Throws what a read throws.
   */
  async catchUp(): Promise<void> {
    while (await this.readOnce(true)) {
      // keep reading: the last read was full
    }
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.poll(), delayMs);
  }

  private async poll(): Promise<void> {
    this.timer = undefined;
    if (this.stopped) return;
    let more = false;
    try {
      if (this.runtime.overloaded() === undefined) {
        this.reading = this.readOnce(false);
        more = await this.reading;
      }
    } catch (error) {
      if (error instanceof CorruptRecordError) {
        this.stopped = true;
        this.onDiverged(error);
        return;
      }
      if (error instanceof NotApplied) {
        this.stopped = true;
        this.onFailed(error.cause as Error);
        return;
      }
      dropClient(this.client); // read again on a new connection
      this.client = undefined;
      this.schedule(Math.max(this.settings.poll_ms, 100));
      return;
    } finally {
      this.reading = undefined;
    }
    this.schedule(more ? 0 : this.settings.poll_ms);
  }

  /** One read; true when it came back full (there may be more). */
  private async readOnce(catchingUp: boolean): Promise<boolean> {
    this.client ??= await this.connect();
    const after = this.runtime.log.appendedSeq;
    const readAt = performance.now();
    const records = await recordsAfter(this.client, after, this.settings.records_per_read_max);
    if (this.stopped && !catchingUp) return false;
    for (const stored of records) {
      const expected = this.runtime.log.appendedSeq + 1;
      if (stored.first_seq !== expected) throw new CorruptRecordError(stored.first_seq, `the group's log has no record at seq ${expected}`);
      try {
        this.runtime.copyRecord(stored.bytes);
      } catch (error) {
        if (error instanceof CorruptRecordError) throw error;
        throw new NotApplied(error);
      }
      this.observeLag(stored.age_ms + (performance.now() - readAt));
    }
    const last = records.at(-1);
    if (last) this._groupEndSeq = Math.max(this._groupEndSeq, last.last_seq);
    else {
      this._lagMs = 0;
      this.caughtUpOnce = true;
    }
    const full = records.length === this.settings.records_per_read_max;
    // A read that was not full reached the end of the group's log as it stood when the read began: a
    // request waiting since before then for a seq past that end waits for a seq the group does not have.
    if (!full) this.runtime.groupLogRead(this.groupEndSeq, readAt);
    return full;
  }

  private observeLag(lagMs: number): void {
    this._lagMs = lagMs;
    if (!this.caughtUpOnce) return;
    const sample = { at: performance.now(), lag: lagMs };
    if (this.lagSamples.length < LAG_SAMPLES_MAX) this.lagSamples.push(sample);
    else this.lagSamples[this.lagSampleAt] = sample;
    this.lagSampleAt = (this.lagSampleAt + 1) % LAG_SAMPLES_MAX;
  }
}

/** A record that fits the log but could not be applied (the error is its cause). */
export class NotApplied extends Error {
  override readonly name = 'NotApplied';
  constructor(cause: unknown) {
    super(`a record of the group's log could not be applied: ${(cause as Error).message}`, { cause });
  }
}
