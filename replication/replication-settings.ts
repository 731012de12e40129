// A replicated node's settings: the few an operator gives (config.ts `replication`) and the rest, which
// follow from the lease's length so that they stay in proportion (renewals fit several times in a lease,
// a lease query gives up well within it). docs/decisions-replication.md lists them.

import type { ConnectionLimits } from './postgres/postgres-client.js';
import { timingsRefusal, type LeaseTimings } from './lease-rules.js';
import type { TailSettings } from './standby-tail.js';

export interface ReplicationSettings {
  postgres_url: string;
  node_name: string;
  /** Where the others send writes while this node leads. */
  advertise_url: string;
  timings: LeaseTimings;
  /** Limits of the appends' and the tail's connections. */
  connection: ConnectionLimits;
  /** Limits of the lease loop's connection: tighter, so one slow answer does not cost the lease. */
  lease_connection: ConnectionLimits;
  /** How often a node that does not lead reads the lease. */
  watch_every_ms: number;
  /** How often each node reports itself (folio_nodes). */
  report_every_ms: number;
  /** Wait between attempts to join while PostgreSQL does not answer. */
  join_retry_ms: number;
  /** Records a rejoining node may drop from the end of its log (see log-alignment.ts). */
  records_dropped_max: number;
  /** Records a leader uploads per round trip when it seeds an empty group with its existing log. */
  seed_records_per_batch: number;
  tail: TailSettings;
}

/** Settings from those an operator gives (config.ts): the rest follow from the lease. */
export function replicationSettings(config: { postgres_url: string; node_name: string; advertise_url: string; lease_ms: number }): ReplicationSettings {
  const leaseMs = config.lease_ms;
  const timings: LeaseTimings = {
    lease_ms: leaseMs,
    renew_every_ms: Math.round(leaseMs / 6),
    clock_drift_max: 0.01,
    safety_margin_ms: Math.round(leaseMs / 10),
  };
  const refusal = timingsRefusal(timings);
  if (refusal) throw new Error(`replication timings: ${refusal}`);
  const leaseQueryMs = Math.max(250, Math.round(leaseMs / 3));
  return {
    ...config,
    timings,
    connection: { connect_timeout_ms: 5_000, query_timeout_ms: Math.max(2_000, leaseMs), statement_timeout_ms: Math.max(2_000, leaseMs) },
    lease_connection: { connect_timeout_ms: leaseQueryMs, query_timeout_ms: leaseQueryMs, statement_timeout_ms: leaseQueryMs },
    watch_every_ms: Math.max(50, Math.round(leaseMs / 12)),
    report_every_ms: 1_000,
    join_retry_ms: 1_000,
    records_dropped_max: 64,
    seed_records_per_batch: 64,
    tail: { poll_ms: 10, records_per_read_max: 256 },
  };
}
