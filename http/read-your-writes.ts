// Read-your-writes across nodes: every answer that went through respond() carries `X-Folio-Seq`, the log
// seq it reflects (for a write, the seq of its last event). A request that sends that header back is
// held until this node has applied the seq, at most SEQ_WAIT_MS_MAX, and refused with 503
// REPL_SEQ_NOT_APPLIED (Retry-After) if it has not by then, never answered from a state that may miss
// the client's own write. On a leader, or a single node, every seq it ever gave out is applied already.
// A header that is not a seq is refused (400 REPL_SEQ_INVALID) rather than ignored.

import type Koa from 'koa';
import { ApiError, BACKPRESSURE_RETRY_AFTER_SECONDS } from './api-error.js';
import type { LedgerCore } from './ledger-core.js';

export const SEQ_HEADER = 'X-Folio-Seq';
/** On answers from a store derived from the log (the query index, the balance history): the seq it had reached. */
export const INDEX_SEQ_HEADER = 'X-Folio-Index-Seq';
/** The longest a request waits for its seq to be applied. */
export const SEQ_WAIT_MS_MAX = 5_000;
/** Digits in a seq (beyond 2^53 it is not one). */
const SEQ_TEXT = /^[0-9]{1,16}$/;

/** The seq a request asks to see, if it sends one; refuses a header that is not one. */
export function requestedSeq(ctx: Koa.Context): number | undefined {
  const text = ctx.get(SEQ_HEADER);
  if (text === '') return undefined;
  const seq = SEQ_TEXT.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(seq)) {
    throw new ApiError('REPL_SEQ_INVALID', `${SEQ_HEADER} must be a log seq (a whole number from a ${SEQ_HEADER} answer header)`);
  }
  return seq;
}

export function waitForRequestedSeq(core: Pick<LedgerCore, 'visibleSeq' | 'appliedSeqReached'>): Koa.Middleware {
  return async (ctx, next) => {
    const seq = requestedSeq(ctx);
    if (seq !== undefined && core.visibleSeq() < seq && !(await core.appliedSeqReached(seq, SEQ_WAIT_MS_MAX))) {
      throw new ApiError('REPL_SEQ_NOT_APPLIED', `this node has not applied seq ${seq} yet (it stands at ${core.visibleSeq()}); retry shortly or ask the leader`, undefined, {
        'Retry-After': String(BACKPRESSURE_RETRY_AFTER_SECONDS),
      });
    }
    return next();
  };
}
