// The lease row and the nodes' reports in PostgreSQL (replication-schema.ts). Taking the lease is one
// UPDATE that succeeds only if the term is still the one the node saw and the lease is free by the
// database's clock (lease-rules.ts `mayTakeLease`, `termAfter`): of several nodes that try at once,
// one gets the next term. Renewing succeeds only for the holder of the current term. Times are the
// database's (clock_timestamp()), never a node's.

import type { PostgresClient } from './postgres-client.js';

/** The lease row: which term is current, who holds it, and (database time, ms) until when. */
export interface Lease {
  term: number;
  /** The holder's incarnation (a name and a random id: two processes given the same name still differ). */
  holder: string;
  expires_at_ms: number;
}

/** The lease as read, with the holder's name and address and the database's time of the read. */
export interface LeaseView extends Lease {
  holder_name: string;
  holder_url: string;
  database_now_ms: number;
}

export interface Holder {
  /** Incarnation: unique to this process. */
  holder: string;
  name: string;
  url: string;
}

/** What a node reports of itself every few hundred milliseconds. */
export interface NodeReport {
  name: string;
  incarnation: string;
  role: 'leader' | 'standby' | 'rejoining';
  term: number;
  applied_seq: number;
  lag_ms: number | undefined;
  url: string;
}

export interface NodeRow extends NodeReport {
  /** Milliseconds since the report, by the database's clock. */
  reported_ms_ago: number;
}

const MS = `* interval '1 millisecond'`;

export async function readLease(client: PostgresClient): Promise<LeaseView> {
  const { rows } = await client.query<{ term: string; holder: string; holder_name: string; holder_url: string; expires_ms: number; now_ms: number }>(
    `SELECT term, holder, holder_name, holder_url,
            (extract(epoch FROM expires_at) * 1000)::float8 AS expires_ms,
            (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms
     FROM folio_lease WHERE id = 1`);
  const row = rows[0];
  if (!row) throw new Error('the lease row is missing (replication-schema.ts creates it)');
  return {
    term: Number(row.term), holder: row.holder, holder_name: row.holder_name, holder_url: row.holder_url,
    expires_at_ms: row.expires_ms, database_now_ms: row.now_ms,
  };
}

/** Takes the next term if the lease is still at `seenTerm` and free; the new term, or undefined. */
export async function takeLease(client: PostgresClient, seenTerm: number, holder: Holder, leaseMs: number): Promise<number | undefined> {
  const { rows } = await client.query<{ term: string }>(
    `UPDATE folio_lease
     SET term = term + 1, holder = $2, holder_name = $3, holder_url = $4, expires_at = clock_timestamp() + $5::float8 ${MS}
     WHERE id = 1 AND term = $1::bigint AND (holder = '' OR expires_at <= clock_timestamp())
     RETURNING term`,
    [seenTerm, holder.holder, holder.name, holder.url, leaseMs]);
  const row = rows[0];
  return row === undefined ? undefined : Number(row.term);
}

/** Extends the lease of `term` held by `holder`; false when that is no longer the current lease. */
export async function renewLease(client: PostgresClient, term: number, holder: string, leaseMs: number): Promise<boolean> {
  const result = await client.query(
    `UPDATE folio_lease SET expires_at = clock_timestamp() + $3::float8 ${MS} WHERE id = 1 AND term = $1::bigint AND holder = $2`,
    [term, holder, leaseMs]);
  return result.rowCount === 1;
}

/** Gives the lease up (a leader stopping cleanly), so a standby need not wait for it to expire. */
export async function releaseLease(client: PostgresClient, term: number, holder: string): Promise<void> {
  await client.query(`UPDATE folio_lease SET holder = '', expires_at = '-infinity' WHERE id = 1 AND term = $1::bigint AND holder = $2`, [term, holder]);
}

export async function reportNode(client: PostgresClient, report: NodeReport): Promise<void> {
  await client.query(
    `INSERT INTO folio_nodes (name, incarnation, role, term, applied_seq, lag_ms, url, reported_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, clock_timestamp())
     ON CONFLICT (name) DO UPDATE SET incarnation = EXCLUDED.incarnation, role = EXCLUDED.role, term = EXCLUDED.term,
       applied_seq = EXCLUDED.applied_seq, lag_ms = EXCLUDED.lag_ms, url = EXCLUDED.url, reported_at = EXCLUDED.reported_at`,
    [report.name, report.incarnation, report.role, report.term, report.applied_seq, report.lag_ms ?? null, report.url]);
}

/** Every node that ever reported, by name. */
export async function readNodes(client: PostgresClient): Promise<NodeRow[]> {
  const { rows } = await client.query<{ name: string; incarnation: string; role: string; term: string; applied_seq: string; lag_ms: number | null; url: string; ago_ms: number }>(
    `SELECT name, incarnation, role, term, applied_seq, lag_ms, url,
            (extract(epoch FROM clock_timestamp() - reported_at) * 1000)::float8 AS ago_ms
     FROM folio_nodes ORDER BY name`);
  return rows.map((row) => ({
    name: row.name, incarnation: row.incarnation, role: row.role as NodeReport['role'], term: Number(row.term),
    applied_seq: Number(row.applied_seq), lag_ms: row.lag_ms ?? undefined, url: row.url, reported_ms_ago: Math.max(0, row.ago_ms),
  }));
}
