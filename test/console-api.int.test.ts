// The read routes the console needs beside the API it already had, through the real server:
//   - GET /api-keys/current: the key a request carries (its kind, scopes and record), for any key;
//   - GET /hooks/:id/deliveries (master key): a hook's recent deliveries with their status and attempts,
//     following a delivery that fails, is retried and then delivered;
//   - GET /reconciliation/uploads: uploaded statements, newest first, paged.
// (GET /admin/replication?group=true needs a replicated group: test/console-replication.int.test.ts.)

import t from 'tap';
import { accessServerFor, createKey, MASTER_KEY } from './helpers/access-server.js';
import { HookReceiver } from './helpers/hook-receiver.js';
import { startScopedServer } from './helpers/scoped-server.js';

t.test('GET /api-keys/current names the key a request carries, whatever its scopes', async (t) => {
  const server = await accessServerFor(t);
  const master = await server.master('GET', '/api-keys/current');
  t.equal(master.status, 200);
  t.same(master.body, { kind: 'master', scopes: ['*:*'] }, 'the master key can do everything');

  const reader = await createKey(server, ['balances:read', 'ledgers:read'], { name: 'console reader' });
  const answer = await server.as(reader.key, 'GET', '/api-keys/current');
  t.equal(answer.status, 200, 'a key without api-keys:read may read itself');
  t.equal(answer.body.kind, 'api_key');
  t.same(answer.body.scopes, ['balances:read', 'ledgers:read']);
  t.equal(answer.body.api_key.api_key_id, reader.id);
  t.equal(answer.body.api_key.name, 'console reader');
  t.notOk('key' in answer.body.api_key, 'the secret is never shown again');
  t.notOk('secret_hash' in answer.body.api_key);

  t.equal((await server.as(undefined, 'GET', '/api-keys/current')).body.error_detail.code, 'AUTH_MISSING_API_KEY', 'no key: 401');
  t.equal((await server.as(`${reader.key}x`, 'GET', '/api-keys/current')).status, 401, 'a wrong key: 401');
  await server.master('DELETE', `/api-keys/${reader.id}`);
  t.equal((await server.as(reader.key, 'GET', '/api-keys/current')).status, 401, 'a revoked key: 401');
});

t.test('with authentication off, every caller is the master key', async (t) => {
  const server = await startScopedServer(t);
  const answer = await server.request('GET', '/api-keys/current');
  t.equal(answer.status, 200);
  t.same(answer.body, { kind: 'master', scopes: ['*:*'] });
});

t.test("GET /hooks/:id/deliveries follows each delivery's attempts to its end", async (t) => {
  const server = await accessServerFor(t, { hookDelivery: { backoff_first_ms: 50, backoff_max_ms: 50 } });
  // The first attempt of every delivery fails; the retry is accepted.
  const receiver = new HookReceiver((delivery) => ({ status: delivery.attempt === 0 ? 503 : 200 }));
  await receiver.start();
  t.teardown(() => receiver.stop());
  const hook = await server.master('POST', '/hooks', { name: 'console', url: receiver.url, type: 'POST_TRANSACTION', active: true, timeout: 5, retry_count: 2 });
  t.equal(hook.status, 201);
  const hookId = hook.body.hook_id as string;
  const empty = await server.master('GET', `/hooks/${hookId}/deliveries`);
  t.equal(empty.status, 200);
  t.same(empty.body.deliveries, [], 'nothing delivered yet');
  t.match(empty.body.since, /^\d{4}-\d\d-\d\dT/, 'since when this node follows deliveries');

  const transfer = await server.master('POST', '/transactions', {
    amount: 5, precision: 100, currency: 'USD', source: '@console-a', destination: '@console-b', allow_overdraft: true, skip_queue: true, reference: 'console-hook-1', description: 'hooked',
  });
  t.equal(transfer.status, 201);
  const transactionId = transfer.body.transaction_id as string;
  let deliveries: Array<Record<string, unknown>> = [];
  for (let waited = 0; waited < 20_000; waited += 50) {
    deliveries = (await server.master('GET', `/hooks/${hookId}/deliveries`)).body.deliveries;
    if (deliveries.length > 0 && deliveries[0]?.status === 'delivered') break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  t.equal(deliveries.length, 1, 'one delivery: the applied transaction');
  const [delivery] = deliveries as [Record<string, unknown>];
  t.match(delivery, {
    event: 'transaction.applied', transaction_id: transactionId, hook_type: 'POST_TRANSACTION', status: 'delivered', attempts: 2, retries: 1, last_failure: '',
    next_attempt_at: '0001-01-01T00:00:00Z',
  });
  t.equal(delivery.event_id, receiver.received[0]?.headers['x-event-id'], 'its id is the X-Event-ID the receiver got');
  t.equal(receiver.received.length, 2, 'the receiver saw both attempts');
  t.ok(Number.isSafeInteger(delivery.seq) && (delivery.seq as number) > 0, 'the log seq of the change');

  const limited = await server.master('GET', `/hooks/${hookId}/deliveries?limit=0`);
  t.equal(limited.status, 400, 'a limit of 0 is refused');
  t.equal((await server.master('GET', '/hooks/hook_missing/deliveries')).body.error_detail.code, 'HOOK_NOT_FOUND');
  const scoped = await createKey(server, ['*:*']);
  t.equal((await server.as(scoped.key, 'GET', `/hooks/${hookId}/deliveries`)).body.error_detail.code, 'AUTH_MASTER_KEY_REQUIRED', 'hooks stay the master key\'s');
});

t.test('GET /reconciliation/uploads lists uploads newest first, paged', async (t) => {
  const server = await accessServerFor(t);
  const ids: string[] = [];
  for (const source of ['bank-a', 'bank-b', 'bank-c']) {
    const form = new FormData();
    form.append('source', source);
    form.append('file', new Blob(['id,amount,currency,reference,description,date\nx1,1.00,USD,r1,first,2026-01-01T00:00:00Z\n'], { type: 'text/csv' }), 'statement.csv');
    const response = await fetch(`${server.url}/reconciliation/upload`, { method: 'POST', body: form, headers: { 'X-svc-key': MASTER_KEY } });
    t.equal(response.status, 201);
    ids.push(((await response.json()) as { upload_id: string }).upload_id);
  }
  const all = await server.master('GET', '/reconciliation/uploads');
  t.equal(all.status, 200);
  t.same(all.body.map((upload: { upload_id: string }) => upload.upload_id), [...ids].reverse(), 'newest first');
  t.match(all.body[0], { source: 'bank-c', record_count: 1 });
  const second = await server.master('GET', '/reconciliation/uploads?limit=1&offset=1');
  t.same(second.body.map((upload: { upload_id: string }) => upload.upload_id), [ids[1]], 'paged by limit and offset');
  const reader = await createKey(server, ['reconciliation:read']);
  t.equal((await server.as(reader.key, 'GET', '/reconciliation/uploads')).status, 200, 'reconciliation:read lists them');
  const other = await createKey(server, ['balances:read']);
  t.equal((await server.as(other.key, 'GET', '/reconciliation/uploads')).status, 403, 'another scope does not');
});
