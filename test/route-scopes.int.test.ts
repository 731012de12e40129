// Every route the app registers has an entry in the access table, and every entry means something.
// Runs over the real app (createApp on a temp-dir runtime), enumerating the router's layers, so a route
// added without a declared scope fails here.

import t from 'tap';
import { CutoverControl } from '../cutover/cutover-control.js';
import { createApp } from '../http/app.js';
import { parseRouteAccess, ROUTE_ACCESS_TABLE } from '../http/access/route-scopes.js';
import { routerApp } from './helpers/router-app.js';

t.test('every registered route declares its access', async (t) => {
  const app = await routerApp(t, 'folio-routes', (runtime) => ({ cutover: CutoverControl.forLeader(runtime) }));
  let routes = 0;
  for (const layer of app.router.stack) {
    if (layer.methods.length === 0) continue;
    for (const method of layer.methods) {
      if (method === 'HEAD') continue;
      routes += 1;
      const entry = `${method} ${String(layer.path)}`;
      t.ok(entry in ROUTE_ACCESS_TABLE, `${entry} has an entry in ROUTE_ACCESS_TABLE`);
    }
  }
  t.ok(routes >= 20, `the router was enumerated (${routes} routes)`);
});

t.test('every table entry parses', async (t) => {
  for (const [route, access] of Object.entries(ROUTE_ACCESS_TABLE)) {
    t.match(route, /^(GET|POST|PUT|DELETE|PATCH) \//, `${route} is METHOD /path`);
    t.ok(parseRouteAccess(access), `${route}: ${access}`);
  }
  const publicRoutes = Object.entries(ROUTE_ACCESS_TABLE).filter(([, access]) => access === 'public').map(([route]) => route);
  t.same(publicRoutes, [
    'GET /health', 'GET /openapi.json', 'GET /docs', 'GET /docs/start.js', 'GET /docs/swagger-ui.css', 'GET /docs/swagger-ui-bundle.js',
    'GET /console', 'GET /console/:file',
  ], 'only /health, the API description and the console\'s static files are public');
});
