// X-Folio-Seq on a single node (http/middleware/read-your-writes.ts), in both thread modes: honoured only by the
// routes that read the ledger's state, once the caller may use the route; ignored on /health (no key, a
// seq that will never come, even a malformed one: answered at once) and on writes; a seq past the end of
// the log refused at once with 409 REPL_SEQ_BEYOND_LOG saying where the log ends, where the old code held
// the request for 5 s and answered 503; a seq the log holds answered as a plain read. With
// authentication on, a request without a key is refused 401 and one whose key lacks the route's scope 403,
// before anything waits.

import t from 'tap';
import { startTestServer, type TestServer } from './helpers/test-server.js';

const MASTER = 'm'.repeat(40);
const NEVER = '9007199254740991';

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

for (const workers of [0, 1]) {
  t.test(`X-Folio-Seq where a read needs it, bounded by the log's end (workers ${workers})`, async (t) => {
    const server: TestServer = await startTestServer({ index: false }, { workers, secretKey: MASTER });
    t.teardown(() => server.stop());
    const master = { 'x-svc-key': MASTER };

    const health = await timed(() => server.request('GET', '/health', undefined, { 'X-Folio-Seq': NEVER }));
    t.equal(health.value.status, 200, '/health with no key and a seq that never comes is answered');
    t.ok(health.ms < 2_000, `at once, not after a wait (${health.ms.toFixed(0)} ms; a wait is 5,000 ms)`);
    t.equal((await server.request('GET', '/health', undefined, { 'X-Folio-Seq': 'not a seq' })).status, 200, 'a malformed seq is ignored there too');

    const created = await server.request('POST', '/ledgers', { name: 'read your writes' }, { ...master, 'X-Folio-Seq': NEVER });
    t.equal(created.status, 201, 'a write ignores X-Folio-Seq');
    const seq = Number(created.headers['x-folio-seq']);
    t.ok(seq > 0, 'and names its own seq');

    const readBack = await server.request('GET', `/ledgers/${created.body.ledger_id}`, undefined, { ...master, 'X-Folio-Seq': String(seq) });
    t.equal(readBack.status, 200, 'a read with the write\'s seq is served');

    const end = server.runtime.log.appendedSeq;
    const ahead = await timed(() => server.request('GET', '/ledgers', undefined, { ...master, 'X-Folio-Seq': String(end + 1_000) }));
    t.equal(ahead.value.status, 409, 'a seq past the end of a single node\'s log is refused');
    t.equal(ahead.value.body.error_detail.code, 'REPL_SEQ_BEYOND_LOG');
    t.equal(ahead.value.body.error_detail.details.log_end_seq, end, 'saying where the log ends');
    t.ok(ahead.ms < 2_000, `at once (${ahead.ms.toFixed(0)} ms)`);
    const never = await timed(() => server.request('GET', '/balances', undefined, { ...master, 'X-Folio-Seq': NEVER }));
    t.equal(never.value.body?.error_detail?.code, 'REPL_SEQ_BEYOND_LOG', 'the largest seq too');
    t.ok(never.ms < 2_000, `at once (${never.ms.toFixed(0)} ms)`);
    t.equal((await server.request('GET', '/ledgers', undefined, { ...master, 'X-Folio-Seq': '12x' })).body.error_detail.code, 'REPL_SEQ_INVALID', 'a malformed seq on a read is refused');

    // Nobody parks a wait on a route they may not use.
    const anonymous = await server.request('GET', '/ledgers', undefined, { 'X-Folio-Seq': NEVER });
    t.equal(anonymous.status, 401, 'without a key: 401 first');
    const key = await server.request('POST', '/api-keys', { name: 'balances only', owner: 'ops', scopes: ['balances:read'], expires_at: new Date(Date.now() + 3_600_000).toISOString() }, master);
    t.equal(key.status, 201);
    const narrow = await timed(() => server.request('GET', '/ledgers', undefined, { 'x-svc-key': key.body.key, 'X-Folio-Seq': NEVER }));
    t.equal(narrow.value.status, 403, 'a key without the route\'s scope: 403');
    t.ok(narrow.ms < 2_000, `at once (${narrow.ms.toFixed(0)} ms)`);
  });
}
