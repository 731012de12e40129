// `folio replication status [--config FILE] [--json]`: the group as PostgreSQL holds it
// (replication/group-status.ts), read with the same replication.postgres_url (FOLIO_REPLICATION_URL) the
// nodes use. Loaded only for this command, so no other command loads the PostgreSQL client.

import type { FolioConfig } from '../app/config.js';
import { ConfigError } from '../app/config.js';
import { readGroupStatus, type GroupStatus } from '../replication/group-status.js';
import { connectPostgres, DEFAULT_CONNECTION_LIMITS } from '../replication/postgres-client.js';

export type { GroupStatus } from '../replication/group-status.js';

export async function groupStatus(postgresUrl: string): Promise<GroupStatus> {
  const client = await connectPostgres({ url: postgresUrl, limits: DEFAULT_CONNECTION_LIMITS, application_name: 'folio replication status' });
  try {
    return await readGroupStatus(client);
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
