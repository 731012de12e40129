// The reads reconciliation makes of the index: candidates for matching, found through indexes (reference:
// its index; amount bands: the precise_amount index, one precision at a time; time windows: the
// created_at index; texts containing a statement's text: the trigram index; texts a statement's text
// contains: a prefix walk down the folded texts' B-tree; groups: the index of their column), the scan a
// rule no index can narrow is answered by (a page of applied transactions at a time), the records of an
// upload, and a run's results page by page.
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
  type ScanPage,
  type TextField,
  type TextProbe,
} from '../engine/reconciliation-records.js';
import { TRANSACTION_TEXTS_FTS } from './reconciliation-tables.js';
import { foldCase } from '../engine/matching-rules.js';
import { amountFromKey, amountKey } from './sortable-amount.js';
import { exchangeOfExtra } from './record-rows.js';
import type { SqliteConnection } from './sqlite-connection.js';

/** Rows of a batch, or `undefined` when there would have been more than the bound. */
export type BoundedRows = ProbedTransaction[] | undefined;

const CANDIDATE_COLUMNS = [
  'transaction_id', 'parent_transaction', 'batch_id', 'source', 'destination', 'reference', 'description', 'currency',
  'precise_amount', 'precision', 'created_at', 'extra',
].map((column) => `t.${column}`).join(', ');

/** Sorts after every non-negative amount key ('p' + length + digits). */
const ABOVE_EVERY_AMOUNT = 'q';
const TIME_MIN = -8.64e15;
const TIME_MAX = 8.64e15;

/** A candidate row as SQLite gives it: amounts as sortable text (sortable-amount.ts), with its probe. */
type RawCandidate = Omit<InternalTransaction, 'precise_amount' | 'precision' | 'exchange_leg'>
  & { probe: number; precise_amount: string; precision: string; extra: string | null };

