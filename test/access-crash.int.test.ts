// The built server as a child process (`npm run build` first): hook deliveries that were not delivered
// when the process was SIGKILLed all arrive after a restart, with the X-Event-IDs they had before; keys
// never reach the logs (at trace level) or the data files; last use of keys survives a clean shutdown.

import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { startChildServer, type ChildServer } from './helpers/child-server.js';
import { HookReceiver, signatureValid } from './helpers/hook-receiver.js';
import { sendRequest, tempDataDir } from './helpers/test-server.js';

const MASTER = 'crash-test-master-key-9f8e7d-0123456789ab';
const ENV = { FOLIO_SECRET_KEY: MASTER, FOLIO_LOG_LEVEL: 'trace', FOLIO_HOOKS_ALLOW_PRIVATE_NETWORKS: 'true' };

function as(server: ChildServer, key: string, method: string, route: string, body?: unknown) {
  return sendRequest(server.url, method, route, body, { 'X-svc-key': key });
}

t.test('SIGKILL with undelivered hooks, then restart: every one is delivered, ids unchanged', async (t) => {
  const dataDir = tempDataDir('folio-hook-crash');
  const receiver = new HookReceiver(() => ({ status: 500 }));
  await receiver.start();
  let server = await startChildServer(dataDir, ENV);
  t.teardown(async () => {
    await receiver.stop();
    if (server.process.exitCode === null && server.process.signalCode === null) await server.kill();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const hook = await as(server, MASTER, 'POST', '/hooks', {
    name: 'crash', url: `${receiver.url}/hook`, type: 'POST_TRANSACTION', active: true, timeout: 2, retry_count: 10,
  });
  t.equal(hook.status, 201);
  const created = await as(server, MASTER, 'POST', '/api-keys', {
    name: 'writer', owner: 'crash-test', scopes: ['transactions:*', 'ledgers:read'], expires_at: '2099-01-01T00:00:00Z',
  });
  t.equal(created.status, 201);
  const key = created.body.key as string;
  const transactionIds: string[] = [];
  for (let index = 0; index < 40; index += 1) {
    const response = await as(server, key, 'POST', '/transactions', {
      description: 'test', precise_amount: 100 + index, currency: 'USD', source: '@crash-a', destination: '@crash-b', allow_overdraft: true,
      skip_queue: index % 2 === 0, reference: `crash-${index}`,
    });
    t.equal(response.status, 201, 'transactions are acknowledged while the receiver fails');
    transactionIds.push(response.body.transaction_id);
  }
  t.equal((await as(server, key + 'x', 'GET', '/ledgers')).status, 401);
  await receiver.waitFor((received) => new Set(received.map((delivery) => delivery.body.data.transaction_id)).size >= 40);
  const idsBefore = new Map<string, string>();
  for (const delivery of receiver.received) idsBefore.set(delivery.body.data.transaction_id as string, String(delivery.headers['x-event-id']));

  const killed = await server.kill();
  t.equal(killed, 'SIGKILL');
  const firstRunLog = server.stderr();
  receiver.respond = () => ({ status: 200 });
  const beforeRestart = receiver.received.length;
  server = await startChildServer(dataDir, ENV);
  await receiver.waitFor((received) => {
    const after = received.slice(beforeRestart).filter((delivery) => delivery.headers['x-event-id'] !== undefined);
    return new Set(after.map((delivery) => delivery.body.data.transaction_id)).size >= 40;
  }, 120_000);

  const byTransaction = new Map<string, Set<string>>();
  for (const delivery of receiver.received) {
    const id = delivery.body.data.transaction_id as string;
    if (!byTransaction.has(id)) byTransaction.set(id, new Set());
    byTransaction.get(id)?.add(String(delivery.headers['x-event-id']));
  }
  t.same([...byTransaction.keys()].sort(), [...transactionIds].sort(), 'a delivery for every transaction, and no other');
  for (const id of transactionIds) {
    t.same([...(byTransaction.get(id) ?? [])], [idsBefore.get(id)], `${id}: one X-Event-ID before and after the crash`);
  }
  t.ok(receiver.received.slice(beforeRestart).every((delivery) => delivery.body.event === 'transaction.applied'));

  await server.terminate();
  const logs = firstRunLog + server.stderr();
  t.match(logs, /ledger ready/, 'control: the logs were captured');
  t.match(logs, /"status":201/, 'control: requests were logged');
  const signingSecret = hook.body.signing_secret as string;
  t.match(signingSecret, /^whsec_/, 'the hook got its own signing secret');
  t.ok(receiver.received.every((delivery) => signatureValid(signingSecret, delivery)), 'every delivery, before and after the crash, signed with it');
  for (const secret of [MASTER, key, key.slice(key.lastIndexOf('.') + 1), signingSecret]) {
    t.notOk(logs.includes(secret), 'no key or signing secret in the logs');
    for (const file of filesUnder(dataDir)) t.equal(fs.readFileSync(file).indexOf(secret), -1, `no key in ${path.relative(dataDir, file)}`);
  }
});

t.test('last use of a key is written at a clean shutdown', async (t) => {
  const dataDir = tempDataDir('folio-key-use');
  let server = await startChildServer(dataDir, ENV);
  t.teardown(async () => {
    if (server.process.exitCode === null && server.process.signalCode === null) await server.kill();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  const created = await as(server, MASTER, 'POST', '/api-keys', {
    name: 'reader', owner: 'o', scopes: ['ledgers:read'], expires_at: '2099-01-01T00:00:00Z',
  });
  t.equal((await as(server, created.body.key, 'GET', '/ledgers')).status, 200);
  t.equal(await server.terminate(), 0);
  server = await startChildServer(dataDir, ENV);
  const listed = await as(server, MASTER, 'GET', '/api-keys?owner=o');
  t.not(listed.body[0].last_used_at, '0001-01-01T00:00:00Z', 'the use noted before shutdown was kept');
  t.equal((await as(server, created.body.key, 'GET', '/ledgers')).status, 200, 'the key still works after a restart');
  await server.terminate();
});

function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name));
}
