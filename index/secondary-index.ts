// The query side as one object: it owns the index file, keeps a projector tailing the log, answers
// filters and searches from the reader connections, rebuilds itself on request, and reports its lag.
//
// Read-your-writes: every query names the log seq that was visible when its request arrived and first
// waits (at most `wait_ms_max`) for the checkpoint to reach it, so a client always finds what it wrote
// before asking. If the index cannot catch up in time the query is refused (SRCH_INDEX_BEHIND, 503,
// retry) rather than answered from an index that may miss the client's own writes.
//
// The projector runs in its own thread (projector-thread.ts); this object only mirrors its checkpoint.
// Rebuild (POST /search/reindex, `folio reindex`): a fresh index is built beside the live one from seq 1
// in a second thread while the live one keeps serving; once it has caught up, the live projector stops,
// the new file replaces the old, and queries resume on it. Queries arriving during the swap wait for it.

import { refuse, type Result } from '../engine/result.js';
import fs from 'node:fs';
import type { BalanceRecord, IdentityRecord, LedgerRecord, TransactionRecord } from '../engine/records.js';
import { compileFilter, type FilterRequest } from './filter-compiler.js';
import type { Collection } from './index-schema.js';
import { indexFileIn, IndexStore, QueryTimeoutError, removeIndexFiles } from './index-store.js';
import { Projector, REBUILD_PROJECTOR_LIMITS, type BatchReport, type LogSource, type PoisonReport, type ProjectorLimits } from './projector.js';
import { ProjectorThread } from './projector-thread.js';
import type { WorkerEntry } from '../threads/worker-entry.js';
import { packRecords, type DurableRecord } from './pushed-records.js';
import { balanceFromRow, identityFromRow, ledgerFromRow, reconciliationFromRow, transactionFromRow, type SelectedRow } from './record-rows.js';
import type { ReconciliationRecord } from '../engine/reconciliation-records.js';
import { compileSearch, type SearchRequest } from './search-compiler.js';
import { runSearch } from './search-executor.js';
import type { FacetCount } from './search-facets.js';
import { SearchRefusal } from './search-refusal.js';
import type { HighlightSpec } from '../wire/search-highlights.js';
import type { SqliteConnection } from './sqlite-connection.js';
import { timeText } from '../wire/views.js';

export type IndexedRecord = LedgerRecord | BalanceRecord | TransactionRecord | IdentityRecord | ReconciliationRecord;

export type QueryErrorCode = 'GEN_BAD_REQUEST' | 'SRCH_QUERY_INVALID' | 'SRCH_INDEX_BEHIND' | 'SRCH_QUERY_TIMEOUT' | 'GEN_CONFLICT' | 'SRCH_REINDEX_IN_PROGRESS';
export type QueryAnswer<T> = Result<T, { code: QueryErrorCode; message: string }>;

export interface FilterPage {
  records: IndexedRecord[];
  total_count?: number;
  /** The seq the index held every row of when it answered (at least the seq the filter waited for). */
  index_seq: number;
}

export interface SearchPage {
  /** Records found; with group_by, groups found. */
  found: number;
  out_of: number;
  records: IndexedRecord[];
  search_time_ms: number;
  /** facet_by's counts, in its order (absent without facet_by). */
  facet_counts?: FacetCount[];
  /** group_by's page of groups, each with its first hits (absent without group_by; `records` is then empty). */
  groups?: Array<{ key: unknown[]; found: number; records: IndexedRecord[] }>;
  /** What the hits' highlights look for. */
  highlight: HighlightSpec;
  /** The seq the full-text indexes held every row of when it answered: every record of an event up to it can be found. */
  index_seq: number;
}

/** Blnk's words for a rebuild (`in_progress`), with `idle` before the first one (Blnk answers 404 then). */
export type ReindexState = 'idle' | 'in_progress' | 'completed' | 'failed';

