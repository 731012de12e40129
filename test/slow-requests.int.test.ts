// Connections that hold on without sending, against a real control plane and a real core (the built CLI,
// configured through its environment), each with short limits so the test is quick: a body that stops
// short of its Content-Length, headers that never end, a connection that sends nothing. Each is answered
// 408 GEN_REQUEST_TIMEOUT in the error envelope and closed (it used to stay open for good: the refusal
// waited for an answer the route never wrote while it waited for the body). And open connections are
// capped: one beyond the cap is closed at once, and a place freed is taken again.

import net from 'node:net';
import t, { type Test } from 'tap';
import { ConfigError, loadConfig } from '../server/config.js';
import { loadCloudConfig } from '../cloud/cloud-config.js';
import { startChildServer, type ChildServer } from './helpers/child-server.js';
import { removeDir, startCloudRig, type CloudRig } from './helpers/cloud-rig.js';
import { tempDataDir } from './helpers/test-server.js';

const HEADERS_TIMEOUT_MS = 500;
const REQUEST_TIMEOUT_MS = 1_000;
const CONNECTIONS_MAX = 6;
/** A cut-off must come within this long: the deadline, Node's check every 125 ms here, and a loaded machine. */
const CUT_OFF_WITHIN_MS = REQUEST_TIMEOUT_MS + 4_000;

interface RawExchange {
  text: string;
  elapsedMs: number;
  closed: boolean;
}

/** Writes `bytes` on a new connection and collects what comes back until the server closes it (or the wait ends). */
function holdOn(port: number, bytes: string, waitMs = 15_000): Promise<RawExchange> {
  return new Promise((resolve) => {
    const started = Date.now();
    let text = '';
    const socket = net.connect(port, '127.0.0.1', () => {
      if (bytes !== '') socket.write(bytes);
    });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text, elapsedMs: Date.now() - started, closed: false });
    }, waitMs);
    socket.on('data', (chunk) => {
      text += chunk.toString();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text, elapsedMs: Date.now() - started, closed: true });
    });
  });
}

/** A connection that made one keep-alive request and stays open. */
function keptOpen(port: number): Promise<net.Socket | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(`GET /health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`));
    socket.once('data', (chunk) => resolve(chunk.toString().startsWith('HTTP/1.1 200') ? socket : undefined));
    socket.on('error', () => resolve(undefined));
    socket.on('close', () => resolve(undefined));
  });
}

function checkCutOff(t: Test, exchange: RawExchange, label: string): void {
  t.ok(exchange.closed, `${label}: the connection is closed`);
  t.ok(exchange.elapsedMs < CUT_OFF_WITHIN_MS, `${label}: within ${CUT_OFF_WITHIN_MS} ms (took ${exchange.elapsedMs} ms)`);
  t.match(exchange.text, /^HTTP\/1\.1 408 /, `${label}: 408`);
  t.match(exchange.text, /"code":"GEN_REQUEST_TIMEOUT"/, `${label}: in the error envelope`);
}

async function checkCap(t: Test, port: number): Promise<void> {
  const held: net.Socket[] = [];
  for (let index = 0; index < CONNECTIONS_MAX; index += 1) {
    const socket = await keptOpen(port);
    t.ok(socket, `connection ${index + 1} of ${CONNECTIONS_MAX} is served`);
    if (socket) held.push(socket);
  }
  const beyond = await holdOn(port, `GET /health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`, 5_000);
  t.ok(beyond.closed, 'one more is closed at once');
  t.equal(beyond.text, '', 'unanswered');
  held.pop()?.destroy();
  await new Promise((resolve) => setTimeout(resolve, 200));
  const freed = await holdOn(port, `GET /health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`, 5_000);
  t.match(freed.text, /^HTTP\/1\.1 200 /, 'a place freed is served again');
  for (const socket of held) socket.destroy();
}

