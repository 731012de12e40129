// A running ledger: opens the LMDB log and lookup store in a data directory, loads the newest usable
// snapshot and replays the log after it into a fresh engine, and keeps the parts in step (sealed
// records feed the lookup store, queued work feeds the queue runner, durable commits feed the snapshot
// worker). This is the LedgerCore the HTTP layer serves. A runtime opened as a follower (a cutover's
// follower, a replicated group's standby) appends nothing of its own: it takes records copied from
// elsewhere (`copyRecord`) until `startWork()` makes it a leader. A runtime opened without a replicated
// group refuses a group member's data directory (data-dir-membership.ts) and marks its log as sealed
// alone (wal/leader-seals.ts) before appending anything, so a later rejoin never drops what it acknowledged.

import fs from 'node:fs';
import { assert } from '../engine/assert.js';
import type { CommandOf, CommandOp } from '../engine/commands.js';
import { LedgerEngine, type DryRunAnswer, type DryRunCommand, type EngineLimits, type Outcome, type ResultOf } from '../engine/ledger-engine.js';
import type { DecisionSettings } from '../engine/decision-scope.js';
import type { LedgerView } from '../engine/ledger-view.js';
import { accept, refuse, type Result } from '../engine/result.js';
import type { Clock, IdSource, TransactionStore } from '../engine/ports.js';
import type { TransactionRecord } from '../engine/records.js';
import type { LedgerCore } from '../http/ports/ledger-core.js';
import { BalanceFolds } from './balance-folds.js';
import { SnapshotBalances } from './snapshot-balances.js';
import { lockDataDir } from './data-dir-lock.js';
import { refuseGroupMember } from './data-dir-membership.js';
import { SecondaryIndex, type SecondaryIndexOptions } from '../index/secondary-index.js';
import { HISTORY_WORKER, INDEX_PROJECTOR_WORKER } from './index-workers.js';
import { HistoryThread } from '../index/history-thread.js';
import type { HistoryFollowerLimits } from '../index/history-follower.js';
import { BalanceHistoryReader } from '../index/history-reader.js';
import { HistoryProgress } from '../index/history-progress.js';
import { historyDirIn } from '../index/history-store.js';
import { DurableRecords } from '../wal/durable-records.js';
import { LmdbLog, type CommitStats, type LmdbLogOptions } from '../wal/lmdb-log.js';
import { CorruptRecordError, decodeLogRecord, type DecodedLogRecord } from '../wal/log-record-codec.js';
import { SeqWaiters } from './seq-waiters.js';
import { stateHash } from '../snapshots/state-hash.js';
import { LmdbTransactionStore } from '../lookups/lmdb-transaction-store.js';
import { snapshotDirectoryIn } from '../snapshots/snapshot-directory.js';
import { useNewestSnapshot, type LoadedSnapshot } from '../snapshots/snapshot-loader.js';
import {
  SnapshotError,
  SnapshotService,
  type SnapshotInfo,
  type SnapshotLogger,
  type SnapshotSchedule,
} from './snapshot-service.js';
import { restoreVerified } from '../snapshots/state-restore.js';
import { HookDispatcher, type HookDeliveryLimits, type HookDispatcherLogger } from '../hooks/hook-dispatcher.js';
import { HookOutboxStore, type OutboxCursor } from '../hooks/outbox-store.js';
import { urlRefusal, type TargetPolicy } from '../hooks/hook-targets.js';
import { HookSecretSealer } from '../hooks/signing-secrets.js';
import { DeliveryHistory } from '../hooks/delivery-history.js';
import type { NotificationDeriver } from '../hooks/notification-draft.js';
import type { NotificationTarget } from '../hooks/notifications.js';
import type { ChainRecordPosition, FoldAnswer, HookAdmin, SeqWait, StatementAnswer, TransactionLogPosition } from '../http/ports/ledger-core.js';
import { QueueRunner } from './queue-runner.js';
import { systemClock } from './system-clock.js';
import { TimerRunner } from './timer-runner.js';
import { UuidV7Ids } from './uuid-v7-ids.js';
import { DEFAULT_MATCHER_LIMITS, type MatcherLimits } from '../reconciliation/matcher.js';
import { ReconciliationRunner, type RunnerLimits } from '../reconciliation/reconciliation-runner.js';
import type { ReconciliationPort } from '../http/ports/reconciliation-port.js';
import { indexRunReads } from './reconciliation-reads.js';
import { reconciliationService } from './reconciliation-service.js';
import { SystemErrorReporter } from './system-errors.js';
import { workerHeapsOwnLimits } from '../threads/node-flags.js';

