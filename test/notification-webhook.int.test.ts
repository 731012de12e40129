// The server's notification webhook (hooks/notifications.ts) against a real receiver: a notification
// derived from a logged event arrives as `{event, data}`, signed with the webhook's own secret, with a
// stable X-Event-ID across retries; one still undelivered when the server stops goes out after the
// restart (the log is the outbox); without a webhook configured nothing is derived at all.

import t from 'tap';
import type { LedgerEvent } from '../engine/events.js';
import { notificationsIn, type NotificationDeriver, type NotificationTarget } from '../hooks/notifications.js';
import { freePort, HookReceiver, signatureValid } from './helpers/hook-receiver.js';
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
