// The engine's thread side of the HTTP workers (engine-channel.ts): answers the calls of every worker
// against the running ledger and tells each its state. Calls of one batch are carried out in order, each
// at once when it can be (a command, a read of the view), and their answers go back in one message with
// the seq appended by then; calls that take time (a query of the index, a fold, a snapshot) answer in a
// later message when they are done. Only the methods engine-channel.ts lists can be called.
//
// The fence of a cutover is enforced here, where the commands are carried out: a worker's own check can
// be a moment late, the engine's thread cannot.
//
// A worker that dies leaves behind what its calls hold here (workers/http-workers.ts replaces it): `detach`
// ends the fence counts of its writes (a fence would otherwise wait for writes whose worker is gone) and
// its waits for a seq (each ends as timed out: nobody reads the answer), and stops serving its channel.
//
// A replicated node changes the ledger it serves on every rejoin (server/replicated-serve.ts): `refuse`
// makes every call answer the refusal (503 REPL_REJOINING) and tells the workers so at once, `drain`
// waits (bounded) for the calls under way on the old ledger, and `serve` points the host at the new one
// under a new generation, which the workers' waits for durable seqs are tied to (remote-ledger.ts). Its
// replication (role, where writes go) goes out with every state, and so does whether writes are held
// (the node does not lead): commands are refused here meanwhile, whatever a worker's view of it.

import assert from 'node:assert/strict';
import type { Command } from '../engine/commands.js';
import type { Outcome } from '../engine/result.js';
import { BatchBytes, commandAt } from './channel-codec.js';
import type { MessagePort } from 'node:worker_threads';
import { LedgerView } from '../engine/ledger-view.js';
import type { CutoverControl } from '../cutover/cutover-control.js';
import type { BackupPort } from '../http/routes/backup-routes.js';
import type { SnapshotAdmin } from '../http/routes/admin-routes.js';
import type { RequestTotals } from '../http/request-metrics.js';
import type { ReplicationInspector, ReplicationPort } from '../http/ports/replication-port.js';
import { NodeRefusal } from '../http/ports/node-refusal.js';
import { BucketCells } from '../http/access/rate-buckets.js';
import { CALLABLE, NO_ANSWER, SharedSeqs, type Answer, type Call, type CallTarget, type CallTargets, type CrossingError, type HostCalls, type EngineState, type ReplicationState, type ToEngine, type ToWorker } from './engine-channel.js';
import type { LedgerRuntime } from '../runtime/ledger-runtime.js';

/** The longest a scrape of /metrics waits for the other workers' request counts. */
const REQUESTS_REPORT_WAIT_MS_MAX = 250;
/** How often the state is sent when nothing commits (fences, overload and index lag change without commits). */
const STATE_INTERVAL_MS = 100;

/** The ledger served and the ports beside it. */
export interface ServedParts {
  runtime: LedgerRuntime;
  snapshots?: SnapshotAdmin;
  cutover?: CutoverControl;
  backup?: BackupPort;
  inspector?: ReplicationInspector;
  /** A replicated node's replication (replication/replication-node.ts); `leadingUntilMs`: performance.now() it leads until. */
  replication?: ReplicationPort & { leadingUntilMs(): number | undefined };
}

interface HostLogger {
  /** Where failures of calls are told (a worker answers those with a bare 500). */
  error(fields: object, message: string): void;
}

export interface HostedParts extends ServedParts {
  logger: HostLogger;
}

/** While writes are held (a replicated node that does not lead), a command that reaches the engine anyway. */
const WRITES_HELD = new NodeRefusal('REPL_NO_LEADER', 'this node does not take writes right now; retry shortly');

/** What one worker's channel holds on this thread, given back when the worker is gone (detach). */
interface Attached {
  /** Writes whose fence count its worker started and has not ended. */
  writesCounted: number;
  /** Ends its waits for a seq. */
  readonly gone: AbortController;
}

