// The group's log in PostgreSQL (folio_log, replication-schema.ts): appends by the leader and reads by
// everyone. An append is one INSERT ... SELECT that lands only if the lease row still carries the
// leader's term (read under FOR SHARE, so a term taken meanwhile waits for it or refuses it) and the
// record follows the log's last one exactly; the primary key on first_seq refuses a second record at a
// position whatever else happens. The rules are lease-rules.ts `appendLands`; this is them in SQL.
//
// The leader's appends go over one connection of their own in pipeline mode: the INSERTs of successive
// records are on the wire together, each its own transaction, committed in order by the one server
// process behind the connection. So group commit goes on across the network: while one record commits,
// the next is already sent. A record that does not land makes every later one fail its chain check, so
// the log never has a hole.

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

const APPEND = `
  INSERT INTO folio_log (first_seq, last_seq, term, record)
  SELECT $1::bigint, $2::bigint, $3::bigint, $4::bytea
  FROM folio_lease lease
  WHERE lease.id = 1 AND lease.term = $3::bigint
    AND (($1::bigint = 1 AND $5::bigint = 0)
         OR EXISTS (SELECT 1 FROM folio_log previous WHERE previous.first_seq = $5::bigint AND previous.last_seq = $1::bigint - 1))
  FOR SHARE OF lease`;

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
export async function appendRecord(client: PostgresClient, append: AppendRequest): Promise<void> {
  const result = await client.query(APPEND, [append.first_seq, append.last_seq, append.term, append.bytes, append.previous_first_seq]);
  if (result.rowCount !== 1) {
    throw new AppendRefused(`the record at seq ${append.first_seq} was refused: term ${append.term} is no longer current or the record does not follow the log's end`);
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
