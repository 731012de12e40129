// Ids are RFC 9562 version-7 UUIDs behind a prefix: well formed, unique, and strictly increasing in
// creation order, even in a burst that exhausts the per-millisecond counter or when the clock steps back.

import t from 'tap';
import { UuidV7Ids } from '../runtime/uuid-v7-ids.js';

const SHAPE = /^txn_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

t.test('format, uniqueness and order through counter overflow and a clock step back', async (t) => {
  let now = 1_763_784_000_000;
  const ids = new UuidV7Ids({ now: () => now });
  const made: string[] = [];
  for (let index = 0; index < 20_000; index += 1) {
    if (index === 12_000) now -= 5_000; // the wall clock steps back
    if (index % 7_000 === 6_999) now += 1;
    made.push(ids.next('txn'));
  }
  t.ok(made.every((id) => SHAPE.test(id)), 'every id is a version-7 UUID with its prefix');
  t.equal(new Set(made).size, made.length, 'no id repeats');
  t.ok(made.every((id, index) => index === 0 || id > (made[index - 1] as string)), 'each id sorts after the one before');
  const first = made[0] as string;
  t.equal(parseInt(first.slice(4, 12) + first.slice(13, 17), 16), 1_763_784_000_000, 'the first 48 bits are the millisecond');
});
