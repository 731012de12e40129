// The query side of reconciliation beyond the `reconciliations` collection (index-schema.ts): tables
// the projector fills from reconciliation events, read by the runs and by the result listings.
//   external_records          every uploaded record, by (upload, position): what a background run
//                             matches, and what an unmatched result shows
//   reconciliation_matches    a run's matches, by (run, position of the external record)
//   reconciliation_unmatched  a run's unmatched records and why, likewise
//   transaction_precisions    every (currency, precision) pair a transaction was ever recorded with, kept
//                             by a trigger: an amount band is looked up once per precision in use, since
//                             `precise_amount` only compares within one precision
// Keys are the tables' primary keys (WITHOUT ROWID), so paging a run's results reads them in order
// without a second index. Amounts are exact decimal text (signed digits); precisions are the sortable
// text of the transactions table (sortable-amount.ts).

import type { ExternalRecordsChunk, ReconciliationResultsChunk } from '../engine/reconciliation-records.js';
import type { SqlValue } from './sqlite-connection.js';

export const RECONCILIATION_TABLES = ['external_records', 'reconciliation_matches', 'reconciliation_unmatched', 'transaction_precisions'] as const;

export const RECONCILIATION_TABLES_SQL = `
CREATE TABLE external_records (
  upload_id TEXT NOT NULL, position INTEGER NOT NULL, external_id TEXT NOT NULL, amount TEXT NOT NULL, precision TEXT NOT NULL,
  currency TEXT NOT NULL, reference TEXT NOT NULL, description TEXT NOT NULL, date INTEGER NOT NULL,
  PRIMARY KEY (upload_id, position)) WITHOUT ROWID;
CREATE TABLE reconciliation_matches (
  reconciliation_id TEXT NOT NULL, position INTEGER NOT NULL, external_id TEXT NOT NULL, internal_ids TEXT NOT NULL,
  rule_id TEXT NOT NULL, amount_difference TEXT NOT NULL, difference_precision TEXT NOT NULL, time_difference_ms INTEGER NOT NULL,
  PRIMARY KEY (reconciliation_id, position)) WITHOUT ROWID;
CREATE TABLE reconciliation_unmatched (
  reconciliation_id TEXT NOT NULL, position INTEGER NOT NULL, external_id TEXT NOT NULL, reason TEXT NOT NULL,
  PRIMARY KEY (reconciliation_id, position)) WITHOUT ROWID;
CREATE TABLE transaction_precisions (currency TEXT NOT NULL, precision TEXT NOT NULL, PRIMARY KEY (currency, precision)) WITHOUT ROWID;
CREATE TRIGGER transactions_precision AFTER INSERT ON transactions BEGIN
  INSERT OR IGNORE INTO transaction_precisions (currency, precision) VALUES (new.currency, new.precision); END;
`;

/** Inserts (or replaces: a run resumed after a restart writes the same keys again) rows sent as one JSON array. */
function insertSql(table: string, columns: readonly string[]): string {
  const picks = columns.map((_, index) => `value->>${index}`).join(', ');
  return `INSERT OR REPLACE INTO ${table} (${columns.join(', ')}) SELECT ${picks} FROM jsonb_each(jsonb(CAST(? AS TEXT)))`;
}

const EXTERNAL_COLUMNS = ['upload_id', 'position', 'external_id', 'amount', 'precision', 'currency', 'reference', 'description', 'date'] as const;
const MATCH_COLUMNS = [
  'reconciliation_id', 'position', 'external_id', 'internal_ids', 'rule_id', 'amount_difference', 'difference_precision', 'time_difference_ms',
] as const;
const UNMATCHED_COLUMNS = ['reconciliation_id', 'position', 'external_id', 'reason'] as const;

export const INSERT_EXTERNAL_RECORDS_SQL = insertSql('external_records', EXTERNAL_COLUMNS);
export const INSERT_MATCHES_SQL = insertSql('reconciliation_matches', MATCH_COLUMNS);
export const INSERT_UNMATCHED_SQL = insertSql('reconciliation_unmatched', UNMATCHED_COLUMNS);

export function externalRecordRows(chunk: ExternalRecordsChunk): SqlValue[][] {
  return chunk.records.map((record, index) => [
    chunk.upload_id, chunk.first_position + index, record.id, record.amount.toString(), record.precision.toString(), record.currency,
    record.reference, record.description, record.date,
  ]);
}

export function matchRows(chunk: ReconciliationResultsChunk): SqlValue[][] {
  return chunk.matches.map((match) => [
    chunk.reconciliation_id, match.position, match.external_id, JSON.stringify(match.internal_ids), match.rule_id,
    match.amount_difference.toString(), match.difference_precision.toString(), match.time_difference_ms,
  ]);
}

export function unmatchedRows(chunk: ReconciliationResultsChunk): SqlValue[][] {
  return chunk.unmatched.map((record) => [chunk.reconciliation_id, record.position, record.external_id, record.reason]);
}

/** Rows the chunks of an event hold, for sizing slices. */
export function chunkRows(chunks: { external?: ExternalRecordsChunk[]; results?: ReconciliationResultsChunk[] }): number {
  let rows = 0;
  for (const chunk of chunks.external ?? []) rows += chunk.records.length;
  for (const chunk of chunks.results ?? []) rows += chunk.matches.length + chunk.unmatched.length;
  return rows;
}
