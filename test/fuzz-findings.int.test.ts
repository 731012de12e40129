// What the fuzzer found (issue 13), each pinned by a test that failed before its fix: a Brotli body that
// does not decompress, requests Node's parser refuses, the index readers' count leaking under
// concurrent queries (reindex and shutdown then hung), two servers on one data directory, and non-money
// numbers the lossless parser hands over as exact text.

import net from 'node:net';
import t from 'tap';
import { DataDirLockedError } from '../runtime/data-dir-lock.js';
import { LedgerRuntime } from '../runtime/ledger-runtime.js';
import { accessServerFor } from './helpers/access-server.js';
import { startTestServer, tempDataDir } from './helpers/test-server.js';

/** Sends bytes as they are and returns the raw answer. */
function rawExchange(url: string, request: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.write(request));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString('utf8')));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
    socket.setTimeout(5_000, () => {
      socket.destroy();
      resolve(answer);
    });
  });
}

t.test('a body that does not decompress is a 400, Brotli included', async (t) => {
  const server = await startTestServer({ index: false });
  t.teardown(() => server.stop());
  for (const encoding of ['br', 'gzip', 'deflate']) {
    const response = await server.request('POST', '/ledgers', '{"name":"x"}', { 'content-encoding': encoding });
    t.equal(response.status, 400, encoding);
    t.equal(response.body?.error_detail?.code, 'GEN_MALFORMED_REQUEST', encoding);
  }
});

