// The one feed of durable log records, for everything that follows the log inside the process: each
// record is handed to the subscribers once it is durable (on disk and, on a replicated leader, committed
// by the group), in log order, with its bytes and the events in it, and the newest of them are kept so
// that a reader a little behind (hook delivery, woken at every commit) reads the events the engine built
// instead of reading the record back out of LMDB and decoding it again. The index's projector takes the
// bytes (its thread decodes them); hook delivery takes the events.
//
// Kept only while someone reads (within READER_IDLE_MS of the last read: hook delivery with no hook and no
// webhook never reads, and then nothing is kept, so records die young as they did before): the newest
// records, at most `bytes_held_max` of them by their size in the log (an event may be a
// bulk of thousands of transfers, so a count of events would bound nothing). A read that starts before them (a
// reader far behind, or after a restart) reads the log itself for that part, checked as the log checks
// every read, and the held records for the rest: the two give the same events (a record's events are
// never changed once it is sealed, engine/events.ts).

import { assert } from '../engine/assert.js';
import type { LedgerEvent, LoggedEvent } from '../engine/events.js';
import type { DurableRecord, LmdbLog } from './lmdb-log.js';

export interface DurableRecordsLimits {
  /**
   * The newest durable records kept in memory for readers a little behind, by their bytes in the log.
   * Their events live on meanwhile: each survives young-generation collections and is promoted, so the
   * window is kept to what a reader woken at every commit needs, a few commits' worth.
   */
  bytes_held_max: number;
}

export const DEFAULT_DURABLE_RECORDS_LIMITS: DurableRecordsLimits = { bytes_held_max: 4 * 1024 * 1024 };

/** Records are kept for readers only while one has read within this long. */
const READER_IDLE_MS = 1_000;

interface Held {
  first_seq: number;
  last_seq: number;
  events: readonly LedgerEvent[];
  bytes: number;
}

export class DurableRecords {
  private readonly held: Held[] = [];
  /** Index of the oldest record still held (records are dropped from the front without shifting). */
  private head = 0;
  private bytesHeld = 0;
  /** When events were last read (performance.now()). */
  private lastReadAt = Number.NEGATIVE_INFINITY;
  private readonly listeners: Array<(record: DurableRecord) => void> = [];
  private readonly limits: DurableRecordsLimits;

  constructor(private readonly log: LmdbLog, limits: Partial<DurableRecordsLimits> = {}) {
    this.limits = { ...DEFAULT_DURABLE_RECORDS_LIMITS, ...limits };
    assert(this.limits.bytes_held_max >= 0, 'bytes_held_max must not be negative');
    log.onDurableRecord((record) => this.durable(record));
  }

  /** The seq of the last durable event. */
  get durableSeq(): number {
    return this.log.durableSeq;
  }

  /** Called with each record once it is durable, in log order. */
  subscribe(listener: (record: DurableRecord) => void): void {
    this.listeners.push(listener);
  }

  /** The durable events from `fromSeq` to `toSeq` (at most the durable seq), in order. */
  *read(fromSeq: number, toSeq: number): Generator<LoggedEvent> {
    this.lastReadAt = performance.now();
    const last = Math.min(toSeq, this.log.durableSeq);
    let seq = fromSeq;
    while (seq <= last) {
      const oldestHeld = this.head < this.held.length ? (this.held[this.head] as Held).first_seq : last + 1;
      if (seq < oldestHeld) {
        const upTo = Math.min(last, oldestHeld - 1);
        for (const logged of this.log.read(seq, upTo)) {
          yield logged;
          seq = logged.seq + 1;
        }
        assert(seq > upTo, `the log ended at seq ${seq - 1}, before its durable seq ${upTo}`);
        continue;
      }
      // A reader may pause between events while records are dropped from the front: look again each record.
      const record = this.held[this.heldIndexOf(seq)] as Held;
      for (let position = seq - record.first_seq; position < record.events.length && seq <= last; position += 1) {
        yield { seq, event: record.events[position] as LedgerEvent };
        seq += 1;
      }
    }
  }

  /** The position of the held record holding `seq`, which must be held (records are in seq order: a binary search). */
  private heldIndexOf(seq: number): number {
    let low = this.head;
    let high = this.held.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if ((this.held[middle] as Held).first_seq <= seq) low = middle;
      else high = middle - 1;
    }
    return low;
  }

  private durable(record: DurableRecord): void {
    const reading = performance.now() - this.lastReadAt < READER_IDLE_MS;
    if (reading && record.events && record.bytes && this.limits.bytes_held_max > 0) this.hold(record.first_seq, record.last_seq, record.events, record.bytes.length);
    else this.dropAll();
    for (const listener of this.listeners) listener(record);
  }

  private hold(firstSeq: number, lastSeq: number, events: readonly LedgerEvent[], bytes: number): void {
    const newest = this.held[this.held.length - 1];
    // Held records must follow on from each other; a gap (a record without events) starts over.
    if (this.head < this.held.length && newest && newest.last_seq + 1 !== firstSeq) this.dropAll();
    this.held.push({ first_seq: firstSeq, last_seq: lastSeq, events, bytes });
    this.bytesHeld += bytes;
    while (this.bytesHeld > this.limits.bytes_held_max && this.head < this.held.length) {
      this.bytesHeld -= (this.held[this.head] as Held).bytes;
      this.held[this.head] = undefined as unknown as Held;
      this.head += 1;
    }
    if (this.head > 1_024 && this.head * 2 > this.held.length) {
      this.held.splice(0, this.head);
      this.head = 0;
    }
  }

  private dropAll(): void {
    this.held.length = 0;
    this.head = 0;
    this.bytesHeld = 0;
  }
}