export interface RuntimeOptions {
  dataDir: string;
  clock?: Clock;
  ids?: IdSource;
  limits?: Partial<EngineLimits>;
  /** How transactions are decided (engine/decision-scope.ts DecisionSettings): Blnk's queued checks. */
  settings?: Partial<DecisionSettings>;
  /** Appended-but-not-durable events beyond which writes are refused (503). */
  unflushedEventsMax?: number;
  /** Transaction records waiting for the lookup store beyond which writes are refused (503). */
  lookupBacklogMax?: number;
  /** The log could not take a record (a full or failing disk): the process must stop and replay. */
  onFatal?: (error: Error) => void;
  /**
   * The transaction lookups (lookups/lmdb-transaction-store.ts) could not commit a batch: the process
   * must stop and catch them up from the log at its next start. Without it, onFatal is told.
   */
  onLookupsFailed?: (error: Error) => void;
  /** Periodic snapshots by a worker thread. Without it none are written (existing ones still load). */
  snapshots?: SnapshotSchedule;
  /** Which addresses hook deliveries may reach; private networks are refused unless allowed. */
  hookTargets?: TargetPolicy;
  hookDelivery?: Partial<HookDeliveryLimits>;
  /** The server's notification webhook (Blnk's events: hooks/notifications.ts), if one is configured. */
  notifications?: NotificationTarget;
  /** Kinds of notification derived from the log; the server's own list unless a test says otherwise. */
  notificationDerivers?: readonly NotificationDeriver[];
  /** Where start-up, snapshot and hook messages go. */
  logger?: SnapshotLogger & HookDispatcherLogger;
  /** False runs without the query index (filter, search and balance history are then absent). */
  index?: boolean;
  indexOptions?: Partial<Omit<SecondaryIndexOptions, 'dataDir' | 'walDir' | 'source' | 'projectorWorker'>>;
  /** Reports projection failures; the projector retries on its own. */
  onIndexError?: (error: Error) => void;
  /**
   * Where the balance history's readers learn its progress (index/history-progress.ts): the process's
   * HTTP workers are handed the same memory, and a replicated node keeps it across the ledgers it serves.
   * Made here when not given.
   */
  historyProgress?: SharedArrayBuffer;
  /** Limits of the balance history's follower (index/history-follower.ts); tests slow it down with them. */
  historyLimits?: Partial<HistoryFollowerLimits>;
  /**
   * Opens the ledger as a follower of another one's log (cutover/log-follower.ts): it appends no events of
   * its own, so the queue runner, timers, hook delivery and snapshots wait for `startWork()`.
   */
  follower?: boolean;
  /**
   * A node of a replicated group (server/replicated-serve.ts), its log aligned with the group's in
   * `beforeOpen`. Without it the data directory must not belong to a group (a GroupMemberError says
   * so), and nothing this ledger appends or copies counts as sealed by a group's leader.
   */
  replicated?: boolean;
  /** Bounds of reconciliation runs (reconciliation/reconciliation-runner.ts). */
  reconciliationLimits?: Partial<RunnerLimits>;
  /** Bounds of a run's matching (reconciliation/matcher.ts): tests lower them to reach them. */
  matcherLimits?: Partial<MatcherLimits>;
  /**
   * Runs once the data directory is locked and before anything in it is opened: a rejoining node drops
   * the records its group never committed here (replication/replication-node.ts).
   */
  beforeOpen?: () => Promise<void>;
  /** The log's pipeline bounds, named as the log names them (wal/lmdb-log.ts: records_in_flight_max, records_replicating_max). */
  logLimits?: Pick<LmdbLogOptions, 'records_in_flight_max' | 'records_replicating_max'>;
  /** Test hooks only: a full disk under the log (wal/injected-disk-full.ts). */
  logWriteFault?: LmdbLogOptions['writeFault'];
  /** Called with hook delivery's cursor each time it is saved (a replicated leader publishes it). */
  onHookProgress?: (cursor: OutboxCursor) => void;
  /** The hook sealing key from the configuration (32 bytes), written to the data directory if missing. */
  hookSealKey?: Buffer;
}

