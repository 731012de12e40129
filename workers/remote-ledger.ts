// An HTTP worker's view of the ledger on the engine's thread (engine-channel.ts): the LedgerCore the Koa
// app serves in a worker, and the ports beside it (query index, reconciliation, snapshots, cutover,
// backups, hook secrets). Calls are gathered during a turn of the worker's event loop and sent in one
// message; answers come back in batches. What the routes need at once (is the log behind, is the
// ledger fenced, has seq N reached the disk) comes from the state the engine's thread sends at every
// group commit, so `durable(seq)` costs no message at all.
//
// On a replicated node the ledger served changes on a rejoin (a new generation in the state) and the
// log's seq can go back (records the group never committed are dropped): a wait for a seq is tied to the
// generation that appended it, and refused, never left waiting, once that generation has stopped short
// of it; what the worker last saw appended starts again from the new generation's.

import type { MessagePort } from 'node:worker_threads';
import type { Command, CommandOf, CommandOp } from '../engine/commands.js';
import type { DryRunAnswer, DryRunCommand, Outcome, ResultOf } from '../engine/ledger-engine.js';
import type { TransactionRecord } from '../engine/records.js';
import type { Result } from '../engine/result.js';
import { urlRefusal, type TargetPolicy } from '../hooks/hook-targets.js';
import type { FoldAnswer, HookAdmin, LedgerCore, LedgerReads, SeqWait, StatementAnswer, TransactionLogPosition } from '../http/ports/ledger-core.js';
import type { IndexGaugeSources } from '../http/metrics.js';
import type { BalanceHistoryPort, QueryPort } from '../http/ports/query-port.js';
import type { ReconciliationPort } from '../http/ports/reconciliation-port.js';
import type { SnapshotAdmin } from '../http/routes/admin-routes.js';
import type { BackupPort } from '../http/routes/backup-routes.js';
import type { CutoverPort } from '../http/ports/cutover-port.js';
import type { ReplicationInspector } from '../http/ports/replication-port.js';
import { NodeRefusal } from '../http/ports/node-refusal.js';
import type { ReplicationPort, ReplicationStatus, WriteTarget } from '../http/ports/replication-port.js';
import { BatchBytes, outcomeWith } from './channel-codec.js';
import { CALLABLE, NO_ANSWER, type SharedSeqs, type Answer, type Call, type CallArgs, type CallMethod, type CallTarget, type CallValue, type CrossingError, type EngineState, type RemotePort, type ToEngine, type ToWorker } from './engine-channel.js';
import { monotonicClock } from '../runtime/system-clock.js';

/**
 * Seqs whose generation a worker remembers until their wait (writes in flight in one worker are far
 * fewer; a write no route waits for, an API key stamp, is forgotten oldest first past this).
 */
const SEQ_GENERATIONS_MAX = 65_536;
/** Generations whose end a worker remembers, for a wait that comes after its ledger was replaced. */
const ENDED_GENERATIONS_MAX = 16;

interface DurableWaiter {
  seq: number;
  generation: number;
  resolve: () => void;
  reject: (error: Error) => void;
}

