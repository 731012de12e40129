// Tails the durable log into the index. Each batch is one SQLite transaction that writes the rows and
// moves the checkpoint together, so after a crash the index is exactly as of some seq and resumes from
// there. A batch is worked in slices: read and fold a bounded number of events on the event loop, hand
// their rows to SQLite (one JSON-array upsert per table), await it, take the next slice. The event loop
// is therefore never held for more than one slice, while SQLite still commits large batches.
//
// Batching adapts to load the way the log's group commit does: when the log moves on while a batch is
// being written, the next batch takes everything that arrived meanwhile (up to batch_rows_max).
//
// Balances change with nearly every event: within a batch each is written once, at the end. (Their
// history, the state after every change, is not here: index/history-store.ts keeps it beside the log.)
//
// The projector survives any event the engine accepts. An event with more rows than a slice is cut
// into parts (event-fold.ts splitEvent) that are folded and written a slice at a time, and a batch never
// ends between the parts of one event, so the checkpoint only ever names whole events. An event that
// keeps failing is a poison event: after POISON_ATTEMPTS failures at the same seq the projector reports
// it (onPoison: a log line, a metric, GET /search/reindex) and keeps retrying with a backoff growing to
// a minute, instead of starting over or retrying every second forever. Its checkpoint stays before the
// poison event: skipping it would leave an index that disagrees with the log.

import type { LoggedEvent } from '../engine/events.js';
import type { BalanceRecord } from '../engine/records.js';
import type { LedgerEvent } from '../engine/events.js';
import {
  balancesNeeded,
  changedRowCount,
  emptyChanges,
  emptyPatchedRecords,
  eventRows,
  foldEvent,
  newEventProgress,
  patchedRecordsNeeded,
  ProjectionError,
  splitEvent,
  type EventProgress,
  type PatchedRecords,
  type RowChanges,
} from './event-fold.js';
import type { IndexCheckpoint, IndexStore } from './index-store.js';
import {
  externalRecordRows,
  INSERT_TRANSACTION_TEXTS_SQL,
  transactionTextRows,
  INSERT_EXTERNAL_RECORDS_SQL,
  INSERT_MATCHES_SQL,
  INSERT_UNMATCHED_SQL,
  matchRows,
  unmatchedRows,
} from './reconciliation-tables.js';
import {
  deleteSql,
  LAYOUTS,
  selectColumns,
  upsertSql,
  type Collection,
} from './index-schema.js';
import {
  balanceFromRow,
  balanceRow,
  reconciliationRow,
  identityFromRow,
  identityRow,
  ledgerFromRow,
  ledgerRow,
  transactionFromRow,
  transactionRow,
  type SelectedRow,
} from './record-rows.js';
import type { PreparedStatement, SqlValue } from './sqlite-connection.js';
import { backoffMs } from '../engine/backoff.js';

/** What the projector reads: the log up to what is durable. LmdbLog satisfies it. */
export interface LogSource {
  readonly durableSeq: number;
  read(fromSeq: number, toSeq?: number): Iterable<LoggedEvent>;
}

export interface ProjectorLimits {
  /** Events read and folded per slice (one stretch of work on the event loop). */
  slice_events_max: number;
  /** Changed rows per slice. */
  slice_rows_max: number;
  /** Rows per SQLite transaction. */
  batch_rows_max: number;
  /** Balances whose current state is kept in memory between batches. */
  balance_cache_max: number;
  /** Wait after the first failure of a batch; it doubles with each failure in a row, up to retry_max_ms. */
  retry_first_ms: number;
  retry_max_ms: number;
  /** One event per batch: set after a failure the projector cannot place, to find the event at fault. */
  isolate: boolean;
  /**
   * Test only (0 everywhere else): a pause before each batch, so tests can hold the index behind the
   * log on purpose and check what waits for it (test/index-keeps-pace.int.test.ts).
   */
  batch_pause_ms: number;
}

export const DEFAULT_PROJECTOR_LIMITS: ProjectorLimits = {
  slice_events_max: 500,
  slice_rows_max: 1_000,
  batch_rows_max: 5_000,
  balance_cache_max: 50_000,
  retry_first_ms: 1_000,
  retry_max_ms: 60_000,
  isolate: false,
  batch_pause_ms: 0,
};

/** Failures in a row at one log seq after which its event is reported as a poison event. */
export const POISON_ATTEMPTS = 3;

/** An event the projector keeps failing on. */
export interface PoisonReport {
  seq: number;
  message: string;
  attempts: number;
  /** Epoch ms of the first failure at this seq. */
  since: number;
}

