// Writes on a node that does not lead: answered `307 Temporary Redirect` to the same path on the leader
// (the client sends the same method and body there), or `503 REPL_NO_LEADER` with Retry-After while no
// leader is known (between a leader's death and a standby taking over, or while this node rejoins).
// A standby never carries a write itself: it does not forward, so no write is ever in flight on a node
// that could not acknowledge it (docs/decisions-replication.md). The route front (route-front.ts) puts
// this in front of the routes that may add to the log (route-effects.ts `write`: the decision is the
// route's, not the path's), after the access check and before the body is read: the body is left
// unread and drained, as for any refusal. Reads and the node's own operations are served where they
// arrive.
//
// The Location is the leader's origin (parsed from its URL) followed by the request's own path and query
// as the router read them: a request sent in absolute form (`POST http://elsewhere/ledgers`) is sent to
// the leader's `/ledgers`, never to a host the client named.

import type Koa from 'koa';
import { ApiError, BACKPRESSURE_RETRY_AFTER_SECONDS } from '../api-error.js';
import type { ReplicationPort } from '../ports/replication-port.js';

/** Where a write that arrived as `ctx` is sent: the leader's origin, this request's path and query. */
export function leaderLocation(leaderUrl: string, ctx: Pick<Koa.Context, 'path' | 'search'>): string {
  const { origin } = new URL(leaderUrl);
  // The router matched this path, so it starts with `/`: nothing of it can change the origin.
  return `${origin}${ctx.path}${ctx.search}`;
}

export function sendWritesToLeader(port: ReplicationPort): Koa.Middleware {
  return (ctx, next) => {
    const target = port.writeTarget();
    if (target.kind === 'here') return next();
    if (target.kind === 'none') {
      throw new ApiError('REPL_NO_LEADER', 'no leader is known right now: this node does not take writes; retry shortly', undefined, {
        'Retry-After': String(BACKPRESSURE_RETRY_AFTER_SECONDS),
      });
    }
    if (!ctx.req.complete) ctx.req.resume();
    ctx.status = 307;
    ctx.set('Location', leaderLocation(target.url, ctx));
    ctx.type = 'application/json';
    ctx.body = JSON.stringify({ message: 'this node is a standby: send the write to the leader', leader: target.url });
    return undefined;
  };
}
