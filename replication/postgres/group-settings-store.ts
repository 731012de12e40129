// What a group shares beside its log and lease (replication-schema.ts): the fingerprint of the hook
// sealing key every node must hold (the first node to join names it), and the leader's hook delivery
// progress, written under the same term check as an append (so a deposed leader cannot move it) and read
// by the node that takes over.

import type { PostgresClient } from './postgres-client.js';

/** The group's hook key fingerprint, set to `fingerprint` if the group has none yet. */
export async function claimSealFingerprint(client: PostgresClient, fingerprint: string): Promise<string> {
  const { rows } = await client.query<{ hook_seal_fingerprint: string }>(
    'UPDATE folio_group SET hook_seal_fingerprint = COALESCE(hook_seal_fingerprint, $1) WHERE id = 1 RETURNING hook_seal_fingerprint', [fingerprint]);
  const row = rows[0];
  if (!row) throw new Error('the group row is missing (replication-schema.ts creates it)');
  return row.hook_seal_fingerprint;
}

/** The group's hook key fingerprint, if a node has named one. */
export async function sealFingerprint(client: PostgresClient): Promise<string | undefined> {
  const { rows } = await client.query<{ hook_seal_fingerprint: string | null }>('SELECT hook_seal_fingerprint FROM folio_group WHERE id = 1');
  return rows[0]?.hook_seal_fingerprint ?? undefined;
}

export interface HookProgress {
  low_seq: number;
  /** The hook registrations as of low_seq (hooks/outbox-store.ts OutboxCursor), as JSON text. */
  hooks: string;
}

/** Publishes the leader's hook delivery progress; nothing happens unless `term` is still current. */
export async function publishHookProgress(client: PostgresClient, term: number, progress: HookProgress): Promise<void> {
  await client.query(
    `INSERT INTO folio_hook_progress (id, term, low_seq, hooks)
     SELECT 1, $1::bigint, $2::bigint, $3 FROM folio_lease lease WHERE lease.id = 1 AND lease.term = $1::bigint FOR SHARE OF lease
     ON CONFLICT (id) DO UPDATE SET term = EXCLUDED.term, low_seq = EXCLUDED.low_seq, hooks = EXCLUDED.hooks`,
    [term, progress.low_seq, progress.hooks]);
}

export async function readHookProgress(client: PostgresClient): Promise<HookProgress | undefined> {
  const { rows } = await client.query<{ low_seq: string; hooks: string }>('SELECT low_seq, hooks FROM folio_hook_progress WHERE id = 1');
  const row = rows[0];
  return row && { low_seq: Number(row.low_seq), hooks: row.hooks };
}
