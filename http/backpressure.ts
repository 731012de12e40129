// Write backpressure: while the log or the lookups are too far behind to take more (LedgerCore.overloaded),
// every write is refused up front with 503 QUEUE_BACKPRESSURE and Retry-After, before its body is
// decided, rather than buffered without bound. While the query index is too far behind the log
// (LedgerCore.writeAdmission), a write first waits for it, a bounded time, and is refused the same way
// only if the index has not come back within its bound by then. Reads, and the POST routes that only
// read, go on.

import type Koa from 'koa';
import { ApiError, BACKPRESSURE_RETRY_AFTER_SECONDS } from './api-error.js';
import type { LedgerCore } from './ledger-core.js';

/** POST routes that only read (filter and search): they add nothing to the log, so overload does not stop them. */
export function isReadOnlyPost(path: string): boolean {
  return path.endsWith('/filter') || (path.startsWith('/search/') && path !== '/search/reindex');
}

/** Refuses a write up front while the log or the lookups are too far behind to take more; holds it while the index is. */
export function refuseWhenOverloaded(core: LedgerCore): Koa.Middleware {
  return async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD' && !isReadOnlyPost(ctx.path)) {
      const overloaded = core.overloaded();
      // A body's size decides how many held writes go at once when the index is idle; one that does not
      // say (chunked) counts as large.
      const admission = overloaded === undefined ? core.writeAdmission(ctx.request.length ?? Number.MAX_SAFE_INTEGER) : undefined;
      const reason = overloaded ?? (admission && (await admission));
      if (reason) {
        throw new ApiError('QUEUE_BACKPRESSURE', reason, undefined, { 'Retry-After': String(BACKPRESSURE_RETRY_AFTER_SECONDS) });
      }
    }
    return next();
  };
}
