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
  INSERT_EXCHANGE_LEGS_SQL,
  exchangeLegRows,
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
  TEXT_CHECKPOINT_KEY,
  TEXT_MARKS_TABLE,
  TEXT_TARGETS,
  textInsertSql,
  textMarkSql,
  textRowKey,
  BALANCE_AMOUNT_COLUMNS,
  upsertAmountsSql,
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
  /**
   * Whether the full-text indexes follow the rows here (index-schema.ts TEXT_TARGETS): off in a file being
   * built, whose full-text indexes are built whole at its end.
   */
  text_track: boolean;
  /**
   * How far (ms) the full-text indexes may trail the rows before they take turns with them: below it
   * they are brought up to date only when the rows are (their work waits for a quiet moment), past it
   * a text batch follows every row batch.
   */
  text_lag_ms_max: number;
  /** Rows put into the full-text indexes per text batch (one SQLite transaction). */
  text_batch_rows_max: number;
  /**
   * Test only (0 everywhere else): rows reach the full-text indexes no sooner than this after they were
   * committed, so tests can hold those indexes behind the rows while the rows keep up.
   */
  text_pause_ms: number;
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
  text_track: true,
  text_lag_ms_max: 30_000,
  text_batch_rows_max: 20_000,
  text_pause_ms: 0,
};

/** Marks read per text batch (a row batch leaves one each). */
const TEXT_MARKS_READ_MAX = 256;

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
export const REBUILD_PROJECTOR_LIMITS: Partial<ProjectorLimits> = { batch_rows_max: 200_000, text_track: false };

export interface BatchReport {
  checkpoint: number;
  /** The seq the full-text indexes hold every row of. */
  text_checkpoint: number;
  /** Rows of the collections (ledgers, balances, transactions, identities) written. */
  rows: number;
  /** Rows put into the full-text indexes (a text batch; 0 for a batch of rows). */
  text_rows: number;
  events: number;
  milliseconds: number;
}

const PREFETCH_IDS_MAX = 5_000;

