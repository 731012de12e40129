// The balance history (data/history): every balance's state after each event that created or changed it,
// in an LMDB environment of its own, beside the log and apart from the SQLite index. One follower of the
// durable log writes it (history-follower.ts, in a thread of its own); any thread of the process reads
// it (lmdb-js shares one environment between a process's threads), so `GET /balances/:id/at` and
// `/history` are answered where the request is parsed, without crossing to another thread and without
// waiting for SQLite.
//
// Three tables, each keyed by (balance id, event time, log seq) and so sorted by balance, then time:
//   amounts    the running totals (version, credit, debit, inflight credit, inflight debit) after every
//              event that created or moved the balance
//   records    the whole balance record (fixed fields, identity, metadata, lineage settings) after every
//              event that created it or changed its metadata or identity
//   backdated  per (balance, event, effective time), what the event's back-dated postings (a
//              transaction's effective date, earlier than its event) moved, as signed amounts; the key
//              ends with the effective time
// plus `state`: the checkpoint (the last log seq applied, and its event's time) and the format. Entries
// and checkpoint are committed together, so the store is always exactly as of its checkpoint.
//
// Event times never decrease along the log (engine/ledger-state.ts refuses an event dated before the
// last), so within one balance, key order is log order and "the last change at or before T" is one seek.
// The balance at T is the last totals at or before T, plus the back-dated postings of later events with
// an effective time at or before T (each such event raises the version once, as engine/balance-fold.ts
// counts), plus the last record at or before T (or, for a balance first reached by a back-dated posting,
// its creation). Back-dated changes are kept apart rather than folded into the running totals by
// effective time: a back-dated posting would then move every later total of its balance, and importing a
// month of statements into a busy balance would rewrite its recent history once per imported line.
//
// Keys are ordered-binary arrays. Balance ids are UUIDv7s after their prefix, so new balances' entries
// go at the end of the tree rather than at random places in it.

import { open, type Database, type RootDatabase, type Transaction } from 'lmdb';
import fs from 'node:fs';
import path from 'node:path';
import { readAmount, readBalanceAt, writeAmount, writeBalance } from '../codec/balance-codec.js';
import { ByteReader, ByteWriter } from '../codec/byte-writer.js';
import type { BalanceRecord, BalanceTotals } from '../engine/records.js';

export const HISTORY_DIR_NAME = 'history';

export function historyDirIn(dataDir: string): string {
  return path.join(dataDir, HISTORY_DIR_NAME);
}

/** Bump when the layout changes: a store of another format is emptied and rebuilt from the log. */
export const HISTORY_FORMAT = 1;
/** Address space mapped at first; lmdb-js grows the map when the file needs more. */
const MAP_BYTES = 1024 ** 3;
/** Above every time and seq: the open end of a key range. */
const KEY_END = Number.MAX_VALUE;
const CHECKPOINT_KEY = 'checkpoint';
/**
 * LMDB refuses keys past about 2 KB (lmdb-js throws). Balance ids are far shorter; a longer one cannot be
 * held, so it is not looked up (a request naming one is answered as for any balance that does not exist).
 */
const BALANCE_ID_BYTES_MAX = 512;
const FORMAT_KEY = 'format';

/** Where the store stands: everything up to `seq` is in it; `at` is that event's time (0 for none). */
export interface HistoryCheckpoint {
  seq: number;
  at: number;
}

/** A balance's amounts after one change. */
export type BalanceAmounts = BalanceTotals & { version: number };

/** One change: the balance's totals after an event, and when and where in the log it happened. */
export interface BalanceChange extends BalanceAmounts {
  /** The time the change counts from (the event's decided time), epoch ms. */
  at: number;
  /** The log seq of the event. */
  seq: number;
}

/** A position in a balance's history: changes after it come next. */
export interface HistoryPosition {
  at: number;
  seq: number;
}

export interface ChangeWindow {
  /** Inclusive bounds on the change time, epoch ms. */
  from_ms: number;
  to_ms: number;
  /** Continue after this change (a cursor). */
  after?: HistoryPosition;
  limit: number;
}

export interface ChangePage {
  /** The balance's currency (the changes' amounts are in it). */
  currency: string;
  changes: BalanceChange[];
  /** Where the next page starts, when there may be more changes in the window. */
  next?: HistoryPosition;
}

type EntryKey = [string, number, number];
type BackdatedKey = [string, number, number, number];

/** What one batch of the follower writes, with the checkpoint it reaches. */
export interface HistoryBatch {
  amounts: Array<[EntryKey, Buffer]>;
  records: Array<[EntryKey, Buffer]>;
  backdated: Array<[BackdatedKey, Buffer]>;
  checkpoint: HistoryCheckpoint;
}

export function emptyBatch(checkpoint: HistoryCheckpoint): HistoryBatch {
  return { amounts: [], records: [], backdated: [], checkpoint };
}

/** A read transaction, as lmdb-js hands it out. */
export type HistoryRead = Transaction;

/** A balance history store that does not agree with the log it follows. */
export class HistoryMismatchError extends Error {
  override readonly name = 'HistoryMismatchError';
}

