// Balances as they stood, read from the index's balance history (index-schema.ts HISTORY_TABLES) instead
// of a fold of the log. The projector appends a balance's running totals after every event that created
// or moved it, and its metadata and identity after every event that created it or changed either, each
// with the event's time and seq; so "as of T" is the last row at or before T in each table (two index
// seeks) plus the back-dated changes below, and a window of changes is one range scan. The balance's
// other fields never change after creation and come from its current row. The answer is the fold's (engine/balance-fold.ts) for every T: the fold
// takes the events decided at or before T, which are exactly the rows at or before T, since event times
// never decrease along the log, and the postings of later events dated back to T or before, which the
// back-dated changes table holds apart. A window of changes lists them as recorded: a back-dated change
// appears at its event's time (docs/decisions-query.md).

import type { BalanceRecord } from '../engine/records.js';
import { HISTORY_TABLES, LAYOUTS, ROW_ID, selectColumns } from './index-schema.js';
import { balanceAmountsFromTotals, balanceFromRow, balanceMetaFromRow, type BalanceAmounts, type SelectedRow } from './record-rows.js';
import type { SqliteConnection } from './sqlite-connection.js';

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

/** The last row of a history table at or before a time, for the balance of the outer row `b`. */
function lastAtOrBefore(table: string): string {
  return `(SELECT rowid FROM ${table} WHERE balance_key = b.${ROW_ID} AND at <= ?1 ORDER BY at DESC, seq DESC LIMIT 1)`;
}

/** The first row of a history table for the balance of the outer row `b`: its state when created. */
function first(table: string): string {
  return `(SELECT rowid FROM ${table} WHERE balance_key = b.${ROW_ID} ORDER BY at, seq LIMIT 1)`;
}

type AsOfRow = SelectedRow & { h_key: number; h_totals: string | null; h_identity_id: string | null; h_meta_data: string | null };

/**
 * The balance as it stood at `untilMs`: undefined when it did not exist yet, or the index does not hold
 * it. That is the running totals of the last event at or before the moment, plus what back-dated
 * postings of later events moved with an effective time at or before it (each such event raises the
 * version once, as the fold counts it). A balance created after the moment existed then if a back-dated
 * posting reached it by then: it starts from its creation (zero amounts, version 0, its first metadata).
 */
export async function balanceAsOf(reader: SqliteConnection, balanceId: string, untilMs: number): Promise<BalanceRecord | undefined> {
  return reader.inReadTransaction(() => readBalanceAsOf(reader, balanceId, untilMs));
}

/** What the index can say of a balance at a moment before it has reached the log's end. */
export type CurrentAnswer = { current: true; balance: BalanceRecord | undefined } | { current: false };

/**
 * The balance at `untilMs` as balanceAsOf gives it, if nothing the index has not reached yet can change
 * that answer; `{current: false}` otherwise. Events past the index's checkpoint are decided at or after
 * the checkpoint's time (event times never decrease along the log), so for a moment before that time
 * they count only through back-dated postings, and a posting to the balance raises its version: if the
 * index's row of the balance has at least `version` (the version the ledger showed when the request
 * arrived), no event the index lacks moved it by then. Checked and read in one read transaction.
 */
export async function balanceAsOfIfCurrent(reader: SqliteConnection, balanceId: string, untilMs: number, version: number): Promise<CurrentAnswer> {
  return reader.inReadTransaction(async () => {
    const state = await reader.get<{ checkpoint_at: number; version: number | null }>(
      `SELECT (SELECT value FROM index_state WHERE key = 'checkpoint_at') AS checkpoint_at,
              (SELECT version FROM balances WHERE balance_id = ?) AS version`,
      [balanceId],
    );
    if (!state || state.version === null || state.version < version || untilMs >= state.checkpoint_at) return { current: false };
    return { current: true, balance: await readBalanceAsOf(reader, balanceId, untilMs) };
  });
}