export interface ReindexStatus {
  status: ReindexState;
  started_at?: string;
  finished_at?: string;
  /** Log seq the rebuilt index has reached, and the durable log's seq now. */
  processed_seq: number;
  target_seq: number;
  progress: number;
  rows_written: number;
  rows_per_second: number;
  error?: string;
  /** The live index: its checkpoint and how far it is behind the durable log. */
  index_checkpoint_seq: number;
  index_lag_events: number;
  index_lag_seconds: number;
  /** The full-text indexes, which follow the rows and may trail them: the seq they hold every row of. */
  index_text_checkpoint_seq: number;
  index_text_lag_events: number;
  /**
   * Set while the live index is stuck on one event it keeps failing on (a poison event): its log seq,
   * the last error, attempts so far and since when. The index stays at the event before it.
   */
  index_poison?: { seq: number; message: string; attempts: number; since: string };
  /**
   * Blnk's progress fields: its phase, the log events to index and indexed so far (Blnk counts
   * records), when it completed, its errors, and whether it is paused (Blnk pauses on Typesense's
   * backpressure; a rebuild here never pauses, so this is always false).
   */
  phase: string;
  total_records: number;
  processed_records: number;
  completed_at?: string;
  errors?: string[];
  paused: boolean;
}

export interface SecondaryIndexOptions {
  dataDir: string;
  /** The projector thread's module (the application layer's: see projector-thread.ts). */
  projectorWorker: WorkerEntry;
  /** The log's LMDB directory, opened again by the projector's thread. */
  walDir: string;
  /** The log as the main thread sees it: how far it is durable. */
  source: LogSource;
  /** How long a query waits for the index to reach its seq before it is refused. */
  wait_ms_max?: number;
  limits?: Partial<ProjectorLimits>;
  readers?: number;
  queryTimeoutMs?: number;
  onError?: (error: Error) => void;
  /** Called once each time the live index gets stuck on a new poison event (the runtime records a system error). */
  onStuck?: (poison: PoisonReport) => void;
  /** How far behind the log the index may fall before new writes wait for it (see WriteHoldLimits). */
  writeHold?: Partial<WriteHoldLimits>;
}

/**
 * Back-pressure from the index on the write path. The lag a write would add to is the time the oldest
 * durable event the index has not applied has waited, plus the time the projector needs for everything
 * not applied yet (the log bytes behind, at the rate its recent batches went: bytes, not events, since
 * one event may be a transfer or a bulk of a thousand). While that exceeds
 * `lag_ms_max`, a new write waits (at most `wait_ms_max`) until it is back within the bound, and is
 * refused for load if it is not by then. So the index's lag cannot grow without bound however fast
 * writes come: the writers are slowed to the projector's pace instead. Counting the work behind, not
 * only the age of the oldest event, matters when writes outrun the projector several times over: by
 * the time the oldest event is a second old, several seconds of projection may be waiting behind it.
 */
export interface WriteHoldLimits {
  lag_ms_max: number;
  wait_ms_max: number;
}

/**
 * 1 s, not less: under steady single transfers the index trails the log by its pace (INDEX_PACE_MS) plus
 * a batch, 0.2-0.5 s, and a bound of 500 ms held writes that the index was keeping up with (http bench:
 * p99 136 ms against 33 with no hold). Under maximum-rate bulk the overshoot past the bound is about
 * 0.8 s (docs/decisions-query.md), which keeps the lag's p99 under issue 31's 2 s.
 */
export const DEFAULT_WRITE_HOLD_LIMITS: WriteHoldLimits = { lag_ms_max: 1_000, wait_ms_max: 5_000 };

export const WAIT_MS_MAX_DEFAULT = 2_000;
/** Commit times remembered for the lag in seconds; older ones are merged away. */
const COMMIT_MARKS_MAX = 10_000;
/**
 * How long newly durable events may wait before the projector is woken, when nobody is waiting to read
 * them. Every SQLite commit writes a new full-text segment that later has to be merged, and pays its
 * fixed costs once: measured on the transactions table, a commit per 500 rows costs about 33 µs of CPU
 * a row, per 2,500 rows about 25, per 10,000 about 23. A third of a second makes batches of a couple of
 * thousand rows under load while index lag stays well inside its one-second target. A filter or search
 * that needs fresh rows wakes the projector at once, so this never delays a reader.
 */
export const INDEX_PACE_MS = 300;
/** Steps in which held writes are let go (at least one a step), and the longest pause between two (releaseHeldWrite). */
const RELEASE_STEPS = 16;
const RELEASE_STEP_MS = 5;
/**
 * Bytes of request bodies let go at once when the index has nothing left to apply: a few hundred single
 * transfers, and never more than one bulk of a thousand beyond the usual share.
 */
