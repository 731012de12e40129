// The query side over HTTP: filters (POST /<collection>/filter), full-text search (POST
// /search/<collection>) and index rebuilds (POST and GET /search/reindex). Each query carries the log seq
// visible when the request arrived, so the index answers only once it holds the caller's own writes.

import type { Router } from '@koa/router';
import type Koa from 'koa';
import { ApiError, BACKPRESSURE_RETRY_AFTER_SECONDS } from '../api-error.js';
import { identityView } from '../identity-view.js';
import type { LedgerCore } from '../ledger-core.js';
import { filterSchema, validateSearch } from '../query-schemas.js';
import type { FilterCollection, QueryPort, QueryRecord, QueryResult, SearchCollection } from '../query-port.js';
import { respond } from '../respond.js';
import { validate } from '../validation.js';
import { transactionJson } from '../../wire/transaction-json.js';
import { balanceView, ledgerView } from '../../wire/views.js';
import { reconciliationView } from '../../wire/reconciliation-views.js';

const FILTER_COLLECTIONS: readonly FilterCollection[] = ['ledgers', 'balances', 'transactions', 'identities'];
/** Searchable collections: the filterable ones and reconciliation runs (dry runs are never stored). */
const SEARCH_COLLECTIONS: readonly SearchCollection[] = [...FILTER_COLLECTIONS, 'reconciliations'];

const VIEWS: Record<SearchCollection, (record: never) => unknown> = {
  ledgers: ledgerView,
  balances: balanceView,
  transactions: transactionJson,
  identities: identityView,
  reconciliations: reconciliationView,
};

function view(collection: SearchCollection, record: QueryRecord): unknown {
  return VIEWS[collection](record as never);
}

function answered<T>(result: QueryResult<T>): T {
  if (result.ok) return result.value;
  const headers = result.code === 'SRCH_INDEX_BEHIND' || result.code === 'SRCH_QUERY_TIMEOUT'
    ? { 'Retry-After': String(BACKPRESSURE_RETRY_AFTER_SECONDS) }
    : undefined;
  throw new ApiError(result.code, result.message, undefined, headers);
}

export function queryRoutes(router: Router, core: LedgerCore, query: QueryPort): void {
  for (const collection of FILTER_COLLECTIONS) {
    router.post(`/${collection}/filter`, async (ctx) => {
      const visibleSeq = core.visibleSeq();
      const body = validate(filterSchema, ctx.request.body);
      const page = answered(await query.filter(collection, body, visibleSeq));
      const answer: Record<string, unknown> = { data: page.records.map((record) => view(collection, record)) };
      if (page.total_count !== undefined) answer.total_count = page.total_count;
      await respond(ctx, core, 200, answer, visibleSeq);
    });
  }

  router.get('/search/reindex', async (ctx) => {
    await respond(ctx, core, 200, query.reindexStatus(), 0);
  });

  router.post('/search/reindex', async (ctx) => {
    await respond(ctx, core, 202, answered(query.startReindex()), 0);
  });

  router.post('/search/:collection', async (ctx: Koa.Context) => {
    const visibleSeq = core.visibleSeq();
    const collection = ctx.params.collection as string;
    if (!(SEARCH_COLLECTIONS as readonly string[]).includes(collection)) {
      throw new ApiError('GEN_NOT_FOUND', `no search collection ${JSON.stringify(collection)}; collections: ${SEARCH_COLLECTIONS.join(', ')}`);
    }
    const body = validateSearch(ctx.request.body);
    const requestParams = { collection_name: collection, per_page: body.per_page, q: body.q };
    const searchCollection = collection as SearchCollection;
    const result = answered(await query.search(searchCollection, body, visibleSeq));
    await respond(ctx, core, 200, {
      found: result.found,
      hits: result.records.map((record) => ({ document: view(searchCollection, record) })),
      out_of: result.out_of,
      page: body.page,
      request_params: requestParams,
      search_time_ms: result.search_time_ms,
    }, visibleSeq);
  });
}
