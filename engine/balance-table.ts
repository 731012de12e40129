// The balances of the working state and their index by indicator, in two tiers.
//
// Hot balances are ordinary records in a Map: every balance created or changed since start-up. Cold
// balances are the ones a snapshot brought in and nothing has touched since: they stay in the
// snapshot's own bytes (see snapshots/cold-balances.ts) and are decoded the first time they are asked
// for, when they become hot. Start-up from a snapshot of a million balances is then a file read and a
// checksum instead of a million objects and two million map insertions, and balances nobody uses cost
// a hundred-odd bytes each instead of several hundred.
//
// Both classes read like a Map (creation order, get/has/size/iteration), so the engine's code does not
// care which tier a balance is in. Only `get` promotes: iteration and `at` hand out fresh copies of cold
// records that are not kept, for reading (hashing, snapshots, listings), never for changing.

import { assert, fail } from './assert.js';
import type { BalanceRecord } from './records.js';

/** Balances held as bytes (a loaded snapshot's balance table), found by id, indicator or position. */
export interface ColdBalances {
  /** How many balances the table holds. */
  readonly count: number;
  /** Position (creation order, 0 = oldest) of the balance with this id, or -1. */
  positionOf(balanceId: string): number;
  /** Position of the balance with this indicator key (see indicatorKey), or -1. */
  positionOfIndicator(key: string): number;
  /** A new record of the balance at `position`, owned by the caller. */
  read(position: number): BalanceRecord;
  /** The id of the balance at `position` (cheaper than reading the record). */
  idAt(position: number): string;
  /** How many of the balances have an indicator. */
  readonly indicatorCount: number;
  /** Every indicator key with the position of its balance. */
  indicatorEntries(): Iterable<[string, number]>;
}

export class BalanceTable implements ReadonlyMap<string, BalanceRecord> {
  private readonly hot = new Map<string, BalanceRecord>();
  /** Balances created after the cold ones were attached, oldest first. */
  private readonly created: BalanceRecord[] = [];
  /** Cold balances made hot, by position (filled in as they are touched). */
  private promoted: Array<BalanceRecord | undefined> = [];
  private cold: ColdBalances | undefined;

  /** Takes over a snapshot's balance table; only an empty table can. */
  attachCold(cold: ColdBalances): void {
    assert(this.hot.size === 0 && this.created.length === 0 && !this.cold, 'cold balances attach to an empty table only');
    this.cold = cold;
    this.promoted = new Array<BalanceRecord | undefined>(cold.count);
  }

  get coldBalances(): ColdBalances | undefined {
    return this.cold;
  }

  get size(): number {
    return (this.cold?.count ?? 0) + this.created.length;
  }

  /** Balances held as records (created or touched since start-up). */
  get hotCount(): number {
    return this.hot.size;
  }

  /** The balance, made hot if it was cold: the record returned is the one the state changes. */
  get(balanceId: string): BalanceRecord | undefined {
    const hot = this.hot.get(balanceId);
    if (hot !== undefined || this.cold === undefined) return hot;
    const position = this.cold.positionOf(balanceId);
    if (position < 0) return undefined;
    const record = this.cold.read(position);
    this.hot.set(balanceId, record);
    this.promoted[position] = record;
    return record;
  }

  /** The hot record of the balance at `position`, if it has one (one never touched since start-up has not). */
  hotAt(position: number): BalanceRecord | undefined {
    const coldCount = this.cold?.count ?? 0;
    return position < coldCount ? this.promoted[position] : this.created[position - coldCount];
  }

  has(balanceId: string): boolean {
    return this.hot.has(balanceId) || (this.cold !== undefined && this.cold.positionOf(balanceId) >= 0);
  }

  /** Adds a new balance (its record becomes the state's own). */
  add(record: BalanceRecord): void {
    // One map operation instead of has + set: a replay adds a million of these. The size tells if the
    // id was new; a failed assertion stops the process (or verify's replay), so the map is not reused.
    const before = this.hot.size;
    this.hot.set(record.balance_id, record);
    if (this.hot.size !== before + 1 || (this.cold !== undefined && this.cold.positionOf(record.balance_id) >= 0)) fail(`balance ${record.balance_id} created twice`);
    this.created.push(record);
  }

