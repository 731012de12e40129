// The query side of reconciliation beyond the `reconciliations` collection (index-schema.ts): tables
// the projector fills from reconciliation events, read by the runs and by the result listings.
//   external_records          every uploaded record, by (upload, position): what a background run
//                             matches, and what an unmatched result shows
//   reconciliation_matches    a run's matches, by (run, position of the external record)
//   reconciliation_unmatched  a run's unmatched records and why, likewise
//   transaction_precisions    every (currency, precision) pair a transaction was ever recorded with, kept
//                             by a trigger: an amount band is looked up once per precision in use, since
//                             `precise_amount` only compares within one precision
//   transaction_texts         every transaction's reference and description folded as matching folds them
//                             (engine/matching-rules.ts foldCase, done by the projector: SQLite's lower()
//                             folds ASCII alone), with a B-tree index on each (equality, and the prefix
//                             walk that finds the references a statement line contains) and a trigram
//                             full-text index over both (`transaction_texts_fts`: the references that
//                             contain a statement's text, found from the index without a scan)
//   exchange_legs             every exchange's destination leg (engine/exchange.ts): its currency,
//                             precision, amount and time, indexed as the transactions table indexes a
//                             source amount, so an amount lookup finds a statement line in the
//                             destination currency too; only exchanges have a row
// Keys are the tables' primary keys (WITHOUT ROWID), so paging a run's results reads them in order
// without a second index. Amounts are exact decimal text (signed digits); precisions are the sortable
// text of the transactions table (sortable-amount.ts).

import { foldCase } from '../engine/matching-rules.js';
import type { ExternalRecordsChunk, ReconciliationResultsChunk } from '../engine/reconciliation-records.js';
import type { TransactionRecord } from '../engine/records.js';
import { amountKey } from './sortable-amount.js';
import type { SqlValue } from './sqlite-connection.js';

export const RECONCILIATION_TABLES = [
  'external_records', 'reconciliation_matches', 'reconciliation_unmatched', 'transaction_precisions', 'transaction_texts', 'exchange_legs',
] as const;

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
CREATE TABLE transaction_texts (
  text_id INTEGER PRIMARY KEY, transaction_id TEXT NOT NULL UNIQUE, reference TEXT NOT NULL, description TEXT NOT NULL);
CREATE TABLE exchange_legs (
  transaction_id TEXT NOT NULL PRIMARY KEY, currency TEXT NOT NULL, precision TEXT NOT NULL, precise_amount TEXT NOT NULL,
  created_at INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX exchange_legs_by_amount ON exchange_legs(currency, precision, precise_amount, created_at);
CREATE TRIGGER exchange_legs_precision AFTER INSERT ON exchange_legs BEGIN
  INSERT OR IGNORE INTO transaction_precisions (currency, precision) VALUES (new.currency, new.precision); END;
`;

export const TRANSACTION_TEXTS_FTS = 'transaction_texts_fts';

/** The B-tree indexes of folded texts: sorted once at the end of a rebuild, kept up to date otherwise. */
export function transactionTextsIndexesSql(): string[] {
  return [
    'CREATE INDEX transaction_texts_by_reference ON transaction_texts(reference)',
    'CREATE INDEX transaction_texts_by_description ON transaction_texts(description)',
  ];
}

/**
 * The trigram index: every run of three characters of each text, so a MATCH of a phrase finds the texts
 * containing it. The texts are folded already, so the tokenizer is told to fold nothing more.
 */
export function transactionTextsFtsSql(content: string): string {
  return `CREATE VIRTUAL TABLE ${TRANSACTION_TEXTS_FTS} USING fts5(reference, description, ${content}, tokenize="trigram case_sensitive 1")`;
}

/**
 * The live index's trigram table. Texts are written once and never changed: they reach it on the text
 * track, as every full-text index does (index-schema.ts TEXT_TARGETS), and no trigger is needed.
 */
export function transactionTextsFullTextSql(fill: string[]): string[] {
  return [transactionTextsFtsSql(`content='transaction_texts', content_rowid='text_id'`), ...fill];
}

/** Builds the trigram segments, contentless, from the rows of a file attached as `source` (full-text-build.ts). */
export function contentlessTransactionTextsSql(source: string): string[] {
  return [
    transactionTextsFtsSql(`content=''`),
    `INSERT INTO ${TRANSACTION_TEXTS_FTS}(rowid, reference, description) SELECT text_id, reference, description FROM ${source}.transaction_texts ORDER BY text_id`,
    `INSERT INTO ${TRANSACTION_TEXTS_FTS}(${TRANSACTION_TEXTS_FTS}) VALUES ('optimize')`,
  ];
}

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

/** A transaction's folded texts, written once: a row already there (a later status change) is left alone. */
export const INSERT_TRANSACTION_TEXTS_SQL = `INSERT OR IGNORE INTO transaction_texts (transaction_id, reference, description)
  SELECT value->>0, value->>1, value->>2 FROM jsonb_each(jsonb(CAST(? AS TEXT)))`;

export function transactionTextRows(transactions: Iterable<{ transaction_id: string; reference: string; description: string }>): SqlValue[][] {
  const rows: SqlValue[][] = [];
  for (const transaction of transactions) rows.push([transaction.transaction_id, foldCase(transaction.reference), foldCase(transaction.description)]);
  return rows;
}

/**
 * An exchange's destination leg, written once: its amounts never change (a commit or void of a hold is
 * a transaction of its own, with its own leg), and a later status change leaves the row alone.
 */
export const INSERT_EXCHANGE_LEGS_SQL = `INSERT OR IGNORE INTO exchange_legs (transaction_id, currency, precision, precise_amount, created_at)
  SELECT value->>0, value->>1, value->>2, value->>3, value->>4 FROM jsonb_each(jsonb(CAST(? AS TEXT)))`;

/** The destination legs of the exchanges among these transactions, amounts as sortable text (sortable-amount.ts). */
export function exchangeLegRows(transactions: Iterable<TransactionRecord>): SqlValue[][] {
  const rows: SqlValue[][] = [];
  for (const { transaction_id, exchange, created_at } of transactions) {
    if (exchange === undefined) continue;
    rows.push([transaction_id, exchange.destination_currency, amountKey(exchange.destination_precision), amountKey(exchange.destination_precise_amount), created_at]);
  }
  return rows;
}

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