/** An event, or one part of an event cut to slice size; the parts of one event share `progress`. */
interface SliceItem {
  seq: number;
  event: LedgerEvent;
  progress: EventProgress;
  /** The last (or only) part of its event: the batch may end after it. */
  whole: boolean;
}

/** A batch failure, with the seq of the event being folded when one is known. */
class BatchFailure extends Error {
  constructor(readonly error: Error, readonly seq: number | undefined) {
    super(error.message);
  }
}

/**
 * A file being rebuilt is thrown away whole if the build fails, so its batches only pace the progress
 * reports: larger ones spend less time waiting on commits (about a tenth off filling the tables).
 */
export const REBUILD_PROJECTOR_LIMITS: Partial<ProjectorLimits> = { batch_rows_max: 200_000 };

export interface BatchReport {
  checkpoint: number;
  /** Rows of the collections (ledgers, balances, transactions, identities) written. */
  rows: number;
  events: number;
  milliseconds: number;
}

const PREFETCH_IDS_MAX = 5_000;

export class Projector {
  private checkpointSeq: number;
  private checkpointAt: number;
  /** Current state of balances, as the rows hold them after the last commit (plus this batch's changes). */
  private readonly balances = new Map<string, BalanceRecord>();
  private readonly statements = new Map<string, PreparedStatement>();
  private loop: Promise<void> | undefined;
  private stopped = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private _failure: Error | undefined;
  private readonly limits: ProjectorLimits;
  private readonly batchListeners: Array<(report: BatchReport) => void> = [];
  /** Parts of an event cut to slice size that the next slices take first. */
  private pendingParts: SliceItem[] = [];
  /** Failures in a row, and where: the seq of the event at fault once known. */
  private failures: { count: number; seq: number | undefined; since: number } | undefined;
  /** One event per batch until the checkpoint passes this seq (set when a failure has no known seq). */
  private isolateUntil = 0;
  /** The seq a ProjectionError last made the index start over for: a second time there is poison. */
  private startedOverAt: number | undefined;
  private _poison: PoisonReport | undefined;

  private constructor(
    private readonly store: IndexStore,
    private readonly source: LogSource,
    start: IndexCheckpoint,
    limits: Partial<ProjectorLimits>,
    private readonly onError: (error: Error) => void,
    private readonly onPoison: (poison: PoisonReport | undefined) => void,
  ) {
    this.checkpointSeq = start.seq;
    this.checkpointAt = start.at;
    this.limits = { ...DEFAULT_PROJECTOR_LIMITS, ...limits };
    if (this.limits.isolate) this.isolateUntil = Number.MAX_SAFE_INTEGER;
  }

  /**
   * A projector resuming from the store's checkpoint. A checkpoint the log does not have (past its end,
   * or on an event with another time) belongs to another history: the store is emptied first.
   */
  static async create(
    store: IndexStore,
    source: LogSource,
    options: {
      limits?: Partial<ProjectorLimits>;
      onError?: (error: Error) => void;
      /** A poison event found (or, undefined, gone: the projector got past it). */
      onPoison?: (poison: PoisonReport | undefined) => void;
    } = {},
  ): Promise<Projector> {
    let start = await store.checkpoint();
    if (start.seq > 0 && !sameHistory(source, start)) {
      await store.reset();
      start = { seq: 0, at: 0 };
    }
    return new Projector(store, source, start, options.limits ?? {}, options.onError ?? (() => undefined), options.onPoison ?? (() => undefined));
  }

  get checkpoint(): number {
    return this.checkpointSeq;
  }

  get failure(): Error | undefined {
    return this._failure;
  }

  /** The event the projector keeps failing on, if any. */
  get poison(): PoisonReport | undefined {
    return this._poison;
  }

  onBatch(listener: (report: BatchReport) => void): void {
    this.batchListeners.push(listener);
  }

  /** The log moved on: project what is durable, unless a batch loop is already running. */
  wake(): void {
    if (this.stopped || this.loop || this.retryTimer) return;
    if (this.checkpointSeq >= this.source.durableSeq) return;
    this.loop = this.run().finally(() => {
      this.loop = undefined;
    });
  }