const IDLE_RELEASE_BYTES_MAX = 64 * 1024;
/** Weight of the newest batch in the projector's moving average rate. */
const RATE_WEIGHT = 0.3;
/** Bytes of durable records held for the projectors between wake-ups; past it they read the log. */
const HELD_RECORD_BYTES_MAX = 32 * 1024 * 1024;

const fromRow: Record<Collection, (row: SelectedRow) => IndexedRecord> = {
  ledgers: ledgerFromRow,
  balances: balanceFromRow,
  transactions: transactionFromRow,
  identities: identityFromRow,
  reconciliations: reconciliationFromRow,
};

interface Waiter {
  seq: number;
  /** The full-text indexes must hold `seq` too. */
  text: boolean;
  resolve: (reached: boolean) => void;
  timer: NodeJS.Timeout;
}

/** A write waiting for the index to come back within the lag bound (WriteHoldLimits). */
interface HeldWrite {
  resolve: (refusal: string | undefined) => void;
  timer: NodeJS.Timeout;
  /** The write's body in bytes, as its request declared it (what it will add to the index, roughly). */
  bodyBytes: number;
}

export class SecondaryIndex {
  private readonly file: string;
  private readonly waitMsMax: number;
  private readonly waiters: Waiter[] = [];
  /**
   * (durable seq, when it became durable, log bytes durable by then), oldest first: how long the oldest
   * unindexed event has waited, and how much the projector has still to read.
   */
  private readonly commitMarks: Array<{ seq: number; at: number; bytes: number }> = [];
  /** Log bytes made durable since the index opened, and of those, the ones the live index has applied. */
  private durableBytes = 0;
  private appliedBytes = 0;
  /** Settles when a swap in progress is over; queries wait on it. */
  private swapping: Promise<void> | undefined;
  private rebuild: { projector?: ProjectorThread; promise: Promise<void> } | undefined;
  private reindex: Omit<ReindexStatus, 'target_seq' | 'index_checkpoint_seq' | 'index_lag_events' | 'index_lag_seconds' | 'index_text_checkpoint_seq' | 'index_text_lag_events' | 'phase' | 'total_records' | 'processed_records' | 'paused'> = {
    status: 'idle', processed_seq: 0, progress: 0, rows_written: 0, rows_per_second: 0,
  };
  private reindexStartedMs = 0;
  private closed = false;
  private _poison: PoisonReport | undefined;
  private paceTimer: NodeJS.Timeout | undefined;
  /** Durable records not yet handed to the projectors (see pushed-records.ts). */
  private heldRecords: Array<Required<DurableRecord>> = [];
  private heldBytes = 0;
  private readonly writeHold: WriteHoldLimits;
  private readonly heldWrites: HeldWrite[] = [];
  private releaseTimer: NodeJS.Timeout | undefined;
  /**
   * Whether the live index has caught up with the log since it was opened. Until then (a deleted or
   * outdated index being rebuilt at start-up) writes are not held: the index is behind because it is
   * new, not because writes outran it, and holding them would stop the ledger for the whole rebuild.
   */
  private caughtUp = false;
  /** The live checkpoint at the last batch: one lower now means the index started over from the log. */
  private lastCheckpoint = 0;
  /** Log bytes the live projector applies per millisecond of its batches (a moving average), 0 before any. */
  private bytesPerMs = 0;

  private constructor(
    private readonly options: SecondaryIndexOptions,
    private store: IndexStore,
    private projector: ProjectorThread,
  ) {
    this.file = indexFileIn(options.dataDir);
    this.waitMsMax = options.wait_ms_max ?? WAIT_MS_MAX_DEFAULT;
    this.writeHold = { ...DEFAULT_WRITE_HOLD_LIMITS, ...options.writeHold };
    this.watch(projector);
    this.advanced();
  }

  static async open(options: SecondaryIndexOptions): Promise<SecondaryIndex> {
    // The projector's thread opens the file first: it creates (or resets) the schema the readers need.
    let index: SecondaryIndex | undefined;
    const projector = await startProjector(options, indexFileIn(options.dataDir), false, (poison) => index?.poisoned(poison));
    const store = await IndexStore.openReaders(indexFileIn(options.dataDir), { readers: options.readers, queryTimeoutMs: options.queryTimeoutMs });
    index = new SecondaryIndex(options, store, projector);
    return index;
  }

