// Integration tests for the HTTP edge of issue 2: /health and /metrics, and every generic error code a
// client can reach: GEN_NOT_FOUND for unknown routes, GEN_MALFORMED_REQUEST, GEN_VALIDATION_ERROR with
// details per field, GEN_PAYLOAD_TOO_LARGE refused before the body is parsed (or even read), and
// QUEUE_BACKPRESSURE with Retry-After from small limits. Each failure must use the error envelope.

import http from 'node:http';
import t from 'tap';
import { createBalance, expectError, fund, openServer } from './helpers/http-fixture.js';
import type { TestResponse } from './helpers/test-server.js';

const MIB = 1024 * 1024;
const BODY_LIMIT_BYTES = 10 * MIB;

t.test('GET /health and GET /metrics', async (t) => {
  const server = await openServer(t);
  const health = await server.request('GET', '/health');
  t.equal(health.status, 200);
  t.same(health.body, { status: 'UP', version: 'test', role: 'single', term: 0, applied_seq: 1 }, 'a single node says so (replication off)');
  await server.request('POST', '/ledgers', { name: 'counted' });
  await server.request('GET', '/ledgers/ldg_missing');
  const metrics = await server.request('GET', '/metrics');
  t.equal(metrics.status, 200);
  t.match(metrics.headers['content-type'], /^text\/plain/, 'Prometheus text format');
  const text = metrics.text;
  t.match(text, /^folio_http_requests_total\{method="POST",route="\/ledgers",status="201"\} 1$/m, 'requests counted by route and status');
  t.match(text, /^folio_http_requests_total\{method="GET",route="\/ledgers\/:id",status="404"\} 1$/m, 'route templates, not raw paths');
  t.match(text, /^folio_http_request_duration_seconds_count\{method="POST",route="\/ledgers"\} 1$/m, 'latency by route');
  t.match(text, /^folio_wal_batch_events_count [1-9]\d*$/m, 'WAL batch sizes');
  t.match(text, /^folio_wal_flush_seconds_count [1-9]\d*$/m, 'WAL flush times');
  t.match(text, /^folio_mailbox_depth \d+$/m, 'mailbox depth');
  t.match(text, /^# TYPE folio_http_requests_total counter$/m);
});

t.test('unknown routes: 404 GEN_NOT_FOUND', async (t) => {
  const server = await openServer(t);
  for (const [method, path] of [['GET', '/nope'], ['GET', '/v2'], ['GET', '/ledgers/a/b'], ['POST', '/nope'], ['PUT', '/transactions'], ['GET', '/balances/indicator/x']]) {
    const response = await server.request(method as string, path as string, method === 'GET' ? undefined : { name: 'x' });
    if (method === 'PUT' && response.status === 405) {
      expectError(t, response, 405, 'GEN_METHOD_NOT_ALLOWED', `${method} ${path}`);
      continue;
    }
    expectError(t, response, 404, 'GEN_NOT_FOUND', `${method} ${path}`);
  }
  expectError(t, await server.request('DELETE', '/ledgers'), 405, 'GEN_METHOD_NOT_ALLOWED', 'a known path with another method');
  // `/` is Blnk's service check, not an unknown route.
  const root = await server.request('GET', '/');
  t.equal(root.status, 200, 'GET / answers');
  t.match(root.body, { message: 'server running...', service: 'folio' }, 'GET / says what is running');
});

t.test('malformed JSON: 400 GEN_MALFORMED_REQUEST on every write route', async (t) => {
  const server = await openServer(t);
  const bodies = ['{"name":', '{name: "x"}', "{'name':'x'}", '{"name":"x",}', '[1,]', '{"a":1}}', 'nul', '{"amount":12345678901234567890,', '{"a":"\u0001"}'];
  for (const [method, path] of [['POST', '/ledgers'], ['PUT', '/ledgers/general_ledger_id'], ['POST', '/balances'], ['POST', '/transactions']] as const) {
    for (const body of bodies) expectError(t, await server.request(method, path, body), 400, 'GEN_MALFORMED_REQUEST', `${method} ${path} ${JSON.stringify(body)}`);
  }
  const tooDeep = await server.request('POST', '/transactions', `{"meta_data":${'['.repeat(100)}${']'.repeat(100)}}`);
  expectError(t, tooDeep, 400, 'GEN_MALFORMED_REQUEST', 'nesting past the depth limit');
  expectError(t, await server.request('POST', '/ledgers', '<ledger/>', { 'content-type': 'application/xml' }), 415, 'GEN_UNSUPPORTED_MEDIA_TYPE', 'XML');
});

t.test('validation: 400 with details per field (TXN_VALIDATION_ERROR on transactions, as Blnk)', async (t) => {
  const server = await openServer(t);
  const missing = await server.request('POST', '/transactions', {});
  expectError(t, missing, 400, 'TXN_VALIDATION_ERROR', 'empty transaction');
  t.same(Object.keys(missing.body.error_detail.details ?? {}).sort(), ['amount', 'currency', 'description', 'destination', 'source'], 'each missing field named');
  const wrongTypes = await server.request('POST', '/transactions', { currency: 5, source: true, destination: [], reference: 7, description: {}, allow_overdraft: 'yes', skip_queue: 1, meta_data: 'x', precise_amount: 1 });
  expectError(t, wrongTypes, 400, 'TXN_VALIDATION_ERROR', 'wrong types');
  t.same(Object.keys(wrongTypes.body.error_detail.details ?? {}).sort(),
    ['allow_overdraft', 'currency', 'description', 'destination', 'meta_data', 'reference', 'skip_queue', 'source'], 'each wrong field named');
  for (const value of Object.values(wrongTypes.body.error_detail.details ?? {})) t.type(value, 'string', 'each with a message');
  const tooLong = await server.request('POST', '/transactions', { precise_amount: 1, currency: 'USD', source: '@a', destination: '@b', reference: 'r'.repeat(257), description: 'd'.repeat(2049) });
  t.same(Object.keys(tooLong.body.error_detail.details ?? {}).sort(), ['description', 'reference'], 'length limits named per field');
  const badAmount = await server.request('POST', '/transactions', { description: 'test', amount: 10.005, precision: 100, currency: 'USD', source: '@a', destination: '@b' });
  expectError(t, badAmount, 400, 'TXN_VALIDATION_ERROR', 'amount needing rounding');
  t.same(Object.keys(badAmount.body.error_detail.details ?? {}), ['amount'], 'the amount named');
  t.match(badAmount.body.error_detail.details.amount, /rounding/);
  await t.test('an amount problem is reported alongside other bad fields', async (t) => {
    const both = await server.request('POST', '/transactions', { description: 'test', amount: 10.005, precision: 100, currency: '', source: '@a', destination: '@b' });
    t.same(Object.keys(both.body.error_detail.details ?? {}).sort(), ['amount', 'currency']);
  });
  const body = await server.request('POST', '/ledgers', '[{"name":"x"}]');
  expectError(t, body, 400, 'GEN_VALIDATION_ERROR', 'an array instead of an object');
  t.ok(body.body.error_detail.details?.body, 'reported against the body');
  expectError(t, await server.request('POST', '/ledgers'), 400, 'GEN_VALIDATION_ERROR', 'no body at all');
});

t.test('bodies over 10 MiB: 413 GEN_PAYLOAD_TOO_LARGE, before parsing', async (t) => {
  const server = await openServer(t);
  const url = new URL(server.url);
  const seqBefore = server.runtime.log.appendedSeq;

  await t.test('a declared length over the limit is refused without reading the body', async (t) => {
    const response = await rawPost(url, { 'content-type': 'application/json', 'content-length': String(BODY_LIMIT_BYTES + 1) }, ['{"name":"'], false);
    expectError(t, response, 413, 'GEN_PAYLOAD_TOO_LARGE', 'answered while the client is still sending');
  });
  await t.test('a declared length over the limit with a complete body of invalid JSON', async (t) => {
    const body = 'x'.repeat(BODY_LIMIT_BYTES + 1);
    const response = await rawPost(url, { 'content-type': 'application/json', 'content-length': String(body.length) }, [body], true);
    expectError(t, response, 413, 'GEN_PAYLOAD_TOO_LARGE', 'size is judged before syntax');
  });
  await t.test('a chunked body that grows past the limit', async (t) => {
    const chunks = ['{"name":"', ...Array.from({ length: 11 }, () => 'y'.repeat(MIB)), '"}'];
    const response = await rawPost(url, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, chunks, true);
    expectError(t, response, 413, 'GEN_PAYLOAD_TOO_LARGE', 'refused once over the limit');
  });
  await t.test('a body of exactly 10 MiB is read and judged on its content', async (t) => {
    const prefix = '{"name":"';
    const suffix = '"}';
    const body = prefix + 'z'.repeat(BODY_LIMIT_BYTES - prefix.length - suffix.length) + suffix;
    t.equal(Buffer.byteLength(body), BODY_LIMIT_BYTES);
    const response = await server.request('POST', '/ledgers', body);
    expectError(t, response, 400, 'GEN_VALIDATION_ERROR', 'too long a name, not too large a body');
  });
  t.equal(server.runtime.log.appendedSeq, seqBefore, 'nothing was written');
  t.equal((await server.request('GET', '/health')).status, 200, 'the server is still up');
});

t.test('QUEUE_BACKPRESSURE: 503 with Retry-After', async (t) => {
  await t.test('a full mailbox refuses more queued work from that balance', async (t) => {
    const server = await openServer(t, { limits: { mailbox_depth_max: 0 } });
    const source = await createBalance(server);
    await fund(server, source.balance_id, 100);
    const refused = await server.request('POST', '/transactions', { description: 'test', precise_amount: 1, currency: 'USD', source: source.balance_id, destination: '@sink' });
    expectError(t, refused, 503, 'QUEUE_BACKPRESSURE', 'queued from a full mailbox');
    t.match(refused.headers['retry-after'], /^\d+$/, 'Retry-After in seconds');
    t.equal(refused.body.error_detail.details?.reason, 'queue_full');
    const sync = await server.request('POST', '/transactions', { description: 'test', precise_amount: 1, currency: 'USD', source: source.balance_id, destination: '@sink', skip_queue: true });
    t.equal(sync.status, 201, 'a synchronous transfer from the same balance still works');
    t.equal((await server.request('GET', `/balances/${source.balance_id}`)).body.balance, 99, 'and only it moved money');
  });
  await t.test('the total queue limit refuses queued work from any balance', async (t) => {
    const server = await openServer(t, { limits: { queued_total_max: 0 } });
    const refused = await server.request('POST', '/transactions', { description: 'test', precise_amount: 1, currency: 'USD', source: '@world', destination: '@sink', allow_overdraft: true });
    expectError(t, refused, 503, 'QUEUE_BACKPRESSURE', 'queue total reached');
    t.ok(refused.headers['retry-after']);
    expectError(t, await server.request('GET', '/balances/indicator/@sink/currency/USD'), 404, 'BAL_NOT_FOUND', 'the refused transfer created no balance');
  });
  await t.test('a log that is too far behind refuses every write, but not reads', async (t) => {
    const server = await openServer(t, { unflushedEventsMax: -1 });
    for (const [method, path, body] of [
      ['POST', '/ledgers', { name: 'x' }],
      ['PUT', '/ledgers/general_ledger_id', { name: 'x' }],
      ['POST', '/balances', { ledger_id: 'general_ledger_id', currency: 'USD' }],
      ['POST', '/transactions', { description: 'test', precise_amount: 1, currency: 'USD', source: '@world', destination: '@sink', allow_overdraft: true, skip_queue: true }],
    ] as const) {
      const response = await server.request(method, path, body);
      expectError(t, response, 503, 'QUEUE_BACKPRESSURE', `${method} ${path}`);
      t.ok(response.headers['retry-after'], 'with Retry-After');
    }
    t.equal((await server.request('GET', '/ledgers/general_ledger_id')).status, 200, 'reads are served');
  });
});

/**
 * A POST through node:http, so the test controls the declared length and chunking and can stop sending
 * early. Resolves with the response (headers first: the server may answer before the body is complete).
 */
function rawPost(url: URL, headers: Record<string, string>, chunks: string[], finish: boolean): Promise<TestResponse> {
  return new Promise((resolve, reject) => {
    // Keep-alive, as clients send: the server then reads and drops a refused body rather than closing on
    // it (a client that asks for `Connection: close` is answered and cut off while it is still sending,
    // and the reset can beat the answer to it).
    const request = http.request({ host: url.hostname, port: url.port, path: '/ledgers', method: 'POST', headers: { connection: 'keep-alive', ...headers }, agent: false }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        text += chunk;
      });
      response.on('end', () => {
        request.destroy();
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
        resolve({ status: response.statusCode ?? 0, headers: response.headers, text, body });
      });
    });
    // Once a response has arrived the server may close the connection on the unsent rest; only an error
    // with no response fails the request. The server answers on the headers and closes while the client
    // is still writing, so the write's EPIPE can be reported before the answer, already received, is read:
    // the answer gets a moment to be read first.
    let answered = false;
    request.on('response', () => {
      answered = true;
    });
    request.on('error', (error) => {
      if (!answered) setTimeout(() => answered || reject(error), 500);
    });
    void (async () => {
      for (const chunk of chunks) {
        if (request.destroyed) return;
        if (!request.write(chunk)) await new Promise((drained) => request.once('drain', drained));
      }
      if (finish && !request.destroyed) request.end();
    })();
  });
}
