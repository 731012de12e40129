// The balance table of a snapshot: every balance as bytes (balance-codec.ts), with two sorted indexes
// so a balance can be found by id or by indicator without building any map. Loading a snapshot
// attaches this table to the state as its cold tier (engine/balance-table.ts); a lookup is a binary
// search over the bytes, and the record is decoded only when the engine first asks for it.
//
// The region, all numbers little-endian, read from its end:
//
//   records            the encoded balances in creation order
//   offsets            f64 x (count + 1): where each record starts (and where the last one ends)
//   id order           u32 x count: positions sorted by the UTF-8 bytes of the balance id
//   indicator offsets  f64 x (indicator count + 1): where each key starts in the key bytes
//   indicator order    u32 x indicator count: the position of each key's balance
//   indicator keys     the keys (indicator, NUL, currency) in UTF-8, sorted by their bytes
//   trailer            JSON of the sizes above, then its u32 length, then the magic "FBALTAB1"
//
// Writing builds the indexes by merging: the previous snapshot's already sorted ones (for balances
// still cold) with the sorted ids and keys of balances created since, so a snapshot of a large ledger
// that changed a little sorts only the little.

import { indicatorKey, type BalanceTable, type ColdBalances } from '../engine/balance-table.js';
import type { BalanceRecord } from '../engine/records.js';
import { idRange, readBalance, readBalanceId, writeBalance } from '../codec/balance-codec.js';
import { ByteWriter } from '../codec/byte-writer.js';

const MAGIC = Buffer.from('FBALTAB1', 'ascii');
const TRAILER_VERSION = 1;
/** Encoded records gathered before they are handed on to be written. */
const FLUSH_BYTES = 4 * 1024 * 1024;

interface Trailer {
  version: number;
  count: number;
  indicator_count: number;
  records_bytes: number;
  offsets_at: number;
  id_order_at: number;
  indicator_offsets_at: number;
  indicator_order_at: number;
  indicator_keys_at: number;
  indicator_keys_bytes: number;
}

/** A balance table region that does not read back as one. */
export class BalanceTableError extends Error {
  override readonly name = 'BalanceTableError';
}

export class ColdBalanceTable implements ColdBalances {
  readonly count: number;
  readonly indicatorCount: number;
  private readonly view: DataView;
  private readonly trailer: Trailer;

  constructor(private readonly region: Buffer) {
    this.view = new DataView(region.buffer, region.byteOffset, region.byteLength);
    this.trailer = readTrailer(region);
    this.count = this.trailer.count;
    this.indicatorCount = this.trailer.indicator_count;
  }

  private recordOffset(position: number): number {
    return this.view.getFloat64(this.trailer.offsets_at + position * 8, true);
  }

  /** The bytes of the record at `position`, as stored. */
  recordBytes(position: number): Buffer {
    return this.region.subarray(this.recordOffset(position), this.recordOffset(position + 1));
  }

  read(position: number): BalanceRecord {
    return readBalance(this.region, this.recordOffset(position));
  }

  idAt(position: number): string {
    return readBalanceId(this.region, this.recordOffset(position));
  }

  /** The bytes of the id at `position` (a view into the table). */
  idBytes(position: number): Buffer {
    const [start, end] = idRange(this.region, this.recordOffset(position));
    return this.region.subarray(start, end);
  }

  /** The position of the i-th balance in id order. */
  idOrderAt(index: number): number {
    return this.view.getUint32(this.trailer.id_order_at + index * 4, true);
  }

  positionOf(balanceId: string): number {
    const query = Buffer.from(balanceId, 'utf8');
    const index = sortedIndexOf(this.count, (at) => {
      const [start, end] = idRange(this.region, this.recordOffset(this.idOrderAt(at)));
      return query.compare(this.region, start, end);
    });
    return index < 0 ? -1 : this.idOrderAt(index);
  }

  /** The bytes of the i-th indicator key in key order. */
  indicatorKeyBytes(index: number): Buffer {
    const base = this.trailer.indicator_keys_at;
    const start = this.view.getFloat64(this.trailer.indicator_offsets_at + index * 8, true);
    const end = this.view.getFloat64(this.trailer.indicator_offsets_at + (index + 1) * 8, true);
    return this.region.subarray(base + start, base + end);
  }

  /** The position of the balance holding the i-th indicator key. */
  indicatorPositionAt(index: number): number {
    return this.view.getUint32(this.trailer.indicator_order_at + index * 4, true);
  }

  positionOfIndicator(key: string): number {
    const query = Buffer.from(key, 'utf8');
    const index = sortedIndexOf(this.indicatorCount, (at) => query.compare(this.indicatorKeyBytes(at)));
    return index < 0 ? -1 : this.indicatorPositionAt(index);
  }

