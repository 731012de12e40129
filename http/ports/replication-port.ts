// What the HTTP layer needs to know of replication (replication/replication-node.ts answers it): this node's
// role in its group, its term and applied seq, and where writes go. A node without replication has no
// port, and answers as the single node it is (`role: 'single'`).

import type { Result } from '../../engine/result.js';
import type { ReplicationGroupView } from '../../wire/replication-group-view.js';

export type { ReplicationGroupView };

export type ReplicationRole = 'leader' | 'standby' | 'single';

export interface ReplicationStatus {
  role: ReplicationRole;
  /** The current term as this node knows it (0 for a single node). */
  term: number;
  /** The seq of the last event this node has applied. */
  applied_seq: number;
  /** On a standby: the leader as the lease names it, when the lease is live. */
  leader?: { name: string; url: string };
  /** On a standby: how far behind the group's log it was when it last applied (0: caught up). */
  lag_ms?: number;
}

/** Where a write should go: here, to the leader at `url`, or nowhere yet (no leader known). */
export type WriteTarget = { kind: 'here' } | { kind: 'leader'; url: string } | { kind: 'none' };

export interface ReplicationPort {
  status(): ReplicationStatus;
  writeTarget(): WriteTarget;
}

/** A node's own account of itself for operators (GET /admin/replication, master key). */
export interface ReplicationInspection extends ReplicationStatus {
  /** This node's name in its group, and the phase it is in (joining, standby, promoting, leader, rejoining). */
  node?: string;
  phase?: string;
  /** The lease as last read: term, holder's name and address, milliseconds left by the database's clock. */
  lease?: { term: number; holder: string; url: string; expires_in_ms: number };
  /** A standby's recent apply lag (commit in PostgreSQL to applied here), in milliseconds. */
  lag_percentiles_ms?: { p50: number; p99: number; max: number; samples: number };
  /** The state hash (snapshots/state-hash.ts) at `applied_seq`, when asked for. */
  state_hash?: string;
  /** The whole group as PostgreSQL holds it (what `folio replication status` shows), when asked for. */
  group?: ReplicationGroupView;
  /** Why `group` is missing although it was asked for (PostgreSQL could not be read just now). */
  group_error?: string;
}

export interface InspectOptions {
  /** Wait (at most waitMs) until this seq is applied, then answer only if the node stands exactly there. */
  atSeq?: number;
  waitMs: number;
  stateHash: boolean;
  /** Lag percentiles over the records applied in the last this many milliseconds (all recent ones when absent). */
  lagWindowMs?: number;
  /** Add the whole group as PostgreSQL holds it (a replicated node only). */
  group?: boolean;
}

/** Why an inspection cannot be answered as asked (the node is not at the seq asked for, or has no ledger open). */
export interface InspectConflict {
  code: 'GEN_CONFLICT';
  message: string;
}

export interface ReplicationInspector {
  inspect(options: InspectOptions): Promise<Result<ReplicationInspection, InspectConflict>>;
}
