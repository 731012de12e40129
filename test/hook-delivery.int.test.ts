// Hook management and delivery against a real receiver on 127.0.0.1: validation and bounds, PRE and POST
// deliveries with their body and signed headers, retries after 500s and after timeouts with a stable
// X-Event-ID, inactive and deleted hooks, transactions flowing while the receiver is down, and a restart
// resending only unfinished deliveries.

import fs from 'node:fs';
import t from 'tap';
import type { LedgerEvent } from '../engine/events.js';
import type { HookRecord } from '../engine/records.js';
import { HookSecretSealer } from '../hooks/signing-secrets.js';
import { LmdbLog } from '../wal/lmdb-log.js';
import { accessServerFor, createKey, MASTER_KEY, startAccessServer, type AccessServer } from './helpers/access-server.js';
import { freePort, HookReceiver, signatureValid } from './helpers/hook-receiver.js';
import { tempDataDir } from './helpers/test-server.js';

async function receiverFor(t: { teardown(fn: () => unknown): void }, receiver = new HookReceiver()): Promise<HookReceiver> {
  await receiver.start();
  t.teardown(() => receiver.stop());
  return receiver;
}

/** Each hook's signing secret, as its creation answered it, by hook id. */
const signingSecrets = new Map<string, string>();

async function addHook(server: AccessServer, fields: Record<string, unknown>): Promise<string> {
  const response = await server.master('POST', '/hooks', {
    name: 'hook', type: 'POST_TRANSACTION', active: true, timeout: 5, retry_count: 3, ...fields,
  });
  if (response.status !== 201) throw new Error(`hook creation failed: ${response.status} ${response.text}`);
  signingSecrets.set(response.body.hook_id, response.body.signing_secret);
  return response.body.hook_id as string;
}

function transfer(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { description: 'test', precise_amount: 100, currency: 'USD', source: '@hook-a', destination: '@hook-b', allow_overdraft: true, skip_queue: true, ...extra };
}

t.test('hook management: validation, bounds, read, list by type, replace, delete', async (t) => {
  const server = await accessServerFor(t);
  const valid = { name: 'h', url: 'https://example.test/hook', type: 'PRE_TRANSACTION', active: true, timeout: 30, retry_count: 3 };
  for (const [label, change] of [
    ['relative url', { url: '/hook' }],
    ['ftp url', { url: 'ftp://example.test/hook' }],
    ['no scheme', { url: 'example.test/hook' }],
    ['unknown type', { type: 'DURING_TRANSACTION' }],
    ['zero timeout', { timeout: 0 }],
    ['timeout over the bound', { timeout: 61 }],
    ['negative retries', { retry_count: -1 }],
    ['retries over the bound', { retry_count: 11 }],
    ['fractional retries', { retry_count: 1.5 }],
    ['active as text', { active: 'yes' }],
    ['no name', { name: undefined }],
  ] as const) {
    const response = await server.master('POST', '/hooks', { ...valid, ...change });
    t.equal(response.status, 400, label);
    t.equal(response.body.error_detail.code, 'GEN_VALIDATION_ERROR', label);
  }
  const created = await server.master('POST', '/hooks', valid);
  t.equal(created.status, 201);
  t.match(created.body, { ...valid, hook_id: /^hook_/ });
  const bounds = await server.master('POST', '/hooks', { ...valid, type: 'POST_TRANSACTION', timeout: 0.5, retry_count: 10 });
  t.equal(bounds.status, 201, 'half a second and ten retries are within the bounds');
  const id = created.body.hook_id as string;
  const { signing_secret: _secret, ...shown } = created.body;
  t.same((await server.master('GET', `/hooks/${id}`)).body, shown, 'read shows the hook as created, without its secret');
  t.equal((await server.master('GET', '/hooks')).body.length, 2);
  t.same((await server.master('GET', '/hooks?type=PRE_TRANSACTION')).body.map((hook: { hook_id: string }) => hook.hook_id), [id]);
  const replaced = await server.master('PUT', `/hooks/${id}`, { ...valid, name: 'renamed', active: false });
  t.equal(replaced.status, 200);
  t.match(replaced.body, { hook_id: id, name: 'renamed', active: false, created_at: created.body.created_at });
  t.equal((await server.master('PUT', `/hooks/${id}`, { ...valid, url: 'nope' })).status, 400);
  t.equal((await server.master('DELETE', `/hooks/${id}`)).status, 200);
  for (const [method, body] of [['GET', undefined], ['PUT', valid], ['DELETE', undefined]] as const) {
    const response = await server.master(method, `/hooks/${id}`, body);
    t.equal(response.status, 404, `${method} after delete`);
    t.equal(response.body.error_detail.code, 'HOOK_NOT_FOUND');
  }
});

