// Who may call each route: the one table of access rules. Keys are `<METHOD> <router path pattern>`, the
// pattern written exactly as the route registers it, so the table can be checked against the router
// (test/route-scopes.int.test.ts fails when a registered route has no entry). Values:
//   'public'           no key needed, even with authentication on (/health, the API's description:
//                      /openapi.json and the /docs page with its files, and the console's static files,
//                      /console and /console/:file, whose every data call is an API call with a key)
//   'any-key'          any valid key, whatever its scopes (what is running, for a client checking it)
//   'master'           the master key only (hooks, operations on the server itself)
//   '<resource>:<act>' an API key whose scopes cover it (the master key always passes)
//   ':<param>:<act>'   the resource is the path parameter `<param>` (filter routes over a collection)
// Entries for routes that are not registered (yet) are harmless; a registered route missing here is
// refused for everyone but the master key.

export const SCOPE_RESOURCES = [
  'ledgers', 'balances', 'transactions', 'identities', 'hooks', 'api-keys', 'search', 'reconciliation', 'metadata',
] as const;
export const SCOPE_ACTIONS = ['read', 'write', 'delete'] as const;

export type ScopeResource = (typeof SCOPE_RESOURCES)[number];
export type ScopeAction = (typeof SCOPE_ACTIONS)[number];

/** What a route needs. */
export type RouteAccess =
  | { kind: 'public' }
  | { kind: 'any_key' }
  | { kind: 'master' }
  | { kind: 'scope'; resource: ScopeResource; action: ScopeAction }
  | { kind: 'param_scope'; param: string; action: ScopeAction };