  *indicatorEntries(): Iterable<[string, number]> {
    for (let index = 0; index < this.indicatorCount; index += 1) {
      yield [this.indicatorKeyBytes(index).toString('utf8'), this.indicatorPositionAt(index)];
    }
  }
}

/** Binary search over `count` sorted entries; `compareAt(i)` orders the sought key against entry i. */
function sortedIndexOf(count: number, compareAt: (index: number) => number): number {
  let low = 0;
  let high = count - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const order = compareAt(middle);
    if (order === 0) return middle;
    if (order < 0) high = middle - 1;
    else low = middle + 1;
  }
  return -1;
}

function readTrailer(region: Buffer): Trailer {
  if (region.length < MAGIC.length + 4 || !region.subarray(region.length - MAGIC.length).equals(MAGIC)) {
    throw new BalanceTableError('the balance table does not end with its marker');
  }
  const length = region.readUInt32LE(region.length - MAGIC.length - 4);
  const start = region.length - MAGIC.length - 4 - length;
  if (start < 0) throw new BalanceTableError('the balance table trailer runs past its start');
  let trailer: Trailer;
  try {
    trailer = JSON.parse(region.toString('utf8', start, start + length)) as Trailer;
  } catch (error) {
    throw new BalanceTableError(`unreadable balance table trailer (${(error as Error).message})`);
  }
  if (trailer.version !== TRAILER_VERSION) throw new BalanceTableError(`balance table version ${trailer.version} is not ${TRAILER_VERSION}`);
  const fits = (at: number, bytes: number): boolean => Number.isInteger(at) && at >= 0 && at + bytes <= start;
  const ok = fits(0, trailer.records_bytes)
    && fits(trailer.offsets_at, (trailer.count + 1) * 8)
    && fits(trailer.id_order_at, trailer.count * 4)
    && fits(trailer.indicator_offsets_at, (trailer.indicator_count + 1) * 8)
    && fits(trailer.indicator_order_at, trailer.indicator_count * 4)
    && fits(trailer.indicator_keys_at, trailer.indicator_keys_bytes);
  if (!ok) throw new BalanceTableError('the balance table trailer describes parts outside the table');
  return trailer;
}

/** Indexes of `keys` in the UTF-8 byte order of the keys (code point order), the order of both indexes. */
export function sortedByUtf8(keys: readonly string[]): number[] {
  const indexes = keys.map((_, index) => index);
  // UTF-16 code unit order is code point order unless a surrogate meets a unit above it (U+E000 and up).
  if (!keys.some((key) => HAS_SURROGATE.test(key))) {
    return indexes.sort((a, b) => {
      const left = keys[a] as string;
      const right = keys[b] as string;
      return left < right ? -1 : left > right ? 1 : 0;
    });
  }
  const bytes = keys.map((key) => Buffer.from(key, 'utf8'));
  return indexes.sort((a, b) => Buffer.compare(bytes[a] as Buffer, bytes[b] as Buffer));
}

const HAS_SURROGATE = /[\uD800-\uDFFF]/;

/**
 * Merges two runs sorted by key bytes: the cold table's (read through `coldKey`) and new keys (sorted
 * strings). Calls `take` with each in order; `fromCold` says which run it came from.
 */
function mergeSorted(
  coldCount: number,
  coldKey: (index: number) => Buffer,
  created: readonly string[],
  take: (fromCold: boolean, index: number, key: () => Buffer) => void,
): void {
  let coldIndex = 0;
  let createdIndex = 0;
  let createdKey: Buffer | undefined;
  // Keys are turned into bytes only where the two runs meet: a table with no cold part (the first
  // snapshot) or no new balances (an idle ledger) is copied straight through.
  const createdBytes = (): Buffer => (createdKey ??= Buffer.from(created[createdIndex] as string, 'utf8'));
  while (coldIndex < coldCount || createdIndex < created.length) {
    const fromCold = createdIndex >= created.length || (coldIndex < coldCount && coldKey(coldIndex).compare(createdBytes()) < 0);
    if (fromCold) {
      const index = coldIndex;
      take(true, index, () => coldKey(index));
      coldIndex += 1;
    } else {
      take(false, createdIndex, createdBytes);
      createdIndex += 1;
      createdKey = undefined;
    }
  }
}

export interface TableOrders {
  /** Positions of every balance, sorted by id. */
  ids: Uint32Array;
  /** Indicator keys, sorted, with the position of each key's balance. */
  indicators: { keys: Buffer[]; positions: number[] };
}

/**
 * Both orders of a table, computed once per table and size: balances are never removed and their ids
 * and indicators never change, so the orders change only when a balance is added. The state hash and
 * the snapshot writer both need them for the same state.
 */
const ordersByTable = new WeakMap<BalanceTable, { size: number; orders: TableOrders }>();

export function tableOrders(balances: BalanceTable): TableOrders {
  const cached = ordersByTable.get(balances);
  if (cached && cached.size === balances.size) return cached.orders;
  const orders = { ids: idOrder(balances), indicators: indicatorOrder(balances) };
  ordersByTable.set(balances, { size: balances.size, orders });
  return orders;
}