/** Why a snapshot cannot be taken now; with a wait after which asking again may succeed. */
export interface SnapshotRefusal {
  code: 'SNAPSHOT_UNAVAILABLE';
  message: string;
  retry_after_seconds?: number;
}

export interface StartupReport {
  /** Seq of the snapshot start-up began from (0: replayed from genesis). */
  snapshotSeq: number;
  /** Snapshots passed over as unusable (each logged with its reason). */
  skippedSnapshots: number;
  /** Time to choose, read and load the snapshot, and to replay the log after it. */
  snapshotMilliseconds: number;
  replayMilliseconds: number;
  replayedEvents: number;
  lookupRecordsCaughtUp: number;
  milliseconds: number;
}

export class LedgerRuntime implements LedgerCore {
  readonly engine: LedgerEngine;
  private readonly queue: QueueRunner;
  private readonly timers: TimerRunner;
  private readonly unflushedEventsMax: number;
  private readonly lookupBacklogMax: number;
  private snapshotService: SnapshotService | undefined;
  /** Delivers transaction hooks from the log (set once the log is open and replayed, and work started). */
  hooks!: HookDispatcher;
  private index: SecondaryIndex | undefined;
  /** Reconciliation runs (they need the index: candidates and results are read from it). */
  private runner: ReconciliationRunner | undefined;
  private _reconciliation: ReconciliationPort | undefined;
  /** Whether the queue runner, timers and hook delivery run (see pauseWork). */
  private working = false;
  /** Balance histories folded from the log (`from_source`, `/at`), bounded and off the request path. */
  private readonly folds: BalanceFolds;
  /** Balances as the state snapshots hold them, where historical balances may start. */
  private readonly snapshotBalances: SnapshotBalances;
  readonly hookAdmin: HookAdmin;
  /** Registered hooks' recent deliveries, followed by the dispatcher (GET /hooks/:id/deliveries). */
  private readonly deliveryHistory: DeliveryHistory;
  /** Gives back the data directory's lock (data-dir-lock.ts), once closed. */
  private unlock: () => Promise<void> = async () => undefined;
  private readonly hookSealer: HookSecretSealer;
  private readonly clock: Clock;
  private readonly ids: IdSource;
  /** Failures of acknowledged work, logged as system.error for the notification webhook (system-errors.ts). */
  private readonly systemErrors: SystemErrorReporter;
  /** Requests waiting for a seq to be applied (X-Folio-Seq). */
  private readonly seqWaiters: SeqWaiters;
  /** False while a follower: it carries out no command of its own until startWork(). */
  private appendsOwn: boolean;
  /** The balance history's follower thread and its readers' view of it, when the index runs. */
  private historyThread: HistoryThread | undefined;
  private historyReader: BalanceHistoryReader | undefined;
  private historyProgress: HistoryProgress | undefined;
  /** A transaction with an effective date was applied since the log last sealed a record. */
  private backdatedUnsealed = false;
  /** The log stopped taking events (a leader whose lease ran out): its end is no longer final. */
  private appendsStopped = false;

  private constructor(
    readonly log: LmdbLog,
    /** The log's durable records, as the index and hook delivery follow them (one feed for both). */
    private readonly durableRecords: DurableRecords,
    readonly store: LmdbTransactionStore,
    private readonly options: RuntimeOptions,
    readonly startup: StartupReport,
  ) {
    const clock = options.clock ?? systemClock;
    this.clock = clock;
    this.ids = options.ids ?? new UuidV7Ids(clock);
    this.engine = new LedgerEngine({
      clock,
      ids: this.ids,
      log,
      transactions: watchingBackdated(store, () => this.backdatedApplied()),
      limits: options.limits,
      settings: options.settings,
    });
    this.queue = new QueueRunner(this.engine);
    this.queue.stop(); // until startWork(): a follower must not carry out queued work of its own
    this.folds = new BalanceFolds(log);
    this.snapshotBalances = new SnapshotBalances(snapshotDirectoryIn(options.dataDir), log);
    const sealer = HookSecretSealer.openIn(options.dataDir);
    const targets = options.hookTargets ?? { allowPrivateNetworks: false };
    // One history for every dispatcher this runtime starts (a fence stops delivery, an unfence starts it again).
    const history = new DeliveryHistory(clock.now());
    this.deliveryHistory = history;
    this.hookAdmin = {
      newSigningSecret: () => sealer.newSecret(),
      targetRefusal: (url) => urlRefusal(url, targets),
      recentDeliveries: (hookId, limit) => ({ since: history.since, deliveries: history.recent(hookId, limit) }),
    };
    this.hookSealer = sealer;
    this.timers = new TimerRunner(this.engine, clock, () => this.queue.kick());
    this.systemErrors = new SystemErrorReporter({
      record: (messages) => this.engine.run({ op: 'system.record_errors', messages }).seq,
      working: () => this.working,
      now: () => clock.now(),
    });
    this.unflushedEventsMax = options.unflushedEventsMax ?? 200_000;
    this.lookupBacklogMax = options.lookupBacklogMax ?? 500_000;
    this.seqWaiters = new SeqWaiters(() => log.appendedSeq);
    this.appendsOwn = !options.follower;
  }

