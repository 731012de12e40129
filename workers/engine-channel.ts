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

import type { ByteRange } from './channel-codec.js';
import type { NodeRefusalCode } from '../http/ports/node-refusal.js';
import type { CutoverPort } from '../http/ports/cutover-port.js';
import type { HookAdmin, LedgerCore, LedgerReads } from '../http/ports/ledger-core.js';
import type { QueryPort } from '../http/ports/query-port.js';
import type { ReconciliationPort } from '../http/ports/reconciliation-port.js';
import type { ReplicationInspector, ReplicationStatus, WriteTarget } from '../http/ports/replication-port.js';
import type { RequestTotals } from '../http/request-metrics.js';
import type { SnapshotAdmin } from '../http/routes/admin-routes.js';
import type { BackupPort } from '../http/routes/backup-routes.js';

/** The engine thread's own answers to its workers (engine-host.ts). */
export interface HostCalls {
  /** The state now, for an answer that must not be a state old (/metrics). */
  state(): EngineState;
  /** A worker's request counts (`generation`: the report it answers, when it was asked for one). */
  reportRequests(worker: number, totals: RequestTotals, generation?: number): void;
  /** Every worker's request counts but `except`'s, as fresh as they answer within a moment. */
  requestTotals(except: number): Promise<RequestTotals[]>;
  /** The cell of an API key's rate bucket in the process's shared buckets (http/access/rate-buckets.ts). */
  rateBucketCell(apiKeyId: string): number;
}

/** Each object a worker may call on the engine's thread, as the port interface it implements. */
export interface EnginePorts {
  core: LedgerCore;
  view: LedgerReads;
  query: QueryPort;
  reconciliation: ReconciliationPort;
  snapshots: SnapshotAdmin;
  cutover: CutoverPort;
  backup: BackupPort;
  hooks: HookAdmin;
  host: HostCalls;
  inspector: ReplicationInspector;
}

/**
 * The one table of calls: for each object, the methods a worker may call (the read view: every query of
 * LedgerView, checked against its prototype). Checked against the port interfaces by the compiler, and
 * the only source of the call types below: a method that is not here cannot be called, and one that is
 * must exist on its port.
 */
export const CALLABLE = {
  core: ['run', 'dryRun', 'appliedSeqReached', 'listTransactions', 'transactionLogPosition', 'balanceHistory', 'balanceStatement', 'takeBalanceSnapshots', 'writeAdmission'],
  view: 'LedgerView',
  query: ['filter', 'search', 'reindexStatus', 'startReindex'],
  reconciliation: ['startBackground', 'runInstant', 'record', 'dryRun', 'matches', 'unmatched'],
  snapshots: ['snapshotNow', 'list'],
  // writeStarted and writeEnded bracket a worker's write, so a fence waits for the writes in flight.
  cutover: ['fence', 'unfence', 'status', 'promote', 'writeStarted', 'writeEnded'],
  backup: ['run'],
  hooks: ['newSigningSecret', 'recentDeliveries'],
  host: ['state', 'reportRequests', 'requestTotals', 'rateBucketCell'],
  inspector: ['inspect'],
} as const satisfies { [Target in keyof EnginePorts]: readonly (keyof EnginePorts[Target] & string)[] | 'LedgerView' };

export type CallTarget = keyof EnginePorts;

/** The methods of `Target` a worker may call. */
export type CallMethod<Target extends CallTarget> = Extract<(typeof CALLABLE)[Target] extends readonly (infer Method)[] ? Method : keyof LedgerReads, keyof EnginePorts[Target]>;

type PortFunction<Target extends CallTarget, Method extends CallMethod<Target>> = EnginePorts[Target][Method] extends (...args: infer Args) => infer Value
  ? (...args: Args) => Value
  : never;

/** The arguments of a call, as its port declares them. */
export type CallArgs<Target extends CallTarget, Method extends CallMethod<Target>> = Parameters<PortFunction<Target, Method>>;

/** What a call answers, as its port declares it (settled: a call's answer always crosses later). */
export type CallValue<Target extends CallTarget, Method extends CallMethod<Target>> = Awaited<ReturnType<PortFunction<Target, Method>>>;

/** What the engine's thread answers for each target: the port's callable methods (absent while not served). */
export type CallTargets = { [Target in CallTarget]: Pick<EnginePorts[Target], CallMethod<Target>> | undefined };

/** A port as a worker has it: each callable method sends its call and answers later. */
export type RemotePort<Target extends CallTarget> = {
  [Method in CallMethod<Target>]: (...args: CallArgs<Target, Method>) => Promise<CallValue<Target, Method>>;
};

/** The id of a call that wants no answer (EngineClient.notify). */
export const NO_ANSWER = 0;

