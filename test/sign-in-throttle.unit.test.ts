// The sign-in throttle's parts on their own: the backoff doubles and stops at its cap, failures are
// forgotten after a quiet day, a table never grows past its bound however many keys a flood brings,
// and a flood of single failures cannot push out a key under backoff; the password check gate runs at
// most its share at once; client addresses are read as the throttle counts them.

import type http from 'node:http';
import t from 'tap';
import { clientAddress } from '../cloud/client-address.js';
import { CLOUD_LIMITS } from '../cloud/cloud-config.js';
import { PasswordCheckGate } from '../cloud/password-check-gate.js';
import { FailureTable } from '../cloud/sign-in-throttle.js';

t.test('backoff doubles after the free failures, up to its cap, and is forgotten after a quiet day', async (t) => {
  const table = new FailureTable(3, 100);
  let now = 1_000_000;
  for (let failure = 0; failure < 3; failure += 1) table.failed('a', now);
  t.equal(table.waitMs('a', now), 0, 'three free failures');
  table.failed('a', now);
  t.equal(table.waitMs('a', now), CLOUD_LIMITS.sign_in_backoff_first_ms, 'the fourth starts the backoff');
  table.failed('a', now);
  t.equal(table.waitMs('a', now), 2 * CLOUD_LIMITS.sign_in_backoff_first_ms, 'the fifth doubles it');
  for (let failure = 0; failure < 40; failure += 1) table.failed('a', now);
  t.equal(table.waitMs('a', now), CLOUD_LIMITS.sign_in_backoff_max_ms, 'capped: nobody is locked out for good');
  now += CLOUD_LIMITS.sign_in_backoff_max_ms;
  t.equal(table.waitMs('a', now), 0, 'the cap passes');
  table.failed('a', now);
  t.equal(table.waitMs('a', now), CLOUD_LIMITS.sign_in_backoff_max_ms, 'the count is still remembered');
  now += CLOUD_LIMITS.sign_in_failures_forget_ms;
  table.failed('a', now);
  t.equal(table.waitMs('a', now), 0, 'after a quiet day it starts from nothing');
});

t.test('a table is bounded, and a flood of single failures cannot push out a key under backoff', async (t) => {
  const entriesMax = 1_000;
  const table = new FailureTable(5, entriesMax);
  const now = 5_000_000;
  for (let failure = 0; failure < 8; failure += 1) table.failed('victim', now);
  const wait = table.waitMs('victim', now);
  t.ok(wait > 0, 'the victim is under backoff');
  for (let key = 0; key < 200_000; key += 1) table.failed(`flood-${key}`, now + 1);
  t.equal(table.size, entriesMax, `200,000 keys, ${entriesMax} entries`);
  t.equal(table.waitMs('victim', now + 1), wait - 1, 'the victim is still under backoff');
});

t.test('the password check gate runs at most its share at once and turns the rest away', async (t) => {
  const gate = new PasswordCheckGate(2, 3);
  let running = 0;
  let most = 0;
  const check = async (): Promise<string> => {
    running += 1;
    most = Math.max(most, running);
    await new Promise((resolve) => setTimeout(resolve, 20));
    running -= 1;
    return 'checked';
  };
  const started = Array.from({ length: 10 }, () => gate.tryRun(check));
  t.equal(started.filter((run) => run === undefined).length, 5, '2 run, 3 wait, 5 are turned away');
  t.same(await Promise.all(started.filter((run) => run !== undefined)), Array(5).fill('checked'));
  t.equal(most, 2, 'never more than 2 at once');
  t.ok(gate.tryRun(check), 'the turns are free again');
});

t.test('client addresses: peer, trusted proxies, IPv4-mapped, IPv6 /64', async (t) => {
  const request = (peer: string, forwarded?: string) => ({ socket: { remoteAddress: peer }, headers: forwarded ? { 'x-forwarded-for': forwarded } : {} }) as unknown as http.IncomingMessage;
  t.equal(clientAddress(request('::ffff:10.1.2.3'), []), '10.1.2.3');
  t.equal(clientAddress(request('2001:db8:1:2:3:4:5:6'), []), '2001:db8:1:2::/64');
  t.equal(clientAddress(request('2001:db8::1'), []), '2001:db8:0:0::/64');
  t.equal(clientAddress(request('203.0.113.9', '198.51.100.7'), []), '203.0.113.9', 'X-Forwarded-For of an untrusted peer is ignored');
  t.equal(clientAddress(request('10.0.0.1', '1.2.3.4, 198.51.100.7'), ['10.0.0.1']), '198.51.100.7', 'the hop the trusted proxy saw');
  t.equal(clientAddress(request('10.0.0.1', '198.51.100.7, 10.0.0.2'), ['10.0.0.1', '10.0.0.2']), '198.51.100.7', 'past every trusted proxy');
  t.equal(clientAddress(request('10.0.0.1', 'garbage'), ['10.0.0.1']), '10.0.0.1', 'garbage: the proxy itself');
});