  static async open(options: RuntimeOptions): Promise<LedgerRuntime> {
    // Before any worker thread starts: the index projector's heap limits must be its own (node-flags.ts).
    workerHeapsOwnLimits();
    fs.mkdirSync(options.dataDir, { recursive: true });
    const unlock = await lockDataDir(options.dataDir);
    try {
      if (!options.replicated) refuseGroupMember(options.dataDir);
      if (options.hookSealKey) HookSecretSealer.provisionIn(options.dataDir, options.hookSealKey);
      await options.beforeOpen?.();
      const runtime = await LedgerRuntime.openLocked(options);
      runtime.unlock = unlock;
      return runtime;
    } catch (error) {
      await unlock();
      throw error;
    }
  }

  private static async openLocked(options: RuntimeOptions): Promise<LedgerRuntime> {
    const started = performance.now();
    const log = LmdbLog.open({ dir: LmdbLog.directoryIn(options.dataDir), onFatal: options.onFatal, writeFault: options.logWriteFault, ...options.logLimits });
    if (log.gapDropped) options.logger?.warn({ ...log.gapDropped }, 'dropped records that followed a record the disk never took (never acknowledged; wal/gap-at-end.ts)');
    if (!options.replicated) await log.sealAsSingleNode();
    const durableRecords = new DurableRecords(log);
    const store = LmdbTransactionStore.open(LmdbTransactionStore.directoryIn(options.dataDir), log, options.onLookupsFailed ?? options.onFatal);
    const lookupRecordsCaughtUp = await store.catchUp(log.appendedSeq);
    const report: StartupReport = {
      snapshotSeq: 0, skippedSnapshots: 0, snapshotMilliseconds: 0, replayMilliseconds: 0, replayedEvents: 0, lookupRecordsCaughtUp, milliseconds: 0,
    };
    const snapshotStarted = performance.now();
    // A snapshot that does not restore into the state it records is passed over; the runtime it was
    // restored into is dropped unstarted and the next older one is tried in a fresh one.
    const restored = useNewestSnapshot({
      dir: snapshotDirectoryIn(options.dataDir),
      log,
      logEndSeq: log.appendedSeq,
      onSkip: ({ file, reason }) => {
        report.skippedSnapshots += 1;
        options.logger?.warn({ file, reason }, 'snapshot skipped; trying the next older one');
      },
    }, (loaded) => {
      const candidate = new LedgerRuntime(log, durableRecords, store, options, report);
      candidate.loadSnapshot(loaded);
      return candidate;
    });
    const runtime = restored?.used ?? new LedgerRuntime(log, durableRecords, store, options, report);
    const replayStarted = performance.now();
    report.snapshotMilliseconds = replayStarted - snapshotStarted;
    report.replayedEvents = runtime.replay(report.snapshotSeq);
    report.replayMilliseconds = performance.now() - replayStarted;
    log.onSeal((lastSeq) => {
      store.sealed(lastSeq);
      runtime.backdatedSealed(lastSeq);
      runtime.seqWaiters.advanced();
    });
    log.onReplicationLost(() => {
      runtime.appendsStopped = true;
    });
    log.onCommit(() => {
      store.logDurable(log.durableSeq);
      runtime.queue.kick();
      runtime.snapshotService?.durable(log.durableSeq);
    });
    if (!options.follower) {
      const genesis = runtime.run({ op: 'genesis.ensure' });
      assert(genesis.ok, 'the general ledger could not be created');
      await log.durable(genesis.seq);
    }
    log.onCommit(() => {
      if (runtime.working) runtime.hooks.wake();
    });
    if (options.index !== false) {
      runtime.index = await SecondaryIndex.open({
        projectorWorker: INDEX_PROJECTOR_WORKER,
        onError: options.onIndexError ?? ((error) => process.stderr.write(`folio: index projection failed: ${error.message}\n`)),
        onStuck: (poison) => runtime.systemErrors.report(`the query index is stuck at log seq ${poison.seq}: ${poison.message}`),
        ...options.indexOptions,
        dataDir: options.dataDir,
        walDir: LmdbLog.directoryIn(options.dataDir),
        source: log,
      });
      runtime.durableRecords.subscribe((record) => runtime.index?.logDurable(record));
      runtime.openReconciliation(runtime.index);
      await runtime.openHistory();
    }
    if (!options.follower) await runtime.startWork();
    report.milliseconds = performance.now() - started;
    return runtime;
  }