  /** Resolves once the projector has caught up with the durable log as it stands when called. */
  async catchUp(): Promise<void> {
    const target = this.source.durableSeq;
    while (this.checkpointSeq < target) {
      if (this.stopped) throw new Error('the projector was stopped');
      if (this._failure) throw this._failure;
      this.wake();
      if (this.loop) await this.loop;
      else if (this.retryTimer) await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Stops taking new batches and waits for the running one; statements are released. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    if (this.loop) await this.loop;
    for (const statement of this.statements.values()) await statement.finalize();
    this.statements.clear();
  }

  private async run(): Promise<void> {
    while (!this.stopped && this.checkpointSeq < this.source.durableSeq) {
      if (this.limits.batch_pause_ms > 0) await new Promise((resolve) => setTimeout(resolve, this.limits.batch_pause_ms));
      if (this.stopped) return;
      const target = this.source.durableSeq;
      const batchTarget = this.nextBatchTarget(target);
      // A batch of one event names that event when it fails.
      const isolated = batchTarget === this.checkpointSeq + 1;
      try {
        await this.batch(batchTarget);
        this.recovered();
      } catch (error) {
        const failure = error instanceof BatchFailure ? error : new BatchFailure(error as Error, isolated ? this.checkpointSeq + 1 : undefined);
        await this.failed(failure, target);
        return;
      }
    }
  }

  /**
   * Where the next batch ends. After a failure at a known event, the events before it are committed on
   * their own and the failing one is retried alone, so its failures are counted and the good rows kept;
   * after a failure at an unknown event, batches take one event each until past the failed batch.
   */
  private nextBatchTarget(target: number): number {
    const failingSeq = this.failures?.seq;
    if (failingSeq !== undefined && this.checkpointSeq < failingSeq - 1) return Math.min(target, failingSeq - 1);
    if (failingSeq !== undefined || this.checkpointSeq < this.isolateUntil) return this.checkpointSeq + 1;
    return target;
  }

  private recovered(): void {
    this._failure = undefined;
    if (this.failures && (this.failures.seq === undefined || this.checkpointSeq >= this.failures.seq)) this.failures = undefined;
    if (this._poison && this.checkpointSeq >= this._poison.seq) {
      this._poison = undefined;
      this.onPoison(undefined);
    }
  }

  /**
   * A batch failed: note where, decide whether the rows are to be thrown away (a ProjectionError: the
   * rows disagree with the log, so the index starts over, once per failing seq), report a poison event
   * after POISON_ATTEMPTS failures at one seq, and try again after a backoff.
   */
  private async failed(failure: BatchFailure, target: number): Promise<void> {
    const { error, seq } = failure;
    this._failure = error;
    this.onError(error);
    // Without the event at fault known, the batches that follow take one event each until past the
    // failed batch's end: the next failure then names its event.
    if (seq === undefined) this.isolateUntil = Math.max(this.isolateUntil, target);
    const same = this.failures !== undefined && this.failures.seq === seq;
    this.failures = same && this.failures ? { ...this.failures, count: this.failures.count + 1 } : { count: 1, seq, since: Date.now() };
    if (error instanceof ProjectionError && seq !== undefined && this.startedOverAt !== seq) {
      this.startedOverAt = seq;
      await this.startOver().catch((resetError: Error) => this.onError(resetError));
      this.failures = undefined;
    } else if (seq !== undefined && this.failures.count >= POISON_ATTEMPTS) {
      this._poison = { seq, message: error.message, attempts: this.failures.count, since: this.failures.since };
      this.onPoison(this._poison);
    }
    // A busy disk or a transient SQLite error should not stop the index for good: try again, waiting
    // longer the more often it failed in a row.
    const count = this.failures?.count ?? 1;
    const delay = backoffMs(this.limits.retry_first_ms, this.limits.retry_max_ms, count);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.wake();
    }, delay);
    this.retryTimer.unref();
  }


  private async startOver(): Promise<void> {
    await this.store.reset();
    this.forgetBalances();
    this.pendingParts = [];
    this.checkpointSeq = 0;
    this.checkpointAt = 0;
  }

  private async batch(targetSeq: number): Promise<void> {
    const started = performance.now();
    const writer = this.store.writer;
    const events = this.source.read(this.checkpointSeq + 1, targetSeq)[Symbol.iterator]();
    let lastSeq = this.checkpointSeq;
    let lastAt = this.checkpointAt;
    let rows = 0;
    let eventCount = 0;
    // Balances change with nearly every event; within a batch each is written once, at its end.
    const balances = new Map<string, BalanceRecord>();
    await writer.run('BEGIN');
    try {
      // One slice's rows are written while the next slice is read and folded: SQLite works through a
      // statement queue in order, so at most two slices are in flight and the two threads overlap.
      // (Queues of 4 or 8 slices measured the same: both sides are busy.)
      let writing: Promise<number> | undefined;
      // The parts of a cut event all go into this batch, whatever its size: the checkpoint names whole events.
      while (rows + balances.size < this.limits.batch_rows_max || this.pendingParts.length > 0) {
        const slice = this.takeSlice(events);
        if (slice.length === 0) break;
        await this.loadBalances(slice);
        const patched = await this.loadPatched(slice);
        const changes = emptyChanges();
        for (const item of slice) {
          try {
            foldEvent(item.event, this.balances, changes, item.progress, patched);
          } catch (error) {
            throw new BatchFailure(error as Error, item.seq);
          }
        }
        for (const [balanceId, balance] of changes.balances) balances.set(balanceId, balance);
        changes.balances.clear();
        const written = this.write(changes);
        // Awaited on the next turn; a failure meanwhile must not count as unhandled (that ends the thread).
        written.catch(() => undefined);
        if (writing) rows += await writing;
        writing = written;
        for (const item of slice) {
          if (!item.whole) continue;
          eventCount += 1;
          lastSeq = item.seq;
          lastAt = item.event.at;
        }
      }
      if (writing) rows += await writing;
      rows += await this.writeBalances(balances);
      await writer.run(`UPDATE index_state SET value = CASE key WHEN 'checkpoint' THEN ? ELSE ? END WHERE key IN ('checkpoint', 'checkpoint_at')`, [lastSeq, lastAt]);
      await writer.run('COMMIT');
    } catch (error) {
      await writer.run('ROLLBACK').catch(() => undefined);
      // The cached balances may hold changes that were just rolled back.
      this.forgetBalances();
      this.pendingParts = [];
      throw error;
    } finally {
      // Ends the log read (and its LMDB read snapshot) even when the batch stopped early.
      events.return?.();
    }
    this.checkpointSeq = lastSeq;
    this.checkpointAt = lastAt;
    this.trimBalanceCache();
    const report = { checkpoint: lastSeq, rows, events: eventCount, milliseconds: performance.now() - started };
    for (const listener of this.batchListeners) listener(report);
  }

  /**
   * The next slice: parts of a cut event first (one slice per part), else events up to the slice's
   * bounds. An event larger than a slice is cut into parts and its first part taken alone.
   */
  private takeSlice(events: Iterator<LoggedEvent>): SliceItem[] {
    const part = this.pendingParts.shift();
    if (part) return [part];
    const slice: SliceItem[] = [];
    let rows = 0;
    while (slice.length < this.limits.slice_events_max && rows < this.limits.slice_rows_max) {
      const next = events.next();
      if (next.done) break;
      const { seq, event } = next.value;
      const size = eventRows(event);
      if (size <= this.limits.slice_rows_max) {
        slice.push({ seq, event, progress: newEventProgress(), whole: true });
        rows += size;
        continue;
      }
      const progress = newEventProgress();
      const parts = splitEvent(event, this.limits.slice_rows_max)
        .map((piece, index, all) => ({ seq, event: piece, progress, whole: index === all.length - 1 }));
      if (slice.length > 0) this.pendingParts = parts;
      else {
        slice.push(parts[0] as SliceItem);
        this.pendingParts = parts.slice(1);
      }
      break;
    }
    return slice;
  }

  /** Reads from the rows every balance the slice needs that is not already in memory. */
  private async loadBalances(slice: SliceItem[]): Promise<void> {
    const needed = new Set<string>();
    for (const { event } of slice) balancesNeeded(event, needed);
    const missing = [...needed].filter((balanceId) => !this.balances.has(balanceId));
    const layout = LAYOUTS.balances;
    for (let start = 0; start < missing.length; start += PREFETCH_IDS_MAX) {
      const ids = missing.slice(start, start + PREFETCH_IDS_MAX);
      const rows = await this.store.writer.all<SelectedRow>(
        `SELECT ${selectColumns(layout)} FROM balances t WHERE t.balance_id IN (SELECT value FROM json_each(?))`,
        [JSON.stringify(ids)],
      );
      for (const row of rows) {
        const balance = balanceFromRow(row);
        this.balances.set(balance.balance_id, balance);
      }
    }
  }

  /**
   * The rows of the ledgers, identities and transactions the slice's metadata patches name, as the index
   * holds them (this batch's earlier writes included: they are on the same connection). Patches are
   * rare, so most slices ask for nothing.
   */
  private async loadPatched(slice: SliceItem[]): Promise<PatchedRecords> {
    const patched = emptyPatchedRecords();
    const needed = { ledgers: new Set<string>(), identities: new Set<string>(), transactions: new Set<string>() };
    for (const { event } of slice) patchedRecordsNeeded(event, needed);
    const load = async <T>(collection: 'ledgers' | 'identities' | 'transactions', ids: Set<string>, into: Map<string, T>, fromRow: (row: SelectedRow) => T, idOf: (record: T) => string): Promise<void> => {
      if (ids.size === 0) return;
      const layout = LAYOUTS[collection];
      const rows = await this.store.writer.all<SelectedRow>(
        `SELECT ${selectColumns(layout)} FROM ${collection} t WHERE t.${layout.idColumn} IN (SELECT value FROM json_each(?))`,
        [JSON.stringify([...ids])],
      );
      for (const row of rows) {
        const record = fromRow(row);
        into.set(idOf(record), record);
      }
    };
    await load('ledgers', needed.ledgers, patched.ledgers, ledgerFromRow, (record) => record.ledger_id);
    await load('identities', needed.identities, patched.identities, identityFromRow, (record) => record.identity_id);
    await load('transactions', needed.transactions, patched.transactions, transactionFromRow, (record) => record.transaction_id);
    return patched;
  }

  private async write(changes: RowChanges): Promise<number> {
    const pending: Array<Promise<number>> = [];
    const upsert = (collection: Collection, rows: SqlValue[][]): void => {
      if (rows.length > 0) pending.push(this.statement(upsertSql(LAYOUTS[collection])).run([jsonBytes(rows)]));
    };
    upsert('ledgers', [...changes.ledgers.values()].map(ledgerRow));
    const identities: SqlValue[][] = [];
    const deleted: string[] = [];
    for (const [identityId, identity] of changes.identities) {
      if (identity) identities.push(identityRow(identity));
      else deleted.push(identityId);
    }
    upsert('identities', identities);
    if (deleted.length > 0) pending.push(this.statement(deleteSql(LAYOUTS.identities)).run([JSON.stringify(deleted)]));
    // Balances are written once per batch, at its end (writeBalances).
    if (changes.balances.size > 0) throw new Error('balances are written at the end of a batch');
    upsert('transactions', [...changes.transactions.values()].map(transactionRow));
    if (changes.transactions.size > 0) {
      pending.push(this.statement(INSERT_TRANSACTION_TEXTS_SQL).run([jsonBytes(transactionTextRows(changes.transactions.values()))]));
    }
    upsert('reconciliations', [...changes.reconciliations.values()].map(reconciliationRow));
    const insert = (sql: string, rows: SqlValue[][]): void => {
      if (rows.length > 0) pending.push(this.statement(sql).run([jsonBytes(rows)]));
    };
    insert(INSERT_EXTERNAL_RECORDS_SQL, changes.externalRecords.flatMap(externalRecordRows));
    insert(INSERT_MATCHES_SQL, changes.reconciliationResults.flatMap(matchRows));
    insert(INSERT_UNMATCHED_SQL, changes.reconciliationResults.flatMap(unmatchedRows));
    await Promise.all(pending);
    return changedRowCount(changes);
  }

  /** Writes the batch's balances in slice-sized statements, so no single step holds the event loop long. */
  private async writeBalances(balances: Map<string, BalanceRecord>): Promise<number> {
    const statement = this.statement(upsertSql(LAYOUTS.balances));
    let rows: SqlValue[][] = [];
    for (const balance of balances.values()) {
      rows.push(balanceRow(balance));
      if (rows.length >= this.limits.slice_rows_max) {
        await statement.run([jsonBytes(rows)]);
        rows = [];
      }
    }
    if (rows.length > 0) await statement.run([jsonBytes(rows)]);
    return balances.size;
  }

  private statement(sql: string): PreparedStatement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.store.writer.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /** Forgets the least recently loaded balances once there are too many; they are read again on need. */
  private trimBalanceCache(): void {
    const excess = this.balances.size - this.limits.balance_cache_max;
    if (excess <= 0) return;
    let toDrop = excess + Math.floor(this.limits.balance_cache_max / 4);
    for (const balanceId of this.balances.keys()) {
      if (toDrop-- <= 0) break;
      this.balances.delete(balanceId);
    }
  }

  /** Drops every cached balance: after a rollback they may not match the rows. */
  private forgetBalances(): void {
    this.balances.clear();
  }
}

function jsonBytes(rows: SqlValue[][]): Buffer {
  return Buffer.from(JSON.stringify(rows), 'utf8');
}

function sameHistory(source: LogSource, checkpoint: IndexCheckpoint): boolean {
  if (checkpoint.seq > source.durableSeq) return false;
  for (const { event } of source.read(checkpoint.seq, checkpoint.seq)) return event.at === checkpoint.at;
  return false;
}
