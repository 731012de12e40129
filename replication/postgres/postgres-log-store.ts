// The group's log in PostgreSQL (folio_log, replication-schema.ts): appends by the leader and reads by
// everyone. An append is one INSERT ... SELECT of one or more consecutive records that lands only if
// the lease row still carries the leader's term (read under FOR SHARE, so a term taken meanwhile waits
// for it or refuses it), the first record follows the log's last one exactly and each further record
// follows the one before it in the statement; the primary key on first_seq refuses a second record at a
// position whatever else happens. One statement is one transaction: its records land together or not
// at all. The rules are lease-rules.ts `appendLands`; this is them in SQL.
//
// The leader's replicator (replication/record-replicator.ts) sends these over one connection of its own in
// pipeline mode and gathers the records sealed while a statement is in flight into the next one, so
// PostgreSQL commits (and flushes its WAL) once per batch rather than once per record. A batch that
// does not land makes every later one fail its chain check, so the log never has a hole. Each batch
// size is its own named prepared statement, parsed once per connection.

import type { PostgresClient } from './postgres-client.js';

/** A record as stored: its place, the term that wrote it, its bytes, and how long ago it was committed. */
export interface StoredRecord {
  first_seq: number;
  last_seq: number;
  term: number;
  bytes: Buffer;
  /** Milliseconds between its commit and this read, by the database's clock. */
  age_ms: number;
}

/** Where a record sits and its checksum (the first 32 bytes of the record): what rejoining compares. */
export interface StoredPlace {
  first_seq: number;
  last_seq: number;
  checksum: Buffer;
}

export interface AppendRequest {
  term: number;
  first_seq: number;
  last_seq: number;
  /** The first seq of the record this one follows (0 for the very first record). */
  previous_first_seq: number;
  bytes: Buffer;
}

/** A record of a batch: its place and its exact bytes. */
export interface BatchRecord {
  first_seq: number;
  last_seq: number;
  bytes: Buffer;
}

export interface BatchAppendRequest {
  term: number;
  /** The first seq of the record the batch's first record follows (0 for the very first record). */
  previous_first_seq: number;
  /** Consecutive records, in log order; at least one and at most RECORDS_PER_APPEND_MAX. */
  records: readonly BatchRecord[];
}

/** Records in one INSERT (each batch size is a statement of its own, prepared once per connection). */
export const RECORDS_PER_APPEND_MAX = 64;

const appendStatements = new Map<number, string>();

/**
 * The INSERT for `count` records: $1 the term, $2 the first seq of the record the batch follows, then
 * (first_seq, last_seq, bytes) per record. Contiguity inside the batch is checked in the statement too,
 * so the database never takes a hole whatever the caller sends.
 */
function appendStatement(count: number): string {
  let text = appendStatements.get(count);
  if (text !== undefined) return text;
  const first = (index: number) => `$${3 + index * 3}::bigint`;
  const last = (index: number) => `$${4 + index * 3}::bigint`;
  const rows = Array.from({ length: count }, (_, index) => `(${first(index)}, ${last(index)}, $${5 + index * 3}::bytea)`);
  const contiguous = Array.from({ length: count - 1 }, (_, index) => `AND ${first(index + 1)} = ${last(index)} + 1`);
  text = `
  INSERT INTO folio_log (first_seq, last_seq, term, record)
  SELECT batch.first_seq, batch.last_seq, $1::bigint, batch.record
  FROM folio_lease lease, (VALUES ${rows.join(', ')}) AS batch(first_seq, last_seq, record)
  WHERE lease.id = 1 AND lease.term = $1::bigint
    AND ((${first(0)} = 1 AND $2::bigint = 0)
         OR EXISTS (SELECT 1 FROM folio_log previous WHERE previous.first_seq = $2::bigint AND previous.last_seq = ${first(0)} - 1))
    ${contiguous.join(' ')}
  FOR SHARE OF lease`;
  appendStatements.set(count, text);
  return text;
}

