// The group as PostgreSQL holds it: the lease (term, holder, time left by the database's clock), the end
// of the log, and every node as it last reported itself (role, term, applied seq, how many events and
// milliseconds it is behind, its address, how long ago it reported). What `folio replication status`
// prints and what a node adds to GET /admin/replication?group=true. A node that has not reported for
// REPORT_STALE_MS is shown as silent: it may be dead.

import { readLease, readNodes } from './lease-store.js';
import type { PostgresClient } from './postgres-client.js';
import { logEnd } from './postgres-log-store.js';
import type { ReplicationGroupView } from '../../wire/replication-group-view.js';

/** A report older than this: the node is shown as silent. */
export const REPORT_STALE_MS = 5_000;

/** The group's view (wire/replication-group-view.ts), as read here. */
export type GroupStatus = ReplicationGroupView;

export async function readGroupStatus(client: PostgresClient): Promise<GroupStatus> {
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
}
