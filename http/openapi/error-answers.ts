// The error codes one route can answer, grouped by status. A route declares the codes it raises itself
// (RouteDoc.errors); the ones the middleware in front of every route raises are worked out here from
// the same rules the middleware follows (app.ts and route-front.ts list the order), so they cannot
// drift apart:
//   the HTTP server, before any route        every route: an Expect other than 100-continue, a request
//                                            out of time, bytes Node's parser refuses (client-error.ts),
//                                            a connection over its address's cap (connection-admission.ts)
//   loopback Host check, shutdown guard      every route
//   authentication and the route's guard     every route that is not public (route-scopes.ts), and the
//                                            key's rate limit (rate-buckets.ts)
//   writes to the leader                     writes that add to the log, on a replicated node (leader-redirect.ts)
//   read-your-writes (X-Folio-Seq)           reads of the ledger's state, not public (read-your-writes.ts)
//   cutover fence and write backpressure     writes and the node's own operations (route-effects.ts)
//   body reader                              POST and PUT (json-body.ts)
//   schema validation                        routes with a body or query schema

import { STATUS_BY_CODE, type ErrorCode } from '../api-error.js';
import { routeEffect } from '../middleware/route-effects.js';
import { routeAccess } from '../access/route-scopes.js';
import { CUTOVER_PATH_PREFIX } from '../routes/cutover-routes.js';
import type { RouteDoc } from './route-docs.js';

export function errorCodesOf(method: string, path: string, doc: RouteDoc | undefined): ErrorCode[] {
  const codes = new Set<ErrorCode>(['GEN_EXPECTATION_FAILED', 'GEN_REQUEST_TIMEOUT', 'GEN_MALFORMED_REQUEST', 'GEN_FORBIDDEN_HOST', 'GEN_SHUTTING_DOWN', 'GEN_CONNECTIONS_EXCEEDED']);
  const access = routeAccess(method, path);
  if (access.kind !== 'public') {
    for (const code of ['AUTH_MISSING_API_KEY', 'AUTH_INVALID_API_KEY', 'AUTH_EXPIRED_API_KEY', 'GEN_RATE_LIMITED'] as const) codes.add(code);
    codes.add(access.kind === 'master' ? 'AUTH_MASTER_KEY_REQUIRED' : 'AUTH_INSUFFICIENT_PERMISSIONS');
  }
  const effect = routeEffect(method, path);
  if (effect === 'write') {
    codes.add('REPL_NO_LEADER');
    codes.add('REPL_NOT_LEADER');
  }
  if (effect === 'read' && access.kind !== 'public') {
    for (const code of ['REPL_SEQ_INVALID', 'REPL_SEQ_BEYOND_LOG', 'REPL_SEQ_NOT_APPLIED'] as const) codes.add(code);
  }
  if (effect !== 'read') {
    codes.add('QUEUE_BACKPRESSURE');
    if (!path.startsWith(CUTOVER_PATH_PREFIX)) codes.add('CUTOVER_FENCED');
  }
  if (method === 'POST' || method === 'PUT') {
    for (const code of ['GEN_PAYLOAD_TOO_LARGE', 'GEN_UNSUPPORTED_MEDIA_TYPE', 'GEN_BODY_BYTES_IN_FLIGHT_EXCEEDED'] as const) codes.add(code);
  }
  if (doc?.body || doc?.query) codes.add(doc.invalidCode ?? 'GEN_VALIDATION_ERROR');
  for (const code of doc?.errors ?? []) codes.add(code);
  return [...codes];
}

/** Codes by the status they are answered with, statuses in ascending order. */
export function byStatus(codes: readonly ErrorCode[]): Map<number, ErrorCode[]> {
  const groups = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = STATUS_BY_CODE[code];
    groups.set(status, [...(groups.get(status) ?? []), code]);
  }
  return new Map([...groups.entries()].sort(([a], [b]) => a - b));
}