export class HistoryStore {
  private constructor(
    private readonly env: RootDatabase,
    private readonly amounts: Database<Buffer, EntryKey>,
    private readonly records: Database<Buffer, EntryKey>,
    private readonly backdated: Database<Buffer, BackdatedKey>,
    private readonly state: Database<unknown, string>,
  ) {}

  /**
   * Opens (creating it if needed) the store in `dir`. Every thread opens it with these same settings:
   * lmdb-js then shares the one environment between them.
   */
  static open(dir: string): HistoryStore {
    fs.mkdirSync(dir, { recursive: true });
    const env = open({ path: dir, maxDbs: 6, mapSize: MAP_BYTES });
    const table = <K extends EntryKey | BackdatedKey>(name: string): Database<Buffer, K> => env.openDB<Buffer, K>({ name, encoding: 'binary', keyEncoding: 'ordered-binary' });
    return new HistoryStore(env, table('amounts'), table('records'), table('backdated'), env.openDB<unknown, string>({ name: 'state' }));
  }

  /** The checkpoint now committed. A store of another format reads as empty (the follower resets it). */
  checkpoint(transaction?: HistoryRead): HistoryCheckpoint {
    const options = transaction ? { transaction } : undefined;
    if (this.state.get(FORMAT_KEY, options) !== HISTORY_FORMAT) return { seq: 0, at: 0 };
    const stored = this.state.get(CHECKPOINT_KEY, options) as [number, number] | undefined;
    return stored ? { seq: stored[0], at: stored[1] } : { seq: 0, at: 0 };
  }

  /** Whether the store holds entries of its current format (the follower resets one that does not). */
  hasCurrentFormat(): boolean {
    return this.state.get(FORMAT_KEY) === HISTORY_FORMAT;
  }

  /** Marks a store that was never written as of the current format (the follower's first start on it). */
  initialize(): void {
    if (this.state.get(FORMAT_KEY) !== undefined || this.state.get(CHECKPOINT_KEY) !== undefined) return;
    this.env.transactionSync(() => {
      this.state.putSync(FORMAT_KEY, HISTORY_FORMAT);
      this.state.putSync(CHECKPOINT_KEY, [0, 0]);
    });
  }

  /** Empties the store: it starts over from the log. */
  async reset(): Promise<void> {
    await this.env.transaction(() => {
      this.amounts.clearSync();
      this.records.clearSync();
      this.backdated.clearSync();
      void this.state.put(FORMAT_KEY, HISTORY_FORMAT);
      void this.state.put(CHECKPOINT_KEY, [0, 0]);
    });
  }

  /**
   * Writes a batch's entries and its checkpoint in one transaction, synchronously: the follower has a
   * thread of its own, and a synchronous transaction puts each entry directly (lmdb-js's asynchronous
   * puts are queued as instructions for its writer first, which measured a third more CPU per entry).
   */
  write(batch: HistoryBatch): void {
    this.env.transactionSync(() => {
      for (const [key, value] of batch.amounts) this.amounts.putSync(key, value);
      for (const [key, value] of batch.records) this.records.putSync(key, value);
      for (const [key, value] of batch.backdated) this.backdated.putSync(key, value);
      this.state.putSync(CHECKPOINT_KEY, [batch.checkpoint.seq, batch.checkpoint.at]);
    });
  }

  /** Runs `work` in one read transaction: every read in it sees the same commit, checkpoint included. */
  read<T>(work: (transaction: HistoryRead) => T): T {
    // lmdb-js keeps a thread's read snapshot until its next macrotask; a reader waiting for a commit wants
    // the newest one now.
    this.env.resetReadTxn();
    const transaction = this.env.useReadTransaction();
    try {
      return work(transaction);
    } finally {
      transaction.done();
    }
  }

  /**
   * A balance's amounts after the last event the store holds (where the follower starts for a balance
   * it has not kept in memory), or undefined when the store does not hold it.
   */
  currentAmounts(balanceId: string): BalanceAmounts | undefined {
    return this.lastAmounts(balanceId, KEY_END);
  }

  /** A balance's record (identity, metadata, fixed fields) after the last event the store holds. */
  currentRecord(balanceId: string): BalanceRecord | undefined {
    return this.lastRecord(balanceId, KEY_END);
  }

  /**
   * The balance as it stood at `untilMs`: undefined when it did not exist yet, or the store does not hold
   * it. See the header for how it is put together.
   */
  balanceAsOf(transaction: HistoryRead, balanceId: string, untilMs: number): BalanceRecord | undefined {
    if (!fitsKey(balanceId)) return undefined;
    const record = this.lastRecord(balanceId, untilMs, transaction) ?? this.firstRecord(balanceId, transaction);
    if (!record) return undefined;
    const totals = this.lastAmounts(balanceId, untilMs, transaction);
    const amounts: BalanceAmounts = totals ?? { version: 0, credit_balance: 0n, debit_balance: 0n, inflight_credit_balance: 0n, inflight_debit_balance: 0n };
    const events = new Set<number>();
    for (const { key, value } of this.backdated.getRange({ start: [balanceId, untilMs + 1], end: [balanceId, KEY_END], transaction })) {
      if (key[3] > untilMs) continue;
      events.add(key[2]);
      const change = readTotals(new ByteReader(value));
      amounts.credit_balance += change.credit_balance;
      amounts.debit_balance += change.debit_balance;
      amounts.inflight_credit_balance += change.inflight_credit_balance;
      amounts.inflight_debit_balance += change.inflight_debit_balance;
    }
    if (!totals && events.size === 0) return undefined;
    amounts.version += events.size;
    return { ...record, ...amounts };
  }

