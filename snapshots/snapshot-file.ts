// The bytes of one snapshot file:
//
//   [0, 4096)      header region: "FOLIOSNP", u32 LE header length, header JSON, zero padding
//   [4096, 4128)   SHA-256 of the header region
//   [4128, ...)    body: chunks of u32 LE length + msgpack [section name, items], then the balance
//                  table (cold-balances.ts); the body's SHA-256 and length, and where the table
//                  starts, are in the header
//
// The body is streamed to disk chunk by chunk (a million balances never sit in one buffer) and the
// header is written last into the space kept for it, so the header can name the body's hash and
// length. A file whose length disagrees with its header is torn; a checksum mismatch means it is
// corrupt. Either way the reader refuses it with a SnapshotFileError saying which.
//
// Amounts are bigints of any size: msgpackr's bigint extension carries those beyond 64 bits, as in the
// log's own records.

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { Packr, Unpackr } from 'msgpackr';
import type { LedgerState } from '../engine/ledger-state.js';
import { BalanceTableError, ColdBalanceTable, writeBalanceTable } from './cold-balances.js';
import { SCALAR_FIELDS, STORED_SECTIONS } from './state-layout.js';

/** 2: balances in a table of their own, loaded without decoding (1: balances as msgpack chunks). */
export const SNAPSHOT_FORMAT_VERSION = 2;
const MAGIC = Buffer.from('FOLIOSNP', 'ascii');
const HEADER_REGION_BYTES = 4096;
const CHECKSUM_BYTES = 32;
export const BODY_OFFSET = HEADER_REGION_BYTES + CHECKSUM_BYTES;
/** Items per body chunk: small enough to bound the writer's memory, large enough to pack quickly. */
const CHUNK_ITEMS = 10_000;
/**
 * Body bytes written between fdatasync calls. Syncing as we go keeps the page cache from holding a
 * whole snapshot's worth of dirty pages whose final flush would queue the log's own fsyncs behind it
 * (which showed as multi-second stalls of acknowledged writes).
 */
const SYNC_EVERY_BYTES = 8 * 1024 * 1024;
/** Name of the body chunk that carries the scalar fields. */
const SCALARS_CHUNK = '.scalars';

export interface SnapshotHeader {
  format_version: number;
  /** The last log event the state includes. */
  seq: number;
  /** The log record that ends at `seq`: its key and checksum tie the snapshot to this log's history. */
  log_record_key: number;
  log_checksum: string;
  /** stateHash() of the state (state-hash.ts). */
  state_hash: string;
  /** Wall-clock time the snapshot was written (epoch ms). */
  created_at: number;
  /** Items per stored section, for listings. */
  counts: Record<string, number>;
  /** Where the balance table lies in the body. */
  balance_table: { at: number; bytes: number };
  body_bytes: number;
  body_sha256: string;
}

export type SnapshotFault = 'torn' | 'corrupt' | 'unsupported' | 'unreadable';

/** A snapshot file that cannot be used, and why. */
export class SnapshotFileError extends Error {
  override readonly name = 'SnapshotFileError';
  constructor(readonly file: string, readonly fault: SnapshotFault, readonly detail: string) {
    super(`snapshot ${file} is ${fault}: ${detail}`);
  }
}

const packr = new Packr({ useRecords: true, useBigIntExtension: true });
const unpackr = new Unpackr({ useRecords: true, useBigIntExtension: true });

export interface WriteHooks {
  /** Called after each body chunk is written (crash-point tests stop the process here). */
  afterChunk?(chunkIndex: number): void;
}

/**
 * Writes the state as a snapshot into the open file `fd` (from offset 0) and returns its header. The
 * caller owns fsync, rename and the directory.
 */
