// Balance monitors over HTTP against a real server and a real webhook receiver: Blnk's six routes and
// their refusals, exact thresholds from value and precision, `balance.monitor` sent to the notification
// webhook each time a change makes a condition true (and not while it stays true), monitors surviving a
// restart, and nothing fired once a monitor is deleted.

import t from 'tap';
import { HookReceiver, signatureValid, type ReceivedDelivery } from './helpers/hook-receiver.js';
import { startTestServer, tempDataDir, type TestServer } from './helpers/test-server.js';

/** The webhook also carries Blnk's other events (transactions, balances): the monitor alerts among them. */
function alerts(received: ReceivedDelivery[]): ReceivedDelivery[] {
  return received.filter((delivery) => delivery.body.event === 'balance.monitor');
}

const SECRET = 'monitor-webhook-secret';

async function serverFor(receiver: HookReceiver, dataDir = tempDataDir()): Promise<TestServer> {
  const server = await startTestServer({
    dataDir,
    notifications: { url: `${receiver.url}/webhook`, secret: SECRET, timeout_seconds: 2, retry_count: 2 },
    hookTargets: { allowPrivateNetworks: true },
    hookDelivery: { backoff_first_ms: 50, backoff_max_ms: 100, cursor_save_interval_ms: 50 },
  });
  return server;
}

async function transfer(server: TestServer, source: string, destination: string, amount: number): Promise<void> {
  const response = await server.request('POST', '/transactions', {
    description: 'test', precise_amount: amount, currency: 'USD', source, destination, allow_overdraft: true, skip_queue: true,
  });
  if (response.status !== 201) throw new Error(`transfer failed: ${response.status} ${response.text}`);
}

t.test('the six routes, their shapes and refusals', async (t) => {
  const receiver = new HookReceiver();
  await receiver.start();
  t.teardown(() => receiver.stop());
  const server = await serverFor(receiver);
  t.teardown(() => server.stop());
  const balance = (await server.request('POST', '/balances', { ledger_id: 'general_ledger_id', currency: 'USD' })).body.balance_id as string;
  const body = { balance_id: balance, condition: { field: 'debit_balance', operator: '>', value: 1000.5, precision: 100 }, description: 'Tier 1' };
  const created = await server.request('POST', '/balance-monitors', body);
  t.equal(created.status, 201);
  t.match(created.body, {
    monitor_id: /^mon_/, balance_id: balance, description: 'Tier 1',
    condition: { field: 'debit_balance', operator: '>', value: 1000.5, precision: 100, precise_value: 100050 },
  });
  const id = created.body.monitor_id as string;
  t.same((await server.request('GET', `/balance-monitors/${id}`)).body, created.body, 'read as created');
  t.same((await server.request('GET', '/balance-monitors')).body, [created.body], 'listed');
  t.same((await server.request('GET', `/balance-monitors/balances/${balance}`)).body, [created.body], 'listed by balance');
  t.same((await server.request('GET', '/balance-monitors/balances/bln_other')).body, [], 'none on another balance');
  const replaced = await server.request('PUT', `/balance-monitors/${id}`, { ...body, condition: { field: 'balance', operator: '<=', precise_value: '-250' } });
  t.equal(replaced.status, 200);
  t.match(replaced.body, { message: 'BalanceMonitor updated successfully', monitor_id: id, created_at: created.body.created_at, condition: { field: 'balance', operator: '<=', precise_value: -250, precision: 1 } });

  const refusals: Array<[string, string, unknown, number, string]> = [
    ['POST', '/balance-monitors', { condition: body.condition }, 400, 'GEN_VALIDATION_ERROR'],
    ['POST', '/balance-monitors', { ...body, condition: { ...body.condition, field: 'available' } }, 400, 'GEN_VALIDATION_ERROR'],
    ['POST', '/balance-monitors', { ...body, condition: { ...body.condition, operator: '~' } }, 400, 'GEN_VALIDATION_ERROR'],
    ['POST', '/balance-monitors', { ...body, condition: { field: 'balance', operator: '>' } }, 400, 'GEN_VALIDATION_ERROR'],
    ['POST', '/balance-monitors', { ...body, condition: { ...body.condition, value: 1.005 } }, 400, 'GEN_VALIDATION_ERROR'],
    ['POST', '/balance-monitors', { ...body, balance_id: 'bln_missing' }, 404, 'BAL_NOT_FOUND'],
    ['GET', '/balance-monitors/mon_missing', undefined, 404, 'BAL_MONITOR_NOT_FOUND'],
    ['PUT', '/balance-monitors/mon_missing', { nonsense: true }, 404, 'BAL_MONITOR_NOT_FOUND'],
    ['PUT', `/balance-monitors/${id}`, { ...body, balance_id: 'bln_missing' }, 404, 'BAL_NOT_FOUND'],
    ['DELETE', '/balance-monitors/mon_missing', undefined, 404, 'BAL_MONITOR_NOT_FOUND'],
  ];
  for (const [method, route, payload, status, code] of refusals) {
    const response = await server.request(method, route, payload);
    t.equal(response.status, status, `${method} ${route} ${JSON.stringify(payload)}`);
    t.equal(response.body.error_detail.code, code);
  }
  const deleted = await server.request('DELETE', `/balance-monitors/${id}`);
  t.same(deleted.body, { message: 'BalanceMonitor deleted successfully' });
  t.equal((await server.request('GET', `/balance-monitors/${id}`)).status, 404);
  t.same((await server.request('GET', '/balance-monitors')).body, []);
});