export class Projector {
  private checkpointSeq: number;
  private checkpointAt: number;
  private textCheckpointSeq: number;
  /** When each row batch not yet in the full-text indexes committed (its checkpoint seq and performance.now()). */
  private readonly textMarks: Array<{ seq: number; at: number }> = [];
  /** Someone waits for the full-text indexes: they get the next turn. */
  private textWanted = false;
  /** After a failed text batch, no other before this time (performance.now()). */
  private textRetryAt = 0;
  private textFailures = 0;
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
    this.textCheckpointSeq = start.text_seq;
    this.limits = { ...DEFAULT_PROJECTOR_LIMITS, ...limits };
    // Row batches committed before this start: their times are unknown, so they count as old.
    if (this.limits.text_track && this.textCheckpointSeq < this.checkpointSeq) this.textMarks.push({ seq: this.checkpointSeq, at: Number.NEGATIVE_INFINITY });
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
      start = { seq: 0, at: 0, text_seq: 0 };
    }
    return new Projector(store, source, start, options.limits ?? {}, options.onError ?? (() => undefined), options.onPoison ?? (() => undefined));
  }

  get checkpoint(): number {
    return this.checkpointSeq;
  }

  /** The seq the full-text indexes hold every row of (the checkpoint when they follow no track here). */
  get textCheckpoint(): number {
    return this.limits.text_track ? this.textCheckpointSeq : this.checkpointSeq;
  }

  /** Someone waits for the full-text indexes: they take the next turn, ahead of the rows. */
  wantText(): void {
    this.textWanted = true;
    this.wake();
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
    if (this.checkpointSeq >= this.source.durableSeq && !this.textBehind()) return;
    this.loop = this.run().finally(() => {
      this.loop = undefined;
    });
  }

  /** Whether the full-text indexes lack rows the index holds (and may take a text batch now). */
  private textBehind(): boolean {
    if (!this.limits.text_track || this.textCheckpointSeq >= this.checkpointSeq || performance.now() < this.textRetryAt) return false;
    return this.limits.text_pause_ms === 0 || !this.textHeldBack();
  }

  /** Test only (text_pause_ms): the oldest rows not in the full-text indexes are too young; a wake follows. */
  private textHeldBack(): boolean {
    const oldest = this.textMarks[0];
    if (!oldest) return false;
    const left = oldest.at + this.limits.text_pause_ms - performance.now();
    if (left <= 0) return false;
    setTimeout(() => this.wake(), left + 1).unref();
    return true;
  }

  /** Whether the full-text indexes take the next turn though rows are waiting: asked for, or too far behind. */
  private textDue(): boolean {
    const oldest = this.textMarks[0];
    return this.textWanted || (oldest !== undefined && performance.now() - oldest.at > this.limits.text_lag_ms_max);
  }

  /**
   * Resolves once the projector has caught up with the durable log as it stands when called, full-text
   * indexes included.
   */
  async catchUp(): Promise<void> {
    const target = this.source.durableSeq;
    while (this.checkpointSeq < target || (this.limits.text_track && this.textCheckpointSeq < target)) {
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
    while (!this.stopped) {
      const rowsBehind = this.checkpointSeq < this.source.durableSeq;
      const textBehind = this.textBehind();
      if (!rowsBehind && !textBehind) return;
      if (textBehind && (!rowsBehind || this.textDue())) {
        await this.textTurn();
        continue;
      }
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
    this.textCheckpointSeq = 0;
    this.textMarks.length = 0;
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
    // Of those, the ones whose row changes beyond its amounts.
    const balanceRecords = new Set<string>();
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
        for (const balanceId of changes.balanceRecords) balanceRecords.add(balanceId);
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
      rows += await this.writeBalances(balances, balanceRecords);
      await writer.run(`UPDATE index_state SET value = CASE key WHEN 'checkpoint' THEN ? ELSE ? END WHERE key IN ('checkpoint', 'checkpoint_at')`, [lastSeq, lastAt]);
      // Where the full-text indexes are to catch up to for this checkpoint (textBatch).
      await this.statement(textMarkSql()).run([lastSeq]);
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
    if (this.limits.text_track && lastSeq > this.textCheckpointSeq) this.textMarks.push({ seq: lastSeq, at: performance.now() });
    this.trimBalanceCache();
    this.report({ checkpoint: lastSeq, text_checkpoint: this.textCheckpoint, rows, text_rows: 0, events: eventCount, milliseconds: performance.now() - started });
  }

  private report(report: BatchReport): void {
    for (const listener of this.batchListeners) listener(report);
  }

  /** A text batch; a failure is reported and the batch tried again after a pause growing to a minute. */
  private async textTurn(): Promise<void> {
    try {
      await this.textBatch();
      this.textFailures = 0;
    } catch (error) {
      this.textFailures += 1;
      this.onError(error as Error);
      this.textRetryAt = performance.now() + backoffMs(this.limits.retry_first_ms, this.limits.retry_max_ms, this.textFailures);
      const retry = setTimeout(() => this.wake(), this.textRetryAt - performance.now() + 1);
      retry.unref();
    }
  }

  /**
   * Brings the full-text indexes up to one or more row batches' marks (index-schema.ts TEXT_TARGETS): each
   * target's rows above what its index holds, up to the mark, in row id order, as they stand, at most
   * `text_batch_rows_max` of them (but at least one batch's), in one transaction with the new marks and
   * the text checkpoint.
   */
  private async textBatch(): Promise<void> {
    const started = performance.now();
    const writer = this.store.writer;
    let reached: Record<string, number> | undefined;
    let textRows = 0;
    await writer.run('BEGIN');
    try {
      const held = await writer.all<{ key: string; value: number }>(`SELECT key, value FROM index_state WHERE key IN (${TEXT_TARGETS.map((target) => `'${textRowKey(target)}'`).join(', ')})`);
      const from = new Map(held.map((row) => [row.key, row.value]));
      let marks = await writer.all<Record<string, number>>(`SELECT * FROM ${TEXT_MARKS_TABLE} WHERE seq > ? ORDER BY seq LIMIT ${TEXT_MARKS_READ_MAX}`, [this.textCheckpointSeq]);
      if (marks.length === 0) {
        // Rows without a mark (none should be): the index as it stands is the mark.
        await this.statement(textMarkSql()).run([this.checkpointSeq]);
        marks = await writer.all<Record<string, number>>(`SELECT * FROM ${TEXT_MARKS_TABLE} WHERE seq = ?`, [this.checkpointSeq]);
      }
      const rowsTo = (mark: Record<string, number>): number => TEXT_TARGETS.reduce((sum, target) => sum + Math.max(0, (mark[`${target}_row`] ?? 0) - (from.get(textRowKey(target)) ?? 0)), 0);
      for (const mark of marks) {
        if (reached && rowsTo(mark) > this.limits.text_batch_rows_max) break;
        reached = mark;
      }
      if (!reached) throw new Error('the full-text indexes have no mark to reach');
      for (const target of TEXT_TARGETS) {
        const start = from.get(textRowKey(target)) ?? 0;
        const end = reached[`${target}_row`] ?? 0;
        if (end <= start) continue;
        textRows += await this.statement(textInsertSql(target)).run([start, end]);
      }
      const settings: Array<[string, number]> = [
        ...TEXT_TARGETS.map((target): [string, number] => [textRowKey(target), Math.max(reached?.[`${target}_row`] ?? 0, from.get(textRowKey(target)) ?? 0)]),
        [TEXT_CHECKPOINT_KEY, reached.seq as number],
      ];
      for (const [key, value] of settings) await this.statement('UPDATE index_state SET value = ? WHERE key = ?').run([value, key]);
      await this.statement(`DELETE FROM ${TEXT_MARKS_TABLE} WHERE seq <= ?`).run([reached.seq as number]);
      await writer.run('COMMIT');
    } catch (error) {
      await writer.run('ROLLBACK').catch(() => undefined);
      throw error;
    }
    this.textCheckpointSeq = reached.seq as number;
    while (this.textMarks.length > 0 && (this.textMarks[0] as { seq: number }).seq <= this.textCheckpointSeq) this.textMarks.shift();
    if (this.textCheckpointSeq >= this.checkpointSeq) this.textWanted = false;
    this.report({ checkpoint: this.checkpointSeq, text_checkpoint: this.textCheckpointSeq, rows: 0, text_rows: textRows, events: 0, milliseconds: performance.now() - started });
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
      const legs = exchangeLegRows(changes.transactions.values());
      if (legs.length > 0) pending.push(this.statement(INSERT_EXCHANGE_LEGS_SQL).run([jsonBytes(legs)]));
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

  /**
   * Writes the batch's balances in slice-sized statements, so no single step holds the event loop long:
   * those whose amounts alone changed with an upsert that sets nothing else, the others whole. Rows keep
   * the order they first appeared in the batch within each statement (new balances are all in `records`,
   * so their row ids still follow the log).
   */
  private async writeBalances(balances: Map<string, BalanceRecord>, records: Set<string>): Promise<number> {
    const whole = this.statement(upsertSql(LAYOUTS.balances));
    const amounts = this.statement(upsertAmountsSql(LAYOUTS.balances, BALANCE_AMOUNT_COLUMNS));
    const pending: Array<{ statement: PreparedStatement; rows: SqlValue[][] }> = [{ statement: whole, rows: [] }, { statement: amounts, rows: [] }];
    for (const balance of balances.values()) {
      const target = pending[records.has(balance.balance_id) ? 0 : 1] as { statement: PreparedStatement; rows: SqlValue[][] };
      target.rows.push(balanceRow(balance));
      if (target.rows.length >= this.limits.slice_rows_max) {
        await target.statement.run([jsonBytes(target.rows)]);
        target.rows = [];
      }
    }
    for (const { statement, rows } of pending) if (rows.length > 0) await statement.run([jsonBytes(rows)]);
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
