// The server's notification webhook (hooks/notifications.ts) against a real receiver: a notification
// derived from a logged event arrives as `{event, data}`, signed with the webhook's own secret, with a
// stable X-Event-ID across retries; one still undelivered when the server stops goes out after the
// restart (the log is the outbox); without a webhook configured nothing is derived at all. Blnk's events
// (ledger, balance and identity creations, transaction.*, bulk_transaction.*, system.error) reach a
// receiver written for Blnk's signature, before and after a restart.

import t from 'tap';
import type { LedgerEvent } from '../engine/events.js';
import type { NotificationDeriver } from '../hooks/notification-draft.js';
import { notificationsIn, type NotificationTarget } from '../hooks/notifications.js';
import { blnkSignatureValid, freePort, HookReceiver, signatureValid } from './helpers/hook-receiver.js';
import { startTestServer, tempDataDir } from './helpers/test-server.js';

/** A stand-in kind of notification: one per ledger created, carrying its name. */
const ledgerNotices: NotificationDeriver = (event: LedgerEvent) =>
  event.type === 'ledger.created' ? (event.ledgers ?? []).map((ledger) => ({ name: 'test.ledger', data: { name: ledger.name } })) : [];

const SECRET = 'webhook-secret-for-tests';

function target(url: string): NotificationTarget {
  return { url, secret: SECRET, timeout_seconds: 2, retry_count: 3 };
}

const fastRetries = { backoff_first_ms: 50, backoff_max_ms: 200, cursor_save_interval_ms: 50 };

t.test('a derived notification is delivered signed, retried with the same event id', async (t) => {
  const receiver = new HookReceiver((delivery) => ({ status: delivery.attempt === 0 ? 500 : 200 }));
  await receiver.start();
  t.teardown(() => receiver.stop());
  const server = await startTestServer({
    notifications: target(`${receiver.url}/notify`),
    notificationDerivers: [ledgerNotices],
    hookTargets: { allowPrivateNetworks: true },
    hookDelivery: fastRetries,
  });
  t.teardown(() => server.stop());
  t.equal((await server.request('POST', '/ledgers', { name: 'Savings' })).status, 201);
  await receiver.waitFor((received) => received.length >= 2);
  const [first, second] = receiver.received;
  t.equal(first!.path, '/notify');
  t.same(second!.body, { event: 'test.ledger', data: { name: 'Savings' } });
  t.ok(signatureValid(SECRET, second!), 'signed with the webhook secret');
  t.equal(first!.headers['x-event-id'], second!.headers['x-event-id'], 'the retry carries the same event id');
  t.notOk('x-hook-id' in second!.headers, 'the webhook is not a registered hook');
});

t.test('an undelivered notification survives a restart; delivered ones are not sent again', async (t) => {
  const dataDir = tempDataDir();
  const port = await freePort();
  const options = {
    dataDir,
    notifications: target(`http://127.0.0.1:${port}/notify`),
    notificationDerivers: [ledgerNotices],
    hookTargets: { allowPrivateNetworks: true },
    hookDelivery: fastRetries,
  };
  const receiver = new HookReceiver();
  await receiver.start(port);
  let server = await startTestServer(options);
  await server.request('POST', '/ledgers', { name: 'first' });
  await receiver.waitFor((received) => received.length === 1);
  await server.runtime.hooks.idle();
  await receiver.stop();
  // The receiver is down: this one fails until the server stops.
  await server.request('POST', '/ledgers', { name: 'second' });
  await new Promise((resolve) => setTimeout(resolve, 150));
  await server.stop();
  await receiver.start(port);
  t.teardown(() => receiver.stop());
  server = await startTestServer(options);
  t.teardown(() => server.stop());
  await receiver.waitFor((received) => received.some((delivery) => delivery.body.data.name === 'second'));
  await server.runtime.hooks.idle();
  t.same(receiver.received.map((delivery) => delivery.body.data.name).filter((name) => name === 'first'), ['first'], 'the first is not resent');
});

