// The bytes of one log record. A record holds the events of one group commit:
//
//   [ 32-byte SHA-256 of the payload ][ payload ]
//   payload, format 2:  u8 0xF2, f64 first_seq, 32-byte prev_checksum, u32 event count, events
//                       (codec/event-codec.ts)
//   payload, format 1:  msgpack { first_seq, prev_checksum, events }   (read, no longer written)
//
// The leading checksum lets a reader reject a damaged record on its own; `prev_checksum` (the previous
// record's checksum, zeros for the first) chains the records so a verifier can tell that none was
// altered, dropped or reordered. A format-1 payload is a msgpack map, which never starts with the byte
// 0xF2 (a negative integer in msgpack), so the first byte tells the formats apart.

import { createHash } from 'node:crypto';
import { Unpackr } from 'msgpackr';
import type { LedgerEvent } from '../engine/events.js';
import { ByteReader, ByteWriter } from '../codec/byte-writer.js';
import { readEvent, writeEvent, type EventReadOptions } from '../codec/event-codec.js';

export const CHECKSUM_BYTES = 32;
export const GENESIS_CHECKSUM: Buffer = Buffer.alloc(CHECKSUM_BYTES);

export interface LogRecordContents {
  first_seq: number;
  prev_checksum: Buffer;
  events: LedgerEvent[];
}

export interface DecodedLogRecord extends LogRecordContents {
  checksum: Buffer;
  last_seq: number;
}

/** A log record that cannot be trusted. Start-up and verification stop on it and name it. */
export class CorruptRecordError extends Error {
  override readonly name = 'CorruptRecordError';
  constructor(readonly recordKey: number, detail: string) {
    super(`log record ${recordKey} is corrupt: ${detail}`);
  }
}

const FORMAT_2 = 0xf2;
/** Format-1 records (msgpack) are still read. */
const unpackr = new Unpackr({ useRecords: true, useBigIntExtension: true });
const ZERO_CHECKSUM = Buffer.alloc(CHECKSUM_BYTES);
/** Reused for every record: one growing buffer instead of one per record. */
const writer = new ByteWriter(256 * 1024);

export function encodeLogRecord(logRecord: LogRecordContents): Buffer {
  writer.reset();
  writer.raw(ZERO_CHECKSUM); // room for the checksum, filled in below
  writer.u8(FORMAT_2);
  writer.f64(logRecord.first_seq);
  writer.raw(logRecord.prev_checksum);
  writer.u32(logRecord.events.length);
  for (const event of logRecord.events) writeEvent(writer, event);
  const record = Buffer.from(writer.bytes());
  createHash('sha256').update(record.subarray(CHECKSUM_BYTES)).digest().copy(record, 0);
  return record;
}

/** The checksum stored at the front of an encoded record. */
export function checksumOf(record: Uint8Array): Buffer {
  return Buffer.from(record.buffer, record.byteOffset, CHECKSUM_BYTES);
}

/**
 * A record whose checksum has been verified and whose header has been read; its events are decoded
 * one at a time as they are iterated. A reader going through a large record (a bulk request, or a
 * group commit of thousands of events) then holds one event at a time instead of all of them, which
 * keeps them short-lived for the garbage collector.
 */
export interface OpenedLogRecord {
  first_seq: number;
  prev_checksum: Buffer;
  checksum: Buffer;
  last_seq: number;
  events(): Generator<LedgerEvent>;
  /** The events with the bytes each takes in the record (format 1: the record's bytes shared out evenly). */
  sizedEvents(): Generator<SizedEvent>;
}

/** An event as decoded, and how many bytes of its record it took: what a reader's byte budget counts. */
export interface SizedEvent {
  event: LedgerEvent;
  bytes: number;
}

/**
 * `options`: what each event is read with (codec/event-codec.ts readEvent); a reader that follows balances
 * alone leaves the transaction records out. Records of the first format are decoded whole either way.
 */
