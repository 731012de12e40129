// `folio replication status [--config FILE] [--json]`: the group as PostgreSQL holds it, read with the
// same replication.postgres_url (FOLIO_REPLICATION_URL) the nodes use: the lease (term, holder, time
// left by the database's clock), the end of the log, and every node as it last reported itself (role,
// term, applied seq, how many events and milliseconds it is behind, its address, how long ago it
// reported). A node that has not reported for REPORT_STALE_MS is shown as silent: it may be dead. Loaded
// only for this command, so no other command loads the PostgreSQL client.

import type { FolioConfig } from '../app/config.js';
import { ConfigError } from '../app/config.js';
import { readLease, readNodes } from '../replication/lease-store.js';
import { connectPostgres, DEFAULT_CONNECTION_LIMITS } from '../replication/postgres-client.js';
import { logEnd } from '../replication/postgres-log-store.js';

/** A report older than this: the node is shown as silent. */
const REPORT_STALE_MS = 5_000;

export interface GroupStatus {
  lease: { term: number; holder: string; url: string; expires_in_ms: number };
  log_end_seq: number;
  nodes: Array<{
    name: string;
    role: string;
    term: number;
    applied_seq: number;
    behind_events: number;
    lag_ms: number | null;
    url: string;
    reported_ms_ago: number;
    silent: boolean;
  }>;
}

export async function groupStatus(postgresUrl: string): Promise<GroupStatus> {
  const client = await connectPostgres({ url: postgresUrl, limits: DEFAULT_CONNECTION_LIMITS, application_name: 'folio replication status' });
  try {
    const lease = await readLease(client);
    const end = (await logEnd(client))?.last_seq ?? 0;
    const nodes = await readNodes(client);
    return {
      lease: { term: lease.term, holder: lease.holder_name, url: lease.holder_url, expires_in_ms: Math.round(lease.expires_at_ms - lease.database_now_ms) },
      log_end_seq: end,
      nodes: nodes.map((node) => ({
        name: node.name,
        role: node.role,
        term: node.term,
        applied_seq: node.applied_seq,
        behind_events: Math.max(0, end - node.applied_seq),
        lag_ms: node.lag_ms ?? null,
        url: node.url,
        reported_ms_ago: Math.round(node.reported_ms_ago),
        silent: node.reported_ms_ago > REPORT_STALE_MS,
      })),
    };
  } finally {
    await client.end().catch(() => undefined);
  }
}

export function statusText(status: GroupStatus): string {
  const lease = status.lease;
  const held = lease.holder !== '' && Number.isFinite(lease.expires_in_ms) && lease.expires_in_ms > 0;
  const lines = [
    `term ${lease.term}; lease ${held ? `held by ${lease.holder} (${lease.url}), ${lease.expires_in_ms} ms left` : 'free (no leader)'}; log ends at seq ${status.log_end_seq}`,
    '',
  ];
  const rows = [['node', 'role', 'term', 'applied_seq', 'behind', 'lag_ms', 'reported', 'url']];
  for (const node of status.nodes) {
    rows.push([
      node.name, node.silent ? `${node.role} (silent)` : node.role, String(node.term), String(node.applied_seq), String(node.behind_events),
      node.lag_ms === null ? '-' : node.lag_ms.toFixed(1), `${(node.reported_ms_ago / 1000).toFixed(1)} s ago`, node.url,
    ]);
  }
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  for (const row of rows) lines.push(row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd());
  return `${lines.join('\n')}\n`;
}

export async function replicationCommand(args: string[], config: FolioConfig): Promise<number> {
  const [sub] = args;
  if (sub !== 'status') {
    process.stderr.write('usage: folio replication status [--config FILE] [--json]\n');
    return 2;
  }
  if (config.replication.postgres_url === '') {
    throw new ConfigError('replication is not configured: set replication.postgres_url (FOLIO_REPLICATION_URL)');
  }
  let status: GroupStatus;
  try {
    status = await groupStatus(config.replication.postgres_url);
  } catch (error) {
    // The URL holds a password: the message names the failure, never the URL.
    process.stderr.write(`folio: cannot read the group from PostgreSQL: ${(error as Error).message}\n`);
    return 1;
  }
  process.stdout.write(args.includes('--json') ? `${JSON.stringify(status, null, 2)}\n` : statusText(status));
  return 0;
}