t.test('PRE and POST deliveries: body, signed headers, data as GET shows it', async (t) => {
  const server = await accessServerFor(t);
  const receiver = await receiverFor(t);
  const preId = await addHook(server, { url: `${receiver.url}/pre`, type: 'PRE_TRANSACTION' });
  const postId = await addHook(server, { url: `${receiver.url}/post`, type: 'POST_TRANSACTION' });
  const queued = await server.master('POST', '/transactions', transfer({ skip_queue: false }));
  const sync = await server.master('POST', '/transactions', transfer({ precise_amount: '98765432109876543210987' }));
  t.equal(queued.status, 201);
  t.equal(sync.status, 201);
  await receiver.waitFor((received) => received.length >= 4);
  const find = (path: string, transactionId: string) => receiver.received.filter((delivery) =>
    delivery.path === path && delivery.body.data.transaction_id === transactionId);
  const queuedPre = find('/pre', queued.body.transaction_id);
  t.equal(queuedPre.length, 1);
  t.match(queuedPre[0]?.body, { event: 'transaction.queued', hook_type: 'PRE_TRANSACTION', data: { status: 'QUEUED', skip_queue: false } });
  const queuedPost = find('/post', queued.body.transaction_id);
  t.match(queuedPost[0]?.body, { event: 'transaction.applied', hook_type: 'POST_TRANSACTION', data: { status: 'APPLIED' } });
  const syncPre = find('/pre', sync.body.transaction_id);
  t.match(syncPre[0]?.body, { event: 'transaction.applied', hook_type: 'PRE_TRANSACTION', data: { skip_queue: true } });
  const syncPost = find('/post', sync.body.transaction_id)[0];
  if (!syncPost) throw new Error('no POST delivery for the synchronous transaction');
  t.ok(syncPost.text.includes('"precise_amount":98765432109876543210987,'), 'exact amount, as digits');
  const shown = await server.master('GET', `/transactions/${sync.body.transaction_id}`);
  t.same(syncPost.body.data, JSON.parse(shown.text), 'data is the transaction as GET shows it');
  for (const delivery of receiver.received) {
    const secret = signingSecrets.get(String(delivery.headers['x-hook-id'])) as string;
    t.ok(signatureValid(secret, delivery), 'the signature checks out with the hook\'s own secret');
    t.notOk(signatureValid(MASTER_KEY, delivery), 'not with the master key: receivers never need it');
    t.notOk(signatureValid(signingSecrets.get(delivery.path === '/pre' ? postId : preId) as string, delivery), 'nor with another hook\'s secret');
    t.notOk(signatureValid(secret, { ...delivery, text: delivery.text.replace('"USD"', '"EUR"') }), 'nor for a changed body');
    t.equal(delivery.headers['x-hook-id'], delivery.path === '/pre' ? preId : postId);
    t.match(delivery.headers['x-event-id'], /^evt_[0-9a-f]{32}$/);
    t.ok(Math.abs(Number(delivery.headers['x-folio-timestamp']) - Date.now() / 1000) < 300, 'timestamp is now, in seconds');
    t.equal(delivery.headers['content-type'], 'application/json');
  }
  t.equal(receiver.eventIds().size, 4, 'each delivery has its own event id');
});

