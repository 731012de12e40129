// Answering only with what is durable. The body is rendered the moment the handler has it (so it shows
// the state as of `seq`), then the response waits until the log holds everything up to `seq` on disk.
// A client therefore never sees a value that a crash could take back.

import type Koa from 'koa';
import { ApiError, BACKPRESSURE_RETRY_AFTER_SECONDS, fromRejection } from './api-error.js';
import { toJsonText } from './json-text.js';
import type { LedgerCore } from './ledger-core.js';
import type { Outcome } from '../engine/ledger-engine.js';

export async function respond(ctx: Koa.Context, core: LedgerCore, status: number, value: unknown, seq = core.visibleSeq()): Promise<void> {
  const body = toJsonText(value);
  await core.durable(seq);
  ctx.status = status;
  ctx.type = 'application/json';
  ctx.body = body;
}

/** The value of an accepted command, or the rejection as an API error. */
export function accepted<T>(outcome: Outcome<T>): { value: T; seq: number } {
  if (!outcome.ok) throw fromRejection(outcome.rejection);
  return outcome;
}

/** POST routes that only read (filter and search): they add nothing to the log, so overload does not stop them. */
export function isReadOnlyPost(path: string): boolean {
  return path.endsWith('/filter') || (path.startsWith('/search/') && path !== '/search/reindex');
}

/** Refuses a write up front while the log or the lookups are too far behind to take more. */
export function refuseWhenOverloaded(core: LedgerCore): Koa.Middleware {
  return async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD' && !isReadOnlyPost(ctx.path)) {
      const reason = core.overloaded();
      if (reason) {
        throw new ApiError('QUEUE_BACKPRESSURE', reason, undefined, { 'Retry-After': String(BACKPRESSURE_RETRY_AFTER_SECONDS) });
      }
    }
    return next();
  };
}
