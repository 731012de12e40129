// The query side over HTTP: filters (POST /<collection>/filter), full-text search (POST
// /search/<collection>) and index rebuilds (POST and GET /search/reindex). Each query carries the log seq
// visible when the request arrived, so the index answers only once it holds the caller's own writes.

import type { Router } from '@koa/router';
import type Koa from 'koa';
import { ApiError } from '../api-error.js';
import type { LedgerCore } from '../ledger-core.js';
import { answered, recordView as view } from '../query-answers.js';
import { filterSchema, multiSearchSchema, validateSearch, type SearchBody } from '../query-schemas.js';
import type { FilterCollection, QueryPort } from '../query-port.js';
import { respond } from '../respond.js';
import { validate } from '../validation.js';

const FILTER_COLLECTIONS: readonly FilterCollection[] = ['ledgers', 'balances', 'transactions', 'identities'];
/** Searchable collections; reconciliations answer empty until reconciliation records exist. */
const SEARCH_COLLECTIONS = [...FILTER_COLLECTIONS, 'reconciliations'] as const;


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
    await respond(ctx, core, 200, await searchAnswer(query, collection, validateSearch(ctx.request.body), visibleSeq), visibleSeq);
  });

  // Blnk's multi-search (Typesense's): several searches in one request, one result each, in order; a
  // search that cannot run is answered in its place as `{code, error}` and the others still run.
  router.post('/multi-search', async (ctx: Koa.Context) => {
    const visibleSeq = core.visibleSeq();
    const { searches } = validate(multiSearchSchema, ctx.request.body);
    const results: unknown[] = [];
    for (const search of searches) {
      try {
        if (!(SEARCH_COLLECTIONS as readonly string[]).includes(search.collection)) {
          throw new ApiError('GEN_NOT_FOUND', `no search collection ${JSON.stringify(search.collection)}; collections: ${SEARCH_COLLECTIONS.join(', ')}`);
        }
        const { collection: _collection, ...body } = search;
        results.push(await searchAnswer(query, search.collection, validateSearch(body), visibleSeq));
      } catch (error) {
        if (!(error instanceof ApiError) || error.status >= 500) throw error;
        results.push({ code: error.status, error: error.message });
      }
    }
    await respond(ctx, core, 200, { results }, visibleSeq);
  });
}

/** Searches one collection and answers as Typesense does (each hit a `document`). */
async function searchAnswer(query: QueryPort, collection: string, body: SearchBody, visibleSeq: number): Promise<Record<string, unknown>> {
  const requestParams = { collection_name: collection, per_page: body.per_page, q: body.q };
  if (collection === 'reconciliations') {
    return { found: 0, hits: [], out_of: 0, page: body.page, request_params: requestParams, search_time_ms: 0 };
  }
  const filterCollection = collection as FilterCollection;
  const result = answered(await query.search(filterCollection, body, visibleSeq));
  return {
    found: result.found,
    hits: result.records.map((record) => ({ document: view(filterCollection, record) })),
    out_of: result.out_of,
    page: body.page,
    request_params: requestParams,
    search_time_ms: result.search_time_ms,
  };
}
