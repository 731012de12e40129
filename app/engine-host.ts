// The engine's thread side of the HTTP workers (engine-channel.ts): answers the calls of every worker
// against the running ledger and tells each its state. Calls of one batch are carried out in order, each
// at once when it can be (a command, a read of the view), and their answers go back in one message with
// the seq appended by then; calls that take time (a query of the index, a fold, a snapshot) answer in a
// later message when they are done. Only the methods engine-channel.ts lists can be called.
//
// The fence of a cutover is enforced here, where the commands are carried out: a worker's own check can
// be a moment late, the engine's thread cannot.

import type { MessagePort } from 'node:worker_threads';
import { LedgerView } from '../engine/ledger-view.js';
import { EnvelopeError } from '../http/api-error.js';
import { CutoverRefusal } from '../http/cutover-port.js';
import type { CutoverControl } from './cutover-control.js';
import type { BackupPort } from '../http/routes/backup-routes.js';
import type { SnapshotAdmin } from '../http/routes/admin-routes.js';
import type { ChangeFeedPort } from '../http/routes/event-routes.js';
import type { RequestTotals } from '../http/request-metrics.js';
import { InspectRefusal, type ReplicationInspector } from '../http/replication-port.js';
import { CALLABLE, NO_ANSWER, type Answer, type Call, type CallTarget, type CrossingError, type EngineState, type ToEngine, type ToWorker } from './engine-channel.js';
import type { LedgerRuntime } from './ledger-runtime.js';

/** The longest a scrape of /metrics waits for the other workers' request counts. */
const REQUESTS_REPORT_WAIT_MS_MAX = 250;
/** How often the state is sent when nothing commits (fences, overload and index lag change without commits). */
const STATE_INTERVAL_MS = 100;

export interface HostedParts {
  runtime: LedgerRuntime;
  /** Where failures of calls are told (a worker answers those with a bare 500). */
  logger: { error(fields: object, message: string): void };
  snapshots?: SnapshotAdmin;
  cutover?: CutoverControl;
  backup?: BackupPort;
  feed?: ChangeFeedPort;
  inspector?: ReplicationInspector;
}

export class EngineHost {
  private readonly ports = new Set<MessagePort>();
  private readonly targets: Record<CallTarget, object | undefined>;
  private readonly timer: NodeJS.Timeout;
  private commits: Array<[number, number]> = [];
  private readonly requestTotals = new Map<number, RequestTotals>();
  private reportGeneration = 0;
  private readonly reportWaiters: Array<{ generation: number; reported: Set<number>; done: () => void }> = [];

  constructor(private readonly parts: HostedParts) {
    const { runtime } = parts;
    this.targets = {
      core: runtime,
      view: runtime.view,
      query: runtime.query,
      reconciliation: runtime.reconciliation,
      snapshots: parts.snapshots,
      cutover: parts.cutover,
      backup: parts.backup,
      hooks: runtime.hookAdmin,
      feed: parts.feed,
      inspector: parts.inspector,
      // Group commits are counted once, in the states sent to everyone: none in this one.
      host: {
        state: () => ({ ...this.state(), commits: [] }),
        // Each worker's request counts, so a scrape of any one sums them all (app/http-worker.ts).
        reportRequests: (worker: number, totals: RequestTotals, generation?: number) => this.requestsReported(worker, totals, generation),
        requestTotals: (except: number) => this.freshRequestTotals(except),
      },
    };
    runtime.onCommit((stats) => {
      this.commits.push([stats.events, stats.milliseconds]);
      this.sendState();
    });
    this.timer = setInterval(() => this.sendState(), STATE_INTERVAL_MS);
    this.timer.unref();
  }

  /** Serves a worker's end of its channel. */
  attach(port: MessagePort): void {
    this.ports.add(port);
    port.on('message', (message: ToEngine) => this.answer(port, message.calls));
    port.on('close', () => this.ports.delete(port));
    port.postMessage({ kind: 'state', state: this.state() } satisfies ToWorker);
  }

  close(): void {
    clearInterval(this.timer);
    for (const port of this.ports) port.close();
    this.ports.clear();
  }

