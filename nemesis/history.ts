// What a nemesis run records, for the checker (nemesis/checker.ts) and the report: every write the
// clients tried with every attempt and its answer, the faults as they were carried out, and what each
// node said of itself over time.
//
// A write's outcome, as Jepsen's histories have it:
//   ok       some attempt was answered 2xx: the write must be in the group's log exactly once;
//   refused  the first definite answer was a 4xx and no attempt before it could have been applied (no
//            timeout, lost connection or 503 before it): the write must not be in the log at all;
//   unknown  no definite answer (every attempt timed out, lost its connection or was answered 503), or a
//            4xx after such an attempt (a resend refused because the first attempt had landed, e.g. a
//            hold already committed): the write may be in the log, at most once.

import type { FaultKind, PlannedFault } from './schedule.js';

export type WriteKind = 'transfer' | 'bulk' | 'hold' | 'commit' | 'void' | 'refund';

export interface Attempt {
  node: string;
  /** performance.now() of the harness when the request was sent and when its answer (or failure) came. */
  sent_at: number;
  answered_at: number;
  /** The HTTP status; 0 when no answer came (timeout, connection refused or reset). */
  status: number;
  /** The error code of a refusal, or what went wrong with the connection. */
  code?: string;
}

export interface WriteOp {
  id: number;
  client: number;
  kind: WriteKind;
  /** The references the write creates (a bulk: one per transaction; commit, void and refund: none of the client's). */
  references: string[];
  /** commit, void: the hold; refund: the transaction refunded. */
  parent?: string;
  /** A void sent to a hold whose commit was acknowledged: it must be refused. */
  expect_refusal?: boolean;
  attempts: Attempt[];
  outcome: 'ok' | 'refused' | 'unknown';
  /** For ok: who answered, the seq it gave (X-Folio-Seq), the transaction ids or batch id it answered with. */
  ack?: { node: string; status: number; seq: number; transaction_id?: string; batch_id?: string; attempt: number };
  /** For refused: the status and code. */
  refusal?: { status: number; code: string };
}

/** A read of an acknowledged write on some node, with the write's X-Folio-Seq: it must see the write. */
export interface ReadOp {
  client: number;
  node: string;
  transaction_id: string;
  seq: number;
  status: number;
  code?: string;
}

export interface FaultRecord {
  planned: PlannedFault;
  kind: FaultKind;
  /** Carried out, or skipped (no node fit its target, or its kind cannot be done on this machine). */
  done: boolean;
  skipped?: string;
  node?: string;
  /** performance.now() when it began and when it was healed. */
  began_at?: number;
  healed_at?: number;
  /** pause: the term the node said it led when it was stopped. */
  term?: number;
  /** Anything worth saying about how it went (a node that died of it, a restart that failed). */
  note?: string;
  /** The harness could not carry it out (a tool it runs failed): why. */
  failed?: string;
}

/** A node's own word about itself (GET /health), kept when it changes. */
export interface HealthSample {
  node: string;
  at: number;
  role: string;
  term: number;
  applied_seq: number;
}

/** A node process that ended without the nemesis killing it. */
export interface NodeExit {
  node: string;
  at: number;
  how: number | string;
  /** Whether a fault explains it (a full disk: the log's write failed and the process stopped, exit 70). */
  expected: boolean;
  stderr_tail: string;
}

export interface History {
  writes: WriteOp[];
  reads: ReadOp[];
  faults: FaultRecord[];
  health: HealthSample[];
  exits: NodeExit[];
}
