// What the HTTP layer needs from a running ledger, as an interface: runtime/ledger-runtime.ts is the real
// one (engine, LMDB log, lookup store, queue runner) and tests use that same wiring on a temp dir. Writes are commands
// (`run`, `dryRun`), reads are the named queries of `view`; both may answer at once or later (a worker
// thread asks the engine's thread), so routes await them.

import type { CommandOf, CommandOp } from '../../engine/commands.js';
import type { DryRunAnswer, DryRunCommand, Outcome, ResultOf } from '../../engine/ledger-engine.js';
import type { LedgerView } from '../../engine/ledger-view.js';
import type { StatementPage } from '../../engine/balance-statement.js';
import type { BalanceRecord, TransactionRecord } from '../../engine/records.js';
import type { Result } from '../../engine/result.js';
import type { BalanceHistoryPort, QueryPort } from './query-port.js';
import type { ReconciliationPort } from './reconciliation-port.js';

/** A value now, or later. */
export type Awaitable<T> = T | Promise<T>;

/** The view's queries, each answered now or later. */
export type LedgerReads = {
  [Query in keyof LedgerView]: LedgerView[Query] extends (...args: infer A) => infer R ? (...args: A) => Awaitable<R> : never;
};

export interface LedgerCore {
  /** Carries out one command (engine/commands.ts); the answer's seq is what to wait for before acknowledging. */
  run<K extends CommandOp>(command: CommandOf<K>): Awaitable<Outcome<ResultOf<K>>>;
  /** Dry runs of transaction operations, in order in one scope: nothing is written. */
  dryRun(commands: DryRunCommand[]): Awaitable<DryRunAnswer>;
  /** Named reads of the working state. */
  readonly view: LedgerReads;
  /** Resolves once every event up to `seq` is on disk. */
  durable(seq: number): Promise<void>;
  /** The seq of the newest event the state reflects: what a read must wait for before answering. */
  visibleSeq(): number;
  /**
   * Waits until the state reflects `seq` (a standby applies the group's log as it comes): applied; or
   * beyond_log at once when `seq` is past the end of a log that only this node appends to (a leader, a
   * single node), or past the end of its group's log as read after the wait began; or timed_out after
   * `timeoutMs` (or at once, when too many requests wait already).
   */
  appliedSeqReached(seq: number, timeoutMs: number): Promise<SeqWait>;
  /** Newest transactions first. */
  listTransactions(offset: number, limit: number): Awaitable<TransactionRecord[]>;
  /**
   * Where a transaction stands in the log's checksum chain, once everything appended when asked is on
   * disk; undefined for a transaction the log does not hold.
   */
  transactionLogPosition(transactionId: string): Promise<TransactionLogPosition | undefined>;
  /**
   * The balance folded from the log up to `untilMs` (Number.MAX_SAFE_INTEGER: its whole history, as
   * `from_source` reads it), reading no further than `toSeq`: undefined when it did not exist by then.
   * `fromSnapshot`: start from the newest balance snapshot taken by then, when there is one (the answer
   * says whether it came from source). Bounded: refused with QUEUE_BACKPRESSURE when too many folds
   * are waiting.
   */
  balanceHistory(balanceId: string, untilMs: number, toSeq: number, fromSnapshot?: boolean): Promise<FoldAnswer>;
  /**
   * The balance's statement for [fromMs, toMs] folded from the log through `toSeq`
   * (engine/balance-statement.ts), its movements from `offset`, at most `limit`. Bounded as
   * balanceHistory is; a window with too many movements is refused.
   */
  balanceStatement(balanceId: string, fromMs: number, toMs: number, toSeq: number, offset: number, limit: number): Promise<StatementAnswer>;
  /**
   * Takes balance snapshots (a state snapshot of every balance) in the background, as Blnk's POST
   * /balances-snapshots does; why it cannot, if it cannot.
   */
  takeBalanceSnapshots(): Awaitable<Result<void, { code: 'SNAPSHOT_UNAVAILABLE'; message: string }>>;
  /** Why new writes should be refused right now (the log or lookups are too far behind), if they should. */
  overloaded(): string | undefined;
  /**
   * Undefined when a new write may go ahead now; else a wait (bounded) for the query index to come back
   * within its lag bound, settling undefined when the write may go ahead, or with why it is refused for
   * load when the wait ran out (index/secondary-index.ts WriteHoldLimits). `bodyBytes`: the size of the
   * write's request body (Number.MAX_SAFE_INTEGER when its request did not say).
   */
  writeAdmission(bodyBytes: number): Promise<string | undefined> | undefined;
  /** Hook signing secrets and delivery targets (hooks/: made and checked outside the engine). */
  readonly hookAdmin: HookAdmin;
  /** The query side (filter, search), when the index runs. */
  readonly query?: QueryPort;
  /** Balances as of a time and their changes, when the index runs (the balance history beside it). */
  readonly history?: BalanceHistoryPort;
  /** Reconciliation runs, when the index runs (candidates and results are read from it). */
  readonly reconciliation?: ReconciliationPort;
}

export interface HookAdmin {
  /** A new signing secret: the text to show the client once, and its sealed form for the log. */
  newSigningSecret(): Awaitable<{ secret: string; sealed: string }>;
  /** Why a hook may not deliver to this URL, if it may not (checked again at every delivery). */
  targetRefusal(url: string): string | undefined;
  /** A hook's recent deliveries, newest first, as this node followed them since it started. */
  recentDeliveries(hookId: string, limit: number): Awaitable<HookDeliveries>;
}

/** One delivery of a hook as GET /hooks/:id/deliveries shows it (times in epoch ms, 0 for none). */
export interface HookDelivery {
  event_id: string;
  event: string;
  transaction_id: string;
  hook_type: 'PRE_TRANSACTION' | 'POST_TRANSACTION';
  seq: number;
  status: 'pending' | 'retrying' | 'delivered' | 'failed' | 'dropped';
  attempts: number;
  last_attempt_at: number;
  next_attempt_at: number;
  last_failure: string;
}

export interface HookDeliveries {
  /** When this node began following deliveries (epoch ms): earlier ones are not known to it. */
  since: number;
  deliveries: HookDelivery[];
}

/** A log record in the checksum chain (wal/log-record-codec.ts), and the seq of one event in it. */
export interface ChainRecordPosition {
  /** The event in the record that holds the transaction. */
  seq: number;
  record_first_seq: number;
  record_last_seq: number;
  /** SHA-256 of the record's payload (hex), which the next record's prev_checksum repeats. */
  record_checksum: string;
  /** The checksum of the record before it (hex; zeros for the log's first). */
  prev_checksum: string;
}

/** The record that first held a transaction, and the later one holding its newest whole version, if any. */
export interface TransactionLogPosition {
  created: ChainRecordPosition;
  last_changed: ChainRecordPosition | undefined;
}

/** How a wait for a seq ended (LedgerCore.appliedSeqReached). */
export type SeqWait =
  | { outcome: 'applied' }
  | { outcome: 'timed_out'; applied_seq: number }
  | { outcome: 'beyond_log'; log_end_seq: number };

/** A balance folded from the log (undefined: it did not exist then), or a fold refused for load. */
export type StatementAnswer = Result<StatementPage, { code: 'QUEUE_BACKPRESSURE' | 'BAL_STATEMENT_TOO_LONG'; message: string }>;
export type FoldAnswer = Result<{ balance: BalanceRecord | undefined; from_source: boolean }, { code: 'QUEUE_BACKPRESSURE'; message: string }>;