export class EngineHost {
  private readonly ports = new Map<MessagePort, Attached>();
  private targets: CallTargets;
  private readonly timer: NodeJS.Timeout;
  private commits: Array<[number, number]> = [];
  private readonly requestTotals = new Map<number, RequestTotals>();
  private reportGeneration = 0;
  private readonly reportWaiters: Array<{ generation: number; reported: Set<number>; done: () => void }> = [];
  private readonly logger: HostLogger;
  private parts: ServedParts | undefined;
  private refusal: NodeRefusal | undefined;
  private generation = 0;
  /** Why the served log stopped appending, if it did. */
  private stopped: CrossingError | undefined;
  private writesHeld = false;
  /** Where the last ledger served stood, for the state while none is. */
  private lastSeqs = { appended: 0, durable: 0 };
  /**
   * A host made refusing (a replicated node) switches ledgers and is drained; one made serving (a single
   * node) never is, and does not count its calls: the count costs a promise reaction on every call.
   */
  private readonly switches: boolean;
  /** Calls carried out that have not answered yet (a host that switches), and who waits for there to be none. */
  private underWay = 0;
  private readonly drainWaiters: Array<() => void> = [];
  private readonly host: HostCalls;
  /** The seqs every worker reads from shared memory (engine-channel.ts SharedSeqs). */
  private readonly seqs = SharedSeqs.create();
  /** The process's rate buckets, whose cells this thread gives out (http/access/rate-buckets.ts). */
  readonly rateCells = new BucketCells();
  /** The bytes of the answers being gathered (channel-codec.ts). */
  private readonly batch = new BatchBytes();
  /** What the last state sent said of write admission. */
  private sentAdmission: { overloaded: string | undefined; holds: boolean } = { overloaded: undefined, holds: false };

  /** Serves `parts`, or refuses every call with `refusal` until `serve` (a replicated node joining). */
  constructor(parts: HostedParts | { logger: HostLogger; refusal: NodeRefusal }) {
    this.logger = parts.logger;
    this.host = {
      // A scrape of /metrics asks for the state now: every worker gets it, with the group commits since
      // the last (each counts every commit once), before this answer reaches the one that asked.
      state: () => {
        this.sendState();
        return { ...this.state(), commits: [] };
      },
      // Each worker's request counts, so a scrape of any one sums them all (workers/http-worker.ts).
      reportRequests: (worker: number, totals: RequestTotals, generation?: number) => this.requestsReported(worker, totals, generation),
      requestTotals: (except: number) => this.freshRequestTotals(except),
      rateBucketCell: (apiKeyId: string) => this.rateCells.cellOf(apiKeyId),
    };
    this.targets = this.targetsOf(undefined);
    this.switches = !('runtime' in parts);
    if ('runtime' in parts) this.serve(parts);
    else this.refusal = parts.refusal;
    this.timer = setInterval(() => this.sendState(), STATE_INTERVAL_MS);
    this.timer.unref();
  }

  /** Serves `parts` from now on, as a new generation: the workers' waits tied to the last one are refused. */
  serve(parts: ServedParts): void {
    this.parts = parts;
    this.refusal = undefined;
    this.stopped = undefined;
    this.generation += 1;
    this.targets = this.targetsOf(parts);
    const { runtime } = parts;
    runtime.onCommit((stats) => {
      if (this.parts?.runtime !== runtime) return;
      this.commits.push([stats.events, stats.milliseconds]);
      this.seqs.appendedTo(runtime.log.appendedSeq);
      this.seqs.durableTo(runtime.log.durableSeq);
      // What the workers admit writes by goes out as soon as it changes; the rest with the next state.
      if (this.admissionChanged(runtime)) this.sendState();
    });
    runtime.log.onReplicationLost((error) => {
      if (this.parts?.runtime !== runtime) return;
      this.stopped = this.crossingOf(error);
      this.sendState();
    });
    this.seqs.serve(this.generation, runtime.log.appendedSeq, runtime.log.durableSeq);
    this.sendState();
  }