  /**
   * Starts the balance history's follower (index/history-thread.ts) and the reader the routes use. Until
   * it has passed the log's end as it stands now, any event in the log may have dated a posting back.
   */
  private async openHistory(): Promise<void> {
    const progress = new HistoryProgress(this.options.historyProgress);
    progress.backdatedUpTo(this.log.appendedSeq);
    this.historyProgress = progress;
    const dir = historyDirIn(this.options.dataDir);
    this.historyThread = await HistoryThread.start({
      worker: HISTORY_WORKER,
      walDir: LmdbLog.directoryIn(this.options.dataDir),
      historyDir: dir,
      progress: progress.buffer,
      durableSeq: () => this.log.durableSeq,
      limits: this.options.historyLimits,
      onError: this.options.onIndexError ?? ((error) => process.stderr.write(`folio: balance history failed: ${error.message}\n`)),
    });
    this.historyReader = new BalanceHistoryReader(dir, progress);
    this.durableRecords.subscribe((record) => this.historyThread?.logDurable(record));
  }

  /** A transaction with an effective date is being applied: readers must not assume no back-dated posting. */
  private backdatedApplied(): void {
    this.backdatedUnsealed = true;
    this.historyProgress?.backdatedPending();
  }

  /** The log sealed every event up to `lastSeq`: a back-dated one since the last seal is at or below it. */
  private backdatedSealed(lastSeq: number): void {
    if (!this.backdatedUnsealed) return;
    this.backdatedUnsealed = false;
    this.historyProgress?.backdatedUpTo(lastSeq);
  }

  /** The balance history (balances as of a time, their changes), when the index runs. */
  get history(): BalanceHistoryReader | undefined {
    return this.historyReader;
  }

  /** What an HTTP worker needs to read the balance history itself: its directory and progress memory. */
  get historyShare(): { dir: string; progress: SharedArrayBuffer } | undefined {
    return this.historyProgress ? { dir: historyDirIn(this.options.dataDir), progress: this.historyProgress.buffer } : undefined;
  }

  /**
   * Starts what appends events or acts on them on its own: the queue runner, timers and hook delivery
   * (from the progress saved in data/hooks), and the snapshot worker the first time. A follower calls
   * this once it is promoted; a fenced leader when it is unfenced.
   */
  async startWork(): Promise<void> {
    if (this.working) return;
    this.appendsOwn = true;
    this.startSnapshots();
    await this.issueMissingHookSecrets();
    const outbox = HookOutboxStore.open(HookOutboxStore.directoryIn(this.options.dataDir));
    if (this.options.onHookProgress) outbox.onSave(this.options.onHookProgress);
    this.hooks = await HookDispatcher.start({
      source: this.durableRecords,
      currentHooks: () => this.engine.state.hooks,
      store: outbox,
      sealer: this.hookSealer,
      targets: this.options.hookTargets ?? { allowPrivateNetworks: false },
      limits: this.options.hookDelivery,
      logger: this.options.logger,
      notifications: this.options.notifications,
      notificationDerivers: this.options.notificationDerivers,
      history: this.deliveryHistory,
      onGiveUp: (failure) => this.systemErrors.report(
        `hook ${failure.hook_id}: delivery ${failure.event_id} (${failure.event} of ${failure.transaction_id}) given up after ${failure.attempts} attempts: ${failure.failure}`,
      ),
    });
    this.working = true;
    this.queue.resume();
    this.timers.start();
    this.runner?.resumeInterrupted();
  }

