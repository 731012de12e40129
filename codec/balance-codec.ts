// One balance record as bytes, for log records (event-codec.ts) and the snapshot's balance table
// (snapshots/cold-balances.ts):
//
//   balance_id, ledger_id, identity_id, indicator, currency   u16 length + UTF-8 each (id first, so the
//                                                             id index can compare ids in place)
//   credit, debit, inflight_credit, inflight_debit            amount: see writeAmount
//   version, created_at                                       f64 LE each
//   meta_data                                                 u32 length + msgpack (0 bytes: empty)
//   lineage settings                                          u8, present only when the top bit of
//                                                             meta_data's length is set: bit 7 tracks
//                                                             fund lineage, bits 0-1 the allocation
//                                                             strategy (0 FIFO, 1 LIFO, 2 PROPORTIONAL)
//
// Everything before meta_data is a function of the record's values alone, so the state hash can take
// those bytes as they are; meta_data is hashed as canonical JSON instead (its stored key order is the
// order the keys were written in, which the API keeps and the hash must ignore). A balance with the
// default settings (no lineage, FIFO) is written exactly as before the settings existed, so older logs
// and snapshots read as they always did and hash the same.

import { Packr, Unpackr } from 'msgpackr';
import type { AllocationStrategy } from '../engine/fund-allocation.js';
import { EMPTY_META, type BalanceRecord, type MetaData } from '../engine/records.js';
import { ByteReader, type ByteWriter } from './byte-writer.js';

const AMOUNT_ZERO = 0;
const AMOUNT_POSITIVE_64 = 1;
const AMOUNT_NEGATIVE_64 = 2;
const AMOUNT_POSITIVE_BIG = 3;
const AMOUNT_NEGATIVE_BIG = 4;
const U64_MAX = (1n << 64n) - 1n;

/** Set on meta_data's length when a lineage settings byte follows the metadata (no metadata is 2 GiB). */
const LINEAGE_SETTINGS_FOLLOW = 0x8000_0000;
const SETTINGS_TRACKS_LINEAGE = 0x80;
const STRATEGY_CODES: readonly AllocationStrategy[] = ['FIFO', 'LIFO', 'PROPORTIONAL'];

const metaPackr = new Packr({ useRecords: false, useBigIntExtension: true });
const metaUnpackr = new Unpackr({ useRecords: false, useBigIntExtension: true });

/** Writes the fixed part of a balance (everything but meta_data). */
export function writeBalanceFields(out: ByteWriter, balance: BalanceRecord): void {
  out.shortString(balance.balance_id);
  out.shortString(balance.ledger_id);
  out.shortString(balance.identity_id);
  out.shortString(balance.indicator);
  out.shortString(balance.currency);
  writeAmount(out, balance.credit_balance);
  writeAmount(out, balance.debit_balance);
  writeAmount(out, balance.inflight_credit_balance);
  writeAmount(out, balance.inflight_debit_balance);
  out.f64(balance.version);
  out.f64(balance.created_at);
}

export function writeBalance(out: ByteWriter, balance: BalanceRecord): void {
  writeBalanceFields(out, balance);
  const settings = lineageSettingsByte(balance);
  if (settings === 0) {
    writeMeta(out, balance.meta_data);
    return;
  }
  const packed = isEmpty(balance.meta_data) ? undefined : metaPackr.pack(balance.meta_data);
  out.u32((packed?.length ?? 0) + LINEAGE_SETTINGS_FOLLOW);
  if (packed) out.raw(packed);
  out.u8(settings);
}

/** The lineage settings of a balance as one byte; 0 for the defaults (no lineage, FIFO). */
export function lineageSettingsByte(balance: BalanceRecord): number {
  const strategy = STRATEGY_CODES.indexOf(balance.allocation_strategy ?? 'FIFO');
  return (balance.track_fund_lineage ? SETTINGS_TRACKS_LINEAGE : 0) | strategy;
}

/** Puts the settings a byte holds on the record, leaving the defaults absent (as newBalance does). */
function applyLineageSettings(record: BalanceRecord, settings: number): void {
  if (settings & SETTINGS_TRACKS_LINEAGE) record.track_fund_lineage = true;
  const strategy = STRATEGY_CODES[settings & 0x03];
  if (strategy === undefined) throw new Error(`unknown allocation strategy code ${settings & 0x03}`);
  if (strategy !== 'FIFO') record.allocation_strategy = strategy;
}

/** Metadata as u32 length + msgpack, 0 bytes when empty (balances and transactions alike). */
export function writeMeta(out: ByteWriter, meta: MetaData): void {
  writePackedMeta(out, packMeta(meta));
}

/** The msgpack of metadata as writeMeta writes it; undefined when empty. */
export function packMeta(meta: MetaData): Buffer | undefined {
  return isEmpty(meta) ? undefined : metaPackr.pack(meta);
}

