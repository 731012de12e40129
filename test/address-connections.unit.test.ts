// The count of open connections per client address (http/server/address-connections.ts) against a plain Map over
// seeded random opens and closes: a small table, so addresses collide and entries are shifted back as
// others leave; the cap refuses exactly where the model says and counts each refusal. Also the keys:
// IPv4 as it is, IPv4-mapped IPv6 as IPv4, IPv6 by its /64 (http/server/address-key.ts).

import t from 'tap';
import { AddressConnections, type AddressSlotKey } from '../http/server/address-connections.js';
import { addressKey } from '../http/server/address-key.js';
import { seededTest, seedsToRun } from './helpers/seeded-random.js';

const key = (address: string): AddressSlotKey => {
  const found = AddressConnections.keyOf(address);
  if (!found) throw new Error(`no key for ${address}`);
  return found;
};

t.test('keys: IPv4, IPv4-mapped, IPv6 by its /64', async (t) => {
  t.same(key('10.0.0.1'), key('::ffff:10.0.0.1'), 'an IPv4-mapped address is its IPv4 address');
  t.same(key('2001:db8:1:2:aaaa::1'), key('2001:db8:1:2:bbbb::2'), 'one /64 is one key');
  t.notSame(key('2001:db8:1:2::1'), key('2001:db8:1:3::1'), 'another /64 is another');
  t.notSame(key('0.0.0.1'), key('::1'), 'IPv4 and IPv6 never share a key');
  t.equal(AddressConnections.keyOf(''), undefined, 'no address, no key');
  t.equal(addressKey('2001:DB8:0:1:2:3:4:5'), '2001:db8:0:1::/64');
  t.equal(addressKey('::ffff:192.0.2.7'), '192.0.2.7');
  t.equal(addressKey('1::2:3:4:5:1.2.3.4'), '1:0:2:3::/64', 'a dotted IPv4 tail counts as two groups');
});

for (const seed of seedsToRun([1, 2, 3])) {
  await seededTest(t, 'opens and closes against a model', seed, (t, random) => {
    const connectionsMax = 8;
    const table = AddressConnections.create(connectionsMax);
    const perAddressMax = 3;
    const addresses = Array.from({ length: 12 }, (_, index) => (index % 3 === 0 ? `2001:db8:${index}::1` : `10.0.${index}.${index * 7}`));
    const model = new Map<string, number>();
    const open: string[] = [];
    let refused = 0;
    for (let step = 0; step < 2_000; step += 1) {
      if (open.length > 0 && (open.length >= connectionsMax || random.chance(0.5))) {
        const [address] = open.splice(random.int(0, open.length - 1), 1) as [string];
        table.close(key(address));
        model.set(address, (model.get(address) ?? 0) - 1);
      } else {
        const address = random.pick(addresses);
        const allowed = (model.get(address) ?? 0) < perAddressMax;
        if (table.open(key(address), perAddressMax) !== allowed) t.fail(`step ${step}: ${address} should have been ${allowed ? 'taken' : 'refused'}`);
        if (allowed) {
          model.set(address, (model.get(address) ?? 0) + 1);
          open.push(address);
        } else refused += 1;
      }
      if (step % 50 === 0) {
        for (const address of addresses) {
          if (table.openFrom(key(address)) !== (model.get(address) ?? 0)) t.fail(`step ${step}: ${address} counted ${table.openFrom(key(address))}, the model says ${model.get(address) ?? 0}`);
        }
      }
    }
    for (const address of open.splice(0)) table.close(key(address));
    t.ok(addresses.every((address) => table.openFrom(key(address)) === 0), 'the table follows the model; every entry is gone once its connections close');
    t.equal(table.refusals().per_address, refused, 'each refusal is counted');
  });
}

t.test('a closing never counted is a bug, not a silent miscount', async (t) => {
  t.throws(() => AddressConnections.create(4).close(key('10.0.0.9')));
});