export function writeSnapshot(
  fd: number,
  state: LedgerState,
  identity: Omit<SnapshotHeader, 'format_version' | 'counts' | 'balance_table' | 'body_bytes' | 'body_sha256'>,
  hooks: WriteHooks = {},
): SnapshotHeader {
  const bodyHash = createHash('sha256');
  let position = BODY_OFFSET;
  let syncedAt = position;
  let chunkIndex = 0;
  const emit = (bytes: Buffer): void => {
    bodyHash.update(bytes);
    position += writeFully(fd, bytes, position);
    if (position - syncedAt >= SYNC_EVERY_BYTES) {
      fs.fdatasyncSync(fd);
      syncedAt = position;
    }
    hooks.afterChunk?.(chunkIndex);
    chunkIndex += 1;
  };
  const writeChunk = (name: string, items: unknown): void => {
    const payload = packr.pack([name, items]);
    const framed = Buffer.allocUnsafe(4 + payload.length);
    framed.writeUInt32LE(payload.length, 0);
    payload.copy(framed, 4);
    emit(framed);
  };

  const scalars: Record<string, number> = {};
  for (const field of SCALAR_FIELDS) scalars[field.name] = field.capture(state);
  writeChunk(SCALARS_CHUNK, scalars);
  const counts: Record<string, number> = {};
  for (const section of STORED_SECTIONS) {
    let batch: unknown[] = [];
    let count = 0;
    for (const item of section.capture(state)) {
      batch.push(item);
      count += 1;
      if (batch.length >= CHUNK_ITEMS) {
        writeChunk(section.name, batch);
        batch = [];
      }
    }
    if (batch.length > 0) writeChunk(section.name, batch);
    counts[section.name] = count;
  }
  const tableAt = position - BODY_OFFSET;
  const tableBytes = writeBalanceTable(state.balances, emit);
  counts.balances = state.balances.size;

  const header: SnapshotHeader = {
    format_version: SNAPSHOT_FORMAT_VERSION,
    ...identity,
    counts,
    balance_table: { at: tableAt, bytes: tableBytes },
    body_bytes: position - BODY_OFFSET,
    body_sha256: bodyHash.digest('hex'),
  };
  writeFully(fd, encodeHeaderRegion(header), 0);
  return header;
}

function encodeHeaderRegion(header: SnapshotHeader): Buffer {
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const region = Buffer.alloc(BODY_OFFSET);
  if (MAGIC.length + 4 + json.length > HEADER_REGION_BYTES) throw new Error('snapshot header does not fit its region');
  MAGIC.copy(region, 0);
  region.writeUInt32LE(json.length, MAGIC.length);
  json.copy(region, MAGIC.length + 4);
  createHash('sha256').update(region.subarray(0, HEADER_REGION_BYTES)).digest().copy(region, HEADER_REGION_BYTES);
  return region;
}

function writeFully(fd: number, bytes: Uint8Array, position: number): number {
  let written = 0;
  while (written < bytes.length) written += fs.writeSync(fd, bytes, written, bytes.length - written, position + written);
  return bytes.length;
}

/** Reads and checks the header alone (cheap: listings and choosing a snapshot to load). */
export function readHeader(file: string): SnapshotHeader {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (error) {
    throw new SnapshotFileError(file, 'unreadable', (error as Error).message);
  }
  try {
    const region = Buffer.alloc(BODY_OFFSET);
    const read = fs.readSync(fd, region, 0, BODY_OFFSET, 0);
    const header = parseHeaderRegion(file, region.subarray(0, read));
    const size = fs.fstatSync(fd).size;
    if (size !== BODY_OFFSET + header.body_bytes) {
      throw new SnapshotFileError(file, 'torn', `${size} bytes where the header promises ${BODY_OFFSET + header.body_bytes}`);
    }
    return header;
  } finally {
    fs.closeSync(fd);
  }
}

function parseHeaderRegion(file: string, region: Buffer): SnapshotHeader {
  if (region.length < BODY_OFFSET) throw new SnapshotFileError(file, 'torn', `only ${region.length} bytes`);
  if (!region.subarray(0, MAGIC.length).equals(MAGIC)) throw new SnapshotFileError(file, 'corrupt', 'not a Folio snapshot');
  const expected = createHash('sha256').update(region.subarray(0, HEADER_REGION_BYTES)).digest();
  if (!expected.equals(region.subarray(HEADER_REGION_BYTES, BODY_OFFSET))) {
    throw new SnapshotFileError(file, 'corrupt', 'header checksum mismatch');
  }
  const length = region.readUInt32LE(MAGIC.length);
  let header: SnapshotHeader;
  try {
    header = JSON.parse(region.subarray(MAGIC.length + 4, MAGIC.length + 4 + length).toString('utf8')) as SnapshotHeader;
  } catch (error) {
    throw new SnapshotFileError(file, 'corrupt', `unreadable header (${(error as Error).message})`);
  }
  if (header.format_version !== SNAPSHOT_FORMAT_VERSION) {
    throw new SnapshotFileError(file, 'unsupported', `format version ${header.format_version}, this Folio reads ${SNAPSHOT_FORMAT_VERSION}`);
  }
  return header;
}

