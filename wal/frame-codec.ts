// The bytes of one log record. A record (a "frame") holds the events of one group commit:
//
//   [ 32-byte SHA-256 of the payload ][ payload = msgpack { first_seq, prev_checksum, events } ]
//
// The leading checksum lets a reader reject a damaged record on its own; `prev_checksum` (the previous
// record's checksum, zeros for the first) chains the records so a verifier can tell that none was
// altered, dropped or reordered. Events are self-describing msgpack with bigint support, so a record
// decodes without any outside schema.

import { createHash } from 'node:crypto';
import { Packr, Unpackr } from 'msgpackr';
import type { LedgerEvent } from '../engine/events.js';

export const CHECKSUM_BYTES = 32;
export const GENESIS_CHECKSUM: Buffer = Buffer.alloc(CHECKSUM_BYTES);

export interface Frame {
  first_seq: number;
  prev_checksum: Buffer;
  events: LedgerEvent[];
}

export interface DecodedFrame extends Frame {
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

const packr = new Packr({ useRecords: true, useBigIntExtension: true });
const unpackr = new Unpackr({ useRecords: true, useBigIntExtension: true });

export function encodeFrame(frame: Frame): Buffer {
  const payload = packr.pack({ first_seq: frame.first_seq, prev_checksum: frame.prev_checksum, events: frame.events });
  const record = Buffer.allocUnsafe(CHECKSUM_BYTES + payload.length);
  createHash('sha256').update(payload).digest().copy(record, 0);
  payload.copy(record, CHECKSUM_BYTES);
  return record;
}

/** The checksum stored at the front of an encoded record. */
export function checksumOf(record: Uint8Array): Buffer {
  return Buffer.from(record.buffer, record.byteOffset, CHECKSUM_BYTES);
}

export function decodeFrame(recordKey: number, record: Uint8Array): DecodedFrame {
  if (record.length <= CHECKSUM_BYTES) throw new CorruptRecordError(recordKey, `only ${record.length} bytes`);
  const bytes = Buffer.from(record.buffer, record.byteOffset, record.length);
  const stored = bytes.subarray(0, CHECKSUM_BYTES);
  const payload = bytes.subarray(CHECKSUM_BYTES);
  const actual = createHash('sha256').update(payload).digest();
  if (!actual.equals(stored)) throw new CorruptRecordError(recordKey, 'checksum mismatch');
  let decoded: Frame;
  try {
    decoded = unpackr.unpack(payload) as Frame;
  } catch (error) {
    throw new CorruptRecordError(recordKey, `undecodable payload (${(error as Error).message})`);
  }
  if (decoded.first_seq !== recordKey || !Array.isArray(decoded.events) || decoded.events.length === 0) {
    throw new CorruptRecordError(recordKey, 'header does not match its key');
  }
  return {
    first_seq: decoded.first_seq,
    prev_checksum: Buffer.from(decoded.prev_checksum),
    events: decoded.events,
    checksum: Buffer.from(stored),
    last_seq: decoded.first_seq + decoded.events.length - 1,
  };
}
