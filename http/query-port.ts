// What the HTTP layer needs from the query side (index/), declared here as the consumer sees it, the way
// ledger-core.ts declares the ledger: app/ wires the SQLite index in, and the compiler checks that it
// fits. Requests arrive already shape-checked by zod; the query side judges fields, operators and
// expressions and answers with a value or a coded refusal.

import type { BalanceRecord, IdentityRecord, LedgerRecord, TransactionRecord } from '../engine/records.js';
import type { ReconciliationRecord } from '../engine/reconciliation-records.js';
import type { FilterRequest, SearchRequest } from '../wire/query-requests.js';

export type FilterCollection = 'ledgers' | 'balances' | 'transactions' | 'identities';
/** Searchable collections: the filterable ones and reconciliation runs. */
export type SearchCollection = FilterCollection | 'reconciliations';

export type QueryRecord = LedgerRecord | BalanceRecord | TransactionRecord | IdentityRecord | ReconciliationRecord;

export type QueryRefusalCode = 'GEN_BAD_REQUEST' | 'SRCH_QUERY_INVALID' | 'SRCH_INDEX_BEHIND' | 'SRCH_QUERY_TIMEOUT' | 'GEN_CONFLICT' | 'SRCH_REINDEX_IN_PROGRESS';
export type QueryResult<T> = { ok: true; value: T } | { ok: false; code: QueryRefusalCode; message: string };

export interface QueryPort {
  /** `visibleSeq`: the log seq visible when the request arrived; the answer includes everything up to it. */
  filter(collection: FilterCollection, query: FilterRequest, visibleSeq: number): Promise<QueryResult<{ records: QueryRecord[]; total_count?: number }>>;
  search(collection: SearchCollection, query: SearchRequest, visibleSeq: number): Promise<QueryResult<{
    found: number;
    out_of: number;
    records: QueryRecord[];
    search_time_ms: number;
  }>>;
  reindexStatus(): object;
  startReindex(): QueryResult<object>;
  checkpointSeq: number;
  poisonSeq: number;
  lagEvents(): number;
  lagSeconds(): number;
}
