// `folio replication leave [--data DIR]`: makes a data directory that belongs to a group an independent
// single-node ledger (runtime/data-dir-membership.ts leaveGroup): for a directory its group refuses because it
// holds writes it acknowledged alone (replication/log-alignment.ts), or one that is to serve without its group for
// good. Its log is kept whole; nothing goes to PostgreSQL. docs/operations.md says when to use it.
//
// `folio replication status [--config FILE] [--json]`: the group as PostgreSQL holds it
// (replication/postgres/group-status.ts), read with the same replication.postgres_url (FOLIO_REPLICATION_URL) the
// nodes use. Loaded only for this command, so no other command loads the PostgreSQL client.

import fs from 'node:fs';
import path from 'node:path';
import type { FolioConfig } from '../server/config.js';
import { ConfigError } from '../server/config.js';
import { leaveGroup, membershipFileIn } from '../runtime/data-dir-membership.js';
import { LmdbLog } from '../wal/lmdb-log.js';
import { LogReader } from '../wal/log-reader.js';
import { readGroupStatus, type GroupStatus } from '../replication/postgres/group-status.js';
import { connectPostgres, DEFAULT_CONNECTION_LIMITS } from '../replication/postgres/postgres-client.js';

export type { GroupStatus } from '../replication/postgres/group-status.js';

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

const USAGE = 'usage: folio replication status [--config FILE] [--json]\n       folio replication leave [--data DIR] [--config FILE]\n';

export async function replicationCommand(args: string[], config: FolioConfig, option: (name: string) => string | undefined): Promise<number> {
  const [sub] = args;
  if (sub === 'leave') return leaveCommand(option('--data') ?? config.data_dir);
  if (sub !== 'status') {
    process.stderr.write(USAGE);
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

/** `folio replication leave`: the directory's membership removed (if it had one), and what it now is. */
async function leaveCommand(dataDir: string): Promise<number> {
  const report = await leaveGroup(dataDir);
  let endSeq = 0;
  if (fs.existsSync(path.join(LmdbLog.directoryIn(dataDir), 'data.mdb'))) {
    const reader = LogReader.open(dataDir);
    try {
      endSeq = reader.endSeq();
    } finally {
      await reader.close();
    }
  }
  const what = report.left
    ? `${dataDir} has left its group (it was node ${report.node_id ?? 'with an unreadable id'})`
    : `${dataDir} holds no group membership (no ${membershipFileIn(dataDir)}; removed by hand, or never joined)`;
  process.stdout.write(
    `${what}: it is an independent single-node ledger, its log kept whole to seq ${endSeq}.\n`
    + 'Serve it without FOLIO_REPLICATION_URL. The writes it holds that its group does not stay here only: the group refuses this directory while it holds them, '
    + 'so to put the node back in the group start it with an empty data directory (docs/operations.md).\n',
  );
  return 0;
}
