// A running ledger: opens the LMDB log and lookup store in a data directory, replays the log into a
// fresh engine, and keeps the parts in step (sealed records feed the lookup store, queued work feeds
// the queue runner). This is the LedgerCore the HTTP layer serves.

import fs from 'node:fs';
import { foldBalance } from '../engine/balance-fold.js';
import { LedgerEngine, type EngineLimits } from '../engine/ledger-engine.js';
import type { Clock, IdSource } from '../engine/ports.js';
import type { BalanceRecord, TransactionRecord } from '../engine/records.js';
import type { LedgerCore } from '../http/ledger-core.js';
import { SecondaryIndex, type SecondaryIndexOptions } from '../index/secondary-index.js';
import { LmdbLog, type CommitStats } from '../wal/lmdb-log.js';
import { LmdbTransactionStore } from '../wal/lookup-store.js';
import { QueueRunner } from './queue-runner.js';
import { systemClock } from './system-clock.js';
import { TimerRunner } from './timer-runner.js';
import { UuidV7Ids } from './uuid-v7-ids.js';

export interface RuntimeOptions {
  dataDir: string;
  clock?: Clock;
  ids?: IdSource;
  limits?: Partial<EngineLimits>;
  /** Appended-but-not-durable events beyond which writes are refused (503). */
  unflushedEventsMax?: number;
  /** Transaction records waiting for the lookup store beyond which writes are refused (503). */
  lookupBacklogMax?: number;
  onFatal?: (error: Error) => void;
  /** False runs without the query index (filter, search and balance history are then absent). */
  index?: boolean;
  indexOptions?: Partial<Omit<SecondaryIndexOptions, 'dataDir' | 'walDir' | 'source'>>;
  /** Reports projection failures; the projector retries on its own. */
  onIndexError?: (error: Error) => void;
}

export interface StartupReport {
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
  private index: SecondaryIndex | undefined;

  private constructor(
    readonly log: LmdbLog,
    readonly store: LmdbTransactionStore,
    options: RuntimeOptions,
    readonly startup: StartupReport,
  ) {
    const clock = options.clock ?? systemClock;
    this.engine = new LedgerEngine({
      clock,
      ids: options.ids ?? new UuidV7Ids(clock),
      log,
      transactions: store,
      limits: options.limits,
    });
    this.queue = new QueueRunner(this.engine);
    this.timers = new TimerRunner(this.engine, clock, () => this.queue.kick());
    this.unflushedEventsMax = options.unflushedEventsMax ?? 200_000;
    this.lookupBacklogMax = options.lookupBacklogMax ?? 500_000;
  }

  static async open(options: RuntimeOptions): Promise<LedgerRuntime> {
    const started = performance.now();
    fs.mkdirSync(options.dataDir, { recursive: true });
    const log = LmdbLog.open({ dir: LmdbLog.directoryIn(options.dataDir), onFatal: options.onFatal });
    const store = LmdbTransactionStore.open(LmdbTransactionStore.directoryIn(options.dataDir));
    const lookupRecordsCaughtUp = await store.catchUp((fromSeq) => log.read(fromSeq), log.appendedSeq);
    const report: StartupReport = { replayedEvents: 0, lookupRecordsCaughtUp, milliseconds: 0 };
    const runtime = new LedgerRuntime(log, store, options, report);
    report.replayedEvents = runtime.replay(1);
    log.onSeal((lastSeq) => store.sealed(lastSeq));
    log.onCommit(() => {
      store.logDurable(log.durableSeq);
      runtime.queue.kick();
    });
    await log.durable(runtime.engine.ensureGenesis());
    if (options.index !== false) {
      runtime.index = await SecondaryIndex.open({
        onError: options.onIndexError ?? ((error) => process.stderr.write(`folio: index projection failed: ${error.message}\n`)),
        ...options.indexOptions,
        dataDir: options.dataDir,
        walDir: LmdbLog.directoryIn(options.dataDir),
        source: log,
      });
      log.onCommit(() => runtime.index?.logDurable());
    }
    runtime.queue.kick();
    runtime.timers.start();
    report.milliseconds = performance.now() - started;
    return runtime;
  }

  /** Replays the log from `fromSeq` into the engine; the lookups already hold these records. */
  private replay(fromSeq: number): number {
    let count = 0;
    this.store.setMuted(true);
    try {
      for (const { event } of this.log.read(fromSeq)) {
        this.engine.replay(event);
        count += 1;
      }
    } finally {
      this.store.setMuted(false);
    }
    return count;
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

  visibleSeq(): number {
    return this.log.appendedSeq;
  }

  listTransactions(offset: number, limit: number): TransactionRecord[] {
    return this.store.list(offset, limit);
  }

  balanceFromSource(balanceId: string): BalanceRecord | undefined {
    const events = (function* (log: LmdbLog) {
      for (const { event } of log.read(1)) yield event;
    })(this.log);
    return foldBalance(balanceId, events);
  }

  overloaded(): string | undefined {
    if (this.log.unflushedEvents > this.unflushedEventsMax) return 'the write-ahead log is behind; try again shortly';
    if (this.store.backlog > this.lookupBacklogMax) return 'the lookup store is behind; try again shortly';
    return undefined;
  }

  /** Stops queue work, makes everything appended durable and closes the stores. */
  async close(): Promise<void> {
    this.queue.stop();
    this.timers.stop();
    await this.index?.close();
    await this.log.close();
    await this.store.close();
  }
}