  /** Whether the store holds the balance (it was created at or before the checkpoint). */
  holds(transaction: HistoryRead, balanceId: string): boolean {
    return fitsKey(balanceId) && this.firstRecord(balanceId, transaction) !== undefined;
  }

  /** The changes of a balance inside a window, oldest first; undefined when the store does not hold it. */
  changes(transaction: HistoryRead, balanceId: string, window: ChangeWindow): ChangePage | undefined {
    if (!fitsKey(balanceId)) return undefined;
    const first = this.firstRecord(balanceId, transaction);
    if (!first) return undefined;
    const { after } = window;
    const start: EntryKey = after && after.at >= window.from_ms ? [balanceId, after.at, after.seq + 1] : [balanceId, window.from_ms, 0];
    const changes: BalanceChange[] = [];
    let more = false;
    for (const { key, value } of this.amounts.getRange({ start, end: [balanceId, window.to_ms, KEY_END], limit: window.limit + 1, transaction })) {
      if (changes.length === window.limit) {
        more = true;
        break;
      }
      changes.push({ at: key[1], seq: key[2], ...readAmounts(value) });
    }
    const page: ChangePage = { currency: first.currency, changes };
    const last = changes[changes.length - 1];
    if (more && last) page.next = { at: last.at, seq: last.seq };
    return page;
  }

  private lastAmounts(balanceId: string, untilMs: number, transaction?: HistoryRead): BalanceAmounts | undefined {
    for (const { value } of this.amounts.getRange({ start: [balanceId, untilMs, KEY_END], end: [balanceId], reverse: true, limit: 1, transaction })) {
      return readAmounts(value);
    }
    return undefined;
  }

  private lastRecord(balanceId: string, untilMs: number, transaction?: HistoryRead): BalanceRecord | undefined {
    for (const { value } of this.records.getRange({ start: [balanceId, untilMs, KEY_END], end: [balanceId], reverse: true, limit: 1, transaction })) {
      return readBalanceAt(new ByteReader(value));
    }
    return undefined;
  }

  private firstRecord(balanceId: string, transaction?: HistoryRead): BalanceRecord | undefined {
    for (const { value } of this.records.getRange({ start: [balanceId], end: [balanceId, KEY_END], limit: 1, transaction })) {
      return readBalanceAt(new ByteReader(value));
    }
    return undefined;
  }

  /** Every entry of every table, in key order: for comparing two stores (a caught-up one and a rebuild). */
  *entries(): Generator<{ table: string; key: number[] | Array<string | number>; value: Buffer }> {
    for (const { key, value } of this.amounts.getRange({})) yield { table: 'amounts', key, value };
    for (const { key, value } of this.records.getRange({})) yield { table: 'records', key, value };
    for (const { key, value } of this.backdated.getRange({})) yield { table: 'backdated', key, value };
  }

  async close(): Promise<void> {
    await this.env.close();
  }
}

function fitsKey(balanceId: string): boolean {
  return Buffer.byteLength(balanceId, 'utf8') <= BALANCE_ID_BYTES_MAX;
}

// ---- entries as bytes ----

const writer = new ByteWriter(1024);

/** An amounts entry: the version (f64), then credit, debit, inflight credit and inflight debit. */
export function amountsEntry(balance: BalanceAmounts): Buffer {
  writer.reset();
  writer.f64(balance.version);
  writeTotals(writer, balance);
  return Buffer.from(writer.bytes());
}

/** A records entry: the balance record as the log writes it (codec/balance-codec.ts). */
export function recordEntry(balance: BalanceRecord): Buffer {
  writer.reset();
  writeBalance(writer, balance);
  return Buffer.from(writer.bytes());
}

/** A back-dated entry: the four signed amounts the event's back-dated postings moved. */
export function backdatedEntry(change: BalanceTotals): Buffer {
  writer.reset();
  writeTotals(writer, change);
  return Buffer.from(writer.bytes());
}

function writeTotals(out: ByteWriter, totals: BalanceTotals): void {
  writeAmount(out, totals.credit_balance);
  writeAmount(out, totals.debit_balance);
  writeAmount(out, totals.inflight_credit_balance);
  writeAmount(out, totals.inflight_debit_balance);
}

function readTotals(input: ByteReader): BalanceTotals {
  return {
    credit_balance: readAmount(input),
    debit_balance: readAmount(input),
    inflight_credit_balance: readAmount(input),
    inflight_debit_balance: readAmount(input),
  };
}

function readAmounts(value: Buffer): BalanceAmounts {
  const input = new ByteReader(value);
  const version = input.f64();
  return { version, ...readTotals(input) };
}