t.test('no webhook configured: nothing is derived or sent', async (t) => {
  let derived = 0;
  const counting: NotificationDeriver = (event) => {
    derived += 1;
    return ledgerNotices(event);
  };
  const server = await startTestServer({ notificationDerivers: [counting], hookTargets: { allowPrivateNetworks: true } });
  t.teardown(() => server.stop());
  await server.request('POST', '/ledgers', { name: 'quiet' });
  await server.runtime.hooks.idle();
  t.equal(derived, 0);
  t.same(notificationsIn({ type: 'ledger.created', at: 1, ledgers: [] }, [ledgerNotices]), [], 'pure: no ledgers, no notices');
});

// Issue 29: the webhook carries Blnk's events, each derived from the log, to a receiver that checks
// the signature as Blnk's docs tell a receiver to (X-Blnk-Signature over `<X-Blnk-Timestamp>.<raw body>`
// with its own secret), with the headers Blnk's configuration would add.
const BLNK_SECRET = 'the-receivers-own-secret';

function blnkTarget(url: string): NotificationTarget {
  return { url, secret: BLNK_SECRET, headers: { authorization: 'Bearer receiver-token' }, timeout_seconds: 2, retry_count: 3 };
}

/** The receiver's view: every delivery's event and data, each checked the way Blnk's docs say. */
function received(receiver: HookReceiver): Array<{ event: string; data: any }> {
  return receiver.received.map((delivery) => ({ event: delivery.body.event, data: delivery.body.data }));
}

