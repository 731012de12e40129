// An HTTP worker's view of the ledger on the engine's thread (engine-channel.ts): the LedgerCore the Koa
// app serves in a worker, and the ports beside it (query index, reconciliation, snapshots, cutover,
// backups, hook secrets). Calls are gathered during a turn of the worker's event loop and sent in one
// message; answers come back in batches. What the routes need at once (is the log behind, is the
// ledger fenced, has seq N reached the disk) comes from the state the engine's thread sends at every
// group commit, so `durable(seq)` costs no message at all.

import type { MessagePort } from 'node:worker_threads';
import type { CommandOf, CommandOp } from '../engine/commands.js';
import type { DryRunAnswer, DryRunCommand, Outcome, ResultOf } from '../engine/ledger-engine.js';
import type { TransactionRecord } from '../engine/records.js';
import type { Result } from '../engine/result.js';
import { urlRefusal, type TargetPolicy } from '../hooks/hook-targets.js';
import { ApiError, EnvelopeError, STATUS_BY_CODE, type ErrorCode } from '../http/api-error.js';
import type { FoldAnswer, HookAdmin, LedgerCore, LedgerReads } from '../http/ledger-core.js';
import type { IndexGaugeSources } from '../http/metrics.js';
import type { QueryPort } from '../http/query-port.js';
import type { ReconciliationPort } from '../http/reconciliation-port.js';
import type { SnapshotAdmin } from '../http/routes/admin-routes.js';
import type { BackupPort } from '../http/routes/backup-routes.js';
import { CutoverRefusal, type CutoverPort, type WriteTicket } from '../http/cutover-port.js';
import type { ChangeFeedPort } from '../http/routes/event-routes.js';
import { InspectRefusal, type ReplicationInspector } from '../http/replication-port.js';
import { NO_ANSWER, type CallTarget, type Call, type CrossingError, type EngineState, type ToEngine, type ToWorker } from './engine-channel.js';

/** The channel's worker end: calls out, answers and state in. */
export class EngineClient {
  state: EngineState = { appended: 0, durable: 0, fenced: false, queued: 0, lookupBacklog: 0, unflushedEvents: 0, commits: [] };
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  private outbox: Call[] = [];
  private appended = 0;
  private durableWaiters: Array<{ seq: number; resolve: () => void }> = [];
  private readonly stateListeners: Array<(state: EngineState) => void> = [];
  private readonly reportListeners: Array<(generation: number) => void> = [];
  private idleWaiters: Array<() => void> = [];
  /** Resolves with the engine's first state (sent as soon as the channel is attached). */
  readonly ready: Promise<void>;
  private markReady: (() => void) | undefined;

  constructor(private readonly port: MessagePort) {
    this.ready = new Promise((resolve) => {
      this.markReady = resolve;
    });
    port.on('message', (message: ToWorker) => {
      if (message.kind === 'answers') this.answered(message.appended, message.answers);
      else if (message.kind === 'state') this.stateChanged(message.state);
      else for (const listener of this.reportListeners) listener(message.generation);
    });
  }

  call<T>(target: CallTarget, method: string, args: unknown[]): Promise<T> {
    const id = this.nextId++;
    // Sent once the event loop has handled everything that is ready (every request its poll phase read),
    // so a busy worker sends one message for many requests, and the engine commits them together.
    if (this.outbox.length === 0) setImmediate(() => this.flush());
    this.outbox.push({ id, target, method, args });
    return new Promise<T>((resolve, reject) => this.waiting.set(id, { resolve: resolve as (value: unknown) => void, reject }));
  }

  /**
   * A call whose answer nobody waits for (it goes in the next batch like any call): the engine's thread
   * sends nothing back, and logs an unexpected failure itself.
   */
  notify(target: CallTarget, method: string, args: unknown[]): void {
    if (this.outbox.length === 0) setImmediate(() => this.flush());
    this.outbox.push({ id: NO_ANSWER, target, method, args });
  }

  /** Resolves once the engine's thread reports everything up to `seq` on disk. */
  durable(seq: number): Promise<void> {
    if (seq <= this.state.durable) return Promise.resolve();
    return new Promise((resolve) => this.durableWaiters.push({ seq, resolve }));
  }

  /** The newest seq the engine's thread had appended when it last answered or reported. */
  visibleSeq(): number {
    return Math.max(this.appended, this.state.appended);
  }