/** Positions of every balance in the table, sorted by id (merging the cold index with the new ids). */
function idOrder(balances: BalanceTable): Uint32Array {
  const cold = balances.coldBalances as ColdBalanceTable | undefined;
  const coldCount = cold?.count ?? 0;
  const createdIds: string[] = [];
  for (let position = coldCount; position < balances.size; position += 1) createdIds.push(balances.at(position).balance_id);
  const sorted = sortedByUtf8(createdIds);
  const sortedIds = sorted.map((index) => createdIds[index] as string);
  const order = new Uint32Array(balances.size);
  let out = 0;
  mergeSorted(coldCount, (index) => cold!.idBytes(cold!.idOrderAt(index)), sortedIds, (fromCold, index) => {
    order[out++] = fromCold ? cold!.idOrderAt(index) : coldCount + (sorted[index] as number);
  });
  return order;
}

/** Indicator keys of every balance that has one, sorted, with the position of each key's balance. */
function indicatorOrder(balances: BalanceTable): { keys: Buffer[]; positions: number[] } {
  const cold = balances.coldBalances as ColdBalanceTable | undefined;
  const coldCount = cold?.count ?? 0;
  const createdKeys: string[] = [];
  const createdPositions: number[] = [];
  for (let position = coldCount; position < balances.size; position += 1) {
    const balance = balances.at(position);
    if (balance.indicator === '') continue;
    createdKeys.push(indicatorKey(balance.indicator, balance.currency));
    createdPositions.push(position);
  }
  const sorted = sortedByUtf8(createdKeys);
  const keys: Buffer[] = [];
  const positions: number[] = [];
  mergeSorted(cold?.indicatorCount ?? 0, (index) => cold!.indicatorKeyBytes(index), sorted.map((index) => createdKeys[index] as string), (fromCold, index, key) => {
    keys.push(key());
    positions.push(fromCold ? cold!.indicatorPositionAt(index) : (createdPositions[sorted[index] as number] as number));
  });
  return { keys, positions };
}

/**
 * Writes the table for `balances` through `emit`, in pieces, and returns the bytes written. Records of
 * balances still cold are copied as stored; hot ones are encoded.
 */
export function writeBalanceTable(balances: BalanceTable, emit: (bytes: Buffer) => void): number {
  const cold = balances.coldBalances as ColdBalanceTable | undefined;
  const coldCount = cold?.count ?? 0;
  const count = balances.size;
  let written = 0;
  const out = new ByteWriter(FLUSH_BYTES + 64 * 1024);
  const flush = (): void => {
    if (out.length === 0) return;
    emit(Buffer.from(out.bytes()));
    written += out.length;
    out.reset();
  };
  const offsets = new Float64Array(count + 1);
  for (let position = 0; position < count; position += 1) {
    offsets[position] = written + out.length;
    const hot = balances.hotAt(position);
    if (hot) writeBalance(out, hot);
    else out.raw(cold!.recordBytes(position));
    if (out.length >= FLUSH_BYTES) flush();
  }
  offsets[count] = written + out.length;
  const recordsBytes = offsets[count] as number;
  pad8(out, written);

  const offsetsAt = written + out.length;
  for (const offset of offsets) out.f64(offset);
  const idOrderAt = written + out.length;
  const orders = tableOrders(balances);
  for (const position of orders.ids) out.u32(position);
  pad8(out, written);
  flush();

  const indicators = orders.indicators;
  const indicatorOffsetsAt = written;
  let keyOffset = 0;
  out.f64(0);
  for (const key of indicators.keys) {
    keyOffset += key.length;
    out.f64(keyOffset);
  }
  const indicatorOrderAt = written + out.length;
  for (const position of indicators.positions) out.u32(position);
  const indicatorKeysAt = written + out.length;
  for (const key of indicators.keys) {
    out.raw(key);
    if (out.length >= FLUSH_BYTES) flush();
  }
  const trailer: Trailer = {
    version: TRAILER_VERSION,
    count,
    indicator_count: indicators.keys.length,
    records_bytes: recordsBytes,
    offsets_at: offsetsAt,
    id_order_at: idOrderAt,
    indicator_offsets_at: indicatorOffsetsAt,
    indicator_order_at: indicatorOrderAt,
    indicator_keys_at: indicatorKeysAt,
    indicator_keys_bytes: keyOffset,
  };
  const trailerBytes = Buffer.from(JSON.stringify(trailer), 'utf8');
  out.raw(trailerBytes);
  out.u32(trailerBytes.length);
  out.raw(MAGIC);
  flush();
  return written;
}

function pad8(out: ByteWriter, base: number): void {
  while ((base + out.length) % 8 !== 0) out.u8(0);
}