t.test('requests Node\'s parser refuses are answered in the error envelope', async (t) => {
  const server = await startTestServer({ index: false });
  t.teardown(() => server.stop());
  const both = await rawExchange(server.url, 'POST /ledgers HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 12\r\nTransfer-Encoding: chunked\r\n\r\n{"name":"x"}');
  t.match(both, /^HTTP\/1\.1 400 /, 'Content-Length with chunked encoding is a 400');
  t.match(both, /"code":"GEN_MALFORMED_REQUEST"/, 'with the envelope');
  const garbage = await rawExchange(server.url, 'NOT A REQUEST\r\n\r\n');
  t.match(garbage, /^HTTP\/1\.1 400 .*"code":"GEN_MALFORMED_REQUEST"/s, 'a malformed request line too');
  const huge = await rawExchange(server.url, `GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
  t.match(huge, /^HTTP\/1\.1 431 .*"code":"GEN_MALFORMED_REQUEST"/s, 'headers over the limit: 431 with the envelope');
});

// The long run found a deleted identity its oracle believed present: a DELETE sent with
// `Content-Length: 0` and a body. The server read the request, then the body as a second request it
// could not parse, and answered that refusal on the socket at once, ahead of the delete's own answer:
// the client read a 400 for a delete that had been carried out.
t.test('a request carried out is answered before the refusal of what follows it on the connection', async (t) => {
  const server = await startTestServer({ index: false });
  t.teardown(() => server.stop());
  const answer = await rawExchange(server.url, 'POST /ledgers HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 12\r\n\r\n{"name":"x"}{"name":"y"}');
  t.match(answer, /^HTTP\/1\.1 201 /, 'the ledger created is answered 201 first');
  t.match(answer, /"name":"x"/, 'with the ledger');
  t.match(answer, /\r\n\r\n.*HTTP\/1\.1 400 .*"code":"GEN_MALFORMED_REQUEST"/s, 'then what follows is refused in the envelope');
  const ledgers = await server.request('GET', '/ledgers');
  t.equal(ledgers.body.filter((ledger: { name: string }) => ledger.name === 'x').length, 1, 'one ledger x, the one answered');
});

// The route answers test (test/route-answers.int.test.ts) met a client that could not read its answer: a
// PUT with `Content-Length: 0`, `Expect: nope` and a body. The 417 said `Connection: close`, and then the
// body, read as a second request Node's parser refused, was answered too, after it.
t.test('an answer that closes the connection is its last one: nothing after a 417 is answered', async (t) => {
  const server = await startTestServer({ index: false });
  t.teardown(() => server.stop());
  const answer = await rawExchange(server.url, 'PUT /ledgers/x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 0\r\nExpect: nope\r\n\r\n{"name":"x"}');
  t.match(answer, /^HTTP\/1\.1 417 .*"code":"GEN_EXPECTATION_FAILED"/s, 'the expectation is refused in the envelope');
  t.equal(answer.match(/HTTP\/1\.1 \d{3} /g)?.length, 1, `one answer, not one more after Connection: close: ${JSON.stringify(answer)}`);
});

t.test('queries beyond the readers do not leak: a rebuild finishes and the server closes', async (t) => {
  const server = await startTestServer({ indexOptions: { readers: 2 } });
  let stopped = false;
  t.teardown(async () => {
    if (!stopped) await server.stop();
  });
  await server.request('POST', '/ledgers', { name: 'l' });
  const answers = await Promise.all(Array.from({ length: 12 }, () => server.request('POST', '/ledgers/filter', { filters: [] })));
  t.ok(answers.every((response) => response.status === 200), 'twelve filters on two readers all answered');
  t.equal((await server.request('POST', '/search/reindex')).status, 202);
  let status = '';
  for (let wait = 0; wait < 200 && status !== 'completed'; wait += 1) {
    status = (await server.request('GET', '/search/reindex')).body.status;
    if (status !== 'completed') await new Promise((resolve) => setTimeout(resolve, 50));
  }
  t.equal(status, 'completed', 'the rebuild finished its swap');
  t.equal((await server.request('POST', '/ledgers/filter', { filters: [] })).status, 200, 'and queries go on');
  const closed = await Promise.race([server.stop().then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), 10_000))]);
  stopped = true;
  t.equal(closed, true, 'the server closes');
});

t.test('one server per data directory', async (t) => {
  const dataDir = tempDataDir();
  const first = await LedgerRuntime.open({ dataDir, index: false });
  await t.rejects(LedgerRuntime.open({ dataDir, index: false }), DataDirLockedError, 'a second runtime on the same directory is refused');
  await first.close();
  const second = await LedgerRuntime.open({ dataDir, index: false });
  t.ok(second, 'once the first has closed, it opens');
  await second.close();
});

t.test('numbers that are not money take any JSON number, long decimals included', async (t) => {
  const server = await accessServerFor(t);
  const hook = await server.master('POST', '/hooks', '{"name":"h","url":"http://127.0.0.1:9/x","type":"POST_TRANSACTION","active":true,"timeout":0.30000000000000004,"retry_count":1}');
  t.equal(hook.status, 201, 'a timeout of 0.30000000000000004 seconds');
  const filter = await server.master('POST', '/ledgers/filter', '{"filters":[],"limit":10.000000000000000001}');
  t.equal(filter.status, 200, 'a limit written with a long fraction of zeros');
  const tooBig = await server.master('POST', '/ledgers/filter', '{"filters":[],"limit":123456789012345678901234567890}');
  t.equal(tooBig.status, 400, 'an integer beyond 2^53 is checked against the bound, not refused for its type');
  t.match(tooBig.body.error_detail.message, /limit/);
});

t.test('a chunked body refused part way closes its connection instead of stalling the next request', async (t) => {
  // Over the size limit in chunked encoding, the body is refused after part of it was read; the rest
  // stayed on the keep-alive connection and the next request on it was never answered (fuzz seed
  // 1824102869, case 2438).
  const server = await startTestServer({ index: false });
  t.teardown(() => server.stop());
  const { hostname, port } = new URL(server.url);
  const chunk = (text: string): string => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
  const half = `[${'0,'.repeat(3_000_000)}`;
  const request = `POST /transactions/inflight/bulk/commit HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\n`
    + `Transfer-Encoding: chunked\r\n\r\n${chunk(half)}${chunk(`${'0,'.repeat(3_000_000)}0]`)}0\r\n\r\n`
    + `GET /health HTTP/1.1\r\nHost: ${hostname}:${port}\r\n\r\n`;
  const outcome = await new Promise<{ answer: string; how: string }>((resolve) => {
    const socket = net.connect(Number(port), hostname, () => socket.write(request));
    let answer = '';
    socket.on('data', (data) => {
      answer += data.toString('utf8');
      if (/HTTP\/1\.1 200 /.test(answer)) {
        socket.destroy();
        resolve({ answer, how: 'answered' });
      }
    });
    socket.on('close', () => resolve({ answer, how: 'closed' }));
    socket.on('error', () => undefined); // the server may close while the rest of the body is still being written
    socket.setTimeout(10_000, () => {
      socket.destroy();
      resolve({ answer, how: 'silent' });
    });
  });
  t.match(outcome.answer, /^HTTP\/1\.1 413 /, 'the body is refused as too large');
  t.not(outcome.how, 'silent', `the connection is answered or closed, never left waiting (${outcome.how})`);
});