async function readBalanceAsOf(reader: SqliteConnection, balanceId: string, untilMs: number): Promise<BalanceRecord | undefined> {
  const row = await reader.get<AsOfRow>(
    `SELECT ${selectColumns(LAYOUTS.balances, 'b')}, b.${ROW_ID} AS h_key,
            c.totals AS h_totals,
            m.identity_id AS h_identity_id, m.meta_data AS h_meta_data, m.extra AS h_extra
       FROM balances b
       LEFT JOIN ${HISTORY_TABLES.amounts} c ON c.rowid = ${lastAtOrBefore(HISTORY_TABLES.amounts)}
       LEFT JOIN ${HISTORY_TABLES.metadata} m ON m.rowid = coalesce(${lastAtOrBefore(HISTORY_TABLES.metadata)}, ${first(HISTORY_TABLES.metadata)})
      WHERE b.balance_id = ?2`,
    [untilMs, balanceId],
  );
  if (!row) return undefined;
  const later = await reader.all<SelectedRow>(
    `SELECT seq, credit_balance, debit_balance, inflight_credit_balance, inflight_debit_balance
       FROM ${HISTORY_TABLES.backdated} WHERE balance_key = ? AND at > ? AND effective_at <= ?`,
    [row.h_key, untilMs, untilMs],
  );
  if (row.h_totals === null && later.length === 0) return undefined;
  const current = balanceFromRow(row);
  const amounts: BalanceAmounts = row.h_totals === null
    ? { version: 0, credit_balance: 0n, debit_balance: 0n, inflight_credit_balance: 0n, inflight_debit_balance: 0n }
    : balanceAmountsFromTotals(row.h_totals);
  const events = new Set<number>();
  for (const change of later) {
    events.add(change.seq as number);
    amounts.credit_balance += BigInt(change.credit_balance as string);
    amounts.debit_balance += BigInt(change.debit_balance as string);
    amounts.inflight_credit_balance += BigInt(change.inflight_credit_balance as string);
    amounts.inflight_debit_balance += BigInt(change.inflight_debit_balance as string);
  }
  amounts.version += events.size;
  // Every balance has a metadata row from its creation on.
  if (row.h_meta_data === null) return { ...current, ...amounts };
  const identityId = row.h_identity_id ?? current.identity_id;
  return { ...current, ...amounts, identity_id: identityId, meta_data: balanceMetaFromRow(prefixed(row, 'h_')) };
}

/** The changes of a balance inside a window, oldest first; undefined when the index does not hold it. */
export async function balanceChanges(reader: SqliteConnection, balanceId: string, window: ChangeWindow): Promise<ChangePage | undefined> {
  const balance = await reader.get<{ key: number; currency: string }>(`SELECT ${ROW_ID} AS key, currency FROM balances WHERE balance_id = ?`, [balanceId]);
  if (!balance) return undefined;
  const after = window.after ? ' AND (at, seq) > (?, ?)' : '';
  const params = [balance.key, window.from_ms, window.to_ms, ...(window.after ? [window.after.at, window.after.seq] : []), window.limit + 1];
  const rows = await reader.all<SelectedRow>(
    `SELECT at, seq, totals
       FROM ${HISTORY_TABLES.amounts} WHERE balance_key = ? AND at >= ? AND at <= ?${after} ORDER BY at, seq LIMIT ?`,
    params,
  );
  const changes = rows.slice(0, window.limit).map((row) => ({ at: row.at as number, seq: row.seq as number, ...balanceAmountsFromTotals(row.totals) }));
  const page: ChangePage = { currency: balance.currency, changes };
  const last = changes[changes.length - 1];
  if (rows.length > window.limit && last) page.next = { at: last.at, seq: last.seq };
  return page;
}

/** The columns of a row whose names start with `prefix`, under their names without it. */
function prefixed(row: SelectedRow, prefix: string): SelectedRow {
  const picked: SelectedRow = {};
  for (const [name, value] of Object.entries(row)) if (name.startsWith(prefix)) picked[name.slice(prefix.length)] = value;
  return picked;
}