  /** The live projector is stuck on a poison event, or (undefined) got past it. */
  private poisoned(poison: PoisonReport | undefined): void {
    const newlyStuck = poison !== undefined && poison.seq !== this._poison?.seq;
    this._poison = poison;
    if (poison) {
      this.options.onError?.(new Error(`the query index is stuck at log seq ${poison.seq} after ${poison.attempts} attempts: ${poison.message}`));
    }
    if (newlyStuck) this.options.onStuck?.(poison);
  }

  /** The log seq of the event the live index is stuck on, or 0. */
  get poisonSeq(): number {
    return this._poison?.seq ?? 0;
  }

  // ---- keeping up with the log ----

  /** The log made more events durable (`record`: the record that did, to hand to the projector). */
  logDurable(record?: DurableRecord): void {
    if (record) this.holdRecord(record);
    this.durableBytes += record?.bytes?.length ?? 0;
    const seq = this.options.source.durableSeq;
    const last = this.commitMarks[this.commitMarks.length - 1];
    if (!last || last.seq < seq) {
      if (this.commitMarks.length >= COMMIT_MARKS_MAX) this.commitMarks.splice(1, 1);
      this.commitMarks.push({ seq, at: performance.now(), bytes: this.durableBytes });
    } else last.bytes = this.durableBytes;
    this.releaseHeldWrite();
    if (this.waiters.length > 0 || this.heldWrites.length > 0) {
      this.wakeProjectors();
      return;
    }
    if (this.paceTimer || this.closed) return;
    this.paceTimer = setTimeout(() => this.wakeProjectors(), INDEX_PACE_MS);
    this.paceTimer.unref();
  }

  /** Keeps a durable record until the projectors are next woken; past the cap they read the log instead. */
  private holdRecord(record: DurableRecord): void {
    const last = this.heldRecords[this.heldRecords.length - 1];
    const bytes = record.bytes;
    if (!bytes || (last && record.first_seq !== last.last_seq + 1) || this.heldBytes + bytes.length > HELD_RECORD_BYTES_MAX) {
      this.heldRecords = [];
      this.heldBytes = 0;
      return;
    }
    this.heldRecords.push({ ...record, bytes });
    this.heldBytes += bytes.length;
  }

  private wakeProjectors(): void {
    clearTimeout(this.paceTimer);
    this.paceTimer = undefined;
    const records = this.heldRecords;
    this.heldRecords = [];
    this.heldBytes = 0;
    // Each projector gets a batch of its own: waking one transfers (detaches) its buffer.
    this.projector.wake(records.length > 0 ? packRecords(records) : undefined);
    this.rebuild?.projector?.wake(records.length > 0 ? packRecords(records) : undefined);
  }

  get checkpointSeq(): number {
    return this.projector.checkpoint;
  }

  /** The seq the full-text indexes hold every row of (they follow the rows, and may trail them). */
  get textCheckpointSeq(): number {
    return this.projector.textCheckpoint;
  }

  lagEvents(): number {
    return Math.max(0, this.options.source.durableSeq - this.projector.checkpoint);
  }

  lagSeconds(): number {
    const oldest = this.commitMarks.find((mark) => mark.seq > this.projector.checkpoint);
    return oldest ? (performance.now() - oldest.at) / 1000 : 0;
  }

  /**
   * Resolves true once the index holds everything up to `seq` (with `text`, its full-text indexes too), or
   * false after `timeoutMs`.
   */
  waitFor(seq: number, timeoutMs = this.waitMsMax, text = false): Promise<boolean> {
    if (this.holds(seq, text)) return Promise.resolve(true);
    this.wakeProjectors();
    if (text) this.projector.wantText();
    return new Promise((resolve) => {
      const waiter: Waiter = {
        seq,
        text,
        resolve,
        timer: setTimeout(() => {
          this.waiters.splice(this.waiters.indexOf(waiter), 1);
          resolve(false);
        }, timeoutMs),
      };
      this.waiters.push(waiter);
    });
  }

