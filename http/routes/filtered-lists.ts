// List GETs with Blnk's query-string filters (`GET /ledgers?name_eq=Savings`): answered by the query
// side like a filter request, as a plain array (as the list itself is), after the index has caught up
// with the caller's own writes.

import type Koa from 'koa';
import { ApiError } from '../api-error.js';
import type { LedgerCore } from '../ports/ledger-core.js';
import { answered, recordView } from '../views/query-answers.js';
import { filtersFromQuery } from '../schemas/query-param-filters.js';
import type { FilterCollection } from '../ports/query-port.js';
import { respond } from '../respond.js';
import { INDEX_SEQ_HEADER } from '../middleware/read-your-writes.js';

/** Answers a filtered list when the query string asks for one; false when it does not (the plain list). */
export async function answeredFilteredList(
  ctx: Koa.Context,
  core: LedgerCore,
  collection: FilterCollection,
  page: { limit: number; offset: number },
): Promise<boolean> {
  const request = filtersFromQuery(ctx.query, page);
  if (!request) return false;
  if (!core.query) throw new ApiError('GEN_BAD_REQUEST', 'filters need the query index, which is off on this server');
  const visibleSeq = core.visibleSeq();
  const result = answered(await core.query.filter(collection, request, visibleSeq));
  ctx.set(INDEX_SEQ_HEADER, String(result.index_seq));
  await respond(ctx, core, 200, result.records.map((record) => recordView(collection, record)), visibleSeq);
  return true;
}