export function openLogRecord(recordKey: number, record: Uint8Array, options?: EventReadOptions): OpenedLogRecord {
  if (record.length <= CHECKSUM_BYTES) throw new CorruptRecordError(recordKey, `only ${record.length} bytes`);
  const bytes = Buffer.from(record.buffer, record.byteOffset, record.length);
  const stored = bytes.subarray(0, CHECKSUM_BYTES);
  const payload = bytes.subarray(CHECKSUM_BYTES);
  const actual = createHash('sha256').update(payload).digest();
  if (!actual.equals(stored)) throw new CorruptRecordError(recordKey, 'checksum mismatch');
  const undecodable = (error: unknown): CorruptRecordError =>
    new CorruptRecordError(recordKey, `undecodable payload (${(error as Error).message})`);
  let header: { first_seq: number; prev_checksum: Uint8Array; count: number };
  let events: (size?: { bytes: number }) => Generator<LedgerEvent>;
  try {
    if (payload[0] === FORMAT_2) {
      const head = new ByteReader(payload, 1);
      header = { first_seq: head.f64(), prev_checksum: head.bytes(CHECKSUM_BYTES), count: head.u32() };
      const count = header.count;
      // `size`, when given, is told each event's bytes before the event is yielded.
      events = function* format2Events(size?: { bytes: number }): Generator<LedgerEvent> {
        const input = new ByteReader(payload, FORMAT_2_EVENTS_AT);
        for (let index = 0; index < count; index += 1) {
          const start = input.position;
          let event: LedgerEvent;
          try {
            event = readEvent(input, options);
          } catch (error) {
            throw undecodable(error);
          }
          // ByteReader does not check bounds (reads past the end give undefined or short text), so an
          // event cut short can decode without an error: it is refused here, before anyone sees it.
          if (input.position > payload.length) throw undecodable(new Error(`event ${index} runs past the end of the record`));
          if (size) size.bytes = input.position - start;
          yield event;
        }
        if (input.position !== payload.length) throw undecodable(new Error(`${payload.length - input.position} bytes after the last event`));
      };
    } else {
      const decoded = unpackr.unpack(payload) as LogRecordContents;
      const list = Array.isArray(decoded.events) ? decoded.events : [];
      header = { first_seq: decoded.first_seq, prev_checksum: decoded.prev_checksum, count: list.length };
      const share = Math.ceil(payload.length / Math.max(1, list.length));
      events = function* format1Events(size?: { bytes: number }): Generator<LedgerEvent> {
        if (size) size.bytes = share;
        yield* list;
      };
    }
  } catch (error) {
    throw undecodable(error);
  }
  if (header.first_seq !== recordKey || header.count === 0) throw new CorruptRecordError(recordKey, 'header does not match its key');
  return {
    first_seq: header.first_seq,
    prev_checksum: Buffer.from(header.prev_checksum),
    checksum: Buffer.from(stored),
    last_seq: header.first_seq + header.count - 1,
    events: () => events(),
    *sizedEvents() {
      const size = { bytes: 0 };
      for (const event of events(size)) yield { event, bytes: size.bytes };
    },
  };
}

/**
 * Records from `entries` (key and bytes, in key order, as LMDB's range gives them), each checked against
 * its checksum and linked to the one before it; the first one read, if it is the log's first, must start
 * the chain. Throws CorruptRecordError naming the first record that fails.
 */
export function* checkedRecords(entries: Iterable<{ key: number; value: Uint8Array }>): Generator<OpenedLogRecord> {
  let previous: OpenedLogRecord | undefined;
  for (const { key, value } of entries) {
    const logRecord = openLogRecord(key, value);
    if (previous) {
      if (logRecord.first_seq !== previous.last_seq + 1) throw new CorruptRecordError(key, `expected first seq ${previous.last_seq + 1}`);
      if (!logRecord.prev_checksum.equals(previous.checksum)) throw new CorruptRecordError(key, 'does not chain to the record before it');
    } else if (key === 1 && !logRecord.prev_checksum.equals(GENESIS_CHECKSUM)) {
      throw new CorruptRecordError(key, 'first record does not start the chain');
    }
    previous = logRecord;
    yield logRecord;
  }
}

/** The events of `records` from `fromSeq` to `toSeq`, with their sizes, each decoded only as it is pulled. */
export function* sizedEventsIn(records: Iterable<OpenedLogRecord>, fromSeq: number, toSeq: number): Generator<SizedEvent & { seq: number }> {
  for (const logRecord of records) {
    if (logRecord.first_seq > toSeq) return;
    let seq = logRecord.first_seq;
    for (const { event, bytes } of logRecord.sizedEvents()) {
      if (seq > toSeq) return;
      if (seq >= fromSeq) yield { seq, event, bytes };
      seq += 1;
    }
  }
}

/** A record decoded whole. */
export function decodeLogRecord(recordKey: number, record: Uint8Array, options?: EventReadOptions): DecodedLogRecord {
  return decodeOpened(openLogRecord(recordKey, record, options));
}

export function decodeOpened(logRecord: OpenedLogRecord): DecodedLogRecord {
  const { first_seq, prev_checksum, checksum, last_seq } = logRecord;
  return { first_seq, prev_checksum, checksum, last_seq, events: [...logRecord.events()] };
}

/** Where a format-2 payload's events start: format byte, first seq, previous checksum, count. */
const FORMAT_2_EVENTS_AT = 1 + 8 + CHECKSUM_BYTES + 4;