  /** The balance at `position` in creation order (0 = oldest), for reading. */
  at(position: number): BalanceRecord {
    return this.hotAt(position) ?? (this.cold as ColdBalances).read(position);
  }

  /** Up to `limit` balances, newest first, skipping the `offset` newest: without walking the rest. */
  newestFirst(offset: number, limit: number): BalanceRecord[] {
    const page: BalanceRecord[] = [];
    for (let position = this.size - 1 - offset; position >= 0 && page.length < limit; position -= 1) page.push(this.at(position));
    return page;
  }

  *values(): MapIterator<BalanceRecord> {
    for (let position = 0; position < this.size; position += 1) yield this.at(position);
  }

  *keys(): MapIterator<string> {
    for (const record of this.values()) yield record.balance_id;
  }

  *entries(): MapIterator<[string, BalanceRecord]> {
    for (const record of this.values()) yield [record.balance_id, record];
  }

  [Symbol.iterator](): MapIterator<[string, BalanceRecord]> {
    return this.entries();
  }

  forEach(callback: (value: BalanceRecord, key: string, map: ReadonlyMap<string, BalanceRecord>) => void): void {
    for (const [key, value] of this.entries()) callback(value, key, this);
  }
}

/**
 * (indicator, currency) -> balance id, over the same two tiers. Hot entries sit in one map per currency
 * keyed by the indicator itself, so neither a lookup nor an entry needs a joined key string (a million
 * `@name` balances held a million of them). As a map, it reads with joined keys, `indicator` + NUL +
 * `currency` (currencies hold no NUL, so the last one splits them), which is how the state hash and the
 * snapshot's table see it.
 */
export class IndicatorIndex implements ReadonlyMap<string, string> {
  private readonly hot = new Map<string, Map<string, string>>();
  private hotCount = 0;
  private cold: ColdBalances | undefined;

  attachCold(cold: ColdBalances): void {
    assert(this.hotCount === 0 && !this.cold, 'cold indicators attach to an empty index only');
    this.cold = cold;
  }

  /** The id of the balance named `indicator` in `currency`. */
  find(indicator: string, currency: string): string | undefined {
    const hot = this.hot.get(currency)?.get(indicator);
    if (hot !== undefined || this.cold === undefined) return hot;
    const position = this.cold.positionOfIndicator(indicatorKey(indicator, currency));
    return position < 0 ? undefined : this.cold.idAt(position);
  }

  add(indicator: string, currency: string, balanceId: string): void {
    let byIndicator = this.hot.get(currency);
    if (!byIndicator) this.hot.set(currency, (byIndicator = new Map()));
    const before = byIndicator.size;
    byIndicator.set(indicator, balanceId);
    const fresh = byIndicator.size === before + 1 && (this.cold === undefined || this.cold.positionOfIndicator(indicatorKey(indicator, currency)) < 0);
    if (!fresh) fail(`indicator ${JSON.stringify(indicator)} taken twice in ${currency}`);
    this.hotCount += 1;
  }

  get(key: string): string | undefined {
    const [indicator, currency] = splitKey(key);
    return this.find(indicator, currency);
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  get size(): number {
    return this.hotCount + (this.cold?.indicatorCount ?? 0);
  }

  /** Every entry: the cold ones (in their table's order), then those added since. */
  *entries(): MapIterator<[string, string]> {
    if (this.cold) {
      for (const [key, position] of this.cold.indicatorEntries()) yield [key, this.cold.idAt(position)];
    }
    for (const [currency, byIndicator] of this.hot) {
      for (const [indicator, balanceId] of byIndicator) yield [indicatorKey(indicator, currency), balanceId];
    }
  }

  *keys(): MapIterator<string> {
    for (const [key] of this.entries()) yield key;
  }

  *values(): MapIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): MapIterator<[string, string]> {
    return this.entries();
  }

  forEach(callback: (value: string, key: string, map: ReadonlyMap<string, string>) => void): void {
    for (const [key, value] of this.entries()) callback(value, key, this);
  }
}

/** `indicator` + NUL + `currency`: the joined form of an indicator key. */
export function indicatorKey(indicator: string, currency: string): string {
  return indicator + '\u0000' + currency;
}

function splitKey(key: string): [string, string] {
  const at = key.lastIndexOf('\u0000');
  return at < 0 ? [key, ''] : [key.slice(0, at), key.slice(at + 1)];
}
