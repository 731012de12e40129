// Read-your-writes across nodes: every answer that went through respond() carries `X-Folio-Seq`, the log
// seq it reflects (for a write, the seq of its last event). A read that sends that header back is held
// until this node has applied the seq, at most SEQ_WAIT_MS_MAX, and refused with 503
// REPL_SEQ_NOT_APPLIED (Retry-After) if it has not by then, never answered from a state that may miss
// the client's own write.
//
// The header is honoured only where a read needs it: on the routes that read the ledger's state
// (route-effects.ts `read`), once the caller is authenticated and authorized for the route (the route
// front puts this check after the access check, route-front.ts). Public routes (/health, the API's
// description), writes and the node's own operations ignore it, a malformed one included: they answer
// nothing a seq could make stale, and a request nobody may make cannot park a wait.
//
// A wait never outlasts what can come: a leader or a single node holds every seq it gave out, so a seq
// past the end of its log is refused at once with 409 REPL_SEQ_BEYOND_LOG, saying where the log ends
// (a client holding a seq of another history, after a restore); a standby refuses it the same way once
// a read of its group's log, begun after the request arrived, finds the group has no such seq yet
// (LedgerRuntime.appliedSeqReached, runtime/seq-waiters.ts). A header that is not a seq is refused (400
// REPL_SEQ_INVALID) rather than ignored.

import type Koa from 'koa';
import { ApiError, BACKPRESSURE_RETRY_AFTER_SECONDS } from '../api-error.js';
import type { LedgerCore } from '../ports/ledger-core.js';

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

/** For a route that reads the ledger's state: holds the request until this node has applied its seq. */
export function waitForRequestedSeq(core: Pick<LedgerCore, 'visibleSeq' | 'appliedSeqReached'>): Koa.Middleware {
  return async (ctx, next) => {
    const seq = requestedSeq(ctx);
    if (seq === undefined || core.visibleSeq() >= seq) return next();
    const wait = await core.appliedSeqReached(seq, SEQ_WAIT_MS_MAX);
    if (wait.outcome === 'beyond_log') {
      throw new ApiError('REPL_SEQ_BEYOND_LOG', `${SEQ_HEADER} ${seq} is past the end of the log, which ends at seq ${wait.log_end_seq}`, { log_end_seq: wait.log_end_seq });
    }
    if (wait.outcome === 'timed_out') {
      throw new ApiError('REPL_SEQ_NOT_APPLIED', `this node has not applied seq ${seq} yet (it stands at ${wait.applied_seq}); retry shortly or ask the leader`, undefined, {
        'Retry-After': String(BACKPRESSURE_RETRY_AFTER_SECONDS),
      });
    }
    return next();
  };
}