  /** Refuses every call with `refusal` from now on (calls under way finish), and tells the workers at once. */
  refuse(refusal: NodeRefusal): void {
    if (this.parts) this.lastSeqs = { appended: this.parts.runtime.log.appendedSeq, durable: this.parts.runtime.log.durableSeq };
    this.parts = undefined;
    this.refusal = refusal;
    this.generation += 1;
    this.targets = this.targetsOf(undefined);
    this.seqs.refuse(this.generation);
    this.sendState();
  }

  /** Resolves once no call is under way, or after `timeoutMs`; whether they all finished. */
  drain(timeoutMs: number): Promise<boolean> {
    assert(this.switches, 'only a host made refusing switches ledgers and counts the calls under way');
    if (this.underWay === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.drainWaiters.splice(this.drainWaiters.indexOf(finish), 1);
        resolve(false);
      }, timeoutMs);
      this.drainWaiters.push(finish);
    });
  }

  /** Holds (or releases) writes: the workers' own appenders hold, and commands are refused here meanwhile. */
  holdWrites(held: boolean): void {
    this.writesHeld = held;
    // After the caller's turn: a node that releases writes as it takes the lead says so in the same state.
    queueMicrotask(() => this.sendState());
  }

  private targetsOf(parts: ServedParts | undefined): CallTargets {
    return {
      core: parts?.runtime,
      view: parts?.runtime.view,
      query: parts?.runtime.query,
      reconciliation: parts?.runtime.reconciliation,
      snapshots: parts?.snapshots,
      cutover: parts?.cutover,
      backup: parts?.backup,
      hooks: parts?.runtime.hookAdmin,
      inspector: parts?.inspector,
      // Group commits are counted once, in the states sent to everyone: none in this one.
      host: this.host,
    };
  }

  /** The shared memory of the seqs, for the workers (WorkerData). */
  get seqsBuffer(): SharedArrayBuffer {
    return this.seqs.buffer;
  }

  /** Serves a worker's end of its channel. */
  attach(port: MessagePort): void {
    const attached: Attached = { writesCounted: 0, gone: new AbortController() };
    this.ports.set(port, attached);
    port.on('message', (message: ToEngine) => this.answer(port, attached, message.calls, message.bytes));
    port.on('close', () => this.detach(port));
    port.postMessage({ kind: 'state', state: this.state() } satisfies ToWorker);
  }

  /**
   * The worker behind `port` is gone: its writes are uncounted from the fence, its waits for a seq end,
   * and its channel is no longer served. Calls of its still under way finish and their answers go nowhere.
   */
  detach(port: MessagePort): void {
    const attached = this.ports.get(port);
    if (!attached) return;
    this.ports.delete(port);
    attached.gone.abort();
    const cutover = this.parts?.cutover;
    for (; attached.writesCounted > 0; attached.writesCounted -= 1) cutover?.writeEnded();
    port.close();
  }

  close(): void {
    clearInterval(this.timer);
    for (const port of this.ports.keys()) port.close();
    this.ports.clear();
  }

  private answer(port: MessagePort, attached: Attached, calls: Call[], bytes: ArrayBuffer | undefined): void {
    const answers: Answer[] = [];
    const { generation } = this;
    const commands = bytes === undefined ? undefined : Buffer.from(bytes);
    for (const call of calls) {
      let value: unknown;
      try {
        if (call.command) call.args = [commandAt(commands as Buffer, call.command)];
        value = this.carryOut(call, attached);
      } catch (error) {
        const crossing = this.crossing(call, error);
        if (call.id !== NO_ANSWER) answers.push({ id: call.id, ok: false, error: crossing });
        continue;
      }
      if (call.id === NO_ANSWER) {
        if (value instanceof Promise) {
          this.callStarted(value);
          value.catch((error: unknown) => this.crossing(call, error));
        }
        continue;
      }
      if (value instanceof Promise) {
        this.callStarted(value);
        // A fence, an unfence or a promotion changes what every worker must do at once, not at the next state.
        if (call.target === 'cutover') void value.finally(() => this.sendState()).catch(() => undefined);
        value.then(
          (settled) => this.send(port, [{ id: call.id, ok: true, value: settled }], generation),
          (error: unknown) => this.send(port, [{ id: call.id, ok: false, error: this.crossing(call, error) }], generation),
        );
      } else if (call.target === 'core' && call.method === 'run') {
        // Transaction records in a command's outcome cross as bytes (channel-codec.ts).
        const compact = this.batch.outcome(call.args[0] as Command, value as Outcome<unknown>);
        answers.push(compact ? { id: call.id, ok: true, value: compact.outcome, records: compact.records } : { id: call.id, ok: true, value });
      } else answers.push({ id: call.id, ok: true, value });
    }
    if (answers.length > 0) this.send(port, answers, generation, this.batch.take());
  }

  /** Counts a call under way until it settles, so `drain` can wait for it. */
  private callStarted(value: Promise<unknown>): void {
    if (!this.switches) return;
    this.underWay += 1;
    const settled = (): void => {
      this.underWay -= 1;
      if (this.underWay === 0) for (const done of this.drainWaiters.splice(0)) done();
    };
    value.then(settled, settled);
  }

  private carryOut(call: Call, attached: Attached): unknown {
    if (this.refusal && call.target !== 'host') throw this.refusal;
    const target = this.targets[call.target];
    if (!target || !callable(call.target, call.method)) throw new Error(`${call.target}.${call.method} cannot be called from a worker`);
    if (call.target === 'core' && call.method === 'run' && this.writesHeld) throw WRITES_HELD;
    if (call.target === 'core' && call.method === 'run' && this.parts?.cutover && !this.parts.cutover.appendsAllowed) {
      throw new NodeRefusal('CUTOVER_FENCED');
    }
    // A wait for a seq ends when its worker goes (the signal is this side's: it cannot cross).
    const args = call.target === 'core' && call.method === 'appliedSeqReached' ? [call.args[0], call.args[1], attached.gone.signal] : call.args;
    const value = (target as Record<string, (...args: unknown[]) => unknown>)[call.method]!(...args);
    // The fence's count of each worker's writes, to end them if the worker goes before it does.
    if (call.target === 'cutover' && call.method === 'writeStarted' && value !== undefined) attached.writesCounted += 1;
    if (call.target === 'cutover' && call.method === 'writeEnded') attached.writesCounted -= 1;
    return value;
  }

  /** An error as it crosses to the worker: a refusal of the node keeps its code; anything else is logged here and is a 500 there. */
  private crossing(call: Call, error: unknown): CrossingError {
    const crossed = this.crossingOf(error);
    if (crossed.code === 'GEN_INTERNAL_ERROR') this.logger.error({ err: error, call: `${call.target}.${call.method}` }, 'a worker\'s call failed');
    return crossed;
  }

  private crossingOf(error: unknown): CrossingError {
    if (error instanceof NodeRefusal) return { code: error.code, message: error.message };
    return { code: 'GEN_INTERNAL_ERROR', message: 'internal error' };
  }

  /**
   * Answers of calls carried out under `generation` (the ledger served when they were): what was appended
   * by now is told only of that ledger still served (the worker ignores it otherwise).
   */
  private send(port: MessagePort, answers: Answer[], generation: number, bytes?: ArrayBuffer): void {
    const appended = this.parts && generation === this.generation ? this.parts.runtime.visibleSeq() : 0;
    if (appended > 0) this.seqs.appendedTo(appended);
    const message: ToWorker = { kind: 'answers', generation, appended, answers };
    if (bytes === undefined) port.postMessage(message);
    else port.postMessage({ ...message, bytes }, [bytes]);
  }

  /** Whether what workers decide admission by (overload, the index holding writes) differs from the last state sent. */
  private admissionChanged(runtime: LedgerRuntime): boolean {
    const overloaded = runtime.overloaded();
    const holds = runtime.query?.writesWait() ?? false;
    if (overloaded === this.sentAdmission.overloaded && holds === this.sentAdmission.holds) return false;
    return true;
  }

  /**
   * The request counts of every worker but `except`, after asking each for its newest: a worker that has
   * not answered within REQUESTS_REPORT_WAIT_MS_MAX counts as it last reported (every second).
   */
  private freshRequestTotals(except: number): Promise<RequestTotals[]> {
    const generation = ++this.reportGeneration;
    const message: ToWorker = { kind: 'report-requests', generation };
    for (const port of this.ports.keys()) port.postMessage(message);
    return new Promise((resolve) => {
      const waiter = {
        generation,
        reported: new Set<number>(),
        done: () => {
          clearTimeout(timer);
          this.reportWaiters.splice(this.reportWaiters.indexOf(waiter), 1);
          resolve([...this.requestTotals].filter(([worker]) => worker !== except).map(([, totals]) => totals));
        },
      };
      const timer = setTimeout(waiter.done, REQUESTS_REPORT_WAIT_MS_MAX);
      this.reportWaiters.push(waiter);
    });
  }

  private requestsReported(worker: number, totals: RequestTotals, generation: number | undefined): void {
    this.requestTotals.set(worker, totals);
    if (generation === undefined) return;
    for (const waiter of [...this.reportWaiters]) {
      if (waiter.generation > generation) continue;
      waiter.reported.add(worker);
      if (waiter.reported.size >= this.ports.size) waiter.done();
    }
  }

  private sendState(): void {
    const state = this.state();
    this.sentAdmission = { overloaded: state.overloaded, holds: state.index?.holdsWrites ?? false };
    if (this.ports.size === 0) return;
    const message: ToWorker = { kind: 'state', state };
    this.commits = [];
    for (const port of this.ports.keys()) port.postMessage(message);
  }

  private state(): EngineState {
    const parts = this.parts;
    const runtime = parts?.runtime;
    const state: EngineState = {
      generation: this.generation,
      appended: runtime?.log.appendedSeq ?? this.lastSeqs.appended,
      durable: runtime?.log.durableSeq ?? this.lastSeqs.durable,
      fenced: parts?.cutover?.fenced ?? false,
      queued: runtime?.view.queuedCount() ?? 0,
      lookupBacklog: runtime?.store.backlog ?? 0,
      unflushedEvents: runtime?.log.unflushedEvents ?? 0,
      commits: this.commits,
    };
    if (this.refusal) state.refusal = this.crossingOf(this.refusal);
    if (this.stopped) state.stopped = this.stopped;
    if (this.writesHeld) state.writesHeld = true;
    if (parts?.replication) state.replication = this.replicationState(parts.replication);
    const overloaded = runtime?.overloaded();
    if (overloaded) state.overloaded = overloaded;
    const index = runtime?.query;
    if (index) {
      state.index = { checkpointSeq: index.checkpointSeq, poisonSeq: index.poisonSeq, lagEvents: index.lagEvents(), lagSeconds: index.lagSeconds(), holdsWrites: index.writesWait() };
    }
    return state;
  }

  private replicationState(replication: NonNullable<ServedParts['replication']>): ReplicationState {
    const state: ReplicationState = { status: replication.status(), writeTarget: replication.writeTarget() };
    const until = replication.leadingUntilMs();
    if (until !== undefined) state.leadingUntilMs = performance.timeOrigin + until;
    return state;
  }
}

function callable(target: CallTarget, method: string): boolean {
  const allowed = CALLABLE[target];
  if (allowed === 'LedgerView') return method !== 'constructor' && Object.hasOwn(LedgerView.prototype, method);
  return (allowed as readonly string[]).includes(method);
}