export interface Call {
  /** Numbered from 1 per worker; NO_ANSWER for a notification. */
  id: number;
  target: CallTarget;
  method: string;
  /** Empty when the call's command is in its batch's bytes (`command`). */
  args: unknown[];
  /** A `core.run` whose command crosses as bytes (channel-codec.ts): where it lies in the batch's bytes. */
  command?: ByteRange;
}

/**
 * A failure as it crosses: a refusal of the node (http/ports/node-refusal.ts) keeps its code and message
 * and is a NodeRefusal again in the worker; anything else was a bug on the engine's thread, logged there,
 * and is answered as a bare 500. Everything else a call can refuse is in its answer's value, a result of
 * a closed set of codes like every other layer's (engine/result.ts).
 */
export interface CrossingError {
  code: NodeRefusalCode | 'GEN_INTERNAL_ERROR';
  message: string;
}

/**
 * An answer; `records`: the transaction records of its outcome's value, which cross as bytes in the
 * batch (channel-codec.ts): each the field they go back into and where they lie.
 */
export type Answer =
  | { id: number; ok: true; value: unknown; records?: Array<[field: string, ...ByteRange]> }
  | { id: number; ok: false; error: CrossingError };

/**
 * What a replicated node's worker answers from (http/ports/replication-port.ts): its status and where writes
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

/** `bytes`: the commands of the batch's calls that cross as bytes (channel-codec.ts), moved with the message. */
export type ToEngine = { kind: 'calls'; calls: Call[]; bytes?: ArrayBuffer };

export type ToWorker =
  | { kind: 'answers'; generation: number; appended: number; answers: Answer[]; bytes?: ArrayBuffer }
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

/**
 * The engine thread's seqs as every worker reads them from shared memory, with no message: the newest
 * seq appended and the newest durable (on a replicated leader: committed by the group too), and the
 * generation of the ledger they belong to. A write's answer waits for its seq to be durable; the engine's
 * thread moves `durable` at every group commit and wakes the workers waiting for it (Atomics.notify on
 * the commit counter, which each waiting worker watches with Atomics.waitAsync), so an acknowledgement
 * costs no structured clone and no message event on either thread. Everything else of the state still
 * goes by message, when it changes and every STATE_INTERVAL_MS (engine-host.ts).
 */
export class SharedSeqs {
  /** APPENDED, DURABLE. */
  private readonly seqs: BigInt64Array;
  /** GENERATION, COMMITS. */
  private readonly counters: Int32Array;

  private constructor(readonly buffer: SharedArrayBuffer) {
    this.seqs = new BigInt64Array(buffer, 0, 2);
    this.counters = new Int32Array(buffer, 2 * BigInt64Array.BYTES_PER_ELEMENT, 2);
  }

  static create(): SharedSeqs {
    return new SharedSeqs(new SharedArrayBuffer(2 * BigInt64Array.BYTES_PER_ELEMENT + 2 * Int32Array.BYTES_PER_ELEMENT));
  }

  /** The seqs another thread created. */
  static over(buffer: SharedArrayBuffer): SharedSeqs {
    return new SharedSeqs(buffer);
  }

  get generation(): number {
    return Atomics.load(this.counters, GENERATION);
  }

  get appended(): number {
    return Number(Atomics.load(this.seqs, APPENDED));
  }

  get durable(): number {
    return Number(Atomics.load(this.seqs, DURABLE));
  }

  /** Counts group commits (and generations): what a waiting worker watches. */
  get commits(): number {
    return Atomics.load(this.counters, COMMITS);
  }

  /** A ledger served from now on (its seqs first, then its generation, so a reader never pairs new seqs with an old generation's waits). */
  serve(generation: number, appended: number, durable: number): void {
    Atomics.store(this.seqs, APPENDED, BigInt(appended));
    Atomics.store(this.seqs, DURABLE, BigInt(durable));
    Atomics.store(this.counters, GENERATION, generation);
    this.wake();
  }

  /** No ledger served: the generation moves on, the seqs stay where the last one stood. */
  refuse(generation: number): void {
    Atomics.store(this.counters, GENERATION, generation);
    this.wake();
  }

  appendedTo(seq: number): void {
    Atomics.store(this.seqs, APPENDED, BigInt(seq));
  }

  /** The durable seq moved: every waiting worker wakes. */
  durableTo(seq: number): void {
    Atomics.store(this.seqs, DURABLE, BigInt(seq));
    this.wake();
  }

  /** Resolves once the commit counter is no longer `commits` (at once if it has moved already). */
  changed(commits: number): Promise<unknown> {
    const wait = Atomics.waitAsync(this.counters, COMMITS, commits);
    return wait.async ? wait.value : Promise.resolve();
  }

  private wake(): void {
    Atomics.add(this.counters, COMMITS, 1);
    Atomics.notify(this.counters, COMMITS);
  }
}

const APPENDED = 0;
const DURABLE = 1;
const GENERATION = 0;
const COMMITS = 1;
