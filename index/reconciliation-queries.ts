// The reads reconciliation makes of the index: candidates for matching, found through indexes and never
// by reading the ledger through (reference: its index; amount bands: the precise_amount index, one
// precision at a time; time windows: the created_at index; groups: the index of their column), the
// records of an upload, and a run's results page by page.
//
// Lookups are batched: many probes (one per external record and rule) travel as one JSON array, which
// SQLite walks joining each probe to the index, so a thousand lookups cost one round trip. The probes are
// always the outer loop (CROSS JOIN fixes SQLite's join order) and the index is named: left to itself,
// the planner, which knows nothing of a JSON array's length, may walk the table and probe the array. Every read
// is bounded: a batch returns at most `rows_max` rows, or says it would have returned more (the caller
// then splits it), and a group is read only when its size is within bounds.

import {
  INTERNAL_GROUPING_FIELDS,
  type AmountLookup,
  type AmountProbe,
  type DateProbe,
  type ExternalRecord,
  type InternalGroupingField,
  type InternalTransaction,
  type ProbedTransaction,
  type ReconciliationMatch,
  type ReferenceProbe,
} from '../engine/reconciliation-records.js';
import { amountFromKey, amountKey } from './sortable-amount.js';
import type { SqliteConnection } from './sqlite-connection.js';

/** Rows of a batch, or `undefined` when there would have been more than the bound. */
export type BoundedRows = ProbedTransaction[] | undefined;

const CANDIDATE_COLUMNS = [
  'transaction_id', 'parent_transaction', 'batch_id', 'source', 'destination', 'reference', 'description', 'currency',
  'precise_amount', 'precision', 'created_at',
].map((column) => `t.${column}`).join(', ');

/** Sorts after every non-negative amount key ('p' + length + digits). */
const ABOVE_EVERY_AMOUNT = 'q';
const TIME_MIN = -8.64e15;
const TIME_MAX = 8.64e15;

/** A candidate row as SQLite gives it: amounts as sortable text (sortable-amount.ts), with its probe. */
type RawCandidate = Omit<InternalTransaction, 'precise_amount' | 'precision'> & { probe: number; precise_amount: string; precision: string };

function candidate({ probe: _probe, precise_amount, precision, ...fields }: RawCandidate): InternalTransaction {
  return { ...fields, precise_amount: amountFromKey(precise_amount), precision: amountFromKey(precision) };
}

async function bounded(reader: SqliteConnection, sql: string, params: Array<string | number>, rowsMax: number): Promise<BoundedRows> {
  const rows = await reader.all<RawCandidate>(`${sql} LIMIT ?`, [...params, rowsMax + 1]);
  if (rows.length > rowsMax) return undefined;
  return rows.map((raw) => ({ probe: raw.probe, row: candidate(raw) }));
}

export async function candidatesByReference(reader: SqliteConnection, probes: ReferenceProbe[], rowsMax: number): Promise<BoundedRows> {
  const sql = `SELECT q.value->>0 AS probe, ${CANDIDATE_COLUMNS} FROM json_each(?) q
    CROSS JOIN transactions t INDEXED BY transactions_by_reference ON t.reference = q.value->>1 WHERE t.status = 'APPLIED'`;
  return bounded(reader, sql, [JSON.stringify(probes.map((probe) => [probe.probe, probe.reference]))], rowsMax);
}

/**
 * Transactions in an amount band (one precision each), optionally within a time window too, read
 * through the amount index, or through the time index when the window is the narrower of the two
 * (`through`; see bandSizes).
 */
export async function candidatesByAmount(reader: SqliteConnection, probes: AmountProbe[], rowsMax: number, through: AmountLookup = 'amount'): Promise<BoundedRows> {
  const join = through === 'amount'
    ? 'CROSS JOIN transactions t INDEXED BY transactions_by_precise_amount_created_at ON t.precise_amount BETWEEN q.value->>3 AND q.value->>4'
    : 'CROSS JOIN transactions t INDEXED BY transactions_by_created_at ON t.created_at BETWEEN q.value->>5 AND q.value->>6';
  const sql = `SELECT q.value->>0 AS probe, ${CANDIDATE_COLUMNS} FROM json_each(?) q ${join}
    WHERE t.precise_amount BETWEEN q.value->>3 AND q.value->>4 AND t.created_at BETWEEN q.value->>5 AND q.value->>6
      AND t.currency = q.value->>1 AND t.precision = q.value->>2 AND t.status = 'APPLIED'`;
  return bounded(reader, sql, [JSON.stringify(probes.map(packAmountProbe))], rowsMax);
}

