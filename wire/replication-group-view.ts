// The replicated group as PostgreSQL holds it, in the shape every reader shows it: the lease (term, holder,
// time left by the database's clock), the end of the group's log and every node as it last reported
// itself. replication/postgres/group-status.ts reads it; GET /admin/replication?group=true
// (http/ports/replication-port.ts) and `folio replication status` show it.

export interface ReplicationGroupView {
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