t.test('signing secrets: shown at creation and rotation only, never listed, rotation takes effect at once', async (t) => {
  const server = await accessServerFor(t);
  const receiver = await receiverFor(t);
  const created = await server.master('POST', '/hooks', { name: 'signed', url: `${receiver.url}/s`, type: 'POST_TRANSACTION', active: true, timeout: 5, retry_count: 0 });
  const id = created.body.hook_id as string;
  const first = created.body.signing_secret as string;
  t.match(first, /^whsec_[A-Za-z0-9_-]{43}$/, 'whsec_ and 32 random bytes');
  for (const [label, response] of [['read', await server.master('GET', `/hooks/${id}`)], ['list', await server.master('GET', '/hooks')],
    ['replace', await server.master('PUT', `/hooks/${id}`, { name: 'signed', url: `${receiver.url}/s`, type: 'POST_TRANSACTION', active: true, timeout: 5, retry_count: 0 })]] as const) {
    t.notOk(response.text.includes(first) || response.text.includes('signing_secret'), `${label} does not show it`);
  }
  await server.master('POST', '/transactions', transfer());
  await receiver.waitFor((received) => received.length >= 1);
  t.ok(signatureValid(first, receiver.received[0] as never), 'signed with the first secret (kept across a replace)');
  const rotated = await server.master('POST', `/hooks/${id}/rotate-secret`);
  t.equal(rotated.status, 200);
  const second = rotated.body.signing_secret as string;
  t.not(second, first, 'a new secret');
  t.equal(rotated.body.hook_id, id);
  await server.master('POST', '/transactions', transfer());
  await receiver.waitFor((received) => received.length >= 2);
  t.ok(signatureValid(second, receiver.received[1] as never), 'the next delivery is signed with the new one');
  t.notOk(signatureValid(first, receiver.received[1] as never), 'and not with the old one');
  t.equal((await server.master('POST', '/hooks/hook_missing/rotate-secret')).body.error_detail.code, 'HOOK_NOT_FOUND');
  const { key } = await createKey(server, ['*:*']);
  t.equal((await server.as(key, 'POST', `/hooks/${id}/rotate-secret`)).body.error_detail.code, 'AUTH_MASTER_KEY_REQUIRED');
});

/** Appends events to a stopped server's log as an older version wrote them, bypassing today's engine. */
async function appendAsOlderVersion(dataDir: string, ...events: LedgerEvent[]): Promise<void> {
  const log = LmdbLog.open({ dir: LmdbLog.directoryIn(dataDir) });
  await log.durable(log.appendAll(events));
  await log.close();
}

/** The `hook.updated` events in the log that gave `hookId` a signing secret. */
function secretsIssued(server: AccessServer, hookId: string): string[] {
  const sealed: string[] = [];
  for (const { event } of server.runtime.log.read(1, server.runtime.log.durableSeq)) {
    if (event.type !== 'hook.updated') continue;
    for (const hook of event.hooks ?? []) if (hook.hook_id === hookId && hook.signing_secret_sealed) sealed.push(hook.signing_secret_sealed);
  }
  return sealed;
}

t.test('a hook registered before hooks had secrets gets one of its own: the master key never signs', async (t) => {
  const receiver = await receiverFor(t);
  const dataDir = tempDataDir('folio-hook-legacy');
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  await (await startAccessServer({ dataDir })).stop();
  // As the server logged hooks then: a hook.created record without signing_secret_sealed.
  const legacy: HookRecord = {
    hook_id: 'hook_0190a000-0000-7000-8000-000000000001', name: 'from before secrets', url: `${receiver.url}/legacy`,
    type: 'POST_TRANSACTION', active: true, timeout: 5, retry_count: 0, created_at: Date.now(),
  };
  await appendAsOlderVersion(dataDir, { type: 'hook.created', at: legacy.created_at, hooks: [legacy] });

  let server = await startAccessServer({ dataDir });
  /** The delivery of transaction `transactionId` (a restart may send one again, with the same signature rules). */
  const deliveryOf = async (transactionId: string) => {
    await receiver.waitFor((received) => received.some((delivery) => delivery.body.data.transaction_id === transactionId));
    return receiver.received.find((delivery) => delivery.body.data.transaction_id === transactionId) as never;
  };
  const issued = secretsIssued(server, legacy.hook_id);
  t.equal(issued.length, 1, 'start-up gave it a secret, logged as one event');
  const secret = HookSecretSealer.openIn(dataDir).open(issued[0] as string);
  t.match(secret, /^whsec_[A-Za-z0-9_-]{43}$/);
  t.notOk((await server.master('GET', `/hooks/${legacy.hook_id}`)).text.includes('signing_secret'), 'which reads do not show');
  const first = await deliveryOf((await server.master('POST', '/transactions', transfer())).body.transaction_id);
  t.notOk(signatureValid(MASTER_KEY, first), 'the delivery is not signed with the master key');
  t.ok(signatureValid(secret, first), 'but with the hook\'s own secret');

  await server.stop();
  server = await startAccessServer({ dataDir });
  t.teardown(() => server.stop());
  t.same(secretsIssued(server, legacy.hook_id), issued, 'after a restart (replay) it keeps that secret: nothing new is issued');
  const second = await deliveryOf((await server.master('POST', '/transactions', transfer())).body.transaction_id);
  t.ok(signatureValid(secret, second), 'and signs with it');
  t.notOk(signatureValid(MASTER_KEY, second), 'never with the master key');
  const rotated = await server.master('POST', `/hooks/${legacy.hook_id}/rotate-secret`);
  t.match(rotated.body.signing_secret, /^whsec_/, 'a rotation hands its receiver a secret to check with');
  const third = await deliveryOf((await server.master('POST', '/transactions', transfer())).body.transaction_id);
  t.ok(signatureValid(rotated.body.signing_secret, third), 'which signs what follows');
});

