// What the HTTP layer needs from the query side (index/), declared here as the consumer sees it, the way
// ledger-core.ts declares the ledger: runtime/ wires the SQLite index in, and the compiler checks that it
// fits. Requests arrive already shape-checked by zod; the query side judges fields, operators and
// expressions and answers with a value or a coded refusal.

import type { Result } from '../../engine/result.js';
import type { BalanceRecord, IdentityRecord, LedgerRecord, TransactionRecord } from '../../engine/records.js';
import type { ReconciliationRecord } from '../../engine/reconciliation-records.js';
import type { FilterRequest, SearchRequest } from '../../wire/query-requests.js';
import type { HighlightSpec } from '../../wire/search-highlights.js';

export type FilterCollection = 'ledgers' | 'balances' | 'transactions' | 'identities';
/** Searchable collections: the filterable ones and reconciliation runs. */
export type SearchCollection = FilterCollection | 'reconciliations';

export type QueryRecord = LedgerRecord | BalanceRecord | TransactionRecord | IdentityRecord | ReconciliationRecord;

/** A position in a balance's history: the change at `at` (epoch ms) made by the event at log seq `seq`. */
export interface BalanceHistoryPosition {
  at: number;
  seq: number;
}

/** Changes with `from_ms <= at <= to_ms`, after `after` when given, at most `limit`. */
export interface BalanceChangeWindow {
  from_ms: number;
  to_ms: number;
  after?: BalanceHistoryPosition;
  limit: number;
}

/** A balance's totals after one change. */
export interface BalanceChange extends BalanceHistoryPosition {
  version: number;
  credit_balance: bigint;
  debit_balance: bigint;
  inflight_credit_balance: bigint;
  inflight_debit_balance: bigint;
}

export interface BalanceChangePage {
  currency: string;
  changes: BalanceChange[];
  /** Set when more changes may follow in the window. */
  next?: BalanceHistoryPosition;
}

/** The balance at a moment, from the balance history. */
export interface BalanceAtAnswer {
  /** Undefined when it did not exist at the moment. */
  balance: BalanceRecord | undefined;
  /** False when the balance does not exist at all (rather than not yet at the moment). */
  exists: boolean;
  /** The log seq the history had reached: the answer includes every event up to it. */
  index_seq: number;
}

export interface BalanceChangesAnswer {
  /** Undefined when the balance does not exist. */
  page: BalanceChangePage | undefined;
  index_seq: number;
}

/**
 * The balance history (index/history-reader.ts), read on the thread that serves the request. Answers
 * are exact as of `visibleSeq` (the seq visible when the request arrived) and show nothing that is not
 * durable; a history too far behind to say is refused (SRCH_INDEX_BEHIND) after a bounded wait.
 */
export interface BalanceHistoryPort {
  balanceAt(balanceId: string, untilMs: number, visibleSeq: number): Promise<Result<BalanceAtAnswer, { code: 'SRCH_INDEX_BEHIND'; message: string }>>;
  balanceChanges(balanceId: string, window: BalanceChangeWindow, visibleSeq: number): Promise<Result<BalanceChangesAnswer, { code: 'SRCH_INDEX_BEHIND'; message: string }>>;
}

export type QueryRefusalCode = 'GEN_BAD_REQUEST' | 'SRCH_QUERY_INVALID' | 'SRCH_INDEX_BEHIND' | 'SRCH_QUERY_TIMEOUT' | 'GEN_CONFLICT' | 'SRCH_REINDEX_IN_PROGRESS';
/** A query's answer in the one result shape (engine/result.ts), refused with a code of its own set. */
export type QueryResult<T> = Result<T, { code: QueryRefusalCode; message: string }>;

/** A facet_by count: the commonest values of one field among the records found. */
export interface FacetCount {
  field_name: string;
  counts: Array<{ count: number; value: string }>;
  total_values: number;
}

export interface SearchResult {
  /** Records found; with group_by, groups found. */
  found: number;
  out_of: number;
  /** The page's records (empty with group_by: the groups hold them). */
  records: QueryRecord[];
  search_time_ms: number;
  facet_counts?: FacetCount[];
  groups?: Array<{ key: unknown[]; found: number; records: QueryRecord[] }>;
  /** What the hits' highlights look for, as the query side resolved it. */
  highlight: HighlightSpec;
  /** The seq the full-text indexes held every record of: the answer finds every record of an event up to it. */
  index_seq: number;
}

export interface QueryPort {
  /**
   * `visibleSeq`: the log seq visible when the request arrived; the answer includes everything up to it
   * (the index is waited for, bounded). `index_seq`: the seq the index held when it answered.
   */
  filter(collection: FilterCollection, query: FilterRequest, visibleSeq: number): Promise<QueryResult<{ records: QueryRecord[]; total_count?: number; index_seq: number }>>;
  /**
   * From the index as it stands: its full-text indexes may trail the log, and the answer says how far
   * (`index_seq`). `requiredSeq` (a caller's X-Folio-Seq): wait, bounded, until the index holds it.
   */
  search(collection: SearchCollection, query: SearchRequest, requiredSeq?: number): Promise<QueryResult<SearchResult>>;
  reindexStatus(): object | Promise<object>;
  startReindex(): QueryResult<object> | Promise<QueryResult<object>>;
  checkpointSeq: number;
  poisonSeq: number;
  lagEvents(): number;
  lagSeconds(): number;
}
