// The rules of leadership, as plain functions: who may append at a position, who may take the next
// term, and until when a leader may act on its own clock. The SQL in postgres-log-store.ts and
// lease-store.ts carries out the first two inside PostgreSQL (where they are enforced, in the same
// transaction as the write they guard); the third runs on the leader. The model test
// (test/lease-model.sim.test.ts) checks these very functions over random histories of clocks that drift,
// messages that are late or lost and nodes that die.
//
// Times: PostgreSQL's clock decides when a lease has expired (one clock for every node), and a leader
// measures its own lease on its monotonic clock from the moment it *sent* the renewal that was granted.
// The database grants `lease_ms` from a moment no earlier than that, so a leader that stops at
// sentAt + lease_ms x (1 - clock_drift_max) - safety_margin_ms has stopped before any other node can take
// the term, as long as its clock runs no more than clock_drift_max faster or slower than the database's.

// The lease row's shape is the store's (postgres/lease-store.ts), which keeps it.
import type { Lease } from './postgres/lease-store.js';

export interface LeaseTimings {
  /** How long a granted lease lasts. */
  lease_ms: number;
  /** How often the leader renews (several renewals fit in a lease, so one lost message costs nothing). */
  renew_every_ms: number;
  /** The largest rate difference assumed between any node's clock and the database's (0.01 = 1%). */
  clock_drift_max: number;
  /** Subtracted from every deadline on top of the drift: time for the leader to stop what it is doing. */
  safety_margin_ms: number;
}

export const DEFAULT_LEASE_TIMINGS: LeaseTimings = {
  lease_ms: 2_000,
  renew_every_ms: 400,
  clock_drift_max: 0.01,
  safety_margin_ms: 200,
};

/** Refuses timings under which a leader could not keep its lease, or would outlive it. */
export function timingsRefusal(timings: LeaseTimings): string | undefined {
  if (!(timings.lease_ms >= 200 && timings.lease_ms <= 60_000)) return 'lease_ms must be 200-60000';
  if (!(timings.clock_drift_max >= 0 && timings.clock_drift_max < 0.5)) return 'clock_drift_max must be in [0, 0.5)';
  if (!(timings.safety_margin_ms >= 0)) return 'safety_margin_ms must be >= 0';
  if (!(timings.renew_every_ms > 0 && timings.renew_every_ms * 2 <= usableLeaseMs(timings))) {
    return 'renew_every_ms must fit at least twice in the usable part of the lease';
  }
  return undefined;
}

/** The part of a lease a leader can use on its own clock. */
export function usableLeaseMs(timings: LeaseTimings): number {
  return timings.lease_ms * (1 - timings.clock_drift_max) - timings.safety_margin_ms;
}

/**
 * Until when (leader's monotonic ms) a leader may acknowledge and serve as leader, given that the
 * renewal it sent at `sentAtMs` was granted. Past it, it stops, whether or not it can reach anyone.
 */
export function leaderDeadline(sentAtMs: number, timings: LeaseTimings): number {
  return sentAtMs + usableLeaseMs(timings);
}

/** What a node that does not lead knows when it considers taking the next term. */
export interface Candidate {
  /** The lease as read, and the database's time when it was read. */
  lease: Lease;
  database_now_ms: number;
  /** The seq this node has applied, and the end of the group's log as it last read it. */
  applied_seq: number;
  log_end_seq: number;
}

/**
 * Whether a node may try to take the next term: the lease has expired by the database's clock (or was
 * never held, or was given up), and the node has applied the whole log as it last read it, so the most
 * advanced nodes are the ones that try. The try itself is conditional on the term it saw (termAfter),
 * so of several that try at once exactly one succeeds.
 */
export function mayTakeLease(candidate: Candidate): boolean {
  const free = candidate.lease.holder === '' || candidate.lease.expires_at_ms <= candidate.database_now_ms;
  return free && candidate.applied_seq >= candidate.log_end_seq;
}

/** The term a successful take gives: the next one. */
export function termAfter(lease: Lease): number {
  return lease.term + 1;
}

/** The group's log as the append rule sees it: where it ends, and the first seq of its last record. */
export interface LogEnd {
  last_seq: number;
  /** 0 for an empty log. */
  last_first_seq: number;
}

export interface Append {
  term: number;
  first_seq: number;
  last_seq: number;
  /** The first seq of the record this one follows (0 for the first record). */
  previous_first_seq: number;
}

/**
 * Whether an append lands: it carries the current term, and it follows the log's last record exactly
 * (no gap, no overlap). Checked in the same transaction as the insert, under a share lock on the lease
 * row, so a term taken meanwhile either waits for the append or refuses it; the first_seq key refuses
 * any second write at a position whatever else happens.
 */
export function appendLands(currentTerm: number, end: LogEnd, append: Append): boolean {
  if (append.term !== currentTerm || append.last_seq < append.first_seq) return false;
  return append.first_seq === end.last_seq + 1 && append.previous_first_seq === end.last_first_seq;
}
