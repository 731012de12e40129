// What each route does to the ledger is decided by the route that matched (http/middleware/route-effects.ts), not
// by the text of the request's path:
//   - over every route the app registers: the POSTs that count as reads are exactly those whose access
//     needs only a read scope, and a pattern that merely ends in /filter (a refund, a tokenized field)
//     is a write;
//   - on a single node whose log is too far behind to take writes, in both thread modes: a refund of the
//     transaction `filter` and tokenizing a field named `filter` are refused 503 QUEUE_BACKPRESSURE as
//     every write is (the old code looked at the path, took them for filters and let them through),
//     while a real filter is still served.

import t from 'tap';
import { CutoverControl } from '../cutover/cutover-control.js';
import { routeEffect } from '../http/middleware/route-effects.js';
import { routeAccess } from '../http/access/route-scopes.js';
import { routerApp } from './helpers/router-app.js';
import { startTestServer } from './helpers/test-server.js';

t.test('the POSTs that read are those that need only a read scope; a path\'s ending decides nothing', async (t) => {
  const app = await routerApp(t, 'route-effects', (runtime) => ({ cutover: CutoverControl.forLeader(runtime) }));
  let posts = 0;
  for (const layer of app.router.stack) {
    const pattern = String(layer.path);
    if (!layer.methods.includes('POST')) continue;
    posts += 1;
    const access = routeAccess('POST', pattern);
    const readsOnly = (access.kind === 'scope' || access.kind === 'param_scope') && access.action === 'read';
    t.equal(routeEffect('POST', pattern) === 'read', readsOnly, `POST ${pattern}: ${routeEffect('POST', pattern)}`);
  }
  t.ok(posts >= 20, `the router was enumerated (${posts} POST routes)`);
  t.equal(routeEffect('POST', '/refund-transaction/:id'), 'write', 'a refund is a write whatever its id');
  t.equal(routeEffect('POST', '/identities/:id/tokenize/:field'), 'write', 'so is tokenizing a field, whatever its name');
  t.equal(routeEffect('PUT', '/ledgers/:id'), 'write');
  t.equal(routeEffect('GET', '/ledgers/:id'), 'read');
  t.equal(routeEffect('POST', '/backup'), 'local', 'a backup acts on this node only');
});

for (const workers of [0, 1]) {
  t.test(`write backpressure holds every write route, whatever its path ends in (workers ${workers})`, async (t) => {
    // A log that counts as behind with any event unflushed: every write is refused for load.
    const server = await startTestServer({ index: true, unflushedEventsMax: -1 }, { workers });
    t.teardown(() => server.stop());
    const refund = await server.request('POST', '/refund-transaction/filter', { skip_queue: true });
    t.equal(refund.status, 503, 'a refund of the transaction `filter` is held back as a write');
    t.equal(refund.body.error_detail.code, 'QUEUE_BACKPRESSURE');
    const tokenize = await server.request('POST', '/identities/idt_x/tokenize/filter', {});
    t.equal(tokenize.body?.error_detail?.code, 'QUEUE_BACKPRESSURE', 'and so is tokenizing a field named `filter`');
    const filter = await server.request('POST', '/ledgers/filter', { filters: [] });
    t.equal(filter.status, 200, 'a filter is a read: it is served');
  });
}
