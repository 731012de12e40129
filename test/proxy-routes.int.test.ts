// The proxy's closed list of core routes (cloud/proxy-routes.ts), checked against the core's real router
// (createApp on a temp-dir runtime, every optional part on): no master-key route and no API key route is
// forwarded, every route on a tenant resource is, every path the proxy forwards is one the core routes
// to tenant routes only (same matcher, same options; with trailing and doubled slashes too), and no
// letter-case variant of a path is forwarded or routed.

import t from 'tap';
import { CutoverControl } from '../cutover/cutover-control.js';
import { snapshotAdmin } from '../runtime/snapshot-admin.js';
import { ProxyRoutes, TENANT_RESOURCES } from '../cloud/proxy-routes.js';
import { createApp } from '../http/app.js';
import { routeAccess } from '../http/access/route-scopes.js';
import { routerApp } from './helpers/router-app.js';

/** A path the pattern matches: each parameter filled with `1` (or with what `fill` says for it). */
function pathOf(pattern: string, fill: Record<string, string> = {}): string {
  return pattern.replace(/:([A-Za-z_]+)/g, (_match, name: string) => fill[name] ?? '1');
}

/** The same path with its first letter outside parameters in the other case. */
function otherCase(path: string): string | undefined {
  const at = path.search(/[a-z]/);
  return at < 0 ? undefined : `${path.slice(0, at)}${path[at]!.toUpperCase()}${path.slice(at + 1)}`;
}

t.test('the proxy forwards tenant routes only, matched exactly as the core matches them', async (t) => {
  const app = await routerApp(t, 'folio-proxy-routes', (runtime, dataDir) => ({
    snapshots: snapshotAdmin(runtime, dataDir), cutover: CutoverControl.forLeader(runtime),
  }));
  const routes = new ProxyRoutes();
  let checked = 0;
  for (const layer of app.router.stack) {
    for (const method of layer.methods) {
      const pattern = String(layer.path);
      const access = routeAccess(method, pattern);
      for (const collection of ['ledgers', 'hooks', 'api-keys']) {
        const path = pathOf(pattern, { collection });
        const forwarded = routes.forwards(method, path);
        checked += 1;
        const route = `${method} ${path} (${pattern})`;
        if (access.kind === 'master') t.notOk(forwarded, `${route}: a master-key route is never forwarded`);
        if (access.kind === 'scope' && access.resource === 'api-keys') t.notOk(forwarded, `${route}: API key routes are not forwarded`);
        if (access.kind === 'scope' && TENANT_RESOURCES.includes(access.resource)) t.ok(forwarded, `${route}: a tenant route is forwarded`);
        if (access.kind === 'param_scope') t.equal(forwarded, collection === 'ledgers', `${route}: forwarded for a tenant collection only`);
        if (forwarded) t.ok(app.router.match(path, method).route, `${route}: the core routes what the proxy forwards`);
        for (const variant of [path, `${path}/`, `${path}//`, `/${path}`]) {
          if (!routes.forwards(method, variant)) continue;
          const reached = app.router.match(variant, method).pathAndMethod.filter((matched) => matched.methods.length > 0).map((matched) => routeAccess(method, String(matched.path)));
          // None at all is possible: the access table names a route or two the router does not register (GET /identities/).
          t.ok(reached.every((access) => access.kind !== 'master' && !(access.kind === 'scope' && access.resource === 'api-keys')),
            `${method} ${variant}: forwarded, and every route the core runs for it (if any) is a tenant's`);
        }
        const cased = otherCase(path);
        if (cased !== undefined && cased !== path) {
          t.notOk(routes.forwards(method, cased), `${method} ${cased}: another letter case is not forwarded`);
          const coreRoutes = app.router.match(cased, method).pathAndMethod.filter((matched) => matched.methods.length > 0);
          t.ok(coreRoutes.every((matched) => routeAccess(method, String(matched.path)).kind !== 'master'), `${method} ${cased}: nor does the core route it to an operator route`);
        }
      }
    }
  }
  t.ok(checked > 100, `checked ${checked} paths`);
  for (const [method, path] of [
    ['POST', '/search/reindex'], ['GET', '/admin/cutover/status'], ['GET', '/ADMIN/cutover/status'], ['POST', '/admin/snapshots'], ['GET', '/docs'],
    ['GET', '/docs/start.js'], ['GET', '/metrics'], ['GET', '/backup'], ['OPTIONS', '/ledgers'], ['GET', '/nope'], ['POST', '/api-keys/filter'],
    ['GET', '/console'], ['GET', '/console/main.js'], ['GET', '/api-keys/current'],
  ] as const) {
    t.notOk(routes.forwards(method, path), `${method} ${path} is not forwarded`);
  }
  for (const [method, path] of [['GET', '/health'], ['GET', '/openapi.json'], ['GET', '/'], ['HEAD', '/ledgers'], ['GET', '/ledgers/'], ['GET', '/identities/'], ['POST', '/balances/filter']] as const) {
    t.ok(routes.forwards(method, path), `${method} ${path} is forwarded`);
  }
});
