// The closed list of the core's routes the proxy forwards, derived from the core's own access table
// (http/access/route-scopes.ts, which test/route-scopes.int.test.ts checks against the core's router), so it
// follows the core's routes without a second list to keep in step. A route is forwarded when a tenant's
// data is what it serves:
//   - routes on the tenant resources (ledgers, balances, transactions, identities, search,
//     reconciliation, metadata), and the filter route over a collection when the collection is one;
//   - `GET /` and the public `/health` and `/openapi.json`.
// Never forwarded: every master-key route (hooks, metrics, backups, the search rebuild, snapshots and
// cutover under /admin), the API key routes (the proxy calls the core with API keys of its own, which a
// tenant must neither list nor revoke, and `GET /api-keys/current` would describe the proxy's key, not
// the caller), and the pages with scripts, /docs and /console (they would run on the control plane's
// origin, where its sign-in page lives; the control plane serves its own copy of the console, which
// calls the core through this proxy). docs/decisions-cloud.md says why.
//
// Matching is the core router's own: the same @koa/router layers with the same options (case-sensitive,
// see http/router-options.ts), over the same patterns, on the path exactly as the core will read it. A
// path that several routes match is forwarded only when every one of them may be (`POST /search/reindex`
// is also `POST /search/:collection`, and the core would run the operator route). It runs on every
// proxied request, so the layers are kept by method and by their first path segment (a static one, or
// any for patterns that start with a parameter), and a path is tried against those only: the same
// answer as trying every layer, since a static segment matches only itself in the same case.

import { Router, type Layer } from '@koa/router';
import { parseRouteAccess, ROUTE_ACCESS_TABLE, type RouteAccess } from '../http/access/route-scopes.js';
import { ROUTER_OPTIONS } from '../http/router-options.js';

/** The core's resources a tenant reaches through the proxy. */
export const TENANT_RESOURCES: readonly string[] = ['ledgers', 'balances', 'transactions', 'identities', 'search', 'reconciliation', 'metadata'];

/** Public routes that serve a page with scripts: never forwarded onto the control plane's origin. */
const PAGE_PREFIXES = ['/docs', '/console'];
/** The API key routes: the proxy's own keys are the core's API keys, which a tenant neither sees nor manages. */
const API_KEY_PREFIX = '/api-keys';

function under(pattern: string, prefix: string): boolean {
  return pattern === prefix || pattern.startsWith(`${prefix}/`);
}

/** Whether a route with this access, at this pattern, is one the proxy forwards (the parameters decide `:collection` routes). */
function forwardsAccess(access: RouteAccess, pattern: string, params: Record<string, string>): boolean {
  switch (access.kind) {
    case 'public':
      return !PAGE_PREFIXES.some((prefix) => under(pattern, prefix));
    case 'any_key':
      return !under(pattern, API_KEY_PREFIX);
    case 'master':
      return false;
    case 'scope':
      return TENANT_RESOURCES.includes(access.resource);
    case 'param_scope':
      return TENANT_RESOURCES.includes(params[access.param] ?? '');
  }
}

interface ListedRoute {
  layer: Layer;
  pattern: string;
  access: RouteAccess;
}

/** The routes of one method: by their pattern's first segment, and those whose first segment is a parameter. */
interface MethodRoutes {
  bySegment: Map<string, ListedRoute[]>;
  anySegment: ListedRoute[];
}

/** The first segment of a path or pattern (`/ledgers/x` -> `ledgers`, `/` -> ``). */
function firstSegment(path: string): string {
  const end = path.indexOf('/', 1);
  return path.slice(1, end < 0 ? undefined : end);
}

export class ProxyRoutes {
  private readonly router = new Router(ROUTER_OPTIONS);
  private readonly byMethod = new Map<string, MethodRoutes>();

  constructor(table: Readonly<Record<string, string>> = ROUTE_ACCESS_TABLE) {
    const noop = (): void => undefined;
    for (const [route, text] of Object.entries(table)) {
      const space = route.indexOf(' ');
      const method = route.slice(0, space);
      const pattern = route.slice(space + 1);
      const access = parseRouteAccess(text);
      if (!access) throw new Error(`the access table entry ${route} does not parse: ${text}`);
      const layer = this.router.register(pattern, [method], noop) as Layer;
      const listed: ListedRoute = { layer, pattern, access };
      for (const layerMethod of layer.methods) {
        let routes = this.byMethod.get(layerMethod);
        if (!routes) {
          routes = { bySegment: new Map(), anySegment: [] };
          this.byMethod.set(layerMethod, routes);
        }
        const segment = firstSegment(pattern);
        if (segment.startsWith(':')) routes.anySegment.push(listed);
        else routes.bySegment.set(segment, [...(routes.bySegment.get(segment) ?? []), listed]);
      }
    }
  }

  /** Whether `method` on `path` (the path alone, as the core's router will see it) is forwarded. */
  forwards(method: string, path: string): boolean {
    const routes = this.byMethod.get(method);
    if (!routes) return false;
    let matched = false;
    for (const candidates of [routes.bySegment.get(firstSegment(path)) ?? [], routes.anySegment]) {
      for (const route of candidates) {
        if (!route.layer.match(path)) continue;
        matched = true;
        if (!forwardsAccess(route.access, route.pattern, route.layer.params(path, route.layer.captures(path)))) return false;
      }
    }
    return matched;
  }
}
