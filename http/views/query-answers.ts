// Answers of the query side on the wire, shared by the filter and search routes and by list GETs with
// filters in their query string: each record in the shape its own GET shows, and the query side's
// refusals as API errors (with Retry-After when waiting helps).

import { ApiError, BACKPRESSURE_RETRY_AFTER_SECONDS } from '../api-error.js';
import { identityView } from './identity-view.js';
import type { QueryRecord, QueryResult, SearchCollection } from '../ports/query-port.js';
import { transactionJson } from '../../wire/transaction-json.js';
import { balanceView, ledgerView } from '../../wire/views.js';
import { reconciliationView } from '../../wire/reconciliation-views.js';

const VIEWS: Record<SearchCollection, (record: never) => unknown> = {
  ledgers: ledgerView,
  balances: balanceView,
  transactions: transactionJson,
  identities: identityView,
  reconciliations: reconciliationView,
};

/** A record as the GET endpoints of its collection show it. */
export function recordView(collection: SearchCollection, record: QueryRecord): unknown {
  return VIEWS[collection](record as never);
}

/** The value of a query, or its refusal as an API error. */
export function answered<T>(result: QueryResult<T>): T {
  if (result.ok) return result.value;
  const { code, message } = result.rejection;
  const headers = code === 'SRCH_INDEX_BEHIND' || code === 'SRCH_QUERY_TIMEOUT'
    ? { 'Retry-After': String(BACKPRESSURE_RETRY_AFTER_SECONDS) }
    : undefined;
  throw new ApiError(code, message, undefined, headers);
}
