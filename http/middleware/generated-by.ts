// Blnk marks what an API key creates: a POST made with an API key gets `meta_data.BLNK_GENERATED_BY` set
// to the key's id before the body is read as a command (Blnk's auth middleware does the same to the raw
// body; a request without a body is left alone, as there). Here it applies to the routes whose records carry metadata: ledgers, balances, transactions
// (single; a bulk's items are not marked, as in Blnk), identities, refunds and metadata updates. A
// body whose meta_data is present but not an object is left for validation to refuse. The master key
// marks nothing, as in Blnk. The route front (route-front.ts) runs this after the body is read, on the
// routes marksGeneratedBy names by their pattern.

import type Koa from 'koa';
import type { Principal } from '../access/auth.js';

export const GENERATED_BY_KEY = 'BLNK_GENERATED_BY';

/** The record-creating POST routes, by the pattern they register (the route front marks only these). */
const MARKED_ROUTES: ReadonlySet<string> = new Set(['/ledgers', '/balances', '/transactions', '/identities', '/refund-transaction/:id', '/:id/metadata']);

/** Whether the route registered as `pattern` marks what it creates when called with `method`. */
export function marksGeneratedBy(method: string, pattern: string): boolean {
  return method === 'POST' && MARKED_ROUTES.has(pattern);
}

/** For a route that marks (marksGeneratedBy), after its body is read. */
export function markGeneratedBy(): Koa.Middleware {
  return (ctx, next) => {
    const principal = ctx.state.principal as Principal | undefined;
    if (principal?.kind !== 'api_key') return next();
    const body: unknown = ctx.request.body;
    const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
    // No body (a refund may have none) is left without one, as Blnk leaves it; a body that is not an
    // object is for validation to refuse.
    if (!isObject(body)) return next();
    const metaData = body.meta_data;
    if (metaData !== undefined && metaData !== null && !isObject(metaData)) return next();
    ctx.request.body = { ...body, meta_data: { ...(metaData ?? {}), [GENERATED_BY_KEY]: principal.apiKeyId } };
    return next();
  };
}
