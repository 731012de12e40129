// One client address may hold at most connections_per_address_max connections open, on the core (the
// built CLI, with and without HTTP worker threads) and on the control plane: an address holding its cap
// of slow connections (each made one request and then sent part of the next one's headers) gets every
// further connection answered 503 GEN_CONNECTIONS_EXCEEDED with Retry-After and closed, while another
// address (127.0.0.2: all of 127.0.0.0/8 reaches a server on 127.0.0.1) is served at once. With worker
// threads the count is the process's, not a worker's: however the kernel spreads the connections over
// the workers, none beyond the cap gets through. The refusals are counted in /metrics. Before, every
// client shared connections_max alone, so one address holding it shut everyone else out.

import fs from 'node:fs';
import type net from 'node:net';
import path from 'node:path';
import t, { type Test } from 'tap';
import { ConfigError, loadConfig } from '../server/config.js';
import { loadCloudConfig } from '../cloud/cloud-config.js';
import { startChildServer } from './helpers/child-server.js';
import { removeDir, startCloudRig } from './helpers/cloud-rig.js';
import { envelopeCodeOf, exchange, slowConnection, splitResponses } from './helpers/raw-http.js';
import { tempDataDir } from './helpers/test-server.js';

const PER_ADDRESS_MAX = 4;
/** Connections tried beyond the cap: with two workers, a per-worker count would let some of these through. */
const BEYOND = 4;
/** A refusal comes at once; this only bounds a loaded machine. */
const ANSWER_WITHIN_MS = 5_000;

function healthRequest(port: number): string {
  return `GET /health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`;
}

/** Holds the cap from `address`, checks what comes beyond it and from elsewhere, then frees the cap. */
async function checkCap(t: Test, port: number, address: string, other: string): Promise<void> {
  const held: net.Socket[] = [];
  t.teardown(() => {
    for (const socket of held) socket.destroy();
  });
  for (let index = 0; index < PER_ADDRESS_MAX; index += 1) {
    const socket = await slowConnection(port, address);
    t.ok(socket, `${address}: slow connection ${index + 1} of ${PER_ADDRESS_MAX} is taken on`);
    if (socket) held.push(socket);
  }
  const beyond = await Promise.all(Array.from({ length: BEYOND }, () => exchange(port, healthRequest(port), ANSWER_WITHIN_MS, address)));
  for (const [index, answer] of beyond.entries()) {
    const [first] = splitResponses(answer.text);
    t.equal(first?.status, 503, `${address}: connection ${PER_ADDRESS_MAX + index + 1} is answered 503`);
    t.equal(envelopeCodeOf(first), 'GEN_CONNECTIONS_EXCEEDED', 'in the error envelope');
    t.ok(Number(first?.headers['retry-after']) >= 1, 'with Retry-After');
    t.ok(answer.closed, 'and closed');
  }
  const served = await exchange(port, healthRequest(port), ANSWER_WITHIN_MS, other);
  t.equal(splitResponses(served.text)[0]?.status, 200, `${other} is served while ${address} holds its cap (in ${served.elapsedMs} ms)`);
  held.pop()?.destroy();
  let freed: number | undefined;
  for (let attempt = 0; attempt < 50 && freed !== 200; attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    freed = splitResponses((await exchange(port, healthRequest(port), ANSWER_WITHIN_MS, address)).text)[0]?.status;
  }
  t.equal(freed, 200, `${address} is served again once one of its connections closes`);
}

for (const workers of [0, 2]) {
  t.test(`folio serve, ${workers} HTTP worker threads`, async (t) => {
    const dataDir = tempDataDir('folio-per-address');
    const core = await startChildServer(dataDir, { FOLIO_WORKERS: String(workers), FOLIO_CONNECTIONS_PER_ADDRESS_MAX: String(PER_ADDRESS_MAX) });
    t.teardown(async () => {
      await core.terminate();
      removeDir(dataDir);
    });
    const port = Number(new URL(core.url).port);
    await checkCap(t, port, '127.0.0.1', '127.0.0.2');
    const metrics = await exchange(port, `GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`, ANSWER_WITHIN_MS, '127.0.0.2');
    const refused = /^folio_connections_refused_total\{reason="per_address"\} (\d+)$/m.exec(splitResponses(metrics.text)[0]?.body ?? '');
    t.ok(Number(refused?.[1]) >= BEYOND, `/metrics counts the refusals, whichever worker answers (${refused?.[1]})`);
  });
}

t.test('folio cloud', async (t) => {
  const rig = await startCloudRig({ config: { connections: { connections_per_address_max: PER_ADDRESS_MAX }, trusted_proxies: ['127.0.0.5'] } });
  t.teardown(async () => {
    await rig.stop();
    removeDir(rig.dataDir);
  });
  const port = Number(new URL(rig.url).port);
  await checkCap(t, port, '127.0.0.3', '127.0.0.4');
  // A trusted reverse proxy carries many clients' connections: it is held by connections_max only.
  const proxied: net.Socket[] = [];
  t.teardown(() => {
    for (const socket of proxied) socket.destroy();
  });
  for (let index = 0; index < PER_ADDRESS_MAX + 2; index += 1) {
    const socket = await slowConnection(port, '127.0.0.5');
    if (socket) proxied.push(socket);
  }
  t.equal(proxied.length, PER_ADDRESS_MAX + 2, 'a trusted proxy is not held to the cap per address');
});

t.test('the cap is a setting, checked at start', async (t) => {
  t.equal(loadConfig(undefined, {}).server.connections_per_address_max, 500, 'half of connections_max by default');
  t.equal(loadConfig(undefined, { FOLIO_CONNECTIONS_PER_ADDRESS_MAX: '32' }).server.connections_per_address_max, 32);
  t.throws(() => loadConfig(undefined, { FOLIO_CONNECTIONS_PER_ADDRESS_MAX: '0' }), ConfigError);
  t.throws(() => loadConfig(undefined, { FOLIO_CONNECTIONS_PER_ADDRESS_MAX: 'many' }), ConfigError);
  const dir = tempDataDir('folio-per-address-config');
  t.teardown(() => removeDir(dir));
  const file = path.join(dir, 'folio.json');
  fs.writeFileSync(file, JSON.stringify({ server: { connections_per_address_max: 64 } }));
  t.equal(loadConfig(file, {}).server.connections_per_address_max, 64, 'from folio.json');
  fs.writeFileSync(file, JSON.stringify({ server: { connections_per_address_max: 0 } }));
  t.throws(() => loadConfig(file, {}), ConfigError);
  t.match(loadCloudConfig({ FOLIO_CLOUD_CONNECTIONS_PER_ADDRESS_MAX: '16' }), { connections: { connections_per_address_max: 16 } });
  t.throws(() => loadCloudConfig({ FOLIO_CLOUD_CONNECTIONS_PER_ADDRESS_MAX: '-1' }), ConfigError);
});