t.test('folio cloud', async (t) => {
  const rig: CloudRig = await startCloudRig({
    config: { connections: { headers_timeout_ms: HEADERS_TIMEOUT_MS, request_timeout_ms: REQUEST_TIMEOUT_MS, connections_max: CONNECTIONS_MAX } },
  });
  t.teardown(async () => {
    await rig.stop();
    removeDir(rig.dataDir);
  });
  const port = Number(new URL(rig.url).port);
  const host = `Host: 127.0.0.1:${port}`;
  const [token, users, headers, silent] = await Promise.all([
    holdOn(port, `POST /oauth/token HTTP/1.1\r\n${host}\r\nContent-Type: application/x-www-form-urlencoded\r\nAuthorization: Basic Y2xpX3g6eQ==\r\nContent-Length: 100\r\n\r\nab`),
    holdOn(port, `POST /users HTTP/1.1\r\n${host}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"`),
    holdOn(port, `GET /health HTTP/1.1\r\n${host}\r\nX-Slow: `),
    holdOn(port, ''),
  ]);
  checkCutOff(t, token, 'POST /oauth/token with 2 of 100 bytes');
  checkCutOff(t, users, 'POST /users with 2 of 100 bytes');
  checkCutOff(t, headers, 'headers that never end');
  checkCutOff(t, silent, 'a connection that sends nothing');
  const pipelined = await holdOn(port, `GET /health HTTP/1.1\r\n${host}\r\n\r\nPOST /oauth/token HTTP/1.1\r\n${host}\r\nContent-Type: application/x-www-form-urlencoded\r\nAuthorization: Basic Y2xpX3g6eQ==\r\nContent-Length: 50\r\n\r\nx`);
  t.match(pipelined.text, /^HTTP\/1\.1 200 [\s\S]*HTTP\/1\.1 408 /, 'a request read whole before a slow one is answered first, then the slow one gets its 408');
  t.ok(pipelined.closed, 'and the connection is closed');
  await checkCap(t, port);
});

t.test('folio serve', async (t) => {
  const dataDir = tempDataDir('folio-slow');
  const core: ChildServer = await startChildServer(dataDir, {
    FOLIO_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS), FOLIO_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS), FOLIO_CONNECTIONS_MAX: String(CONNECTIONS_MAX),
  });
  t.teardown(async () => {
    await core.terminate();
    removeDir(dataDir);
  });
  const port = Number(new URL(core.url).port);
  const host = `Host: 127.0.0.1:${port}`;
  const [ledger, headers, silent] = await Promise.all([
    holdOn(port, `POST /ledgers HTTP/1.1\r\n${host}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"`),
    holdOn(port, `GET /health HTTP/1.1\r\n${host}\r\nX-Slow: `),
    holdOn(port, ''),
  ]);
  checkCutOff(t, ledger, 'POST /ledgers with 2 of 100 bytes');
  checkCutOff(t, headers, 'headers that never end');
  checkCutOff(t, silent, 'a connection that sends nothing');
  const body = '{"name":"in time"}';
  const written = await holdOn(port, `POST /ledgers HTTP/1.1\r\n${host}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`, 5_000);
  t.match(written.text, /^HTTP\/1\.1 201 /, 'a request that arrives in time is carried out');
  await checkCap(t, port);
});

t.test('the limits are settings, checked at start', async (t) => {
  const core = loadConfig(undefined, { FOLIO_HEADERS_TIMEOUT_MS: '700', FOLIO_REQUEST_TIMEOUT_MS: '900', FOLIO_CONNECTIONS_MAX: '5' });
  t.match(core.server, { headers_timeout_ms: 700, request_timeout_ms: 900, connections_max: 5 });
  t.throws(() => loadConfig(undefined, { FOLIO_HEADERS_TIMEOUT_MS: '5000', FOLIO_REQUEST_TIMEOUT_MS: '1000' }), ConfigError, 'headers may not take longer than the whole request');
  t.throws(() => loadConfig(undefined, { FOLIO_CONNECTIONS_MAX: '0' }), ConfigError);
  t.throws(() => loadCloudConfig({ FOLIO_CLOUD_CONNECTIONS_MAX: 'many' }), ConfigError);
  t.throws(() => loadCloudConfig({ FOLIO_CLOUD_PUBLIC_URL: 'https://cloud.example.com/folio' }), ConfigError, 'the public URL is an origin');
  t.match(loadCloudConfig({ FOLIO_CLOUD_REQUEST_TIMEOUT_MS: '30000', FOLIO_CLOUD_PUBLIC_URL: 'https://cloud.example.com' }), { connections: { request_timeout_ms: 30_000 }, public_url: 'https://cloud.example.com' });
});