function candidate({ probe: _probe, precise_amount, precision, extra, ...fields }: RawCandidate): InternalTransaction {
  const row: InternalTransaction = { ...fields, precise_amount: amountFromKey(precise_amount), precision: amountFromKey(precision) };
  // An exchange's destination leg, for external records in its currency (most rows have no extra at all).
  const exchange = extra === null ? undefined : exchangeOfExtra(extra);
  if (exchange) {
    row.exchange_leg = { currency: exchange.destination_currency, precise_amount: exchange.destination_precise_amount, precision: exchange.destination_precision };
  }
  return row;
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
  // Exchanges' destination legs in the band come from their own small index, whichever index the
  // source amounts are read through; a leg is in the probe's currency, so no row is found twice.
  const sql = `SELECT q.value->>0 AS probe, ${CANDIDATE_COLUMNS} FROM json_each(?1) q ${join}
    WHERE t.precise_amount BETWEEN q.value->>3 AND q.value->>4 AND t.created_at BETWEEN q.value->>5 AND q.value->>6
      AND t.currency = q.value->>1 AND t.precision = q.value->>2 AND t.status = 'APPLIED'
    UNION ALL
    SELECT q.value->>0 AS probe, ${CANDIDATE_COLUMNS} FROM json_each(?1) q
    CROSS JOIN exchange_legs x INDEXED BY exchange_legs_by_amount
      ON x.currency = q.value->>1 AND x.precision = q.value->>2 AND x.precise_amount BETWEEN q.value->>3 AND q.value->>4
    CROSS JOIN transactions t ON t.transaction_id = x.transaction_id
    WHERE x.created_at BETWEEN q.value->>5 AND q.value->>6 AND t.status = 'APPLIED'`;
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

/**
 * The index each grouping column is found through (index-schema.ts and reconciliation-tables.ts name
 * them). `description` groups are found through the folded descriptions, then held to the exact text.
 */
const GROUPING_INDEXES: Record<InternalGroupingField, string> = {
  parent_transaction: 'transactions_by_set_parent_transaction',
  batch_id: 'transactions_by_set_batch_id',
  reference: 'transactions_by_reference',
  source: 'transactions_by_source_created_at',
  destination: 'transactions_by_destination_created_at',
  description: 'transaction_texts_by_description',
  transaction_id: 'sqlite_autoindex_transactions_1',
  currency: 'transactions_by_currency_created_at',
  status: 'transactions_by_status_created_at',
  created_at: 'transactions_by_created_at',
};

/** A group's key as matching names it (matcher.ts groupKeyOf): text, or the time in ms for created_at. */
function keyValue(field: InternalGroupingField, key: string): string | number {
  return field === 'created_at' ? Number(key) : key;
}

/**
 * How the transactions of the key in `k` (a json_each row: [value, folded value, key]) are reached
 * through the grouping column's index: the tables to read and the condition on them.
 */
function groupLookup(field: InternalGroupingField): { from: string; where: string } {
  if (!(INTERNAL_GROUPING_FIELDS as readonly string[]).includes(field)) throw new Error(`not a grouping field: ${field}`);
  const index = GROUPING_INDEXES[field];
  if (field === 'description') {
    return {
      from: `transaction_texts r INDEXED BY ${index} CROSS JOIN transactions t ON t.transaction_id = r.transaction_id`,
      where: 'r.description = k.value->>1 AND t.description = k.value->>0',
    };
  }
  const set = field === 'parent_transaction' || field === 'batch_id' ? ` AND t.${field} != ''` : '';
  return { from: `transactions t INDEXED BY ${index}`, where: `t.${field} = k.value->>0${set}` };
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
  const packed = (list: string[]): string => JSON.stringify(list.map((key) => [keyValue(field, key), foldCase(key), key]));
  const { from, where } = groupLookup(field);
  const sizes = await reader.all<{ key: string; size: number }>(
    `SELECT k.value->>2 AS key, (SELECT count(*) FROM (SELECT 1 FROM ${from} WHERE ${where} LIMIT ?)) AS size FROM json_each(?) k`,
    [membersMax + 1, packed(keys)],
  );
  const tooLarge = sizes.filter((entry) => entry.size > membersMax).map((entry) => entry.key);
  const readable = sizes.filter((entry) => entry.size > 0 && entry.size <= membersMax).map((entry) => entry.key);
  const groups = new Map<string, InternalTransaction[]>();
  if (readable.length === 0) return { groups, tooLarge };
  const rows = await reader.all<RawCandidate & { group_key: string }>(
    `SELECT 0 AS probe, k.value->>2 AS group_key, ${CANDIDATE_COLUMNS} FROM json_each(?) k CROSS JOIN ${from} WHERE ${where} AND t.status = 'APPLIED'`,
    [packed(readable)],
  );
  for (const { group_key: key, ...raw } of rows) {
    const row = candidate(raw);
    const members = groups.get(key);
    if (members) members.push(row);
    else groups.set(key, [row]);
  }
  return { groups, tooLarge };
}

/** An FTS5 phrase of the text: a MATCH of it finds the texts holding it as a substring (3+ characters). */
function phrase(text: string): string {
  return `"${text.replaceAll('"', '""')}"`;
}

/** The trigram index answers needles of this many characters or more; shorter ones are read off the B-tree. */
const TRIGRAM_CHARACTERS = 3;

/**
 * Transactions whose (folded) text contains the probe's text. Three characters or more: through the
 * trigram index. Fewer: no trigram holds them, so the folded texts' index is read through, which is
 * done only while it has at most `shortScanRowsMax` entries; past that a short probe's batch answers
 * `undefined` (and, alone, the probe is reported too broad: a text of one or two characters is in
 * most of a large ledger's texts anyway).
 */
export async function candidatesContaining(
  reader: SqliteConnection,
  field: TextField,
  probes: TextProbe[],
  rowsMax: number,
  shortScanRowsMax: number,
): Promise<BoundedRows> {
  const long = probes.filter((probe) => Array.from(probe.text).length >= TRIGRAM_CHARACTERS);
  const short = probes.filter((probe) => Array.from(probe.text).length < TRIGRAM_CHARACTERS);
  const found: ProbedTransaction[] = [];
  if (long.length > 0) {
    const sql = `SELECT q.value->>0 AS probe, ${CANDIDATE_COLUMNS} FROM json_each(?) q
      CROSS JOIN ${TRANSACTION_TEXTS_FTS} f ON f.${field} MATCH q.value->>1
      CROSS JOIN transaction_texts r ON r.text_id = f.rowid
      CROSS JOIN transactions t ON t.transaction_id = r.transaction_id WHERE t.status = 'APPLIED'`;
    const rows = await bounded(reader, sql, [JSON.stringify(long.map((probe) => [probe.probe, phrase(probe.text)]))], rowsMax);
    if (!rows) return undefined;
    found.push(...rows);
  }
  if (short.length > 0) {
    const entries = await reader.get<{ size: number }>(
      `SELECT count(*) AS size FROM (SELECT 1 FROM transaction_texts INDEXED BY transaction_texts_by_${field} LIMIT ?)`, [shortScanRowsMax + 1]);
    if ((entries?.size ?? 0) > shortScanRowsMax) return undefined;
    const sql = `SELECT q.value->>0 AS probe, ${CANDIDATE_COLUMNS} FROM json_each(?) q
      CROSS JOIN transaction_texts r INDEXED BY transaction_texts_by_${field} ON instr(r.${field}, q.value->>1) > 0
      CROSS JOIN transactions t ON t.transaction_id = r.transaction_id WHERE t.status = 'APPLIED'`;
    const rows = await bounded(reader, sql, [JSON.stringify(short.map((probe) => [probe.probe, probe.text]))], rowsMax - found.length);
    if (!rows) return undefined;
    found.push(...rows);
  }
  return found;
}

/** How far a walk of texts-contained-in got: its probe, and the text (a prefix of one suffix of the probe's) left to try. */
interface Walk {
  probe: number;
  rest: string;
}

/**
 * Transactions whose (folded, not empty) text the probe's text contains. For every place a contained
 * text could start, the texts that are prefixes of the rest of the probe's text are found by a walk
 * down the sorted index: the greatest text at or below the rest either is a prefix of it (found; go on
 * below it) or shares a first part with it, and every prefix of the rest in the index is a prefix of
 * that first part too (anything sorted between a prefix and the rest starts with that prefix), so the
 * walk goes on from there. Each step shortens what is left; all walks step together, one query a step.
 * The walk costs at most `stepsBudget.left` index seeks, and answers `undefined` past that.
 */
export async function candidatesWithin(
  reader: SqliteConnection,
  field: TextField,
  probes: TextProbe[],
  rowsMax: number,
  stepsBudget: { left: number },
): Promise<BoundedRows> {
  let walks: Walk[] = [];
  for (const probe of probes) {
    const characters = Array.from(probe.text);
    for (let start = 0; start < characters.length; start += 1) {
      walks.push({ probe: probe.probe, rest: characters.slice(start).join('') });
    }
  }
  const found = new Map<number, Set<string>>();
  while (walks.length > 0) {
    stepsBudget.left -= walks.length;
    if (stepsBudget.left < 0) return undefined;
    const greatest = await reader.all<{ walk: number; text: string | null }>(
      `SELECT q.key AS walk, (SELECT r.${field} FROM transaction_texts r INDEXED BY transaction_texts_by_${field}
         WHERE r.${field} <= q.value ORDER BY r.${field} DESC LIMIT 1) AS text FROM json_each(?) q`,
      [JSON.stringify(walks.map((walk) => walk.rest))],
    );
    const next: Walk[] = [];
    for (const { walk: index, text } of greatest) {
      const walk = walks[index] as Walk;
      if (text === null || text === '') continue;
      const shared = commonPrefix(text, walk.rest);
      if (shared === text) {
        let keys = found.get(walk.probe);
        if (!keys) found.set(walk.probe, (keys = new Set()));
        keys.add(text);
        const shorter = Array.from(text).slice(0, -1).join('');
        if (shorter !== '') next.push({ probe: walk.probe, rest: shorter });
      } else if (shared !== '') {
        next.push({ probe: walk.probe, rest: shared });
      }
    }
    walks = next;
  }
  const lookups: Array<[number, string]> = [];
  for (const [probe, keys] of found) for (const key of keys) lookups.push([probe, key]);
  if (lookups.length === 0) return [];
  return bounded(reader, `SELECT q.value->>0 AS probe, ${CANDIDATE_COLUMNS} FROM json_each(?) q
    CROSS JOIN transaction_texts r INDEXED BY transaction_texts_by_${field} ON r.${field} = q.value->>1
    CROSS JOIN transactions t ON t.transaction_id = r.transaction_id WHERE t.status = 'APPLIED'`, [JSON.stringify(lookups)], rowsMax);
}

/** The longest common prefix of two texts, whole characters. */
function commonPrefix(a: string, b: string): string {
  const left = Array.from(a);
  const right = Array.from(b);
  let length = 0;
  while (length < left.length && length < right.length && left[length] === right[length]) length += 1;
  return left.slice(0, length).join('');
}

/** Transactions whose folded text is the probe's (folded) text. */
export async function candidatesByFoldedText(reader: SqliteConnection, field: TextField, probes: TextProbe[], rowsMax: number): Promise<BoundedRows> {
  const sql = `SELECT q.value->>0 AS probe, ${CANDIDATE_COLUMNS} FROM json_each(?) q
    CROSS JOIN transaction_texts r INDEXED BY transaction_texts_by_${field} ON r.${field} = q.value->>1
    CROSS JOIN transactions t ON t.transaction_id = r.transaction_id WHERE t.status = 'APPLIED'`;
  return bounded(reader, sql, [JSON.stringify(probes.map((probe) => [probe.probe, probe.text]))], rowsMax);
}

/** A page of the applied transactions in the order they were first indexed, after the row `after`. */
export async function scanApplied(reader: SqliteConnection, after: number, limit: number): Promise<ScanPage> {
  const rows = await reader.all<RawCandidate & { row_key: number }>(
    `SELECT t.row_id AS row_key, 0 AS probe, ${CANDIDATE_COLUMNS} FROM transactions t NOT INDEXED WHERE t.row_id > ? AND t.status = 'APPLIED'
     ORDER BY t.row_id LIMIT ?`,
    [after, limit],
  );
  const page: ScanPage = { rows: rows.map(({ row_key: _key, ...raw }) => candidate(raw)) };
  if (rows.length === limit) page.next = (rows[rows.length - 1] as { row_key: number }).row_key;
  return page;
}

/** How many applied transactions there are (what a scan reads). */
export async function appliedCount(reader: SqliteConnection): Promise<number> {
  const row = await reader.get<{ size: number }>(`SELECT count(*) AS size FROM transactions INDEXED BY transactions_by_status_created_at WHERE status = 'APPLIED'`);
  return row?.size ?? 0;
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
