// A client that declares a body and stops sending it (2 of 100 bytes) is cut off at the request deadline
// (request_timeout_ms of its first byte, plus Node's check interval), whatever the route did with it:
// read it (answered 408 GEN_REQUEST_TIMEOUT), or answered it before reading it (a 401 to a caller without
// a key): then that answer is the only one, and the connection is closed at the same deadline. Checked on
// a real control plane (POST /deployments, POST /oauth/token, and /oauth/token again from an address its
// failed sign-ins put under the throttle's backoff) and on the built core with and without HTTP worker
// threads, with raw sockets and short deadlines. A request answered early used to get a second answer
// when its deadline came, a 408 after its 401, which a client reads as the answer to a request it never
// sent.

import t, { type Test } from 'tap';
import { startChildServer } from './helpers/child-server.js';
import { CLOUD_API_KEY, createClient, createUser, openSignIn, removeDir, startCloudRig, submitSignIn } from './helpers/cloud-rig.js';
import { envelopeCodeOf, exchange, splitResponses } from './helpers/raw-http.js';
import { tempDataDir } from './helpers/test-server.js';

const HEADERS_TIMEOUT_MS = 500;
const REQUEST_TIMEOUT_MS = 1_500;
/** The deadline, Node's check for it (every second at most), a refusal's linger, and a loaded machine's delays. */
const CUT_OFF_WITHIN_MS = REQUEST_TIMEOUT_MS + 1_000 + 5_000;
/** Long enough that a connection still open then was never going to be closed at its deadline. */
const WAIT_MS = REQUEST_TIMEOUT_MS + 15_000;
const MASTER_KEY = 'stalled-bodies-master-key-0123456789abcdef';

/** Request bytes with `Content-Length: 100` and only `partial` of the body. */
function stalled(port: number, method: string, path: string, headerLines: string[], partial: string): string {
  return `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${headerLines.map((line) => `${line}\r\n`).join('')}Content-Length: 100\r\n\r\n${partial}`;
}

/** Sends `bytes`, waits for the server to close, and checks it did so in time with exactly `status` (and `code`) as the one answer. */
async function checkCutOff(t: Test, port: number, label: string, bytes: string, status: number, code?: string, localAddress?: string): Promise<void> {
  const answer = await exchange(port, bytes, WAIT_MS, localAddress);
  t.ok(answer.closed, `${label}: the connection is closed`);
  t.ok(answer.elapsedMs < CUT_OFF_WITHIN_MS, `${label}: within ${CUT_OFF_WITHIN_MS} ms of the first byte (took ${answer.elapsedMs} ms)`);
  const answers = splitResponses(answer.text);
  t.same(answers.map((one) => one.status), [status], `${label}: one answer, ${status}`);
  if (code !== undefined) t.equal(envelopeCodeOf(answers[0]), code, `${label}: ${code}`);
}