  private answer(port: MessagePort, calls: Call[]): void {
    const answers: Answer[] = [];
    for (const call of calls) {
      let value: unknown;
      try {
        value = this.carryOut(call);
      } catch (error) {
        const crossing = this.crossing(call, error);
        if (call.id !== NO_ANSWER) answers.push({ id: call.id, ok: false, error: crossing });
        continue;
      }
      if (call.id === NO_ANSWER) {
        if (value instanceof Promise) value.catch((error: unknown) => this.crossing(call, error));
        continue;
      }
      if (value instanceof Promise) {
        // A fence, an unfence or a promotion changes what every worker must do at once, not at the next state.
        if (call.target === 'cutover') void value.finally(() => this.sendState()).catch(() => undefined);
        value.then(
          (settled) => this.send(port, [{ id: call.id, ok: true, value: settled }]),
          (error: unknown) => this.send(port, [{ id: call.id, ok: false, error: this.crossing(call, error) }]),
        );
      } else answers.push({ id: call.id, ok: true, value });
    }
    if (answers.length > 0) this.send(port, answers);
  }

  private carryOut(call: Call): unknown {
    const target = this.targets[call.target];
    if (!target || !callable(call.target, call.method)) throw new Error(`${call.target}.${call.method} cannot be called from a worker`);
    if (call.target === 'core' && call.method === 'run' && this.parts.cutover && !this.parts.cutover.appendsAllowed) {
      throw new EnvelopeError('CUTOVER_FENCED', 503, 'this ledger is being moved to a new process; retry shortly', undefined, { 'Retry-After': '1' });
    }
    return (target as Record<string, (...args: unknown[]) => unknown>)[call.method]!(...call.args);
  }

  /** An error as it crosses to the worker: refusals keep their envelope; anything else is an internal error. */
  private crossing(call: Call, error: unknown): CrossingError {
    if (error instanceof EnvelopeError) {
      const crossed: CrossingError = { code: error.code, status: error.status, message: error.message };
      if (error.details) crossed.details = error.details;
      if (error.headers) crossed.headers = error.headers;
      return crossed;
    }
    if (error instanceof CutoverRefusal || error instanceof InspectRefusal) return { refusal: error.name, code: '', status: 0, message: error.message };
    // The worker answers a bare 500; the engine's thread keeps what happened.
    this.parts.logger.error({ err: error, call: `${call.target}.${call.method}` }, 'a worker\'s call failed');
    return { code: 'GEN_INTERNAL_ERROR', status: 500, message: 'internal error' };
  }

  private send(port: MessagePort, answers: Answer[]): void {
    port.postMessage({ kind: 'answers', appended: this.parts.runtime.visibleSeq(), answers } satisfies ToWorker);
  }

  /**
   * The request counts of every worker but `except`, after asking each for its newest: a worker that has
   * not answered within REQUESTS_REPORT_WAIT_MS_MAX counts as it last reported (every second).
   */
  private freshRequestTotals(except: number): Promise<RequestTotals[]> {
    const generation = ++this.reportGeneration;
    const message: ToWorker = { kind: 'report-requests', generation };
    for (const port of this.ports) port.postMessage(message);
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
    if (this.ports.size === 0) return;
    const message: ToWorker = { kind: 'state', state: this.state() };
    this.commits = [];
    for (const port of this.ports) port.postMessage(message);
  }

  private state(): EngineState {
    const { runtime } = this.parts;
    const state: EngineState = {
      appended: runtime.log.appendedSeq,
      durable: runtime.log.durableSeq,
      fenced: this.parts.cutover?.fenced ?? false,
      queued: runtime.view.queuedCount(),
      lookupBacklog: runtime.store.backlog,
      unflushedEvents: runtime.log.unflushedEvents,
      commits: this.commits,
    };
    const overloaded = runtime.overloaded();
    if (overloaded) state.overloaded = overloaded;
    const index = runtime.query;
    if (index) {
      state.index = { checkpointSeq: index.checkpointSeq, poisonSeq: index.poisonSeq, lagEvents: index.lagEvents(), lagSeconds: index.lagSeconds(), holdsWrites: index.writesWait() };
    }
    return state;
  }
}

function callable(target: CallTarget, method: string): boolean {
  const allowed = CALLABLE[target];
  if (allowed === 'LedgerView') return method !== 'constructor' && Object.hasOwn(LedgerView.prototype, method);
  return (allowed as readonly string[]).includes(method);
}