  /** Resolves once every call made so far has been answered (a worker that stops waits for it). */
  idle(): Promise<void> {
    if (this.waiting.size === 0 && this.outbox.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Asks for the engine's state now rather than waiting for the next one sent. */
  async refreshState(): Promise<void> {
    this.stateChanged(await this.call<EngineState>('host', 'state', []));
  }

  onState(listener: (state: EngineState) => void): void {
    this.stateListeners.push(listener);
  }

  /** Called when the engine's thread asks for this worker's request counts (a scrape in another worker). */
  onReportWanted(listener: (generation: number) => void): void {
    this.reportListeners.push(listener);
  }

  private flush(): void {
    const calls = this.outbox;
    this.outbox = [];
    this.port.postMessage({ kind: 'calls', calls } satisfies ToEngine);
  }

  private answered(appended: number, answers: Array<{ id: number; ok: boolean; value?: unknown; error?: CrossingError }>): void {
    // First: whatever the answers show was appended by then, so a read rendered from them waits for it.
    if (appended > this.appended) this.appended = appended;
    for (const answer of answers) {
      const waiter = this.waiting.get(answer.id);
      if (!waiter) continue;
      this.waiting.delete(answer.id);
      if (answer.ok) waiter.resolve(answer.value);
      else waiter.reject(rebuilt(answer.error as CrossingError));
    }
    if (this.waiting.size === 0 && this.outbox.length === 0) for (const idle of this.idleWaiters.splice(0)) idle();
  }

  private stateChanged(state: EngineState): void {
    this.state = state;
    this.markReady?.();
    this.markReady = undefined;
    if (this.durableWaiters.length > 0) {
      const still: Array<{ seq: number; resolve: () => void }> = [];
      for (const waiter of this.durableWaiters) {
        if (waiter.seq <= state.durable) waiter.resolve();
        else still.push(waiter);
      }
      this.durableWaiters = still;
    }
    for (const listener of this.stateListeners) listener(state);
  }
}

/** The error as the worker's routes know it: a core code is an ApiError again, a refusal its own class. */
function rebuilt(error: CrossingError): Error {
  if (error.refusal === 'CutoverRefusal') return new CutoverRefusal(error.message);
  if (error.refusal === 'InspectRefusal') return new InspectRefusal(error.message);
  if (error.code in STATUS_BY_CODE) return new ApiError(error.code as ErrorCode, error.message, error.details, error.headers);
  return new EnvelopeError(error.code, error.status, error.message, error.details, error.headers);
}

/** The ledger as a worker's Koa app sees it. */
export class RemoteLedger implements LedgerCore {
  readonly view: LedgerReads;
  readonly hookAdmin: HookAdmin;
  readonly query?: QueryPort & IndexGaugeSources;
  readonly reconciliation?: ReconciliationPort;

  constructor(private readonly client: EngineClient, options: { hookTargets: TargetPolicy; index: boolean }) {
    this.view = new Proxy({} as LedgerReads, {
      get: (_target, method) => (...args: unknown[]) => client.call('view', String(method), args),
    });
    this.hookAdmin = {
      newSigningSecret: () => client.call('hooks', 'newSigningSecret', []),
      targetRefusal: (url) => urlRefusal(url, options.hookTargets),
    };
    if (options.index) {
      this.query = remoteQuery(client);
      this.reconciliation = remoteReconciliation(client);
    }
  }

  run<K extends CommandOp>(command: CommandOf<K>): Promise<Outcome<ResultOf<K>>> {
    return this.client.call('core', 'run', [command]);
  }

  dryRun(commands: DryRunCommand[]): Promise<DryRunAnswer> {
    return this.client.call('core', 'dryRun', [commands]);
  }

  durable(seq: number): Promise<void> {
    return this.client.durable(seq);
  }

  visibleSeq(): number {
    return this.client.visibleSeq();
  }

  appliedSeqReached(seq: number, timeoutMs: number): Promise<boolean> {
    if (this.client.visibleSeq() >= seq) return Promise.resolve(true);
    return this.client.call('core', 'appliedSeqReached', [seq, timeoutMs]);
  }

  listTransactions(offset: number, limit: number): Promise<TransactionRecord[]> {
    return this.client.call('core', 'listTransactions', [offset, limit]);
  }

  balanceHistory(balanceId: string, untilMs: number, toSeq: number, fromSnapshot?: boolean): Promise<FoldAnswer> {
    return this.client.call('core', 'balanceHistory', [balanceId, untilMs, toSeq, fromSnapshot]);
  }

  takeBalanceSnapshots(): Promise<Result<void, { code: 'SNAPSHOT_UNAVAILABLE'; message: string }>> {
    return this.client.call('core', 'takeBalanceSnapshots', []);
  }

  overloaded(): string | undefined {
    return this.client.state.overloaded;
  }

  /** Asked of the engine's thread only while its state says writes wait for the index (it decides). */
  writeAdmission(): Promise<string | undefined> | undefined {
    if (!this.client.state.index?.holdsWrites) return undefined;
    return this.client.call('core', 'writeAdmission', []);
  }
}

function remoteQuery(client: EngineClient): QueryPort & IndexGaugeSources {
  const call = <T>(method: string, args: unknown[]): Promise<T> => client.call('query', method, args);
  return {
    filter: (collection, query, visibleSeq) => call('filter', [collection, query, visibleSeq]),
    search: (collection, query, visibleSeq) => call('search', [collection, query, visibleSeq]),
    balanceAt: (balanceId, untilMs, visibleSeq, version) => call('balanceAt', [balanceId, untilMs, visibleSeq, version]),
    balanceChanges: (balanceId, window, visibleSeq) => call('balanceChanges', [balanceId, window, visibleSeq]),
    reindexStatus: () => call('reindexStatus', []),
    startReindex: () => call('startReindex', []),
    get checkpointSeq() {
      return client.state.index?.checkpointSeq ?? 0;
    },
    get poisonSeq() {
      return client.state.index?.poisonSeq ?? 0;
    },
    lagEvents: () => client.state.index?.lagEvents ?? 0,
    lagSeconds: () => client.state.index?.lagSeconds ?? 0,
  };
}

function remoteReconciliation(client: EngineClient): ReconciliationPort {
  const call = <T>(method: string, args: unknown[]): Promise<T> => client.call('reconciliation', method, args);
  return {
    startBackground: (command, dryRun) => call('startBackground', [command, dryRun]),
    runInstant: (request, records, dryRun) => call('runInstant', [request, records, dryRun]),
    record: (reconciliationId) => call('record', [reconciliationId]),
    dryRun: (reconciliationId) => call('dryRun', [reconciliationId]),
    matches: (reconciliationId, offset, limit, visibleSeq) => call('matches', [reconciliationId, offset, limit, visibleSeq]),
    unmatched: (reconciliationId, uploadId, offset, limit, visibleSeq) => call('unmatched', [reconciliationId, uploadId, offset, limit, visibleSeq]),
  };
}

export function remoteSnapshots(client: EngineClient): SnapshotAdmin {
  return {
    snapshotNow: () => client.call('snapshots', 'snapshotNow', []),
    list: () => client.call('snapshots', 'list', []),
  };
}

export function remoteBackup(client: EngineClient, dir: string | undefined): BackupPort {
  return { dir, run: () => client.call('backup', 'run', []) };
}

/**
 * The cutover as a worker sees it: `fenced` from the engine's state (the engine's thread refuses writes
 * itself once fenced), writers held while it is, the writes in flight counted on the engine's thread
 * (calls of one channel arrive in order, so a write's start is counted before its command), and the
 * operator's calls sent on.
 */
export function remoteCutover(client: EngineClient): CutoverPort {
  const writers: Array<{ hold(): void; release(): void }> = [];
  let fenced = client.state.fenced;
  client.onState((state) => {
    if (state.fenced === fenced) return;
    fenced = state.fenced;
    for (const writer of writers) {
      if (fenced) writer.hold();
      else writer.release();
    }
  });
  return {
    get fenced() {
      return fenced;
    },
    // Not waited for: the start goes out with the write's command (calls of one channel are carried out in
    // order), and a start the engine's thread refused (fenced meanwhile) is not uncounted; the command
    // itself is refused there unless the fence is still waiting for earlier writes.
    writeStarted: () => {
      if (fenced) return undefined;
      return { counted: client.call<WriteTicket | undefined>('cutover', 'writeStarted', []).then((ticket) => ticket !== undefined) };
    },
    writeEnded: (ticket) => {
      void ticket.counted?.then((counted) => {
        if (counted) client.notify('cutover', 'writeEnded', []);
      });
    },
    holdWhileFenced(writer) {
      writers.push(writer);
      if (fenced) writer.hold();
    },
    fence: () => client.call('cutover', 'fence', []),
    unfence: () => client.call('cutover', 'unfence', []),
    status: (options) => client.call('cutover', 'status', [options]),
    promote: (expected) => client.call('cutover', 'promote', [expected]),
  };
}

/** The change feed from a worker: reads cross, and a stream wakes when the durable seq moves. */
export function remoteFeed(client: EngineClient): ChangeFeedPort {
  const listeners = new Set<() => void>();
  let durable = client.state.durable;
  client.onState((state) => {
    if (state.durable === durable) return;
    durable = state.durable;
    for (const listener of listeners) listener();
  });
  return {
    committedSeq: () => client.state.durable,
    read: (afterSeq, limit) => client.call('feed', 'read', [afterSeq, limit]),
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

export function remoteInspector(client: EngineClient): ReplicationInspector {
  return { inspect: (options) => client.call('inspector', 'inspect', [options]) };
}