/** The channel's worker end: calls out, answers and state in. */
export class EngineClient {
  state: EngineState = { generation: 0, appended: 0, durable: 0, fenced: false, queued: 0, lookupBacklog: 0, unflushedEvents: 0, commits: [] };
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void; generation?: (generation: number) => void }>();
  private outbox: Call[] = [];
  /** The bytes of the next batch's commands (channel-codec.ts). */
  private readonly batch = new BatchBytes();
  private appended = 0;
  /** Waits for a durable seq, in seq order (writes are answered, and so wait, mostly in seq order). */
  private durableWaiters: DurableWaiter[] = [];
  /** Called whenever the durable seq moves (change-feed streams). */
  private readonly durableListeners = new Set<() => void>();
  /** Whether a wait on the shared commit counter is armed. */
  private watching = false;
  /** The generation that appended each seq a write was answered with, until its wait. */
  private readonly seqGenerations = new Map<number, number>();
  /** How far each ended generation got on disk, and why it stopped. */
  private readonly ended = new Map<number, { durable: number; error: CrossingError }>();
  private readonly stateListeners: Array<(state: EngineState) => void> = [];
  private readonly reportListeners: Array<(generation: number) => void> = [];
  private idleWaiters: Array<() => void> = [];
  /** The durable seq the listeners were last told of. */
  private durableTold = 0;
  /** Resolves with the engine's first state (sent as soon as the channel is attached). */
  readonly ready: Promise<void>;
  private markReady: (() => void) | undefined;

  /** `seqs`: the engine thread's seqs in shared memory (engine-channel.ts SharedSeqs). */
  constructor(private readonly port: MessagePort, private readonly seqs: SharedSeqs) {
    this.ready = new Promise((resolve) => {
      this.markReady = resolve;
    });
    port.on('message', (message: ToWorker) => {
      if (message.kind === 'answers') this.answered(message.generation, message.appended, message.answers, message.bytes);
      else if (message.kind === 'state') this.stateChanged(message.state);
      else for (const listener of this.reportListeners) listener(message.generation);
    });
  }

  /** A command: its outcome, with the seq it appended tied to the generation that appended it. */
  async run<T>(args: unknown[]): Promise<T> {
    let appendedIn = this.state.generation;
    const outcome = await new Promise<T>((resolve, reject) => {
      this.send({ id: this.nextId++, target: 'core', method: 'run', args }, {
        resolve: resolve as (value: unknown) => void, reject, generation: (generation) => {
          appendedIn = generation;
        },
      });
    });
    const seq = (outcome as { ok?: boolean; seq?: number }).ok ? (outcome as { seq: number }).seq : undefined;
    if (seq !== undefined) {
      if (this.seqGenerations.size >= SEQ_GENERATIONS_MAX) this.seqGenerations.delete(this.seqGenerations.keys().next().value as number);
      this.seqGenerations.set(seq, appendedIn);
    }
    return outcome;
  }

  /** Calls `method` of `target` on the engine's thread (engine-channel.ts CALLABLE): typed by its port. */
  call<Target extends CallTarget, Method extends CallMethod<Target>>(
    target: Target, method: Method, args: CallArgs<Target, Method>,
  ): Promise<CallValue<Target, Method>> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => this.send({ id, target, method: method as string, args }, { resolve: resolve as (value: unknown) => void, reject }));
  }

  private send(call: Call, waiter: { resolve: (value: unknown) => void; reject: (error: Error) => void; generation?: (generation: number) => void }): void {
    // Sent once the event loop has handled everything that is ready (every request its poll phase read),
    // so a busy worker sends one message for many requests, and the engine commits them together.
    if (this.outbox.length === 0) setImmediate(() => this.flush());
    this.outbox.push(call);
    this.waiting.set(call.id, waiter);
  }

  /**
   * A call whose answer nobody waits for (it goes in the next batch like any call): the engine's thread
   * sends nothing back, and logs an unexpected failure itself.
   */
  notify<Target extends CallTarget, Method extends CallMethod<Target>>(target: Target, method: Method, args: CallArgs<Target, Method>): void {
    if (this.outbox.length === 0) setImmediate(() => this.flush());
    this.outbox.push({ id: NO_ANSWER, target, method: method as string, args });
  }

  /**
   * Resolves once the engine's thread reports everything up to `seq` on disk, in the generation that
   * appended it (a write's seq; any other, the current one); refused if that generation stopped short.
   * A write's generation is kept until its wait: a seq a replaced ledger made durable is committed, and
   * the next ledger holds it too, so a later wait at that seq is answered at once; one it did not is
   * refused (a read that happens to wait at exactly such a seq too: a 503 to retry, never a wrong answer).
   */
  durable(seq: number): Promise<void> {
    const generation = this.seqGenerations.get(seq) ?? this.state.generation;
    this.seqGenerations.delete(seq);
    if (generation !== this.state.generation) {
      const ended = this.ended.get(generation);
      if (ended && seq <= ended.durable) return Promise.resolve();
      return Promise.reject(rebuilt(ended?.error ?? this.state.refusal ?? this.state.stopped ?? NOT_SERVED));
    }
    if (seq <= this.durableSeq()) return Promise.resolve();
    if (this.state.stopped) return Promise.reject(rebuilt(this.state.stopped));
    return new Promise((resolve, reject) => {
      insertInSeqOrder(this.durableWaiters, { seq, generation, resolve, reject });
      this.watch();
    });
  }

  /** The newest seq the engine's thread had appended when it last answered or reported. */
  visibleSeq(): number {
    const shared = this.seqs.generation === this.state.generation ? Math.max(this.seqs.appended, this.seqs.durable) : 0;
    return Math.max(this.appended, this.state.appended, shared);
  }

  /** The newest seq the served ledger has made durable, as far as this worker knows. */
  durableSeq(): number {
    return this.seqs.generation === this.state.generation ? Math.max(this.state.durable, this.seqs.durable) : this.state.durable;
  }

  /** Calls `listener` whenever the durable seq moves; returns what stops it. */
  onDurable(listener: () => void): () => void {
    this.durableListeners.add(listener);
    this.watch();
    return () => this.durableListeners.delete(listener);
  }

  /**
   * Watches the shared commit counter while anything waits for a durable seq: once it moves, the waits
   * now durable are answered and the listeners told. The counter is read before the waits are looked
   * at, so a commit in between is never missed: the watch then ends at once.
   */
  private watch(): void {
    if (this.watching) return;
    const commits = this.seqs.commits;
    this.durableMoved();
    if (this.durableWaiters.length === 0 && this.durableListeners.size === 0) return;
    this.watching = true;
    void this.seqs.changed(commits).then(() => {
      this.watching = false;
      this.watch();
    });
  }

  /** Answers the waits of the served ledger that are durable now, and tells the listeners. */
  private durableMoved(): void {
    const durable = this.durableSeq();
    if (durable > this.durableTold) {
      this.durableTold = durable;
      for (const listener of this.durableListeners) listener();
    }
    let answered = 0;
    for (const waiter of this.durableWaiters) {
      if (waiter.seq > durable || waiter.generation !== this.state.generation) break;
      waiter.resolve();
      answered += 1;
    }
    if (answered > 0) this.durableWaiters.splice(0, answered);
  }

  /** Resolves once every call made so far has been answered (a worker that stops waits for it). */
  idle(): Promise<void> {
    if (this.waiting.size === 0 && this.outbox.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Asks for the engine's state now rather than waiting for the next one sent. */
  async refreshState(): Promise<void> {
    this.stateChanged(await this.call('host', 'state', []));
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
    // Transfers and bulks cross as bytes, all of the batch's in one buffer that moves with the message.
    for (const call of calls) {
      if (call.target !== 'core' || call.method !== 'run') continue;
      const command = this.batch.command(call.args[0] as Command);
      if (command === undefined) continue;
      call.command = command;
      call.args = [];
    }
    const bytes = this.batch.take();
    if (bytes === undefined) this.port.postMessage({ kind: 'calls', calls } satisfies ToEngine);
    else this.port.postMessage({ kind: 'calls', calls, bytes } satisfies ToEngine, [bytes]);
  }

  private answered(generation: number, appended: number, answers: Answer[], bytes: ArrayBuffer | undefined): void {
    const records = bytes === undefined ? undefined : Buffer.from(bytes);
    // First: whatever the answers show was appended by then, so a read rendered from them waits for it
    // (an answer of a ledger since replaced says nothing of the one served now).
    if (generation === this.state.generation && appended > this.appended) this.appended = appended;
    for (const answer of answers) {
      const waiter = this.waiting.get(answer.id);
      if (!waiter) continue;
      this.waiting.delete(answer.id);
      waiter.generation?.(generation);
      if (!answer.ok) waiter.reject(rebuilt(answer.error));
      else if (answer.records && records) waiter.resolve(outcomeWith(answer.value as Outcome<unknown>, answer.records, records));
      else waiter.resolve(answer.value);
    }
    if (this.waiting.size === 0 && this.outbox.length === 0) for (const idle of this.idleWaiters.splice(0)) idle();
  }

  private stateChanged(state: EngineState): void {
    const previous = this.state;
    if (state.generation !== previous.generation) {
      // The ledger was replaced: what it reached is all it will ever reach (a refusal's state still
      // tells where the ledger it replaced stood when it was put aside).
      const durable = state.refusal ? Math.max(previous.durable, state.durable) : previous.durable;
      this.ended.set(previous.generation, { durable, error: previous.stopped ?? state.refusal ?? NOT_SERVED });
      if (this.ended.size > ENDED_GENERATIONS_MAX) this.ended.delete(this.ended.keys().next().value as number);
      this.appended = state.appended;
      // The new ledger's seqs start again from where it stands: it may be behind the one replaced.
      this.durableTold = 0;
    }
    this.state = state;
    this.markReady?.();
    this.markReady = undefined;
    if (this.durableWaiters.length > 0) {
      const still: DurableWaiter[] = [];
      for (const waiter of this.durableWaiters) {
        const ended = waiter.generation === state.generation ? undefined : this.ended.get(waiter.generation);
        if (waiter.generation === state.generation && waiter.seq <= state.durable) waiter.resolve();
        else if (ended && waiter.seq <= ended.durable) waiter.resolve();
        else if (waiter.generation !== state.generation) waiter.reject(rebuilt(ended?.error ?? NOT_SERVED));
        else if (state.stopped) waiter.reject(rebuilt(state.stopped));
        else still.push(waiter);
      }
      this.durableWaiters = still;
    }
    this.watch();
    for (const listener of this.stateListeners) listener(state);
  }
}

/** Puts a wait in its place by seq: usually the end, as writes are answered in seq order. */
function insertInSeqOrder(waiters: DurableWaiter[], waiter: DurableWaiter): void {
  let at = waiters.length;
  while (at > 0 && (waiters[at - 1] as DurableWaiter).seq > waiter.seq) at -= 1;
  if (at === waiters.length) waiters.push(waiter);
  else waiters.splice(at, 0, waiter);
}

/** Why a wait ends when its ledger is gone and nothing better is known: the outcome of its write is unknown. */
const NOT_SERVED: CrossingError = {
  code: 'REPL_NOT_LEADER', message: 'this node stopped serving its ledger before the write was committed: its outcome is unknown; retry it with the same reference',
};

/** The error as the worker's routes know it: a refusal of the node is one again; anything else a bare 500. */
export function rebuilt(error: CrossingError): Error {
  if (error.code === 'GEN_INTERNAL_ERROR') return new Error(`the engine's thread failed a call: ${error.message}`);
  return new NodeRefusal(error.code, error.message);
}

/** The ledger as a worker's Koa app sees it. */
export class RemoteLedger implements LedgerCore {
  readonly view: LedgerReads;
  readonly hookAdmin: HookAdmin;
  readonly query?: QueryPort & IndexGaugeSources;
  readonly reconciliation?: ReconciliationPort;
  /** Read on the worker's own thread (index/history-reader.ts), not through the engine's. */
  readonly history?: BalanceHistoryPort;

  constructor(private readonly client: EngineClient, options: { hookTargets: TargetPolicy; index: boolean; history?: BalanceHistoryPort }) {
    // Every query of the view is callable (engine-channel.ts checks the name against LedgerView's prototype).
    this.view = new Proxy({} as LedgerReads, {
      get: (_target, method) => (...args: unknown[]) => client.call('view', method as CallMethod<'view'>, args as CallArgs<'view', CallMethod<'view'>>),
    });
    this.hookAdmin = {
      ...remotePort(client, 'hooks'),
      targetRefusal: (url) => urlRefusal(url, options.hookTargets),
      recentDeliveries: (hookId, limit) => client.call('hooks', 'recentDeliveries', [hookId, limit]),
    };
    if (options.index) {
      this.query = remoteQuery(client);
      this.reconciliation = remotePort(client, 'reconciliation');
      this.history = options.history;
    }
  }

  run<K extends CommandOp>(command: CommandOf<K>): Promise<Outcome<ResultOf<K>>> {
    return this.client.run([command]);
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

  appliedSeqReached(seq: number, timeoutMs: number): Promise<SeqWait> {
    if (this.client.visibleSeq() >= seq) return Promise.resolve({ outcome: 'applied' });
    return this.client.call('core', 'appliedSeqReached', [seq, timeoutMs]);
  }

  listTransactions(offset: number, limit: number): Promise<TransactionRecord[]> {
    return this.client.call('core', 'listTransactions', [offset, limit]);
  }

  transactionLogPosition(transactionId: string): Promise<TransactionLogPosition | undefined> {
    return this.client.call('core', 'transactionLogPosition', [transactionId]);
  }

  balanceHistory(balanceId: string, untilMs: number, toSeq: number, fromSnapshot?: boolean): Promise<FoldAnswer> {
    return this.client.call('core', 'balanceHistory', [balanceId, untilMs, toSeq, fromSnapshot]);
  }

  balanceStatement(balanceId: string, fromMs: number, toMs: number, toSeq: number, offset: number, limit: number): Promise<StatementAnswer> {
    return this.client.call('core', 'balanceStatement', [balanceId, fromMs, toMs, toSeq, offset, limit]);
  }

  takeBalanceSnapshots(): Promise<Result<void, { code: 'SNAPSHOT_UNAVAILABLE'; message: string }>> {
    return this.client.call('core', 'takeBalanceSnapshots', []);
  }

  overloaded(): string | undefined {
    return this.client.state.overloaded;
  }

  /** Asked of the engine's thread only while its state says writes wait for the index (it decides). */
  writeAdmission(bodyBytes: number): Promise<string | undefined> | undefined {
    if (!this.client.state.index?.holdsWrites) return undefined;
    return this.client.call('core', 'writeAdmission', [bodyBytes]);
  }
}

/**
 * A port's callable methods as a worker has them, each sending its call: the methods are the ones
 * engine-channel.ts CALLABLE lists for the target, so this is the one place a call is named.
 */
export function remotePort<Target extends Exclude<CallTarget, 'view'>>(client: EngineClient, target: Target): RemotePort<Target> {
  const port: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
  for (const method of CALLABLE[target] as readonly string[]) {
    port[method] = (...args) => client.call(target, method as CallMethod<Target>, args as CallArgs<Target, CallMethod<Target>>);
  }
  return port as RemotePort<Target>;
}

function remoteQuery(client: EngineClient): QueryPort & IndexGaugeSources {
  return {
    ...remotePort(client, 'query'),
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

export function remoteSnapshots(client: EngineClient): SnapshotAdmin {
  return remotePort(client, 'snapshots');
}

export function remoteBackup(client: EngineClient, dir: string | undefined): BackupPort {
  return { dir, ...remotePort(client, 'backup') };
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
    ...remotePort(client, 'cutover'),
    get fenced() {
      return fenced;
    },
    // Not waited for: the start goes out with the write's command (calls of one channel are carried out in
    // order), and a start the engine's thread refused (fenced meanwhile) is not uncounted; the command
    // itself is refused there unless the fence is still waiting for earlier writes.
    writeStarted: () => {
      if (fenced) return undefined;
      return { counted: client.call('cutover', 'writeStarted', []).then((ticket) => ticket !== undefined) };
    },
    writeEnded: (ticket) => {
      void ticket.counted?.then((counted) => {
        // The engine's thread keeps no ticket of its own: an empty one stands for the counted write.
        if (counted) client.notify('cutover', 'writeEnded', [{}]);
      });
    },
    holdWhileFenced(writer) {
      writers.push(writer);
      if (fenced) writer.hold();
    },
  };
}

export function remoteInspector(client: EngineClient): ReplicationInspector {
  return remotePort(client, 'inspector');
}

/**
 * A replicated node's replication as a worker answers it, from the engine's state: where writes go is
 * `here` only while the state says this node leads and its lead has not run out by the clock (the
 * engine's thread steps down at that moment too, and refuses the write's command once it has).
 */
export function remoteReplication(client: EngineClient): ReplicationPort {
  return {
    status: (): ReplicationStatus => client.state.replication?.status ?? { role: 'standby', term: 0, applied_seq: client.state.appended },
    writeTarget: (): WriteTarget => {
      const replication = client.state.replication;
      if (!replication) return { kind: 'none' };
      const { writeTarget, leadingUntilMs } = replication;
      if (writeTarget.kind === 'here' && !(leadingUntilMs !== undefined && performance.timeOrigin + monotonicClock.now() < leadingUntilMs)) return { kind: 'none' };
      return writeTarget;
    },
  };
}

/** The node's own appenders (API key use stamps) hold while the engine's state says writes are held. */
export function holdWhileWritesHeld(client: EngineClient, writer: { hold(): void; release(): void }): void {
  let held = false;
  const follow = (state: EngineState): void => {
    const now = state.writesHeld ?? false;
    if (now === held) return;
    held = now;
    if (held) writer.hold();
    else writer.release();
  };
  follow(client.state);
  client.onState(follow);
}