t.test("Blnk's events, in Blnk's shape, verified as a Blnk receiver verifies them", async (t) => {
  const receiver = new HookReceiver((delivery) => ({
    // A receiver written for Blnk: 401 unless the signature checks out and its token came along.
    status: blnkSignatureValid(BLNK_SECRET, delivery) && delivery.headers.authorization === 'Bearer receiver-token' ? 200 : 401,
  }));
  await receiver.start();
  t.teardown(() => receiver.stop());
  const deadHook = await freePort();
  const server = await startTestServer({
    notifications: blnkTarget(`${receiver.url}/blnk`),
    hookTargets: { allowPrivateNetworks: true },
    hookDelivery: fastRetries,
  });
  t.teardown(() => server.stop());
  const post = async (route: string, body: unknown, status = [200, 201, 202]): Promise<any> => {
    const response = await server.request('POST', route, body);
    if (!status.includes(response.status)) throw new Error(`${route}: ${response.status} ${response.text}`);
    return response.body;
  };
  const ledger = await post('/ledgers', { name: 'Webhooks' });
  const identity = await post('/identities', { identity_type: 'individual', first_name: 'Ada', last_name: 'Lovelace' });
  const balance = await post('/balances', { ledger_id: ledger.ledger_id, currency: 'USD', identity_id: identity.identity_id });
  const funded = await post('/transactions', { description: 'test', precise_amount: 10_000, currency: 'USD', source: '@world', destination: balance.balance_id, reference: 'wh-fund', allow_overdraft: true, skip_queue: true });
  const voided = await post('/transactions', { description: 'test', precise_amount: 100, currency: 'USD', source: balance.balance_id, destination: '@shop', reference: 'wh-hold-1', inflight: true, skip_queue: true });
  await server.request('PUT', `/transactions/inflight/${voided.transaction_id}`, { status: 'void' });
  const committed = await post('/transactions', { description: 'test', precise_amount: 200, currency: 'USD', source: balance.balance_id, destination: '@shop', reference: 'wh-hold-2', inflight: true, skip_queue: true });
  await server.request('PUT', `/transactions/inflight/${committed.transaction_id}`, { status: 'commit' });
  // Queued, then refused when its turn comes: the queue record is not announced, the rejection is.
  const refused = await post('/transactions', { description: 'test', precise_amount: 1_000_000, currency: 'USD', source: '@empty', destination: '@shop', reference: 'wh-queued' });
  const scheduled = await post('/transactions', {
    description: 'test', precise_amount: 5, currency: 'USD', source: '@world', destination: '@shop', reference: 'wh-later', allow_overdraft: true,
    scheduled_for: new Date(Date.now() + 3_600_000).toISOString(),
  });
  const item = (reference: string, amount = 1) => ({ description: 'test', precise_amount: amount, currency: 'USD', source: '@world', destination: '@shop', reference, allow_overdraft: true });
  const asyncApplied = await post('/transactions/bulk', { atomic: true, run_async: true, transactions: [item('wh-b1'), item('wh-b2')] });
  const asyncInflight = await post('/transactions/bulk', { atomic: true, inflight: true, run_async: true, transactions: [item('wh-b3')] });
  const asyncCut = await post('/transactions/bulk', {
    run_async: true, skip_queue: true,
    transactions: [item('wh-b4'), { description: 'test', precise_amount: 1, currency: 'USD', source: '@nobody', destination: '@shop', reference: 'wh-b5' }],
  });
  await post('/transactions/bulk', { atomic: true, transactions: [item('wh-b6')] }, [201]);
  // A registered hook whose receiver is gone: its delivery is given up, and that is a system error.
  const hook = await post('/hooks', { name: 'gone', url: `http://127.0.0.1:${deadHook}/hook`, type: 'POST_TRANSACTION', active: true, timeout: 1, retry_count: 0 });
  await post('/transactions', item('wh-after-hook'), [201]);

  await receiver.waitFor((all) => all.some((delivery) => delivery.body.event === 'system.error')
    && all.some((delivery) => delivery.body.event === 'transaction.rejected'));
  await server.runtime.hooks.idle();
  const events = received(receiver);
  t.ok(receiver.received.every((delivery) => blnkSignatureValid(BLNK_SECRET, delivery)), 'every delivery verifies with the receiver\'s own secret');
  t.ok(receiver.received.every((delivery) => delivery.headers['x-blnk-signature'] === delivery.headers['x-folio-signature']), 'one signature, under both names');
  t.ok(receiver.received.every((delivery) => /^\{"event":"[a-z_.]+","data":\{/.test(delivery.text)), "Blnk's body: {event, data}");
  t.equal(receiver.received.filter((delivery) => delivery.attempt > 0).length, 0, 'nothing needed a retry: the receiver accepted each first time');
  const of = (name: string) => events.filter((event) => event.event === name);
  t.same(of('ledger.created').map((event) => event.data), [{ ...ledger }], 'ledger.created: the ledger (not the general ledger)');
  t.same(of('identity.created').map((event) => event.data.identity_id), [identity.identity_id]);
  t.ok(of('balance.created').some((event) => event.data.balance_id === balance.balance_id && event.data.identity_id === identity.identity_id), 'balance.created: a balance made by request');
  t.ok(of('balance.created').some((event) => event.data.indicator === '@world'), 'and one a transaction made by naming it');
  const txn = (name: string) => of(name).map((event) => event.data.reference as string);
  t.ok(txn('transaction.applied').includes('wh-fund'));
  t.same(of('transaction.applied').find((event) => event.data.reference === 'wh-fund')?.data.transaction_id, funded.transaction_id);
  t.same(txn('transaction.inflight').sort(), ['wh-hold-1', 'wh-hold-2', 'wh-b3'].sort(), 'holds, each once');
  t.equal(of('transaction.void').length, 1, 'a void: one notification, not the hold rewritten as well');
  t.equal(of('transaction.void')[0]?.data.parent_transaction, voided.transaction_id);
  t.equal(of('transaction.applied').filter((event) => event.data.parent_transaction === committed.transaction_id).length, 1, 'a commit: one');
  t.same(txn('transaction.rejected'), ['wh-queued'], 'a queued transaction refused at its turn');
  t.equal(of('transaction.rejected')[0]?.data.transaction_id, refused.transaction_id);
  t.same(txn('transaction.scheduled'), ['wh-later']);
  t.equal(of('transaction.scheduled')[0]?.data.transaction_id, scheduled.transaction_id);
  t.notOk(events.some((event) => event.event === 'transaction.queued'), 'no transaction.queued (Blnk sends none)');
  for (const reference of ['wh-b1', 'wh-b2', 'wh-b4', 'wh-b6', 'wh-after-hook']) t.ok(txn('transaction.applied').includes(reference), `${reference} applied`);
  t.match(of('bulk_transaction.applied').map((event) => event.data), [{ batch_id: asyncApplied.batch_id, status: 'applied', transaction_count: 2, timestamp: String }]);
  t.match(of('bulk_transaction.inflight').map((event) => event.data), [{ batch_id: asyncInflight.batch_id, status: 'inflight', transaction_count: 1 }]);
  t.match(of('bulk_transaction.failed').map((event) => event.data), [{ batch_id: asyncCut.batch_id, status: 'failed', error: /^transaction 1: .*Previous transactions were not rolled back\.$/ }]);
  t.notOk('transaction_count' in (of('bulk_transaction.failed')[0]?.data ?? {}), 'a failed batch has an error, not a count (Blnk\'s payload)');
  t.equal(of('bulk_transaction.applied').length + of('bulk_transaction.inflight').length + of('bulk_transaction.failed').length, 3, 'a batch without run_async is announced item by item only');
  t.match(of('system.error').map((event) => event.data), [{ error: new RegExp(`^hook ${hook.hook_id}: delivery evt_[0-9a-f]+ \\(transaction\\.applied of txn_.+\\) given up after 1 attempts`), time: String }]);
  t.ok(receiver.received.every((delivery) => !('x-hook-id' in delivery.headers)), 'the webhook is no registered hook');
});

t.test("Blnk's events survive a restart: what was not delivered goes out after it, signed the same way", async (t) => {
  const dataDir = tempDataDir();
  const port = await freePort();
  // Retries enough that none is given up while the receiver is down.
  const options = { dataDir, notifications: { ...blnkTarget(`http://127.0.0.1:${port}/blnk`), retry_count: 10 }, hookTargets: { allowPrivateNetworks: true }, hookDelivery: fastRetries };
  const receiver = new HookReceiver((delivery) => ({ status: blnkSignatureValid(BLNK_SECRET, delivery) ? 200 : 401 }));
  let server = await startTestServer(options);
  // The receiver is down: these fail and wait in the log.
  await server.request('POST', '/identities', { identity_type: 'individual', first_name: 'Grace' });
  await server.request('POST', '/transactions', { description: 'test', precise_amount: 7, currency: 'USD', source: '@world', destination: '@restart', reference: 'wh-restart', allow_overdraft: true, skip_queue: true });
  await server.request('POST', '/transactions/bulk', { atomic: true, run_async: true, transactions: [{ description: 'test', precise_amount: 1, currency: 'USD', source: '@world', destination: '@restart', allow_overdraft: true }] });
  await new Promise((resolve) => setTimeout(resolve, 150));
  await server.stop();
  await receiver.start(port);
  t.teardown(() => receiver.stop());
  server = await startTestServer(options);
  t.teardown(() => server.stop());
  await receiver.waitFor((all) => ['identity.created', 'balance.created', 'transaction.applied', 'bulk_transaction.applied'].every((name) => all.some((delivery) => delivery.body.event === name)));
  await server.runtime.hooks.idle();
  t.ok(receiver.received.every((delivery) => blnkSignatureValid(BLNK_SECRET, delivery)), 'verified after the restart');
  t.ok(received(receiver).some((event) => event.event === 'transaction.applied' && event.data.reference === 'wh-restart'));
  const ids = receiver.received.map((delivery) => delivery.headers['x-event-id']);
  t.equal(new Set(ids).size, ids.length, 'each delivered once to a receiver that answers');
});