/** A snapshot file read whole, with both checksums verified; the body is decoded chunk by chunk on use. */
export interface SnapshotContents {
  file: string;
  header: SnapshotHeader;
  body: Buffer;
}

/** Reads the whole file and checks both checksums (nothing is decoded yet). */
export function readSnapshot(file: string): SnapshotContents {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch (error) {
    throw new SnapshotFileError(file, 'unreadable', (error as Error).message);
  }
  return checkedContents(file, bytes);
}

/** readSnapshot without holding the event loop while the file is read (the checks still run on it). */
export async function readSnapshotAsync(file: string): Promise<SnapshotContents> {
  let bytes: Buffer;
  try {
    bytes = await fs.promises.readFile(file);
  } catch (error) {
    throw new SnapshotFileError(file, 'unreadable', (error as Error).message);
  }
  return checkedContents(file, bytes);
}

/** A snapshot file's bytes with both checksums checked. */
function checkedContents(file: string, bytes: Buffer): SnapshotContents {
  const header = parseHeaderRegion(file, bytes.subarray(0, BODY_OFFSET));
  if (bytes.length !== BODY_OFFSET + header.body_bytes) {
    throw new SnapshotFileError(file, 'torn', `${bytes.length} bytes where the header promises ${BODY_OFFSET + header.body_bytes}`);
  }
  const body = bytes.subarray(BODY_OFFSET);
  if (createHash('sha256').update(body).digest('hex') !== header.body_sha256) {
    throw new SnapshotFileError(file, 'corrupt', 'body checksum mismatch');
  }
  return { file, header, body };
}

export interface SnapshotChunk {
  /** A stored section's name, or the scalar chunk's (then `scalars` is set). */
  name: string;
  items: unknown[];
  scalars?: Record<string, number>;
}

/**
 * The body's chunks in file order, decoded one at a time (so each chunk's objects can be used and
 * dropped before the next is decoded). The scalar chunk comes first.
 */
export function* snapshotChunks(contents: SnapshotContents): Generator<SnapshotChunk> {
  const { file, body, header } = contents;
  const known = new Set(STORED_SECTIONS.map((section) => section.name));
  const chunksEnd = header.balance_table.at;
  if (!(chunksEnd >= 0 && chunksEnd + header.balance_table.bytes === body.length)) {
    throw new SnapshotFileError(file, 'corrupt', 'the balance table is not where the header says');
  }
  let offset = 0;
  let sawScalars = false;
  while (offset < chunksEnd) {
    if (offset + 4 > chunksEnd) throw new SnapshotFileError(file, 'corrupt', `chunk length cut off at body offset ${offset}`);
    const length = body.readUInt32LE(offset);
    const end = offset + 4 + length;
    if (end > chunksEnd) throw new SnapshotFileError(file, 'corrupt', `chunk at body offset ${offset} runs past the chunks`);
    let chunk: [string, unknown];
    try {
      chunk = unpackr.unpack(body.subarray(offset + 4, end)) as [string, unknown];
    } catch (error) {
      throw new SnapshotFileError(file, 'corrupt', `undecodable chunk at body offset ${offset} (${(error as Error).message})`);
    }
    const [name, items] = chunk;
    if (name === SCALARS_CHUNK) {
      sawScalars = true;
      yield { name, items: [], scalars: items as Record<string, number> };
    } else if (!sawScalars) {
      throw new SnapshotFileError(file, 'corrupt', 'sections before the scalar section');
    } else if (known.has(name) && Array.isArray(items)) {
      yield { name, items };
    } else {
      throw new SnapshotFileError(file, 'unsupported', `unknown section ${String(name)}`);
    }
    offset = end;
  }
  if (!sawScalars) throw new SnapshotFileError(file, 'corrupt', 'no scalar section');
}

/** The snapshot's balance table, ready to be the state's cold tier (nothing is decoded yet). */
export function snapshotBalances(contents: SnapshotContents): ColdBalanceTable {
  const { at, bytes } = contents.header.balance_table;
  try {
    return new ColdBalanceTable(contents.body.subarray(at, at + bytes));
  } catch (error) {
    if (error instanceof BalanceTableError) throw new SnapshotFileError(contents.file, 'corrupt', error.message);
    throw error;
  }
}