const RECORDS_AFTER = `
  SELECT first_seq, last_seq, term, record,
         (extract(epoch FROM clock_timestamp() - committed_at) * 1000)::float8 AS age_ms
  FROM folio_log WHERE first_seq > $1::bigint ORDER BY first_seq LIMIT $2`;

interface RecordRow {
  first_seq: string;
  last_seq: string;
  term: string;
  record: Buffer;
  age_ms: number;
}

/** A record the database would not take: the term moved on, or it does not follow the log's end. */
export class AppendRefused extends Error {
  override readonly name = 'AppendRefused';
}

/** Appends a record; resolves once committed, rejects with AppendRefused when it did not land. */
export function appendRecord(client: PostgresClient, append: AppendRequest): Promise<void> {
  return appendRecords(client, { term: append.term, previous_first_seq: append.previous_first_seq, records: [append] });
}

/** Appends consecutive records in one transaction; resolves once committed, rejects with AppendRefused when they did not land. */
export async function appendRecords(client: PostgresClient, append: BatchAppendRequest): Promise<void> {
  const count = append.records.length;
  if (count < 1 || count > RECORDS_PER_APPEND_MAX) throw new RangeError(`an append takes 1 to ${RECORDS_PER_APPEND_MAX} records, not ${count}`);
  const values: unknown[] = [append.term, append.previous_first_seq];
  for (const record of append.records) values.push(record.first_seq, record.last_seq, record.bytes);
  const result = await client.query({ name: `folio_append_${count}`, text: appendStatement(count), values });
  if (result.rowCount !== count) {
    const from = append.records[0]!.first_seq;
    throw new AppendRefused(`the record${count > 1 ? 's' : ''} from seq ${from} ${count > 1 ? 'were' : 'was'} refused: term ${append.term} is no longer current or the records do not follow the log's end`);
  }
}

/** Up to `limit` records after seq `afterSeq`, in order. */
export async function recordsAfter(client: PostgresClient, afterSeq: number, limit: number): Promise<StoredRecord[]> {
  const { rows } = await client.query<RecordRow>(RECORDS_AFTER, [afterSeq, limit]);
  return rows.map((row) => ({
    first_seq: Number(row.first_seq),
    last_seq: Number(row.last_seq),
    term: Number(row.term),
    bytes: row.record,
    age_ms: Math.max(0, row.age_ms),
  }));
}

/** The log's last record's place (undefined for an empty log). */
export async function logEnd(client: PostgresClient): Promise<StoredPlace | undefined> {
  const { rows } = await client.query<{ first_seq: string; last_seq: string; checksum: Buffer }>(
    'SELECT first_seq, last_seq, substring(record FROM 1 FOR 32) AS checksum FROM folio_log ORDER BY first_seq DESC LIMIT 1');
  const row = rows[0];
  return row && { first_seq: Number(row.first_seq), last_seq: Number(row.last_seq), checksum: row.checksum };
}

/** The record that starts at `firstSeq`, if there is one: where it ends and its checksum. */
export async function placeAt(client: PostgresClient, firstSeq: number): Promise<StoredPlace | undefined> {
  const { rows } = await client.query<{ last_seq: string; checksum: Buffer }>(
    'SELECT last_seq, substring(record FROM 1 FOR 32) AS checksum FROM folio_log WHERE first_seq = $1::bigint', [firstSeq]);
  const row = rows[0];
  return row && { first_seq: firstSeq, last_seq: Number(row.last_seq), checksum: row.checksum };
}

/** Terms that wrote records, with the first and last seq each wrote, in log order (for tests and status). */
export async function termsInLog(client: PostgresClient): Promise<Array<{ term: number; first_seq: number; last_seq: number; records: number }>> {
  const { rows } = await client.query<{ term: string; first_seq: string; last_seq: string; records: string }>(
    'SELECT term, min(first_seq) AS first_seq, max(last_seq) AS last_seq, count(*) AS records FROM folio_log GROUP BY term ORDER BY min(first_seq)');
  return rows.map((row) => ({ term: Number(row.term), first_seq: Number(row.first_seq), last_seq: Number(row.last_seq), records: Number(row.records) }));
}