  private holds(seq: number, text: boolean): boolean {
    return this.projector.checkpoint >= seq && (!text || this.projector.textCheckpoint >= seq);
  }

  private watch(projector: ProjectorThread): void {
    projector.onBatch((report) => {
      const before = this.appliedBytes;
      this.advanced();
      const applied = this.appliedBytes - before;
      if (projector === this.projector && applied > 0 && report.milliseconds > 0) {
        const rate = applied / report.milliseconds;
        this.bytesPerMs = this.bytesPerMs === 0 ? rate : this.bytesPerMs * (1 - RATE_WEIGHT) + rate * RATE_WEIGHT;
      }
    });
  }

  private advanced(): void {
    const checkpoint = this.projector.checkpoint;
    while (this.commitMarks.length > 0 && (this.commitMarks[0] as { seq: number }).seq <= checkpoint) {
      this.appliedBytes = Math.max(this.appliedBytes, (this.commitMarks.shift() as { bytes: number }).bytes);
    }
    if (checkpoint >= this.options.source.durableSeq) this.appliedBytes = this.durableBytes;
    for (let index = this.waiters.length - 1; index >= 0; index -= 1) {
      const waiter = this.waiters[index] as Waiter;
      if (!this.holds(waiter.seq, waiter.text)) continue;
      clearTimeout(waiter.timer);
      this.waiters.splice(index, 1);
      waiter.resolve(true);
    }
    // An index that threw its rows away (rows contradicting the log) is rebuilding from nothing again.
    if (checkpoint < this.lastCheckpoint) this.caughtUp = false;
    this.lastCheckpoint = checkpoint;
    if (checkpoint >= this.options.source.durableSeq) this.caughtUp = true;
    this.releaseHeldWrite();
  }

  /**
   * Lets the longest-waiting held writes go ahead, a share at a time, if the index is within its bound.
   * A write joins the lag only once it is durable, so letting every waiting connection in at once (each
   * may carry a bulk of a thousand transfers) would overshoot the bound by all of them; one at a time
   * would drain a thousand waiting connections at one write per commit. So each step lets a sixteenth
   * of them go (at least one: a few bulk connections go one by one), and the next step comes at the
   * next commit or batch, or after RELEASE_STEP_MS if neither comes (the released writes may have been
   * refused and written nothing). Once the index has applied everything durable, more go: as many from
   * the head as fit in IDLE_RELEASE_BYTES_MAX of request bodies, if that is more than the share. A
   * newcomer queues behind held writes, so under a steady load of small writes let out a share at a
   * time the queue refilled as fast as it drained, and every write waited in it with the index idle (a
   * replicated leader fell from 5,000 to 1,900 transfers/s that way, its index woken for every record);
   * letting every held write go at once instead overshot the bound with bulks (index lag p99 2.67 s
   * against 1.66 s in the indexload bench), hence a budget in bytes.
   */
  private releaseHeldWrite(): void {
    clearTimeout(this.releaseTimer);
    this.releaseTimer = undefined;
    if (this.heldWrites.length === 0 || this.holdsWrites()) return;
    let count = Math.max(1, Math.floor(this.heldWrites.length / RELEASE_STEPS));
    if (this.lagEvents() === 0) {
      let fitting = 0;
      for (let bytes = 0; fitting < this.heldWrites.length; fitting += 1) {
        bytes += (this.heldWrites[fitting] as HeldWrite).bodyBytes;
        if (bytes > IDLE_RELEASE_BYTES_MAX) break;
      }
      count = Math.max(count, fitting);
    }
    for (const held of this.heldWrites.splice(0, count)) {
      clearTimeout(held.timer);
      held.resolve(undefined);
    }
    if (this.heldWrites.length === 0) return;
    this.releaseTimer = setTimeout(() => this.releaseHeldWrite(), RELEASE_STEP_MS);
    this.releaseTimer.unref();
  }

  // ---- holding writes while the index is too far behind ----

  /**
   * Whether new writes should wait for the index now: it is further behind than the bound, and it is
   * not being rebuilt from nothing at start-up nor stuck on a poison event (an index that cannot move
   * must not stop the ledger, which is the source of truth: it is reported, and queries are refused).
   */
  holdsWrites(): boolean {
    return this.caughtUp && !this.closed && this._poison === undefined && this.expectedLagMs() > this.writeHold.lag_ms_max;
  }

