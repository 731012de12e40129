// Write backpressure: while the log or the lookups are too far behind to take more (LedgerCore.overloaded),
// a write is refused up front with 503 QUEUE_BACKPRESSURE and Retry-After, before its body is read,
// rather than buffered without bound. While the query index is too far behind the log
// (LedgerCore.writeAdmission), a write first waits for it, a bounded time, its body still unread, and is
// refused the same way only if the index has not come back within its bound by then. The route front
// (route-front.ts) puts this in front of the routes that write or act on the node (route-effects.ts):
// reads, the POST routes that only read included, go on.

import type Koa from 'koa';
import { ApiError, BACKPRESSURE_RETRY_AFTER_SECONDS } from '../api-error.js';
import type { LedgerCore } from '../ports/ledger-core.js';

/** Refuses a write up front while the log or the lookups are too far behind to take more; holds it while the index is. */
export function refuseWhenOverloaded(core: Pick<LedgerCore, 'overloaded' | 'writeAdmission'>): Koa.Middleware {
  return async (ctx, next) => {
    const overloaded = core.overloaded();
    // A body's size decides how many held writes go at once when the index is idle; one that does not
    // say (chunked) counts as large.
    const admission = overloaded === undefined ? core.writeAdmission(ctx.request.length ?? Number.MAX_SAFE_INTEGER) : undefined;
    const reason = overloaded ?? (admission && (await admission));
    if (reason) {
      throw new ApiError('QUEUE_BACKPRESSURE', reason, undefined, { 'Retry-After': String(BACKPRESSURE_RETRY_AFTER_SECONDS) });
    }
    return next();
  };
}
