// The tables a replicated group keeps in PostgreSQL, created by whichever node gets there first:
//   folio_log      the one ordered log: each sealed record's exact bytes under the seq of its first
//                  event, with the term of the leader that wrote it and the database's time of commit
//   folio_lease    one row: the current term, who holds it (an incarnation: name and random id), that
//                  node's name and address, and until when (database time)
//   folio_nodes    what each node last reported of itself, for `folio replication status`
//   folio_group    the group's schema version (a node refuses a database made by another version) and
//                  the fingerprint of the hook sealing key its nodes share
//   folio_hook_progress  one row: how far the leader's hook delivery has got (its outbox cursor), so a
//                  new leader resumes delivery there
// Several nodes starting at once all run this; an advisory lock held for the transaction makes them take
// turns, so CREATE ... IF NOT EXISTS never races with itself.

import type { PostgresClient } from './postgres-client.js';

export const SCHEMA_VERSION = 1;
/** Any constant of our own: the key of the advisory lock the schema is created under. */
const SCHEMA_LOCK_KEY = 0x466f6c69; // "Foli"

const STATEMENTS = [
  `CREATE TABLE IF NOT EXISTS folio_group (
     id smallint PRIMARY KEY CHECK (id = 1),
     schema_version integer NOT NULL,
     hook_seal_fingerprint text
   )`,
  `CREATE TABLE IF NOT EXISTS folio_hook_progress (
     id smallint PRIMARY KEY CHECK (id = 1),
     term bigint NOT NULL,
     low_seq bigint NOT NULL,
     hooks text NOT NULL
   )`,
  `CREATE TABLE IF NOT EXISTS folio_log (
     first_seq bigint PRIMARY KEY CHECK (first_seq >= 1),
     last_seq bigint NOT NULL CHECK (last_seq >= first_seq),
     term bigint NOT NULL CHECK (term >= 1),
     record bytea NOT NULL,
     committed_at timestamptz NOT NULL DEFAULT clock_timestamp()
   )`,
  `CREATE TABLE IF NOT EXISTS folio_lease (
     id smallint PRIMARY KEY CHECK (id = 1),
     term bigint NOT NULL CHECK (term >= 0),
     holder text NOT NULL,
     holder_name text NOT NULL,
     holder_url text NOT NULL,
     expires_at timestamptz NOT NULL
   )`,
  `CREATE TABLE IF NOT EXISTS folio_nodes (
     name text PRIMARY KEY,
     incarnation text NOT NULL,
     role text NOT NULL,
     term bigint NOT NULL,
     applied_seq bigint NOT NULL,
     lag_ms double precision,
     url text NOT NULL,
     reported_at timestamptz NOT NULL
   )`,
  `INSERT INTO folio_lease (id, term, holder, holder_name, holder_url, expires_at)
     VALUES (1, 0, '', '', '', '-infinity') ON CONFLICT (id) DO NOTHING`,
];

export class SchemaVersionError extends Error {
  override readonly name = 'SchemaVersionError';
}

/** Creates the tables when they are missing; refuses a database whose schema is another version's. */
export async function ensureSchema(client: PostgresClient): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK_KEY]);
    for (const statement of STATEMENTS) await client.query(statement);
    await client.query('INSERT INTO folio_group (id, schema_version) VALUES (1, $1) ON CONFLICT (id) DO NOTHING', [SCHEMA_VERSION]);
    const { rows } = await client.query<{ schema_version: number }>('SELECT schema_version FROM folio_group WHERE id = 1');
    const version = rows[0]?.schema_version;
    if (version !== SCHEMA_VERSION) {
      throw new SchemaVersionError(`the replication tables in this database are schema version ${version}, this Folio uses ${SCHEMA_VERSION}`);
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