export const ROUTE_ACCESS_TABLE: Readonly<Record<string, string>> = {
  // system
  'GET /health': 'public',
  // Blnk's service check; with authentication on it takes a key, as every route but /health does.
  'GET /': 'any-key',
  'GET /openapi.json': 'public',
  'GET /docs': 'public',
  'GET /docs/start.js': 'public',
  'GET /docs/swagger-ui.css': 'public',
  'GET /docs/swagger-ui-bundle.js': 'public',
  'GET /console': 'public',
  'GET /console/:file': 'public',
  'GET /metrics': 'master',

  // ledgers
  'POST /ledgers': 'ledgers:write',
  'GET /ledgers': 'ledgers:read',
  'GET /ledgers/:id': 'ledgers:read',
  'PUT /ledgers/:id': 'ledgers:write',
  'POST /ledgers/:id/periods': 'ledgers:write',
  'GET /ledgers/:id/periods': 'ledgers:read',

  // balances
  'POST /balances': 'balances:write',
  'GET /balances/:id/statement': 'balances:read',
  'GET /balances': 'balances:read',
  'GET /balances/:id': 'balances:read',
  'GET /balances/:id/at': 'balances:read',
  'PUT /balances/:id/identity': 'balances:write',
  'POST /balances-snapshots': 'balances:write',
  'GET /balances/:id/history': 'balances:read',
  'GET /balances/:id/lineage': 'balances:read',
  'GET /balances/indicator/:indicator/currency/:currency': 'balances:read',

  // balance monitors: conditions on balances
  'POST /balance-monitors': 'balances:write',
  'GET /balance-monitors': 'balances:read',
  'GET /balance-monitors/balances/:balance_id': 'balances:read',
  'GET /balance-monitors/:id': 'balances:read',
  'PUT /balance-monitors/:id': 'balances:write',
  'DELETE /balance-monitors/:id': 'balances:delete',

  // transactions, holds, refunds
  'POST /transactions': 'transactions:write',
  'POST /transactions/bulk': 'transactions:write',
  'GET /transactions': 'transactions:read',
  'GET /transactions/:id': 'transactions:read',
  'GET /transactions/reference/:reference': 'transactions:read',
  'GET /transactions/:id/lineage': 'transactions:read',
  'GET /transactions/:id/log-position': 'transactions:read',
  'PUT /transactions/inflight/:id': 'transactions:write',
  'POST /transactions/inflight/bulk/commit': 'transactions:write',
  'POST /transactions/inflight/bulk/void': 'transactions:write',
  'POST /refund-transaction/:id': 'transactions:write',
  'POST /transactions/recover': 'transactions:write',

  // identities
  'POST /identities': 'identities:write',
  'GET /identities': 'identities:read',
  'GET /identities/': 'identities:read',
  'GET /identities/:id': 'identities:read',
  'PUT /identities/:id': 'identities:write',
  'DELETE /identities/:id': 'identities:delete',

  // metadata on any record
  'POST /:id/metadata': 'metadata:write',

  // filter: reading a collection through the database
  'POST /ledgers/filter': 'ledgers:read',
  'POST /balances/filter': 'balances:read',
  'POST /transactions/filter': 'transactions:read',
  'GET /identities/:id/tokenized-fields': 'identities:read',
  'POST /identities/:id/tokenize/:field': 'identities:write',
  'POST /identities/:id/tokenize': 'identities:write',
  'GET /identities/:id/detokenize/:field': 'identities:read',
  'POST /identities/:id/detokenize': 'identities:write',
  'POST /identities/filter': 'identities:read',
  'POST /:collection/filter': ':collection:read',

  // search; rebuilding the index is an operation on the server, so it takes the master key
  'POST /search/:collection': 'search:read',
  'POST /multi-search': 'search:read',
  'POST /search/reindex': 'master',
  'GET /search/reindex': 'search:read',

  // reconciliation
  'POST /reconciliation/upload': 'reconciliation:write',
  'GET /reconciliation/uploads': 'reconciliation:read',
  'POST /reconciliation/matching-rules': 'reconciliation:write',
  'GET /reconciliation/matching-rules': 'reconciliation:read',
  'GET /reconciliation/matching-rules/:id': 'reconciliation:read',
  'PUT /reconciliation/matching-rules/:id': 'reconciliation:write',
  'DELETE /reconciliation/matching-rules/:id': 'reconciliation:delete',
  'POST /reconciliation/start': 'reconciliation:write',
  'POST /reconciliation/start-instant': 'reconciliation:write',
  'GET /reconciliation/:id': 'reconciliation:read',
  'GET /reconciliation/:id/matches': 'reconciliation:read',
  'GET /reconciliation/:id/unmatched': 'reconciliation:read',

  // hooks: master key only, whatever scopes a key carries
  'POST /hooks': 'master',
  'GET /hooks': 'master',
  'GET /hooks/:id': 'master',
  'PUT /hooks/:id': 'master',
  'DELETE /hooks/:id': 'master',
  'POST /hooks/:id/rotate-secret': 'master',
  'GET /hooks/:id/deliveries': 'master',

  // API keys
  'POST /api-keys': 'api-keys:write',
  'GET /api-keys': 'api-keys:read',
  // the key a request carries, whatever its scopes: what a client (the console) may offer its user
  'GET /api-keys/current': 'any-key',
  'DELETE /api-keys/:id': 'api-keys:delete',

  // operations
  'POST /backup': 'master',
  'GET /backup': 'master',
  'POST /admin/snapshots': 'master',
  'GET /admin/snapshots': 'master',
  'POST /admin/cutover/fence': 'master',
  'POST /admin/cutover/unfence': 'master',
  'GET /admin/cutover/status': 'master',
  'POST /admin/cutover/promote': 'master',
  'GET /admin/replication': 'master',
  'GET /events': 'master',
};

const MASTER: RouteAccess = { kind: 'master' };

export function parseRouteAccess(text: string): RouteAccess | undefined {
  if (text === 'public') return { kind: 'public' };
  if (text === 'any-key') return { kind: 'any_key' };
  if (text === 'master') return MASTER;
  if (text.startsWith(':')) {
    const [param, action] = text.slice(1).split(':');
    if (!param || !isScopeAction(action)) return undefined;
    return { kind: 'param_scope', param, action };
  }
  const [resource, action] = text.split(':');
  if (!isScopeResource(resource) || !isScopeAction(action)) return undefined;
  return { kind: 'scope', resource, action };
}

/** The access a route needs; a route missing from the table is left to the master key. */
export function routeAccess(method: string, pathPattern: string, table: Readonly<Record<string, string>> = ROUTE_ACCESS_TABLE): RouteAccess {
  const text = table[`${method === 'HEAD' ? 'GET' : method} ${pathPattern}`];
  return (text === undefined ? undefined : parseRouteAccess(text)) ?? MASTER;
}

export function isScopeResource(value: unknown): value is ScopeResource {
  return typeof value === 'string' && (SCOPE_RESOURCES as readonly string[]).includes(value);
}

export function isScopeAction(value: unknown): value is ScopeAction {
  return typeof value === 'string' && (SCOPE_ACTIONS as readonly string[]).includes(value);
}
