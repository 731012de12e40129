// The hook target policy on its own: which addresses are never targets, which only with private
// networks allowed, and the lookup guard that checks the addresses a name resolves to at connect time.

import t from 'tap';
import { addressRefusal, guardedLookup, urlRefusal } from '../hooks/hook-targets.js';

const strict = { allowPrivateNetworks: false };
const lenient = { allowPrivateNetworks: true };

t.test('addresses', async (t) => {
  for (const address of ['169.254.169.254', '169.254.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255', 'fe80::1', '::', 'fd00:ec2::254', '::ffff:169.254.169.254']) {
    t.ok(addressRefusal(address, lenient), `${address} never`);
  }
  for (const address of ['127.0.0.1', '127.9.9.9', '10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.1.1', '100.64.0.1', '::1', 'fc00::1', 'fd12::1', '::ffff:10.0.0.1']) {
    t.ok(addressRefusal(address, strict), `${address} refused by default`);
    t.equal(addressRefusal(address, lenient), undefined, `${address} allowed with private networks`);
  }
  for (const address of ['8.8.8.8', '172.32.0.1', '2001:4860:4860::8888', '93.184.216.34']) t.equal(addressRefusal(address, strict), undefined, `${address} public`);
});

t.test('urls', async (t) => {
  t.ok(urlRefusal('http://metadata.google.internal/computeMetadata', lenient), 'metadata names never');
  t.ok(urlRefusal('http://localhost:8080/x', strict), 'localhost is loopback');
  t.ok(urlRefusal('http://app.localhost/x', strict));
  t.equal(urlRefusal('http://localhost:8080/x', lenient), undefined);
  t.ok(urlRefusal('http://[::1]:80/x', strict), 'bracketed IPv6');
  t.equal(urlRefusal('https://hooks.example.com/x', strict), undefined, 'names are checked at delivery');
});

t.test('the lookup guard refuses a name that resolves to a refused address', async (t) => {
  const lookup = guardedLookup(strict);
  const error = await new Promise<NodeJS.ErrnoException | null>((resolve) => lookup('localhost', {}, (failure) => resolve(failure)));
  t.equal(error?.code, 'EHOOKTARGET', 'localhost resolves to loopback: refused');
  const allowed = await new Promise<{ error: NodeJS.ErrnoException | null; address: unknown }>((resolve) =>
    guardedLookup(lenient)('localhost', {}, (failure, address) => resolve({ error: failure, address })));
  t.equal(allowed.error, null, 'allowed with private networks');
  t.match(allowed.address, /^(127\.|::1)/);
  const all = await new Promise<unknown>((resolve) => guardedLookup(lenient)('localhost', { all: true }, (_failure, address) => resolve(address)));
  t.ok(Array.isArray(all), 'all: true gives the list');
});
