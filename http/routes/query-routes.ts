// The query side over HTTP: filters (POST /<collection>/filter), full-text search (POST
// /search/<collection>) and index rebuilds (POST and GET /search/reindex). Each query carries the log seq
// visible when the request arrived, so the index answers only once it holds the caller's own writes.

import type { Router } from '@koa/router';
import type Koa from 'koa';
import { z } from 'zod';
import { ApiError } from '../api-error.js';
import { identityJsonSchema } from '../views/identity-view.js';
import type { LedgerCore } from '../ports/ledger-core.js';
import { EXAMPLES } from '../openapi/examples.js';
import { answers, describeRoute } from '../openapi/route-docs.js';
import { answered, recordView as view } from '../views/query-answers.js';
import { searchAnswer as typesenseAnswer } from '../views/search-answer.js';
import { filterSchema, multiSearchSchema, searchSchema, validateSearch, type SearchBody } from '../schemas/query-schemas.js';
import type { FilterCollection, QueryPort, SearchCollection } from '../ports/query-port.js';
import { respond, respondFromIndex } from '../respond.js';
import { INDEX_SEQ_HEADER, requestedSeq } from '../middleware/read-your-writes.js';
import { validate } from '../schemas/validation.js';
import { transactionJsonSchema } from '../../wire/transaction-json.js';
import { balanceJsonSchema, ledgerJsonSchema } from '../../wire/views.js';
import { reconciliationJsonSchema } from './reconciliation-routes.js';

const RECORD_SCHEMAS: Record<FilterCollection, z.ZodType> = {
  ledgers: ledgerJsonSchema,
  balances: balanceJsonSchema,
  transactions: transactionJsonSchema,
  identities: identityJsonSchema,
};
const QUERY_ERRORS = ['SRCH_QUERY_INVALID', 'SRCH_INDEX_BEHIND', 'SRCH_QUERY_TIMEOUT', 'GEN_BAD_REQUEST'] as const;
const reindexStatusSchema = z.object({
  status: z.enum(['idle', 'in_progress', 'completed', 'failed']),
  started_at: z.string().optional(),
  finished_at: z.string().optional(),
  processed_seq: z.number().int(),
  target_seq: z.number().int(),
  progress: z.number(),
  rows_written: z.number().int(),
  rows_per_second: z.number(),
  error: z.string().optional(),
  index_checkpoint_seq: z.number().int(),
  index_lag_events: z.number().int(),
  index_lag_seconds: z.number(),
  index_text_checkpoint_seq: z.number().int().meta({ description: 'The seq every record of which the full-text indexes hold: they follow the rows and may trail them' }),
  index_text_lag_events: z.number().int(),
  index_poison: z.object({ seq: z.number().int(), message: z.string(), attempts: z.number().int(), since: z.string() }).optional(),
  phase: z.string(),
  total_records: z.number().int(),
  processed_records: z.number().int(),
  completed_at: z.string().optional(),
  errors: z.array(z.string()).optional(),
  paused: z.boolean().meta({ description: 'Blnk\'s field; a rebuild here never pauses' }),
}).meta({ id: 'ReindexStatus' });
const reindexExample = {
  status: 'completed', processed_seq: 120, target_seq: 120, progress: 1, rows_written: 240, rows_per_second: 0,
  index_checkpoint_seq: 120, index_lag_events: 0, index_lag_seconds: 0, index_text_checkpoint_seq: 120, index_text_lag_events: 0, phase: 'completed', total_records: 120, processed_records: 120, paused: false,
};
const searchHitSchema = z.object({
  // Every field may be missing: include_fields and exclude_fields cut the record to what they name.
  document: z.union([ledgerJsonSchema, balanceJsonSchema, transactionJsonSchema, identityJsonSchema, reconciliationJsonSchema].map((record) => record.partial()))
    .meta({ description: 'The record as its GET route shows it, cut to include_fields / exclude_fields' }),
  highlights: z.array(z.object({ field: z.string(), matched_tokens: z.array(z.string()), snippet: z.string(), value: z.string().optional() })).optional()
    .meta({ description: "Typesense's first highlight form (left out with enable_highlight_v1: false); metadata is in `highlight` only" }),
  highlight: z.record(z.string(), z.unknown()).meta({ description: "Typesense's second form: {field: {matched_tokens, snippet, value?}}, metadata nested" }),
});
const searchAnswerSchema = z.object({
  facet_counts: z.array(z.object({
    counts: z.array(z.object({ count: z.number().int(), highlighted: z.string(), value: z.string() })),
    field_name: z.string(),
    stats: z.object({ total_values: z.number().int() }),
  })),
  found: z.number().int().meta({ description: 'Records found; with group_by, groups found' }),
  grouped_hits: z.array(z.object({ found: z.number().int(), group_key: z.array(z.unknown()), hits: z.array(searchHitSchema) })).optional()
    .meta({ description: 'With group_by, in place of hits' }),
  hits: z.array(searchHitSchema).optional(),
  out_of: z.number().int(),
  page: z.number().int(),
  request_params: z.object({ collection_name: z.string(), per_page: z.number().int(), q: z.string() }),
  search_cutoff: z.boolean(),
  search_time_ms: z.number(),
});