function packAmountProbe(probe: AmountProbe): Array<string | number> {
  return [
    probe.probe, probe.currency, amountKey(probe.precision), amountKey(probe.low),
    probe.high === undefined ? ABOVE_EVERY_AMOUNT : amountKey(probe.high), probe.fromMs ?? TIME_MIN, probe.toMs ?? TIME_MAX,
  ];
}

/**
 * How many index entries the probes' amount bands and their time windows each span, every count
 * stopped at `cap`: read from the indexes alone (no row is fetched), to tell which index narrows a
 * rule's lookups more on this ledger.
 */
export async function bandSizes(reader: SqliteConnection, probes: AmountProbe[], cap: number): Promise<{ amount: number; time: number }> {
  const rows = await reader.all<{ amount: number; time: number }>(
    `SELECT
       sum((SELECT count(*) FROM (SELECT 1 FROM transactions t INDEXED BY transactions_by_precise_amount_created_at
         WHERE t.precise_amount BETWEEN q.value->>3 AND q.value->>4 LIMIT ?1))) AS amount,
       sum((SELECT count(*) FROM (SELECT 1 FROM transactions t INDEXED BY transactions_by_created_at
         WHERE t.created_at BETWEEN q.value->>5 AND q.value->>6 LIMIT ?1))) AS time
     FROM json_each(?2) q`,
    [cap, JSON.stringify(probes.map(packAmountProbe))],
  );
  return { amount: rows[0]?.amount ?? 0, time: rows[0]?.time ?? 0 };
}

export async function candidatesByDate(reader: SqliteConnection, probes: DateProbe[], rowsMax: number): Promise<BoundedRows> {
  const sql = `SELECT q.value->>0 AS probe, ${CANDIDATE_COLUMNS} FROM json_each(?) q
    CROSS JOIN transactions t INDEXED BY transactions_by_created_at ON t.created_at BETWEEN q.value->>1 AND q.value->>2
    WHERE t.status = 'APPLIED' AND (q.value->>3 IS NULL OR t.currency = q.value->>3)`;
  const packed = probes.map((probe) => [probe.probe, probe.fromMs, probe.toMs, probe.currency ?? null]);
  return bounded(reader, sql, [JSON.stringify(packed)], rowsMax);
}

/** The index each grouping column is found through (index-schema.ts names them). */
const GROUPING_INDEXES: Record<InternalGroupingField, string> = {
  parent_transaction: 'transactions_by_set_parent_transaction',
  batch_id: 'transactions_by_set_batch_id',
  reference: 'transactions_by_reference',
  source: 'transactions_by_source_created_at',
  destination: 'transactions_by_destination_created_at',
};

function groupingColumn(field: InternalGroupingField): { column: string; index: string } {
  if (!(INTERNAL_GROUPING_FIELDS as readonly string[]).includes(field)) throw new Error(`not a grouping field: ${field}`);
  return { column: field, index: GROUPING_INDEXES[field] };
}

/**
 * The APPLIED members of each group named, by the group's key. A group with more than `membersMax`
 * transactions (of any status) is left out and named in `tooLarge`: counting stops there, so a key
 * shared by millions of transactions costs `membersMax` index entries, not millions.
 */