t.test('targets: metadata and link-local never, private networks only when allowed', async (t) => {
  const server = await accessServerFor(t, { allowPrivateNetworks: false });
  const hook = (url: string) => server.master('POST', '/hooks', { name: 't', url, type: 'POST_TRANSACTION', active: true, timeout: 1, retry_count: 0 });
  for (const url of ['http://169.254.169.254/latest/meta-data', 'http://[fe80::1]/x', 'http://metadata.google.internal/x', 'http://0.0.0.0/x',
    'http://127.0.0.1:9/x', 'http://localhost/x', 'http://10.1.2.3/x', 'http://192.168.0.10/x', 'http://172.16.5.4/x', 'http://[::1]/x',
    'http://[fd12::1]/x', 'http://[::ffff:169.254.169.254]/x', 'http://100.64.0.1/x',
    // IPv4 carried in IPv6: NAT64, SIIT, IPv4-compatible, 6to4, Teredo, in the forms a URL may take
    'http://[64:ff9b::127.0.0.1]/x', 'http://[64:FF9B::A00:1]/x', 'http://[64:ff9b:1::c0a8:1]/x', 'http://[::ffff:0:127.0.0.1]/x',
    'http://[::127.0.0.1]/x', 'http://[0:0:0:0:0:0:a9fe:a9fe]/x', 'http://[2002:7f00:1::]/x', 'http://[2001:0:a00:1::]/x',
    'http://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/x', 'http://[0064:ff9b:0000:0000:0000:0000:0a00:0001]/x']) {
    const response = await hook(url);
    t.equal(response.status, 400, url);
    t.ok(response.body.error_detail?.details?.url, `${url}: the reason names the url`);
  }
  t.match((await hook('http://10.0.0.1/x')).body.error_detail.details.url, /allow_private_networks/, 'the refusal says how to allow private networks');
  t.equal((await hook('https://hooks.example.com/x')).status, 201, 'a public name is accepted (its addresses are checked at delivery)');

  const allowing = await accessServerFor(t, { allowPrivateNetworks: true });
  const allowed = (url: string) => allowing.master('POST', '/hooks', { name: 't', url, type: 'POST_TRANSACTION', active: true, timeout: 1, retry_count: 0 });
  t.equal((await allowed('http://127.0.0.1:9/x')).status, 201, 'loopback when allowed');
  t.equal((await allowed('http://10.1.2.3/x')).status, 201, 'private ranges when allowed');
  t.equal((await allowed('http://169.254.169.254/x')).status, 400, 'metadata still never');
  t.equal((await allowed('http://[fe80::1]/x')).status, 400, 'link-local still never');
  t.equal((await allowed('http://[64:ff9b::169.254.169.254]/x')).status, 400, 'metadata through NAT64 still never');
  t.equal((await allowed('http://[64:ff9b::10.0.0.1]/x')).status, 201, 'a private address through NAT64 when allowed');
  t.equal((await hook('http://[64:ff9b::808:808]/x')).status, 201, 'a public address through NAT64 is a target');
  t.equal((await hook('http://[2002:808:808::1]/x')).status, 201, 'and through 6to4');
});

