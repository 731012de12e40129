// The waits for a seq (runtime/seq-waiters.ts): the heap keeps its order through random pushes and removals
// (checked against a sorted reference), removing any one waiter costs O(log n) comparisons however many
// wait (counted through the key, not timed), and the waiters settle as documented: applied when the log
// gets there, timed_out when their time is up or their caller goes, beyond_log when a read of the group's
// log that began after them finds it ending before their seq, and all of them on release. Seeded; a
// failure names its seed.

import t from 'tap';
import { SeqHeap, SeqWaiters, type HeapItem } from '../runtime/seq-waiters.js';
import { SeededRandom, testSeeds } from './helpers/deterministic.js';

class Item implements HeapItem {
  heapIndex = -1;
  constructor(readonly seq: number, readonly id: number) {}
}

for (const seed of testSeeds([7_301, 7_302, 7_303])) {
  t.test(`the heap gives the smallest seq first through random pushes and removals (seed ${seed})`, async (t) => {
    const rng = new SeededRandom(seed);
    const heap = new SeqHeap<Item>();
    const model: Item[] = [];
    for (let step = 0; step < 5_000; step += 1) {
      const roll = rng.between(0, 9);
      if (roll < 5 || model.length === 0) {
        const item = new Item(rng.between(0, 500), step);
        heap.push(item);
        model.push(item);
      } else if (roll < 8) {
        const item = model.splice(rng.between(0, model.length - 1), 1)[0] as Item;
        heap.remove(item);
        if (item.heapIndex !== -1) t.fail(`a removed item keeps its place (seed ${seed})`);
      } else {
        const top = heap.pop() as Item;
        const smallest = Math.min(...model.map((item) => item.seq));
        if (top.seq !== smallest) t.fail(`popped ${top.seq}, the smallest is ${smallest} (seed ${seed}, step ${step})`);
        model.splice(model.indexOf(top), 1);
      }
      if (heap.size !== model.length) t.fail(`the heap holds ${heap.size}, the model ${model.length} (seed ${seed}, step ${step})`);
    }
    const drained: number[] = [];
    for (let item = heap.pop(); item; item = heap.pop()) drained.push(item.seq);
    t.same(drained, model.map((item) => item.seq).sort((a, b) => a - b), `drained in order (seed ${seed})`);
  });
}

t.test('removing a waiter costs O(log n) comparisons, wherever it sits', async (t) => {
  let reads = 0;
  const counted = (seq: number, id: number): Item => {
    const item = new Item(seq, id);
    Object.defineProperty(item, 'seq', { get: () => {
      reads += 1;
      return seq;
    } });
    return item;
  };
  const rng = new SeededRandom(7_304);
  for (const count of [1_000, 100_000]) {
    const heap = new SeqHeap<Item>();
    const items = Array.from({ length: count }, (_, index) => counted(rng.between(0, 1_000_000), index));
    for (const item of items) heap.push(item);
    reads = 0;
    // Remove them in a random order: the cost of each removal is what a timeout costs.
    for (let index = items.length - 1; index > 0; index -= 1) {
      const other = rng.between(0, index);
      [items[index], items[other]] = [items[other] as Item, items[index] as Item];
    }
    for (const item of items) heap.remove(item);
    const perRemoval = reads / count;
    // A removal sifts down (two key reads per level) and up (two per level): 4 log2(n) is its ceiling.
    t.ok(perRemoval <= 4 * Math.log2(count) + 4, `${count} waiters: ${perRemoval.toFixed(1)} key reads per removal (log2 n = ${Math.log2(count).toFixed(1)})`);
    t.equal(heap.size, 0);
  }
});

t.test('waiters settle as applied, timed_out, beyond_log, and all at once on release', async (t) => {
  let applied = 10;
  let now = 0;
  const waiters = new SeqWaiters(() => applied, 4, () => now);

  t.same(await waiters.reached(10, 1_000), { outcome: 'applied' }, 'a seq already applied is answered at once');
  t.same(await waiters.reached(11, 0), { outcome: 'timed_out', applied_seq: 10 }, 'no time to wait: timed out at once');

  now = 100;
  const early = waiters.reached(12, 60_000);
  const past = waiters.reached(50, 60_000);
  now = 200;
  const late = waiters.reached(60, 60_000);
  t.equal(waiters.waiting, 3);
  applied = 12;
  waiters.advanced();
  t.same(await early, { outcome: 'applied' }, 'woken once the log reaches it');

  // A read begun at 150 found the group's log ending at 20: the wait from 100 for 50 cannot be met; the
  // one from 200 began after the read and waits for the next.
  applied = 20;
  waiters.groupLogRead(20, 150);
  t.same(await past, { outcome: 'beyond_log', log_end_seq: 20 }, 'a seq past the end of the group\'s log, read after the wait began, is refused');
  t.equal(waiters.waiting, 1, 'the later wait is still waiting');
  waiters.groupLogRead(61, 250);
  t.equal(waiters.waiting, 1, 'a seq within the group\'s log waits to be applied');
  applied = 60;
  waiters.advanced();
  t.same(await late, { outcome: 'applied' });

  const controller = new AbortController();
  const aborted = waiters.reached(70, 60_000, controller.signal);
  controller.abort();
  t.same(await aborted, { outcome: 'timed_out', applied_seq: 60 }, 'a wait whose caller went ends at once');
  t.equal(waiters.waiting, 0, 'and leaves nothing behind');

  const timed = waiters.reached(80, 20);
  t.same(await timed, { outcome: 'timed_out', applied_seq: 60 }, 'a wait ends when its time is up');

  const held = [waiters.reached(90, 60_000), waiters.reached(91, 60_000), waiters.reached(92, 60_000), waiters.reached(93, 60_000)];
  t.same(await waiters.reached(94, 60_000), { outcome: 'timed_out', applied_seq: 60 }, 'past waiters_max a wait is refused at once');
  applied = 91;
  waiters.release();
  t.same(await Promise.all(held), [
    { outcome: 'applied' }, { outcome: 'applied' }, { outcome: 'timed_out', applied_seq: 91 }, { outcome: 'timed_out', applied_seq: 91 },
  ], 'release answers every waiter now');
  t.equal(waiters.waiting, 0);
});

t.test('many waits that time out cost no scan of the others, and the arrival queue stays bounded', async (t) => {
  const waiters = new SeqWaiters(() => 0, 20_000, () => 0);
  const controllers = Array.from({ length: 20_000 }, () => new AbortController());
  const waits = controllers.map((controller, index) => waiters.reached(1 + index, 60_000, controller.signal));
  for (const controller of controllers) controller.abort();
  const outcomes = await Promise.all(waits);
  t.ok(outcomes.every((outcome) => outcome.outcome === 'timed_out'), 'every one ended');
  t.equal(waiters.waiting, 0);
  // A new wait compacts the queue of settled arrivals: nothing of the 20,000 is kept.
  const next = waiters.reached(5, 10);
  t.equal((waiters as unknown as { arrivals: unknown[] }).arrivals.length, 1, 'the arrival queue holds only the live wait');
  await next;
});