  /**
   * Starts the snapshot worker (when snapshots are configured): a leader's start of work, or a standby's,
   * which keeps snapshots of its own from the records it applies.
   */
  startSnapshots(): void {
    if (!this.options.snapshots || this.snapshotService) return;
    this.snapshotService = SnapshotService.start({
      dataDir: this.options.dataDir,
      schedule: this.options.snapshots,
      durableSeq: this.log.durableSeq,
      logger: this.options.logger,
    });
  }

  /**
   * Takes a record exactly as another log holds it (a follower's leader, a standby's group): checks it
   * (its checksum, that it starts right after this log's end and chains to its last record), applies its
   * events as start-up replay does, and appends the very same bytes, so both logs' chains are identical.
   * Throws CorruptRecordError, with nothing applied, for a record that does not fit.
   */
  copyRecord(record: Buffer): DecodedLogRecord {
    const key = this.log.appendedSeq + 1;
    const logRecord = decodeLogRecord(key, record);
    if (!logRecord.prev_checksum.equals(this.log.lastRecordChecksum)) {
      throw new CorruptRecordError(key, "does not chain to this ledger's last record");
    }
    for (const event of logRecord.events) this.engine.replay(event, { owned: true });
    this.log.appendRecord(logRecord, record);
    return logRecord;
  }

  /**
   * Sets where hook delivery starts when work starts (a node taking the lead resumes where the group's
   * last leader had got to, rather than at the end of the log). Only before startWork.
   */
  async resetHookProgress(cursor: OutboxCursor): Promise<void> {
    assert(!this.working, 'hook progress is set before hook delivery starts');
    const outbox = HookOutboxStore.open(HookOutboxStore.directoryIn(this.options.dataDir));
    try {
      await outbox.reset({ low_seq: Math.min(cursor.low_seq, this.log.durableSeq), hooks: cursor.hooks });
    } finally {
      await outbox.close();
    }
  }

  /**
   * Hooks registered before hooks had signing secrets of their own were signed with the master key,
   * which their receivers therefore had to hold. Before delivery starts (at start-up, on promotion, when
   * unfenced) each such hook is given a secret of its own, logged as one event, durable before the
   * first delivery it signs. Its receiver learns the secret by a rotation (POST /hooks/:id/rotate-secret);
   * until then its deliveries fail the receiver's check rather than being signed with the master key.
   */
  private async issueMissingHookSecrets(): Promise<void> {
    const hookIds = this.engine.view.hooksWithoutSecrets();
    if (hookIds.length === 0) return;
    const sealed = hookIds.map((hookId): [string, string] => [hookId, this.hookSealer.newSecret().sealed]);
    const issued = this.engine.run({ op: 'hook.issue_secrets', sealed_by_hook_id: sealed });
    assert(issued.ok, 'issuing hook secrets was refused');
    await this.log.durable(issued.seq);
    this.options.logger?.warn(
      { hook_ids: hookIds },
      'hooks registered before hooks had secrets of their own were signed with the master key (or unsigned without one); each now has a secret of its own: rotate it (POST /hooks/:id/rotate-secret) to hand it to the receiver, and change the master key, which those receivers held',
    );
  }

  private openReconciliation(index: SecondaryIndex): void {
    const runner = new ReconciliationRunner({
      ledger: this,
      durable: (seq) => this.log.durable(seq),
      visibleSeq: () => this.log.appendedSeq,
      reads: indexRunReads(index),
      ids: this.ids,
      clock: this.clock,
      limits: this.options.reconciliationLimits,
      matcherLimits: { ...DEFAULT_MATCHER_LIMITS, ...this.options.matcherLimits },
      onError: (error, reconciliationId) => this.options.logger?.warn({ reconciliation_id: reconciliationId, err: error.message }, 'reconciliation failed'),
    });
    this.runner = runner;
    this._reconciliation = reconciliationService(runner, index);
  }

  /** Reconciliation runs, when the query index runs. */
  get reconciliation(): ReconciliationPort | undefined {
    return this._reconciliation;
  }

  /**
   * Stops the queue runner and timers, so nothing but requests appends to the log, and stops hook
   * delivery with its progress saved (data/hooks is then closed and can be copied). For a fence.
   */
  async pauseWork(): Promise<void> {
    if (!this.working) return;
    this.systemErrors.flush();
    this.working = false;
    await this.runner?.pause();
    this.queue.stop();
    this.timers.stop();
    await this.hooks.close();
  }