  /**
   * Whether a new write waits: the index holds writes, or writes held earlier have not all gone ahead
   * yet (a newcomer queues behind them: let in at once, newcomers starved the writes already waiting
   * past their wait_ms_max, one refused 503 in the peers bench's bulk over 100,000 balances).
   */
  writesWait(): boolean {
    return this.heldWrites.length > 0 || this.holdsWrites();
  }

  /** Writes waiting for the index now. */
  get heldWriteCount(): number {
    return this.heldWrites.length;
  }

  /** How long the oldest unapplied event will have waited once the projector has applied everything durable now. */
  expectedLagMs(): number {
    if (this.lagEvents() === 0) return 0;
    const behind = Math.max(0, this.durableBytes - this.appliedBytes);
    return this.lagSeconds() * 1000 + (this.bytesPerMs > 0 ? behind / this.bytesPerMs : 0);
  }

  /**
   * Undefined when a new write may go ahead at once; otherwise a promise that settles when it may
   * (undefined) or, after `wait_ms_max`, with why it is refused (the index did not come back within
   * the bound: the caller answers 503 with Retry-After). `bodyBytes`: the size of the write's request
   * body (unknown: count it as large), which decides how many held writes go at once (releaseHeldWrite).
   */
  writeAdmission(bodyBytes: number): Promise<string | undefined> | undefined {
    if (!this.writesWait()) return undefined;
    this.wakeProjectors();
    return new Promise((resolve) => {
      const held: HeldWrite = {
        resolve,
        bodyBytes,
        timer: setTimeout(() => {
          const at = this.heldWrites.indexOf(held);
          if (at >= 0) this.heldWrites.splice(at, 1);
          resolve(`the query index is ${this.lagSeconds().toFixed(1)} s behind the log; try again shortly`);
        }, this.writeHold.wait_ms_max),
      };
      this.heldWrites.push(held);
    });
  }

  // ---- queries ----

  async filter(collection: Collection, request: FilterRequest, visibleSeq: number): Promise<QueryAnswer<FilterPage>> {
    const compiled = compileFilter(collection, request);
    if (!compiled.ok) return refuse({ code: 'GEN_BAD_REQUEST', message: compiled.message });
    return this.query(visibleSeq, async (reader) => {
      const { select, count } = compiled.value;
      const indexSeq = this.projector.checkpoint;
      const rows = await reader.all<SelectedRow>(select.sql, select.params);
      const page: FilterPage = { records: rows.map(fromRow[collection]), index_seq: indexSeq };
      if (count) page.total_count = (await reader.all<{ total: number }>(count.sql, count.params))[0]?.total ?? 0;
      return page;
    });
  }

  /**
   * A search, from the index as it stands: the full-text indexes follow the rows on their own track and
   * may trail them, and the answer says how far they were (`index_seq`). With `requiredSeq` (a caller's
   * X-Folio-Seq) it first waits, as long as any query waits, until rows and full-text indexes hold it.
   */
  async search(collection: Collection, request: SearchRequest, requiredSeq?: number): Promise<QueryAnswer<SearchPage>> {
    const started = performance.now();
    const compiled = compileSearch(collection, request);
    if (!compiled.ok) return refuse({ code: 'SRCH_QUERY_INVALID', message: compiled.message });
    const plan = compiled.value;
    let indexSeq = 0;
    const answer = await this.query(requiredSeq ?? 0, async (reader) => {
      indexSeq = this.projector.textCheckpoint;
      try {
        return await runSearch(reader, collection, plan);
      } catch (error) {
        if (error instanceof SearchRefusal) return error;
        throw error;
      }
    }, this.waitMsMax, true);
    if (!answer.ok) return answer;
    const result = answer.value;
    if (result instanceof SearchRefusal) return refuse({ code: 'SRCH_QUERY_INVALID', message: result.message });
    const page: SearchPage = {
      found: result.found,
      out_of: result.out_of,
      records: result.rows.map(fromRow[collection]),
      search_time_ms: Math.round(performance.now() - started),
      highlight: plan.highlight,
      index_seq: indexSeq,
    };
    if (result.facets) page.facet_counts = result.facets;
    if (result.groups) page.groups = result.groups.map((group) => ({ key: group.key, found: group.found, records: group.rows.map(fromRow[collection]) }));
    return { ok: true, value: page };
  }

