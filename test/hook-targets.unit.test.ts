// The hook target policy on its own: which addresses are never targets, which only with private
// networks allowed (in every textual form, and inside the IPv6 ranges that carry an IPv4 address), and
// the lookup guard that checks the addresses a name resolves to at connect time, through the delivery
// client itself: the connection goes to the very address that was checked.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { deliveryClient } from '../hooks/delivery-client.js';
import { addressRefusal, guardedLookup, urlRefusal, type Resolver } from '../hooks/hook-targets.js';
import { embeddedIpv4, formatIpv4, parseAddress } from '../hooks/ip-address.js';

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

t.test('every textual form of an address is the same address', async (t) => {
  const loopbackForms = ['::1', '0:0:0:0:0:0:0:1', '0000:0000:0000:0000:0000:0000:0000:0001', '::0:1', '::1%lo', '::0001'];
  for (const form of loopbackForms) t.same(parseAddress(form), parseAddress('::1'), form);
  const mappedForms = ['::ffff:127.0.0.1', '::FFFF:7F00:1', '0:0:0:0:0:ffff:127.0.0.1', '::ffff:7f00:0001', '0::ffff:127.0.0.1'];
  for (const form of mappedForms) t.same(parseAddress(form), parseAddress('::ffff:7f00:1'), form);
  for (const garbage of ['', ':', ':::', '1::2::3', '::ffff:1.2.3', '::1.2.3.4:5', '12345::', 'g::1', '1:2:3:4:5:6:7:8:9', '1:2:3:4:5:6:7::8:9', '256.0.0.1', '1.2.3', 'example.com', '::ffff:1.2.3.256']) {
    t.equal(parseAddress(garbage), undefined, `${JSON.stringify(garbage)} is no address`);
  }
});

t.test('IPv4 carried inside IPv6 is judged as that IPv4 address', async (t) => {
  const carried = (text: string): string[] => embeddedIpv4(parseAddress(text) as Uint8Array).map(formatIpv4);
  t.same(carried('64:ff9b::7f00:1'), ['127.0.0.1'], 'NAT64');
  t.same(carried('64:ff9b:1::a9fe:a9fe'), ['169.254.169.254'], 'NAT64 local use, /96 form');
  t.same(carried('::ffff:0:a00:1'), ['10.0.0.1'], 'SIIT');
  t.same(carried('::c0a8:101'), ['192.168.1.1'], 'IPv4-compatible');
  t.same(carried('::1'), [], 'loopback carries nothing');
  t.same(carried('::'), [], 'nor does the unspecified address');
  t.same(carried('2002:a9fe:a9fe::1'), ['169.254.169.254'], '6to4');
  t.same(carried('2001:0:4136:e378:8000:63bf:3fff:fdd2'), ['65.54.227.120', '192.0.2.45'], 'Teredo: server, and the client with its bits inverted');

  const never = [
    '64:ff9b::169.254.169.254', '64:FF9B::A9FE:A9FE', '0064:ff9b:0000:0000:0000:0000:a9fe:a9fe', '64:ff9b::0.0.0.0', '64:ff9b::224.0.0.1',
    '::ffff:0:169.254.169.254', '::169.254.169.254', '::a9fe:a9fe', '2002:a9fe:a9fe::', '2001:0:a9fe:a9fe::', '2001:0:0808:0808:0:0:5601:5601',
    'fe80::1%eth0', 'FE80::1', 'fe80::0001%25', '64:ff9b:1::a9fe:a9fe',
  ];
  for (const address of never) t.ok(addressRefusal(address, lenient), `${address} never, even with private networks allowed`);
  const privateForms = [
    '64:ff9b::127.0.0.1', '64:ff9b::7f00:1', '64:ff9b::a00:1', '64:ff9b::c0a8:1', '64:ff9b::ac10:1', '64:ff9b::6440:1',
    '::ffff:0:127.0.0.1', '::ffff:0:7f00:1', '::127.0.0.1', '::7f00:1', '::a00:1', '::FFFF:7F00:1', '0:0:0:0:0:ffff:10.0.0.1',
    '2002:7f00:1::', '2002:0a00:0001:1::1', '2001:0:7f00:1:0:0:f5ff:fffe', '2001:0:0808:0808:0:0:f5ff:fffe', '64:ff9b:1::808:808', '64:ff9b:1:ff::808:808',
    'fec0::1', '::1%lo',
  ];
  for (const address of privateForms) {
    t.match(addressRefusal(address, strict), /loopback or private/, `${address} refused by default`);
    t.equal(addressRefusal(address, lenient), undefined, `${address} allowed with private networks`);
  }
  t.match(addressRefusal('64:ff9b::7f00:1', strict), /carries 127\.0\.0\.1/, 'the refusal names the address carried');
  for (const address of ['64:ff9b::808:808', '64:ff9b::8.8.8.8', '::ffff:8.8.8.8', '2002:808:808::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001:db8::1', '2606:4700::1111']) {
    t.equal(addressRefusal(address, strict), undefined, `${address} public`);
  }
});