  /**
   * Puts a snapshot's state into the (still empty) engine; the lookups already hold its records. A
   * SnapshotFileError says it did not restore into the state its header records (restoreVerified).
   */
  private loadSnapshot(loaded: LoadedSnapshot): void {
    this.store.setMuted(true);
    try {
      restoreVerified(this.engine.state, loaded.contents);
    } finally {
      this.store.setMuted(false);
    }
    this.startup.snapshotSeq = loaded.contents.header.seq;
    this.options.logger?.info({ file: loaded.file, seq: loaded.contents.header.seq }, 'loaded snapshot');
  }

  /**
   * Replays the log after `afterSeq` into the engine; the lookups already hold these records. Reading
   * starts at the record holding `afterSeq` itself, so the link from a snapshot's record to the next one
   * is checked too.
   */
  private replay(afterSeq: number): number {
    let count = 0;
    this.store.setMuted(true);
    try {
      for (const { seq, event } of this.log.read(Math.max(1, afterSeq))) {
        if (seq <= afterSeq) continue;
        this.engine.replay(event, { owned: true }); // decoded just now by read()
        count += 1;
      }
    } finally {
      this.store.setMuted(false);
    }
    return count;
  }

  get dataDir(): string {
    return this.options.dataDir;
  }

  /** The snapshot worker, when periodic snapshots are on. */
  get snapshots(): SnapshotService | undefined {
    return this.snapshotService;
  }

  /** Writes a snapshot of everything logged so far (once it is durable), or says why it cannot. */
  async snapshotNow(): Promise<Result<SnapshotInfo, SnapshotRefusal>> {
    if (!this.snapshotService) return refuse({ code: 'SNAPSHOT_UNAVAILABLE', message: 'snapshots are not enabled on this server' });
    await this.log.durable(this.log.appendedSeq);
    try {
      return accept(await this.snapshotService.snapshotNow(this.log.durableSeq));
    } catch (error) {
      if (!(error instanceof SnapshotError)) throw error;
      const refusal: SnapshotRefusal = { code: 'SNAPSHOT_UNAVAILABLE', message: error.message };
      if (error.retryAfterSeconds !== undefined) refusal.retry_after_seconds = error.retryAfterSeconds;
      return refuse(refusal);
    }
  }

  /** The query index (data/index.sqlite), fed from the durable log. */
  get query(): SecondaryIndex | undefined {
    return this.index;
  }

  onCommit(listener: (stats: CommitStats) => void): void {
    this.log.onCommit(listener);
  }

  durable(seq: number): Promise<void> {
    return this.log.durable(seq);
  }

  /** Carries out one command (LedgerEngine.run). */
  run<K extends CommandOp>(command: CommandOf<K>): Outcome<ResultOf<K>> {
    assert(this.appendsOwn, 'a follower carries out no command of its own (writes reach the leader)');
    return this.engine.run(command);
  }

  dryRun(commands: DryRunCommand[]): DryRunAnswer {
    return this.engine.dryRun(commands);
  }

  get view(): LedgerView {
    return this.engine.view;
  }

  visibleSeq(): number {
    return this.log.appendedSeq;
  }

  /** The hash of the working state now (snapshots/state-hash.ts): what nodes and cutovers compare. */
  stateHash(): string {
    return stateHash(this.engine.state);
  }

  /**
   * Waits (bounded) for the log to reach `seq`. A log that only this node appends to (a leader, a single
   * node) holds every seq it ever gave out, so a seq past its end never comes and is answered at once;
   * a standby or a follower waits for the records it copies.
   */
  appliedSeqReached(seq: number, timeoutMs: number, signal?: AbortSignal): Promise<SeqWait> {
    const end = this.log.appendedSeq;
    if (seq <= end) return Promise.resolve({ outcome: 'applied' });
    if (this.appendsOwn && !this.appendsStopped) return Promise.resolve({ outcome: 'beyond_log', log_end_seq: end });
    return this.seqWaiters.reached(seq, timeoutMs, signal);
  }

  /**
   * A standby's read of its group's log, begun at `readStartedAt` (performance.now()), found that log
   * ending at `endSeq`: waits begun before it for seqs past that end are answered beyond_log.
   */
  groupLogRead(endSeq: number, readStartedAt: number): void {
    this.seqWaiters.groupLogRead(endSeq, readStartedAt);
  }

