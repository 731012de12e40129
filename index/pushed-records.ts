// Durable log records handed to the projector's thread by the main thread, so that following the log
// does not read it back through LMDB's memory map. Pages read through the map stay resident in the
// process, which for a log of a million events was half a gigabyte of its RSS; records passed along
// here are freed once projected.
//
// The main thread packs the records of one wake-up into one buffer and transfers it (no copy). The
// projector reads events from these records while they cover what it needs, and from the log itself
// for anything they do not (after a restart, while a rebuild catches up, or when the queue overflowed
// and dropped its oldest records): the two sources give the same bytes, checked the same way. Given a
// spill file (record-spill.ts), records past the cap go there instead of being dropped, so a projector
// that falls far behind still does not read the log back through its map.

import type { LedgerEvent, LoggedEvent } from '../engine/events.js';
import type { RecordSpill } from './record-spill.js';

/** A log record that has become durable, as the log hands it over (wal/lmdb-log.ts satisfies it). */
export interface DurableRecord {
  first_seq: number;
  last_seq: number;
  /** Absent for a record sealed before any durable-record listener was registered. */
  bytes?: Buffer;
}

/** How pushed records are read: the log's own record decoding (wal/log-record-codec.ts), handed in by the app. */
export interface RecordCodec {
  decode(firstSeq: number, bytes: Buffer): { checksum: Buffer; prev_checksum: Buffer; first_seq: number; events: LedgerEvent[] };
  /** The error for a record that does not chain to the one before it. */
  corrupt(recordKey: number, detail: string): Error;
}

export interface RecordBatch {
  /** The records' bytes, one after another (transferred, not copied, between the threads). */
  buffer: ArrayBuffer;
  records: Array<{ first_seq: number; last_seq: number; offset: number; length: number }>;
}

/** Packs durable records into one transferable batch. */
export function packRecords(records: ReadonlyArray<Required<DurableRecord>>): RecordBatch {
  let total = 0;
  for (const record of records) total += record.bytes.length;
  const buffer = new ArrayBuffer(total);
  const bytes = new Uint8Array(buffer);
  const entries: RecordBatch['records'] = [];
  let offset = 0;
  for (const record of records) {
    bytes.set(record.bytes, offset);
    entries.push({ first_seq: record.first_seq, last_seq: record.last_seq, offset, length: record.bytes.length });
    offset += record.bytes.length;
  }
  return { buffer, records: entries };
}

interface Held {
  first_seq: number;
  last_seq: number;
  bytes: Buffer;
}

/** A record written to the spill file: older than every held one. */
interface Spilled {
  first_seq: number;
  last_seq: number;
  offset: number;
  length: number;
}

/** Bytes of records held in memory; past it the oldest go to the spill file, or without one are dropped (read from the log instead). */
export const PUSHED_BYTES_MAX = 64 * 1024 * 1024;

export class PushedRecords {
  private held: Held[] = [];
  private heldBytes = 0;
  /** Records moved to the spill file, oldest first; each one's successor is the next, then held[0]. */
  private spilled: Spilled[] = [];

  constructor(private readonly codec: RecordCodec, private readonly bytesMax = PUSHED_BYTES_MAX, private readonly spill?: RecordSpill) {}

  push(batch: RecordBatch): void {
    for (const entry of batch.records) {
      const last = this.held[this.held.length - 1] ?? this.spilled[this.spilled.length - 1];
      // Records arrive in log order; anything else means a restart of the stream: start over.
      if (last && entry.first_seq !== last.last_seq + 1) this.clear();
      this.held.push({ first_seq: entry.first_seq, last_seq: entry.last_seq, bytes: Buffer.from(batch.buffer, entry.offset, entry.length) });
      this.heldBytes += entry.length;
    }
    while (this.heldBytes > this.bytesMax && this.held.length > 0) this.spillFirst();
  }

  /** Records held in the spill file. */
  get spilledRecords(): number {
    return this.spilled.length;
  }

  get bytes(): number {
    return this.heldBytes;
  }

  private clear(): void {
    this.held = [];
    this.heldBytes = 0;
    this.clearSpilled();
  }

  private clearSpilled(): void {
    this.spilled = [];
    this.spill?.empty();
  }

  /** Moves the oldest held record to the spill file if it continues what is there, else drops it. */
  private spillFirst(): void {
    const first = this.held[0] as Held;
    const last = this.spilled[this.spilled.length - 1];
    const continues = last === undefined || last.last_seq + 1 === first.first_seq;
    const offset = continues ? this.spill?.append(first.bytes) : undefined;
    if (offset !== undefined) this.spilled.push({ first_seq: first.first_seq, last_seq: first.last_seq, offset, length: first.bytes.length });
    this.dropFirst();
  }

  /** Lets go of every record (spilled, then held) that ends before `seq`. */
  private passBefore(seq: number): void {
    while (this.spilled.length > 0 && (this.spilled[0] as Spilled).last_seq < seq) {
      this.spilled.shift();
      if (this.spilled.length === 0) this.spill?.empty();
    }
    if (this.spilled.length === 0) while (this.held.length > 0 && (this.held[0] as Held).last_seq < seq) this.dropFirst();
  }

  /** The oldest record still here with its bytes, or undefined; a spill that cannot be read is given up. */
  private oldest(): Held | undefined {
    const spilled = this.spilled[0];
    if (!spilled) return this.held[0];
    const bytes = this.spill?.read(spilled.offset, spilled.length);
    if (bytes) return { first_seq: spilled.first_seq, last_seq: spilled.last_seq, bytes };
    // Unreadable: whatever it held is read from the log instead.
    this.clearSpilled();
    return this.held[0];
  }

  private dropFirst(): void {
    const first = this.held.shift() as Held;
    this.heldBytes -= first.bytes.length;
  }

  /**
   * Events `fromSeq`..`toSeq` in order: from held records where they cover the range, from `fallback`
   * (the log) where they do not. Records are let go as they are passed (a batch that is rolled back and
   * read again finds them in the log).
   */
  *read(fromSeq: number, toSeq: number, fallback: (fromSeq: number, toSeq: number) => Iterable<LoggedEvent>): Generator<LoggedEvent> {
    let next = fromSeq;
    let previousChecksum: Buffer | undefined;
    while (next <= toSeq) {
      // Pushes may arrive while this generator waits between events: look the record up afresh.
      this.passBefore(next);
      const record = this.oldest();
      if (!record || record.first_seq > next) {
        const end = record ? Math.min(toSeq, record.first_seq - 1) : toSeq;
        for (const logged of fallback(next, end)) {
          yield logged;
          next = logged.seq + 1;
        }
        if (next <= end) return; // the log ends earlier than asked: nothing more to read
        previousChecksum = undefined;
        continue;
      }
      const logRecord = this.codec.decode(record.first_seq, record.bytes);
      if (previousChecksum && !logRecord.prev_checksum.equals(previousChecksum)) {
        throw this.codec.corrupt(record.first_seq, 'does not chain to the record before it');
      }
      previousChecksum = logRecord.checksum;
      for (let position = 0; position < logRecord.events.length; position += 1) {
        const seq = logRecord.first_seq + position;
        if (seq < next) continue;
        if (seq > toSeq) return;
        yield { seq, event: logRecord.events[position] as LoggedEvent['event'] };
        next = seq + 1;
      }
    }
  }
}