/** Metadata packed by packMeta, written as writeMeta writes it. */
export function writePackedMeta(out: ByteWriter, packed: Buffer | undefined): void {
  out.u32(packed?.length ?? 0);
  if (packed) out.raw(packed);
}

/** Amounts of any size: zero in one byte, anything within 64 bits in nine, beyond that as hex digits. */
export function writeAmount(out: ByteWriter, amount: bigint): void {
  if (amount === 0n) {
    out.u8(AMOUNT_ZERO);
    return;
  }
  const negative = amount < 0n;
  const magnitude = negative ? -amount : amount;
  if (magnitude <= U64_MAX) {
    out.u8(negative ? AMOUNT_NEGATIVE_64 : AMOUNT_POSITIVE_64);
    out.u64(magnitude);
    return;
  }
  out.u8(negative ? AMOUNT_NEGATIVE_BIG : AMOUNT_POSITIVE_BIG);
  out.shortString(magnitude.toString(16));
}

export function readAmount(input: ByteReader): bigint {
  const tag = input.u8();
  switch (tag) {
    case AMOUNT_ZERO:
      return 0n;
    case AMOUNT_POSITIVE_64:
      return input.u64();
    case AMOUNT_NEGATIVE_64:
      return -input.u64();
    case AMOUNT_POSITIVE_BIG:
      return BigInt('0x' + input.shortString());
    case AMOUNT_NEGATIVE_BIG:
      return -BigInt('0x' + input.shortString());
    default:
      throw new Error(`unknown amount tag ${tag}`);
  }
}

/** Decodes the record that starts at `offset`. */
export function readBalance(bytes: Buffer, offset: number): BalanceRecord {
  return readBalanceAt(new ByteReader(bytes, offset));
}

/** Decodes the record at the reader's position and moves past it. */
export function readBalanceAt(input: ByteReader): BalanceRecord {
  const record: BalanceRecord = {
    balance_id: input.shortString(),
    ledger_id: input.shortString(),
    identity_id: input.shortString(),
    indicator: input.shortString(),
    currency: input.shortString(),
    credit_balance: readAmount(input),
    debit_balance: readAmount(input),
    inflight_credit_balance: readAmount(input),
    inflight_debit_balance: readAmount(input),
    version: input.f64(),
    created_at: input.f64(),
    meta_data: EMPTY_META,
  };
  const length = input.u32();
  const metaLength = length & ~LINEAGE_SETTINGS_FOLLOW;
  if (metaLength > 0) record.meta_data = metaUnpackr.unpack(input.bytes(metaLength)) as MetaData;
  if (length & LINEAGE_SETTINGS_FOLLOW) applyLineageSettings(record, input.u8());
  return record;
}

/** Reads what writeMeta wrote; empty metadata is the shared EMPTY_META. */
export function readMeta(input: ByteReader): MetaData {
  const length = input.u32();
  return length === 0 ? EMPTY_META : (metaUnpackr.unpack(input.bytes(length)) as MetaData);
}

/** Where the id of the record at `offset` lies: [start, end) in `bytes`. */
export function idRange(bytes: Buffer, offset: number): [number, number] {
  const length = bytes.readUInt16LE(offset);
  return [offset + 2, offset + 2 + length];
}

export function readBalanceId(bytes: Buffer, offset: number): string {
  const [start, end] = idRange(bytes, offset);
  return bytes.toString('utf8', start, end);
}

/**
 * The record at `offset` split for hashing: the end of its fixed part (hashed as stored), its meta_data
 * (hashed as canonical JSON; undefined when empty) and its lineage settings byte (0: the defaults).
 */
export function fixedPartOf(bytes: Buffer, offset: number): { fixedEnd: number; meta: MetaData | undefined; settings: number } {
  const input = new ByteReader(bytes, offset);
  for (let field = 0; field < 5; field += 1) input.position += 2 + input.u16();
  for (let field = 0; field < 4; field += 1) skipAmount(input);
  input.position += 16;
  const fixedEnd = input.position;
  const length = input.u32();
  const metaLength = length & ~LINEAGE_SETTINGS_FOLLOW;
  const meta = metaLength === 0 ? undefined : (metaUnpackr.unpack(input.bytes(metaLength)) as MetaData);
  const settings = length & LINEAGE_SETTINGS_FOLLOW ? input.u8() : 0;
  return { fixedEnd, meta, settings };
}

/** Moves past an amount written by writeAmount without reading it. */
export function skipAmount(input: ByteReader): void {
  const tag = input.u8();
  if (tag === AMOUNT_POSITIVE_64 || tag === AMOUNT_NEGATIVE_64) input.position += 8;
  else if (tag === AMOUNT_POSITIVE_BIG || tag === AMOUNT_NEGATIVE_BIG) {
    const length = input.u16();
    input.position += length;
  }
}

export function isEmpty(meta: MetaData): boolean {
  for (const _ in meta) return false;
  return true;
}
