// What each route does to the ledger, decided by the pattern the route registered, never by the text of
// the request's path: `POST /refund-transaction/filter` is a refund of the transaction `filter` (a write),
// however its path ends. Three kinds:
//   read    adds nothing to the log: GET and HEAD, and the POSTs that only read (filters and searches).
//           Any node serves them, write backpressure and the cutover fence let them through, and a read
//           that needs the ledger's state honours X-Folio-Seq (read-your-writes.ts).
//   local   acts on this node's own files or state without adding to the log (a snapshot, a backup,
//           rebuilding the search index, detokenizing, the cutover's own operations): any node serves
//           them, and backpressure and the fence hold them as they hold writes.
//   write   may add to the log: carried out by the leader only (a standby answers 307), refused under
//           write backpressure, counted by the cutover fence.
// The route front (route-front.ts) applies these once the router has matched the route, and the API
// reference's error answers (openapi/error-answers.ts) are derived from the same function.

export type RouteEffect = 'read' | 'local' | 'write';

/** POST routes that only read: filters over a collection and searches. */
const READING_POSTS: ReadonlySet<string> = new Set([
  '/ledgers/filter', '/balances/filter', '/transactions/filter', '/identities/filter', '/:collection/filter',
  '/search/:collection', '/multi-search',
]);

/** POST routes that act on this node alone: its snapshots, backups, search index, and the cutover's steps. */
const LOCAL_POSTS: ReadonlySet<string> = new Set([
  '/search/reindex', '/admin/snapshots', '/backup', '/identities/:id/detokenize',
  '/admin/cutover/fence', '/admin/cutover/unfence', '/admin/cutover/promote',
]);

/** What the route registered as `pattern` does when called with `method`. */
export function routeEffect(method: string, pattern: string): RouteEffect {
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return 'read';
  if (method !== 'POST') return 'write';
  if (READING_POSTS.has(pattern)) return 'read';
  if (LOCAL_POSTS.has(pattern)) return 'local';
  return 'write';
}