t.test('a delivery to a name that resolves to a refused address is not sent', async (t) => {
  const receiver = await receiverFor(t);
  const dataDir = tempDataDir('folio-hook-target');
  // Registered while private networks were allowed, delivered after they no longer are.
  let server = await startAccessServer({ dataDir, allowPrivateNetworks: true });
  await addHook(server, { url: `http://localhost:${new URL(receiver.url).port}/named`, retry_count: 0, timeout: 1 });
  await server.stop();
  server = await startAccessServer({ dataDir, allowPrivateNetworks: false });
  t.teardown(() => server.stop());
  await server.master('POST', '/transactions', transfer());
  for (let wait = 0; wait < 100 && server.runtime.hooks.stats.failed === 0; wait += 1) await new Promise((resolve) => setTimeout(resolve, 20));
  t.equal(server.runtime.hooks.stats.failed, 1, 'the delivery failed');
  t.equal(receiver.received.length, 0, 'and nothing reached the receiver');
});

t.test('retries after 500s keep the event id, up to retry_count', async (t) => {
  const server = await accessServerFor(t);
  const receiver = await receiverFor(t, new HookReceiver((delivery) => ({
    status: delivery.path === '/flaky' && delivery.attempt >= 2 ? 200 : 500,
  })));
  await addHook(server, { url: `${receiver.url}/flaky`, retry_count: 3 });
  await addHook(server, { url: `${receiver.url}/broken`, retry_count: 1 });
  await server.master('POST', '/transactions', transfer());
  await receiver.waitFor((received) => received.filter((delivery) => delivery.path === '/flaky').length >= 3);
  const flaky = receiver.received.filter((delivery) => delivery.path === '/flaky');
  t.same(flaky.map((delivery) => delivery.attempt), [0, 1, 2], 'failed twice, then delivered on the third attempt');
  t.equal(new Set(flaky.map((delivery) => delivery.headers['x-event-id'])).size, 1, 'the same X-Event-ID on every attempt');
  t.equal(new Set(flaky.map((delivery) => delivery.text)).size, 1, 'the same body every time');
  await waitUntil(() => server.runtime.hooks.stats.failed === 1 && server.runtime.hooks.stats.delivered === 1);
  const broken = receiver.received.filter((delivery) => delivery.path === '/broken');
  t.equal(broken.length, 2, 'retry_count 1: one attempt and one retry, then given up');
  t.equal(server.runtime.hooks.pending, 0);
});

t.test('an attempt that outlasts the timeout is retried', async (t) => {
  const server = await accessServerFor(t);
  const receiver = await receiverFor(t, new HookReceiver((delivery) => ({ status: 200, delayMs: delivery.attempt === 0 ? 3_000 : 0 })));
  await addHook(server, { url: `${receiver.url}/slow`, timeout: 0.3, retry_count: 2 });
  await server.master('POST', '/transactions', transfer());
  await receiver.waitFor((received) => received.length >= 2);
  t.same(receiver.received.map((delivery) => delivery.attempt), [0, 1]);
  await waitUntil(() => server.runtime.hooks.stats.delivered === 1);
  t.equal(server.runtime.hooks.stats.attempts, 2, 'the timed-out attempt counted as failed, the retry delivered');
});

t.test('inactive hooks are skipped; a hook gets only changes logged while it is active', async (t) => {
  const server = await accessServerFor(t);
  const receiver = await receiverFor(t);
  const inactiveId = await addHook(server, { url: `${receiver.url}/inactive`, active: false });
  await addHook(server, { url: `${receiver.url}/active` });
  const first = await server.master('POST', '/transactions', transfer());
  await receiver.waitFor((received) => received.some((delivery) => delivery.body.data.transaction_id === first.body.transaction_id));
  await server.runtime.hooks.idle();
  t.equal(receiver.received.filter((delivery) => delivery.path === '/inactive').length, 0, 'nothing for the inactive hook');
  const activated = await server.master('PUT', `/hooks/${inactiveId}`, {
    name: 'now active', url: `${receiver.url}/inactive`, type: 'POST_TRANSACTION', active: true, timeout: 5, retry_count: 0,
  });
  t.equal(activated.status, 200);
  const second = await server.master('POST', '/transactions', transfer());
  await receiver.waitFor((received) => received.filter((delivery) => delivery.path === '/inactive').length >= 1);
  await server.runtime.hooks.idle();
  const late = receiver.received.filter((delivery) => delivery.path === '/inactive');
  t.same(late.map((delivery) => delivery.body.data.transaction_id), [second.body.transaction_id], 'only what came after activation');
});

