// Writes on a node that does not lead: answered `307 Temporary Redirect` to the same path on the leader
// (the client sends the same method and body there), or `503 REPL_NO_LEADER` with Retry-After while no
// leader is known (between a leader's death and a standby taking over, or while this node rejoins).
// A standby never carries a write itself: it does not forward, so no write is ever in flight on a node
// that could not acknowledge it (docs/decisions-replication.md). Sits after authentication (a request
// that may not write at all is refused here as anywhere) and before the body reader: the body is left
// unread and drained, as for any refusal.
// Requests that add nothing to the log are served where they arrive: reads, the POSTs that only read,
// and the operations on this node's own files (a snapshot, a backup, rebuilding its index).

import type Koa from 'koa';
import { ApiError, BACKPRESSURE_RETRY_AFTER_SECONDS } from './api-error.js';
import { isReadOnlyPost } from './backpressure.js';
import type { ReplicationPort } from './replication-port.js';

/** POST routes that read, or act on this node's own files only: any node serves them. */
const LOCAL_POSTS = new Set(['/multi-search', '/search/reindex', '/admin/snapshots', '/backup']);
const DETOKENIZE = /^\/identities\/[^/]+\/detokenize$/;

/** Whether a request may add to the log, and so must be carried out by the leader. */
export function isLeaderWrite(method: string, path: string): boolean {
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return false;
  if (method !== 'POST') return true;
  return !isReadOnlyPost(path) && !LOCAL_POSTS.has(path) && !DETOKENIZE.test(path);
}

export function sendWritesToLeader(port: ReplicationPort): Koa.Middleware {
  return (ctx, next) => {
    if (!isLeaderWrite(ctx.method, ctx.path)) return next();
    const target = port.writeTarget();
    if (target.kind === 'here') return next();
    if (target.kind === 'none') {
      throw new ApiError('REPL_NO_LEADER', 'no leader is known right now: this node does not take writes; retry shortly', undefined, {
        'Retry-After': String(BACKPRESSURE_RETRY_AFTER_SECONDS),
      });
    }
    if (!ctx.req.complete) ctx.req.resume();
    ctx.status = 307;
    ctx.set('Location', `${target.url}${ctx.originalUrl}`);
    ctx.type = 'application/json';
    ctx.body = JSON.stringify({ message: 'this node is a standby: send the write to the leader', leader: target.url });
    return undefined;
  };
}