t.test('urls carry those forms through the URL parser', async (t) => {
  for (const url of ['http://[64:ff9b::127.0.0.1]/', 'http://[::ffff:0:7f00:1]:8080/', 'http://[::127.0.0.1]/', 'http://[2002:7f00:1::]/', 'http://[0:0:0:0:0:ffff:127.0.0.1]/',
    'http://0x7f.1/', 'http://2130706433/', 'http://0177.0.0.1/', 'http://127.1/', 'HTTP://LOCALHOST./x', 'http://[::1]/']) {
    t.ok(urlRefusal(url, strict), `${url} refused`);
  }
  t.ok(urlRefusal('http://[64:ff9b::a9fe:a9fe]/', lenient), 'metadata through NAT64 never');
  t.ok(urlRefusal('http://metadata.google.internal./x', lenient), 'a metadata name with its trailing dot');
});

/** A resolver that answers each lookup with the next address of `answers` (the last one repeats). */
function scriptedResolver(answers: string[]): Resolver & { calls: number } {
  const resolve = ((_hostname, _options, callback) => {
    const address = answers[Math.min(resolve.calls, answers.length - 1)] as string;
    resolve.calls += 1;
    callback(null, [{ address, family: address.includes(':') ? 6 : 4 }]);
  }) as Resolver & { calls: number };
  resolve.calls = 0;
  return resolve;
}

t.test('a name resolving to a refused form is refused at connect time, whatever its form', async (t) => {
  for (const address of ['64:ff9b::7f00:1', '::ffff:0:a00:1', '::127.0.0.1', '2002:c0a8:101::1', 'fe80::1%eth0', '::ffff:127.0.0.1']) {
    const lookup = guardedLookup(strict, scriptedResolver([address]));
    const error = await new Promise<NodeJS.ErrnoException | null>((resolve) => lookup('hooks.example.com', {}, (failure) => resolve(failure)));
    t.equal(error?.code, 'EHOOKTARGET', `a name resolving to ${address}`);
  }
  const none = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
    guardedLookup(lenient, ((_h, _o, callback) => callback(null, [])) as Resolver)('nothing.example.com', {}, (failure) => resolve(failure)));
  t.equal(none?.code, 'EHOOKTARGET', 'a name with no address at all');
});

t.test('the delivery client connects to the address it checked: a rebinding after the check reaches nothing', async (t) => {
  const hits: string[] = [];
  const receiver = http.createServer((request, response) => {
    hits.push(request.url ?? '');
    response.end('ok');
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => receiver.close(resolve)));
  const port = (receiver.address() as AddressInfo).port;

  // Allowed first (private networks allowed, loopback), then rebound to the metadata address.
  const rebinding = scriptedResolver(['127.0.0.1', '169.254.169.254']);
  const client = deliveryClient(lenient, rebinding);
  t.teardown(() => client.close());
  const first = await client.request.post(`http://rebinding.example:${port}/first`, { body: 'x', timeout: { request: 2_000 } });
  t.equal(first.statusCode, 200, 'the checked answer is the one connected to');
  t.equal(rebinding.calls, 1, 'one lookup for the connection: nothing resolves the name again between check and connect');
  client.close(); // no kept-alive socket: the next request connects, so it looks the name up again
  const second = await client.request.post(`http://rebinding.example:${port}/second`, { body: 'x', timeout: { request: 2_000 } }).then(
    () => 'sent', (error: NodeJS.ErrnoException) => error.code);
  t.equal(second, 'EHOOKTARGET', 'once the name points at the metadata address, the attempt fails before connecting');
  t.same(hits, ['/first'], 'and nothing else reached any server');

  const strictClient = deliveryClient(strict, scriptedResolver(['64:ff9b::7f00:1']));
  t.teardown(() => strictClient.close());
  const nat64 = await strictClient.request.post(`http://nat64.example:${port}/x`, { body: 'x', timeout: { request: 2_000 } }).then(
    () => 'sent', (error: NodeJS.ErrnoException) => error.code);
  t.equal(nat64, 'EHOOKTARGET', 'a name resolving to NAT64 of loopback is refused by default');
});