  /** Answers every wait for a seq now (timed_out unless reached): the node stops serving this ledger. */
  releaseSeqWaiters(): void {
    this.seqWaiters.release();
  }

  listTransactions(offset: number, limit: number): TransactionRecord[] {
    return this.store.list(offset, limit);
  }

  /**
   * The records that first and last held a transaction whole, read from the lookups' record keys once
   * everything appended now is sealed and durable (a log that stopped appending seals nothing more).
   */
  async transactionLogPosition(transactionId: string): Promise<TransactionLogPosition | undefined> {
    await this.log.durable(this.log.appendedSeq).catch(() => undefined);
    const keys = this.store.recordKeys(transactionId);
    if (!keys) return undefined;
    const created = this.chainRecordPosition(transactionId, keys.created, false);
    if (!created) return undefined;
    const changed = keys.newest !== undefined && keys.newest > keys.created ? this.chainRecordPosition(transactionId, keys.newest, true) : undefined;
    return { created, last_changed: changed };
  }

  /** The record at `recordKey` and its first (or, `last`, its last) event holding the transaction. */
  private chainRecordPosition(transactionId: string, recordKey: number, last: boolean): ChainRecordPosition | undefined {
    const logRecord = this.log.logRecordAt(recordKey);
    if (!logRecord) return undefined;
    let seq: number | undefined;
    logRecord.events.forEach((event, index) => {
      if ((seq === undefined || last) && event.transactions?.some((record) => record.transaction_id === transactionId)) seq = logRecord.first_seq + index;
    });
    if (seq === undefined) return undefined;
    return {
      seq,
      record_first_seq: logRecord.first_seq,
      record_last_seq: logRecord.last_seq,
      record_checksum: logRecord.checksum.toString('hex'),
      prev_checksum: logRecord.prev_checksum.toString('hex'),
    };
  }

  async balanceHistory(balanceId: string, untilMs: number, toSeq: number, fromSnapshot = false): Promise<FoldAnswer> {
    const start = fromSnapshot ? await this.snapshotBalances.startFor(balanceId, untilMs, toSeq) : undefined;
    return this.folds.at(balanceId, untilMs, toSeq, start);
  }

  balanceStatement(balanceId: string, fromMs: number, toMs: number, toSeq: number, offset: number, limit: number): Promise<StatementAnswer> {
    return this.folds.statement(balanceId, fromMs, toMs, toSeq, offset, limit);
  }

  takeBalanceSnapshots(): Result<void, SnapshotRefusal> {
    if (!this.snapshotService) return refuse({ code: 'SNAPSHOT_UNAVAILABLE', message: 'snapshots are not enabled on this server' });
    this.snapshotNow().then((taken) => {
      if (!taken.ok) this.options.logger?.warn({ err: taken.rejection.message }, 'balance snapshot failed');
    }, (error: unknown) => this.options.logger?.warn({ err: error }, 'balance snapshot failed'));
    return accept(undefined);
  }

  writeAdmission(bodyBytes: number): Promise<string | undefined> | undefined {
    return this.index?.writeAdmission(bodyBytes);
  }

  overloaded(): string | undefined {
    if (this.log.unflushedEvents > this.unflushedEventsMax) return 'the write-ahead log is behind; try again shortly';
    if (this.store.backlog > this.lookupBacklogMax) return 'the lookup store is behind; try again shortly';
    return undefined;
  }

  /** Stops queue work, makes everything appended durable and closes the stores. */
  async close(): Promise<void> {
    this.seqWaiters.release();
    await this.pauseWork();
    await this.snapshotService?.stop();
    await this.index?.close();
    await this.historyThread?.stop();
    await this.historyReader?.close();
    await this.log.close();
    await this.store.close();
    await this.unlock();
  }
}

/**
 * The transaction store as the engine sees it, noting every record applied with an effective date: a
 * posting dated before its event comes only from such a record (engine/carry-out.ts), and the balance
 * history's readers must know when one may be on its way (index/history-progress.ts).
 */
function watchingBackdated(store: TransactionStore, applied: () => void): TransactionStore {
  return {
    get: (transactionId) => store.get(transactionId),
    has: (transactionId) => store.has(transactionId),
    idForReference: (reference) => store.idForReference(reference),
    put(record, patched) {
      if (record.effective_date !== undefined) applied();
      store.put(record, patched);
    },
    patchMetaData: (transactionId, patch) => store.patchMetaData(transactionId, patch),
  };
}