t.test('balance.monitor fires when a change makes the condition true, again after it was false', async (t) => {
  const receiver = new HookReceiver();
  await receiver.start();
  t.teardown(() => receiver.stop());
  const dataDir = tempDataDir();
  let server = await serverFor(receiver, dataDir);
  await transfer(server, '@mon-world', '@mon-wallet', 1);
  const wallet = (await server.request('GET', '/balances/indicator/@mon-wallet/currency/USD')).body.balance_id as string;
  // balance > 10.00 at precision 100: more than 1000 in the smallest unit.
  const monitor = await server.request('POST', '/balance-monitors', { balance_id: wallet, condition: { field: 'balance', operator: '>', value: 10, precision: 100 } });
  t.equal(monitor.status, 201);
  await transfer(server, '@mon-world', wallet, 499); // 500: false -> false
  await transfer(server, '@mon-world', wallet, 600); // 1100: false -> true
  await receiver.waitFor((received) => alerts(received).length === 1);
  await transfer(server, '@mon-world', wallet, 100); // 1200: true -> true, no alert
  await transfer(server, wallet, '@mon-world', 700); // 500: true -> false
  // Restarted: the monitor is still there and still watching.
  await server.runtime.hooks.idle();
  await server.stop();
  server = await serverFor(receiver, dataDir);
  t.teardown(() => server.stop());
  await transfer(server, '@mon-world', wallet, 501); // 1001: false -> true
  await receiver.waitFor((received) => alerts(received).length === 2);
  const [first, second] = alerts(receiver.received);
  t.equal(first!.path, '/webhook');
  t.equal(first!.body.event, 'balance.monitor');
  t.ok(signatureValid(SECRET, first!), 'signed with the webhook secret');
  t.match(first!.body.data, { monitor_id: monitor.body.monitor_id, balance_id: wallet, condition: { field: 'balance', operator: '>', precise_value: 1000 } });
  t.match((first!.body.data as any).balance, { balance_id: wallet, balance: 1100 }, 'with the balance the change left');
  t.match((second!.body.data as any).balance, { balance: 1001 });
  t.not(first!.headers['x-event-id'], second!.headers['x-event-id']);

  await server.request('DELETE', `/balance-monitors/${monitor.body.monitor_id}`);
  await transfer(server, wallet, '@mon-world', 1000);
  await transfer(server, '@mon-world', wallet, 2000);
  await server.runtime.hooks.idle();
  t.equal(alerts(receiver.received).length, 2, 'a deleted monitor fires no more');
});

t.test('holds and their commits are watched too (inflight fields)', async (t) => {
  const receiver = new HookReceiver();
  await receiver.start();
  t.teardown(() => receiver.stop());
  const server = await serverFor(receiver);
  t.teardown(() => server.stop());
  await transfer(server, '@hold-world', '@hold-wallet', 1000);
  const wallet = (await server.request('GET', '/balances/indicator/@hold-wallet/currency/USD')).body.balance_id as string;
  await server.request('POST', '/balance-monitors', { balance_id: wallet, condition: { field: 'inflight_debit_balance', operator: '>=', value: 300 } });
  const hold = await server.request('POST', '/transactions', { description: 'test', precise_amount: 300, currency: 'USD', source: wallet, destination: '@hold-shop', inflight: true, skip_queue: true });
  t.equal(hold.body.status, 'INFLIGHT');
  await receiver.waitFor((received) => alerts(received).length === 1);
  t.equal((alerts(receiver.received)[0]!.body.data as any).balance.inflight_debit_balance, 300);
});