  /**
   * A read of reconciliation's (reconciliation-queries.ts) once the index holds `seq`, waiting for it up to
   * `waitMs`: a background run may wait longer for the index than a request does.
   */
  reconciliationRead<T>(seq: number, waitMs: number, work: (reader: SqliteConnection) => Promise<T>): Promise<QueryAnswer<T>> {
    // Candidates found by text containing a statement's words come from a full-text index.
    return this.query(seq, work, waitMs, true);
  }

  /**
   * Waits for the index to reach `visibleSeq` (with `text`, its full-text indexes too), then runs `work`
   * on one reader for its whole length.
   */
  private async query<T>(visibleSeq: number, work: (reader: SqliteConnection) => Promise<T>, waitMs = this.waitMsMax, text = false): Promise<QueryAnswer<T>> {
    if (!(await this.waitFor(visibleSeq, waitMs, text))) {
      return refuse({ code: 'SRCH_INDEX_BEHIND', message: `the search index is ${this.lagEvents()} events behind the log; try again shortly` });
    }
    while (this.swapping) await this.swapping;
    try {
      return { ok: true, value: await this.store.read(work) };
    } catch (error) {
      if (error instanceof QueryTimeoutError) return refuse({ code: 'SRCH_QUERY_TIMEOUT', message: error.message });
      throw error;
    }
  }

  // ---- rebuilding ----

  reindexStatus(): ReindexStatus {
    const target = this.options.source.durableSeq;
    const processed = this.rebuild?.projector?.checkpoint ?? this.reindex.processed_seq;
    const status: ReindexStatus = {
      ...this.reindex,
      processed_seq: processed,
      target_seq: target,
      progress: this.reindex.status === 'completed' ? 1 : target === 0 ? 0 : Math.min(1, processed / target),
      index_checkpoint_seq: this.projector.checkpoint,
      index_lag_events: this.lagEvents(),
      index_lag_seconds: Number(this.lagSeconds().toFixed(3)),
      index_text_checkpoint_seq: this.projector.textCheckpoint,
      index_text_lag_events: Math.max(0, target - this.projector.textCheckpoint),
      phase: this.reindex.status === 'in_progress' ? 'indexing' : this.reindex.status,
      total_records: target,
      processed_records: processed,
      paused: false,
    };
    if (this._poison) status.index_poison = { ...this._poison, since: timeText(this._poison.since) };
    if (this.reindex.status === 'completed' && this.reindex.finished_at) status.completed_at = this.reindex.finished_at;
    if (this.reindex.error !== undefined) status.errors = [this.reindex.error];
    if (this.reindex.status === 'in_progress') {
      const seconds = (performance.now() - this.reindexStartedMs) / 1000;
      status.rows_per_second = seconds > 0 ? Math.round(this.reindex.rows_written / seconds) : 0;
    }
    return status;
  }

  /** Starts a rebuild in the background; refused while one runs. */
  startReindex(): QueryAnswer<ReindexStatus> {
    if (this.rebuild) return refuse({ code: 'SRCH_REINDEX_IN_PROGRESS', message: 'a reindex is already running' });
    if (this.closed) return refuse({ code: 'GEN_CONFLICT', message: 'the index is closing' });
    this.reindexStartedMs = performance.now();
    this.reindex = {
      status: 'in_progress', started_at: timeText(Date.now()), processed_seq: 0, progress: 0, rows_written: 0, rows_per_second: 0,
    };
    const rebuild: { projector?: ProjectorThread; promise: Promise<void> } = { promise: Promise.resolve() };
    rebuild.promise = this.runRebuild(rebuild).then(
      () => {
        const seconds = (performance.now() - this.reindexStartedMs) / 1000;
        this.reindex = {
          ...this.reindex, status: 'completed', finished_at: timeText(Date.now()), processed_seq: this.projector.checkpoint,
          rows_per_second: seconds > 0 ? Math.round(this.reindex.rows_written / seconds) : 0,
        };
      },
      (error: Error) => {
        this.reindex = { ...this.reindex, status: 'failed', finished_at: timeText(Date.now()), error: error.message };
        this.options.onError?.(error);
      },
    ).finally(() => {
      this.rebuild = undefined;
    });
    this.rebuild = rebuild;
    return { ok: true, value: this.reindexStatus() };
  }