export async function groupMembers(
  reader: SqliteConnection,
  field: InternalGroupingField,
  keys: string[],
  membersMax: number,
): Promise<{ groups: Map<string, InternalTransaction[]>; tooLarge: string[] }> {
  const { column, index } = groupingColumn(field);
  const sizes = await reader.all<{ key: string; size: number }>(
    `SELECT k.value AS key, (SELECT count(*) FROM (SELECT 1 FROM transactions t INDEXED BY ${index}
       WHERE t.${column} = k.value AND t.${column} != '' LIMIT ?)) AS size
     FROM json_each(?) k`,
    [membersMax + 1, JSON.stringify(keys)],
  );
  const tooLarge = sizes.filter((entry) => entry.size > membersMax).map((entry) => entry.key);
  const readable = sizes.filter((entry) => entry.size > 0 && entry.size <= membersMax).map((entry) => entry.key);
  const groups = new Map<string, InternalTransaction[]>();
  if (readable.length === 0) return { groups, tooLarge };
  const rows = await reader.all<RawCandidate>(
    `SELECT 0 AS probe, ${CANDIDATE_COLUMNS} FROM json_each(?) k CROSS JOIN transactions t INDEXED BY ${index}
       ON t.${column} = k.value WHERE t.${column} != '' AND t.status = 'APPLIED'`,
    [JSON.stringify(readable)],
  );
  for (const raw of rows) {
    const row = candidate(raw);
    const key = row[field];
    const members = groups.get(key);
    if (members) members.push(row);
    else groups.set(key, [row]);
  }
  return { groups, tooLarge };
}

/** The precisions transactions in this currency were ever recorded with. */
export async function precisionsOf(reader: SqliteConnection, currency: string): Promise<bigint[]> {
  const rows = await reader.all<{ precision: string }>('SELECT precision FROM transaction_precisions WHERE currency = ?', [currency]);
  return rows.map((row) => amountFromKey(row.precision));
}

/** An uploaded record with its place in the upload. */
export type ExternalRecordRow = ExternalRecord & { position: number };

interface RawExternal {
  position: number;
  external_id: string;
  amount: string;
  precision: string;
  currency: string;
  reference: string;
  description: string;
  date: number;
}

function externalFromRow(raw: RawExternal): ExternalRecordRow {
  return {
    position: raw.position, id: raw.external_id, amount: BigInt(raw.amount), precision: BigInt(raw.precision), currency: raw.currency,
    reference: raw.reference, description: raw.description, date: raw.date,
  };
}

/** An upload's records from `fromPosition` on, in order. */
export async function externalRecords(reader: SqliteConnection, uploadId: string, fromPosition: number, limit: number): Promise<ExternalRecordRow[]> {
  const rows = await reader.all<RawExternal>(
    `SELECT position, external_id, amount, precision, currency, reference, description, date FROM external_records
     WHERE upload_id = ? AND position >= ? ORDER BY position LIMIT ?`,
    [uploadId, fromPosition, limit],
  );
  return rows.map(externalFromRow);
}

export async function matchesPage(reader: SqliteConnection, reconciliationId: string, offset: number, limit: number): Promise<ReconciliationMatch[]> {
  const rows = await reader.all<Record<string, string | number>>(
    `SELECT position, external_id, internal_ids, rule_id, amount_difference, difference_precision, time_difference_ms
     FROM reconciliation_matches WHERE reconciliation_id = ? ORDER BY position LIMIT ? OFFSET ?`,
    [reconciliationId, limit, offset],
  );
  return rows.map((row) => ({
    position: row.position as number,
    external_id: row.external_id as string,
    internal_ids: JSON.parse(row.internal_ids as string) as string[],
    rule_id: row.rule_id as string,
    amount_difference: BigInt(row.amount_difference as string),
    difference_precision: BigInt(row.difference_precision as string),
    time_difference_ms: row.time_difference_ms as number,
  }));
}

export interface UnmatchedRow {
  reason: string;
  record: ExternalRecordRow;
}

export async function unmatchedPage(reader: SqliteConnection, reconciliationId: string, uploadId: string, offset: number, limit: number): Promise<UnmatchedRow[]> {
  const rows = await reader.all<RawExternal & { reason: string }>(
    `SELECT u.position, u.external_id, u.reason, e.amount, e.precision, e.currency, e.reference, e.description, e.date
     FROM reconciliation_unmatched u JOIN external_records e ON e.upload_id = ? AND e.position = u.position
     WHERE u.reconciliation_id = ? ORDER BY u.position LIMIT ? OFFSET ?`,
    [uploadId, reconciliationId, limit, offset],
  );
  return rows.map((raw) => ({ reason: raw.reason, record: externalFromRow(raw) }));
}