t.test('deliveries of a deleted or deactivated hook are dropped', async (t) => {
  const server = await accessServerFor(t);
  const downUrl = `http://127.0.0.1:${await freePort()}/down`;
  const hookId = await addHook(server, { url: downUrl, retry_count: 10 });
  for (let index = 0; index < 5; index += 1) await server.master('POST', '/transactions', transfer());
  await waitUntil(() => server.runtime.hooks.stats.attempts >= 5);
  t.equal(server.runtime.hooks.pending, 5, 'waiting to retry');
  t.equal((await server.master('DELETE', `/hooks/${hookId}`)).status, 200);
  await waitUntil(() => server.runtime.hooks.pending === 0, 20_000);
  t.equal(server.runtime.hooks.stats.dropped, 5);
  t.equal(server.runtime.hooks.stats.delivered, 0);
});

t.test('transactions keep flowing while the receiver is down, in bounded memory; all arrive after', async (t) => {
  const inMemoryMax = 20;
  const server = await accessServerFor(t, { hookDelivery: { deliveries_in_memory_max: inMemoryMax } });
  const port = await freePort();
  const receiver = new HookReceiver();
  t.teardown(() => receiver.stop());
  await addHook(server, { url: `http://127.0.0.1:${port}/later`, retry_count: 10 });
  const ids = new Set<string>();
  let highest = 0;
  for (let index = 0; index < 150; index += 1) {
    const response = await server.master('POST', '/transactions', transfer({ reference: `down-${index}` }));
    t.equal(response.status, 201);
    ids.add(response.body.transaction_id);
    highest = Math.max(highest, server.runtime.hooks.pending);
  }
  t.ok(highest <= inMemoryMax, `at most ${inMemoryMax} deliveries held in memory (saw ${highest})`);
  t.equal(server.runtime.hooks.stats.delivered, 0);
  await receiver.start(port);
  await receiver.waitFor((received) => new Set(received.map((delivery) => delivery.body.data.transaction_id)).size >= 150, 120_000);
  const delivered = new Set(receiver.received.map((delivery) => delivery.body.data.transaction_id as string));
  t.same([...ids].filter((id) => !delivered.has(id)), [], 'every transaction was delivered once the receiver came back');
});

t.test('a restart resends only what was not finished', async (t) => {
  const dataDir = tempDataDir('folio-hook-restart');
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const receiver = await receiverFor(t, new HookReceiver((delivery) => ({
    status: delivery.body.data.reference === 'stuck' ? 500 : 200,
  })));
  let server = await startAccessServer({ dataDir });
  await addHook(server, { url: `${receiver.url}/restart`, retry_count: 10 });
  await server.master('POST', '/transactions', transfer({ reference: 'stuck' }));
  for (let index = 0; index < 5; index += 1) await server.master('POST', '/transactions', transfer({ reference: `fine-${index}` }));
  await waitUntil(() => server.runtime.hooks.stats.delivered === 5);
  await server.stop();
  const stuckBefore = receiver.received.filter((delivery) => delivery.body.data.reference === 'stuck').length;
  server = await startAccessServer({ dataDir });
  t.teardown(() => server.stop());
  await receiver.waitFor((received) => received.filter((delivery) => delivery.body.data.reference === 'stuck').length > stuckBefore);
  const fine = receiver.received.filter((delivery) => delivery.body.data.reference !== 'stuck');
  t.equal(fine.length, 5, 'the five delivered before the restart were not sent again');
  t.equal(server.runtime.hooks.pending, 1, 'the stuck one is pending again after the restart');
});

async function waitUntil(condition: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