  /** Resolves when the running rebuild (if any) has finished. */
  async reindexDone(): Promise<void> {
    await this.rebuild?.promise;
  }

  /**
   * Builds a new file in its own thread while the live index keeps serving. Once the new file has caught
   * up with the log, the live projector stops, the new one passes the live checkpoint (so no query ever
   * sees the index step back) and closes its file, which then replaces the live one.
   */
  private async runRebuild(rebuild: { projector?: ProjectorThread }): Promise<void> {
    const buildFile = `${this.file}.rebuild`;
    const builder = await startProjector(this.options, buildFile, true);
    rebuild.projector = builder;
    builder.onBatch((report) => {
      this.reindex.rows_written += report.rows;
    });
    let liveStopped = false;
    try {
      await builder.reached(this.options.source.durableSeq);
      if (this.closed) throw new Error('the index closed during the rebuild');
      liveStopped = true;
      await this.projector.stop();
      await builder.finish(this.projector.checkpoint);
    } catch (error) {
      await builder.stop();
      removeIndexFiles(buildFile);
      if (liveStopped && !this.closed) await this.restartLiveProjector();
      throw error;
    }
    let release!: () => void;
    this.swapping = new Promise((resolve) => (release = resolve));
    try {
      await this.store.close();
      removeIndexFiles(this.file);
      fs.renameSync(buildFile, this.file);
      await this.restartLiveProjector();
      this.store = await IndexStore.openReaders(this.file, { readers: this.options.readers, queryTimeoutMs: this.options.queryTimeoutMs });
    } finally {
      this.swapping = undefined;
      release();
    }
  }

  private async restartLiveProjector(): Promise<void> {
    this._poison = undefined;
    this.projector = await startProjector(this.options, this.file, false, (poison) => this.poisoned(poison));
    this.watch(this.projector);
    this.advanced();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.paceTimer);
    await this.rebuild?.projector?.stop();
    await this.rebuild?.promise.catch(() => undefined);
    await this.projector.stop();
    for (const waiter of this.waiters.splice(0)) {
      clearTimeout(waiter.timer);
      waiter.resolve(false);
    }
    clearTimeout(this.releaseTimer);
    for (const held of this.heldWrites.splice(0)) {
      clearTimeout(held.timer);
      held.resolve('the query index is closing');
    }
    await this.store.close();
  }
}

function startProjector(
  options: SecondaryIndexOptions,
  indexFile: string,
  build: boolean,
  onPoison?: (poison: PoisonReport | undefined) => void,
): Promise<ProjectorThread> {
  return ProjectorThread.start({
    worker: options.projectorWorker,
    walDir: options.walDir,
    indexFile,
    build,
    durableSeq: () => options.source.durableSeq,
    limits: options.limits,
    onError: options.onError,
    onPoison,
  });
}

export interface BuildOptions {
  limits?: Partial<ProjectorLimits>;
  onProjector?: (projector: Projector) => void;
  onBatch?: (report: BatchReport) => void;
  /** Runs once the new index has caught up, before it is finished off. */
  beforeFinish?: (projector: Projector) => Promise<void>;
}

/**
 * Builds a complete index from the whole log into `file` (replacing whatever is there) and closes it
 * so it stands alone, ready to be renamed over the live index. Returns the file.
 */
export async function buildIndexFile(file: string, source: LogSource, options: BuildOptions = {}): Promise<string> {
  const store = await IndexStore.openForBuild(file);
  const projector = await Projector.create(store, source, { limits: { ...REBUILD_PROJECTOR_LIMITS, ...options.limits } });
  options.onProjector?.(projector);
  if (options.onBatch) projector.onBatch(options.onBatch);
  try {
    await projector.catchUp();
    await options.beforeFinish?.(projector);
    await projector.stop();
    await store.closeForMove();
  } catch (error) {
    await projector.stop().catch(() => undefined);
    await store.writer.close().catch(() => undefined);
    removeIndexFiles(file);
    throw error;
  }
  return file;
}

export type { Collection, FilterRequest, SearchRequest };