t.test('folio cloud', async (t) => {
  const rig = await startCloudRig({ config: { connections: { headers_timeout_ms: HEADERS_TIMEOUT_MS, request_timeout_ms: REQUEST_TIMEOUT_MS } } });
  t.teardown(async () => {
    await rig.stop();
    removeDir(rig.dataDir);
  });
  const port = Number(new URL(rig.url).port);
  const form = ['Content-Type: application/x-www-form-urlencoded'];
  const json = ['Content-Type: application/json'];
  const unknownClient = `Authorization: Basic ${Buffer.from('cli_unknown:secret').toString('base64')}`;
  await Promise.all([
    // Without a key the body may be read first (408) or refused unread (401): either way one answer, in time.
    (async () => {
      const answer = await exchange(port, stalled(port, 'POST', '/deployments', json, '{"'), WAIT_MS);
      t.ok(answer.closed && answer.elapsedMs < CUT_OFF_WITHIN_MS, `POST /deployments without a key: closed within ${CUT_OFF_WITHIN_MS} ms (took ${answer.elapsedMs} ms)`);
      const statuses = splitResponses(answer.text).map((one) => one.status);
      t.ok(statuses.length === 1 && [401, 408].includes(statuses[0] as number), `POST /deployments without a key: one answer (${statuses.join(', ')})`);
    })(),
    checkCutOff(t, port, 'POST /deployments with the operator key', stalled(port, 'POST', '/deployments', [...json, `X-svc-key: ${CLOUD_API_KEY}`], '{"'), 408, 'GEN_REQUEST_TIMEOUT'),
    checkCutOff(t, port, 'POST /oauth/token without client credentials (401 before the body)', stalled(port, 'POST', '/oauth/token', form, 'ab'), 401, 'invalid_client'),
    checkCutOff(t, port, 'POST /oauth/token with a client\'s credentials (the form is read)', stalled(port, 'POST', '/oauth/token', [...form, unknownClient], 'ab'), 408, 'GEN_REQUEST_TIMEOUT'),
  ]);

  // An address whose failed sign-ins put it under the throttle's backoff: its requests are cut off the same way.
  const address = '127.0.0.7';
  const user = await createUser(rig, 'stalled@example.com');
  const client = await createClient(rig, ['deployments:read'], ['http://127.0.0.1:9/callback']);
  const page = await openSignIn(rig, { response_type: 'code', client_id: client.client_id, redirect_uri: 'http://127.0.0.1:9/callback', state: 's' });
  const statuses: number[] = [];
  for (let attempt = 0; attempt < 30 && !statuses.includes(429); attempt += 1) {
    const answer = await submitSignIn(rig, page, { email: `guess-${attempt}@example.com`, password: 'not the password' }, { localAddress: address });
    statuses.push(answer.status);
  }
  t.ok(statuses.includes(429), `the address is throttled after ${statuses.length} failed sign-ins`);
  t.equal((await submitSignIn(rig, page, { email: user.email, password: user.password }, { localAddress: address })).status, 429, 'even a right password waits');
  await Promise.all([
    checkCutOff(t, port, 'throttled address, POST /oauth/token without client credentials', stalled(port, 'POST', '/oauth/token', form, 'ab'), 401, 'invalid_client', address),
    checkCutOff(t, port, 'throttled address, POST /oauth/token with a client\'s credentials', stalled(port, 'POST', '/oauth/token', [...form, unknownClient], 'ab'), 408, 'GEN_REQUEST_TIMEOUT', address),
    checkCutOff(t, port, 'throttled address, POST /oauth/authorize', stalled(port, 'POST', '/oauth/authorize', form, 'ab'), 408, 'GEN_REQUEST_TIMEOUT', address),
  ]);
});

for (const workers of [0, 2]) {
  t.test(`folio serve, ${workers} HTTP worker threads`, async (t) => {
    const dataDir = tempDataDir('folio-stalled');
    const core = await startChildServer(dataDir, {
      FOLIO_WORKERS: String(workers), FOLIO_SECRET_KEY: MASTER_KEY,
      FOLIO_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS), FOLIO_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    });
    t.teardown(async () => {
      await core.terminate();
      removeDir(dataDir);
    });
    const port = Number(new URL(core.url).port);
    const json = ['Content-Type: application/json'];
    await Promise.all([
      checkCutOff(t, port, 'POST /ledgers without a key (401 before the body)', stalled(port, 'POST', '/ledgers', json, '{"'), 401, 'AUTH_MISSING_API_KEY'),
      checkCutOff(t, port, 'POST /ledgers with the master key', stalled(port, 'POST', '/ledgers', [...json, `X-svc-key: ${MASTER_KEY}`], '{"'), 408, 'GEN_REQUEST_TIMEOUT'),
      checkCutOff(t, port, 'GET /health with a body nobody reads', stalled(port, 'GET', '/health', [], '{"'), 200),
    ]);
  });
}
