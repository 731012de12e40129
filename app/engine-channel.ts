// What crosses between an HTTP worker thread and the engine's thread (the process's main thread), and
// how. A worker sends calls, batched per turn of its event loop; the engine thread answers each, the
// answers of one batch in one message, with the log seq appended when it answered (so a read that the
// worker renders waits for everything it could have seen). It also sends its state to every worker at
// each group commit and a few times a second: the durable seq that answers wait for, what backpressure
// and the fence decide on, and the gauges of /metrics. Messages are structured clones (bigints, arrays
// and plain objects survive them); records go as they are and are rendered in the worker.
// On a replicated node the ledger served changes on every rejoin: the state names the one served (its
// generation), or the refusal every request gets while there is none, and what replication says of
// this node (role, where writes go), so a worker answers /health and sends writes on without a call.
// docs/decisions-threads.md says why this shape and what it costs.

import type { ReplicationStatus, WriteTarget } from '../http/replication-port.js';

/** The objects a worker may call on the engine's thread, each with the methods it may call. */
export const CALLABLE = {
  core: ['run', 'dryRun', 'appliedSeqReached', 'listTransactions', 'balanceHistory', 'takeBalanceSnapshots', 'writeAdmission'],
  // Every query of the read-only view (engine/ledger-view.ts): checked against its prototype.
  view: 'LedgerView',
  query: ['filter', 'search', 'reindexStatus', 'startReindex'],
  reconciliation: ['startBackground', 'runInstant', 'record', 'dryRun', 'matches', 'unmatched'],
  snapshots: ['snapshotNow', 'list'],
  // writeStarted and writeEnded bracket a worker's write, so a fence waits for the writes in flight.
  cutover: ['fence', 'unfence', 'status', 'promote', 'writeStarted', 'writeEnded'],
  backup: ['run'],
  hooks: ['newSigningSecret'],
  feed: ['read'],
  // The state now, for an answer that must not be a state old (/metrics); every worker's request counts.
  host: ['state', 'reportRequests', 'requestTotals'],
  inspector: ['inspect'],
} as const;

export type CallTarget = keyof typeof CALLABLE;

/** The id of a call that wants no answer (EngineClient.notify). */
export const NO_ANSWER = 0;

export interface Call {
  /** Numbered from 1 per worker; NO_ANSWER for a notification. */
  id: number;
  target: CallTarget;
  method: string;
  args: unknown[];
}

/** Refusals the routes tell apart by their class (cutover-routes.ts, replication-routes.ts): they cross by name. */
export const CROSSING_REFUSALS = ['CutoverRefusal', 'InspectRefusal'] as const;

/**
 * A refusal or failure as it crosses: an envelope error keeps its code, status, details and headers; a
 * refusal of CROSSING_REFUSALS its name and message.
 */
export interface CrossingError {
  refusal?: (typeof CROSSING_REFUSALS)[number];
  code: string;
  status: number;
  message: string;
  details?: Record<string, unknown>;
  headers?: Record<string, string>;
}

export type Answer = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: CrossingError };

/**
 * What a replicated node's worker answers from (http/replication-port.ts): its status and where writes
 * go as of the state, `here` only until `leadingUntilMs` (performance.timeOrigin + now, comparable
 * between threads).
 */
export interface ReplicationState {
  status: ReplicationStatus;
  writeTarget: WriteTarget;
  leadingUntilMs?: number;
}

/** The engine thread's state as the workers need it between calls. */
export interface EngineState {
  /** Which ledger is served: it changes when a replicated node serves a new one (a rejoin). */
  generation: number;
  /** While no ledger is served (a replicated node joining or rejoining): every request's refusal. */
  refusal?: CrossingError;
  /** The log stopped appending (a leader stepping down): a write waiting for its seq is refused with this. */
  stopped?: CrossingError;
  /** A replicated node's replication, as the worker's ReplicationPort answers it. */
  replication?: ReplicationState;
  /** The node's own appenders (API key use stamps) hold: a replicated node that does not lead. */
  writesHeld?: boolean;
  /** The newest seq appended, and the newest on disk. */
  appended: number;
  durable: number;
  /** Why writes are refused for load right now (LedgerCore.overloaded), if they are. */
  overloaded?: string;
  /** Fenced for a cutover: writes are refused (and refused again on the engine's thread). */
  fenced: boolean;
  queued: number;
  lookupBacklog: number;
  unflushedEvents: number;
  /** The query index's progress; `holdsWrites`: new writes wait for it (SecondaryIndex.writeAdmission). */
  index?: { checkpointSeq: number; poisonSeq: number; lagEvents: number; lagSeconds: number; holdsWrites: boolean };
  /** Group commits since the last state: events and milliseconds, for /metrics. */
  commits: Array<[events: number, milliseconds: number]>;
}

export type ToEngine = { kind: 'calls'; calls: Call[] };

export type ToWorker =
  | { kind: 'answers'; generation: number; appended: number; answers: Answer[] }
  | { kind: 'state'; state: EngineState }
  // Report your request counts now (a scrape of /metrics in another worker waits for them).
  | { kind: 'report-requests'; generation: number };

/** What a worker tells the thread that started it. */
export type WorkerReport =
  | { kind: 'listening'; address: string; port: number }
  | { kind: 'failed'; message: string }
  | { kind: 'closed' };

/** What the starting thread tells a worker. */
export type WorkerOrder = { kind: 'shutdown' };