const FILTER_COLLECTIONS: readonly FilterCollection[] = ['ledgers', 'balances', 'transactions', 'identities'];
/** Searchable collections: the filterable ones and reconciliation runs (dry runs are never stored). */
const SEARCH_COLLECTIONS: readonly SearchCollection[] = [...FILTER_COLLECTIONS, 'reconciliations'];


export function queryRoutes(router: Router, core: LedgerCore, query: QueryPort): void {
  for (const collection of FILTER_COLLECTIONS) {
    describeRoute(router, `POST /${collection}/filter`, {
      tag: 'Search', summary: `Filter ${collection}`, body: filterSchema,
      bodyExample: { filters: [{ field: 'currency', operator: 'eq', value: 'USD' }], limit: 20, include_count: true },
      answers: answers(200, `A page of ${collection}`, z.object({ data: z.array(RECORD_SCHEMAS[collection]), total_count: z.number().int().optional() })),
      errors: QUERY_ERRORS,
    });
    router.post(`/${collection}/filter`, async (ctx) => {
      const visibleSeq = core.visibleSeq();
      const body = validate(filterSchema, ctx.request.body);
      const page = answered(await query.filter(collection, body, visibleSeq));
      const answer: Record<string, unknown> = { data: page.records.map((record) => view(collection, record)) };
      if (page.total_count !== undefined) answer.total_count = page.total_count;
      ctx.set(INDEX_SEQ_HEADER, String(page.index_seq));
      await respond(ctx, core, 200, answer, visibleSeq);
    });
  }

  describeRoute(router, 'GET /search/reindex', { tag: 'Search', summary: 'How the latest index rebuild went, and the live index lag', answers: answers(200, 'The status', reindexStatusSchema, reindexExample) });
  router.get('/search/reindex', async (ctx) => {
    await respond(ctx, core, 200, await query.reindexStatus(), 0);
  });

  describeRoute(router, 'POST /search/reindex', { tag: 'Search', summary: 'Rebuild the query index from the log, in the background', answers: answers(202, 'Started', reindexStatusSchema, { ...reindexExample, status: 'in_progress', phase: 'indexing', progress: 0 }), errors: ['SRCH_REINDEX_IN_PROGRESS', 'GEN_CONFLICT'] });
  router.post('/search/reindex', async (ctx) => {
    await respond(ctx, core, 202, answered(await query.startReindex()), 0);
  });

  describeRoute(router, 'POST /search/:collection', {
    tag: 'Search', summary: 'Full-text search of a collection', params: { collection: `One of ${SEARCH_COLLECTIONS.join(', ')}` },
    body: searchSchema, bodyRequired: false, bodyExample: { q: 'order', per_page: 10 }, invalidCode: 'SRCH_QUERY_INVALID',
    answers: answers(200, 'The hits', searchAnswerSchema, {
      facet_counts: [], found: 1,
      hits: [{ document: EXAMPLES.transaction, highlights: [{ field: 'description', matched_tokens: ['Order'], snippet: '<mark>Order</mark> 1042' }], highlight: { description: { matched_tokens: ['Order'], snippet: '<mark>Order</mark> 1042' } } }],
      out_of: 40, page: 1, request_params: { collection_name: 'transactions', per_page: 10, q: 'order' }, search_cutoff: false, search_time_ms: 2,
    }),
    errors: [...QUERY_ERRORS, 'GEN_NOT_FOUND'],
  });
  // A search answers from the index as it stands (its full-text indexes may trail the log) and says how
  // far it was in X-Folio-Index-Seq (and X-Folio-Seq: the seq it reflects); with X-Folio-Seq sent, it
  // first waits (bounded) until the index holds that seq. It shows nothing that is not durable.
  router.post('/search/:collection', async (ctx: Koa.Context) => {
    const collection = ctx.params.collection as string;
    if (!(SEARCH_COLLECTIONS as readonly string[]).includes(collection)) {
      throw new ApiError('GEN_NOT_FOUND', `no search collection ${JSON.stringify(collection)}; collections: ${SEARCH_COLLECTIONS.join(', ')}`);
    }
    const { answer, index_seq: indexSeq } = await searchAnswer(query, collection, validateSearch(ctx.request.body), requestedSeq(ctx));
    respondFromIndex(ctx, 200, answer, indexSeq, indexSeq);
  });

  // Blnk's multi-search (Typesense's): several searches in one request, one result each, in order; a
  // search that cannot run is answered in its place as `{code, error}` and the others still run.
  describeRoute(router, 'POST /multi-search', {
    tag: 'Search', summary: 'Several searches in one request, one result each, in order', body: multiSearchSchema,
    bodyExample: { searches: [{ collection: 'transactions', q: 'order' }, { collection: 'balances', q: '*' }] },
    answers: answers(200, 'A result per search', z.object({ results: z.array(z.union([searchAnswerSchema, z.object({ code: z.number().int(), error: z.string() })])) })),
    // A search refused for what it asks is answered in its place; the index not answering in time is the whole request's.
    errors: ['SRCH_INDEX_BEHIND', 'SRCH_QUERY_TIMEOUT'],
  });
  router.post('/multi-search', async (ctx: Koa.Context) => {
    const requiredSeq = requestedSeq(ctx);
    const { searches } = validate(multiSearchSchema, ctx.request.body);
    const results: unknown[] = [];
    // The answer is as of the least advanced index any of its searches saw.
    let indexSeq = Number.MAX_SAFE_INTEGER;
    for (const search of searches) {
      try {
        if (!(SEARCH_COLLECTIONS as readonly string[]).includes(search.collection)) {
          throw new ApiError('GEN_NOT_FOUND', `no search collection ${JSON.stringify(search.collection)}; collections: ${SEARCH_COLLECTIONS.join(', ')}`);
        }
        const { collection: _collection, ...body } = search;
        const searched = await searchAnswer(query, search.collection, validateSearch(body), requiredSeq);
        indexSeq = Math.min(indexSeq, searched.index_seq);
        results.push(searched.answer);
      } catch (error) {
        if (!(error instanceof ApiError) || error.status >= 500) throw error;
        results.push({ code: error.status, error: error.message });
      }
    }
    if (indexSeq === Number.MAX_SAFE_INTEGER) indexSeq = query.checkpointSeq;
    respondFromIndex(ctx, 200, { results }, indexSeq, indexSeq);
  });
}

/** The fields of each collection's documents (what include_fields and exclude_fields may name). */
const DOCUMENT_FIELDS: Record<SearchCollection, ReadonlySet<string>> = {
  ...(Object.fromEntries(FILTER_COLLECTIONS.map((collection) => [collection, fieldsOf(RECORD_SCHEMAS[collection])])) as Record<FilterCollection, ReadonlySet<string>>),
  reconciliations: fieldsOf(reconciliationJsonSchema),
};

function fieldsOf(schema: z.ZodType): ReadonlySet<string> {
  return new Set(Object.keys((schema as z.ZodObject).shape));
}

/** Searches one collection and answers as Typesense does (search-answer.ts), with the seq the index held. */
async function searchAnswer(query: QueryPort, collection: string, body: SearchBody, requiredSeq: number | undefined): Promise<{ answer: Record<string, unknown>; index_seq: number }> {
  const searchCollection = collection as SearchCollection;
  const result = answered(await query.search(searchCollection, body, requiredSeq));
  return { answer: typesenseAnswer(searchCollection, body, result, DOCUMENT_FIELDS[searchCollection]), index_seq: result.index_seq };
}
