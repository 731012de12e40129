// Unit tests for engine/fund-allocation.ts: Blnk's allocation cases (lineage_test.go) with their exact
// expected shares, the largest remainder rule where Blnk's proportional split loses units, and seeded
// random checks of what every allocation must satisfy (exact sums, nothing beyond what a provider has,
// proportional shares within one unit of their exact quota).

import t from 'tap';
import { allocate, sharesBetween, sharesTotal, type AllocationStrategy, type FundSource } from '../engine/fund-allocation.js';
import { seededRandom } from './helpers/seeded-random.js';

const source = (provider: string, available: bigint): FundSource => ({ provider, available });
/** Blnk's three-provider fixture (TestLineageIntegration_MultiProvider_*): funds arrived stripe, paypal, bank. */
const ALICE = [source('stripe', 5000n), source('paypal', 3000n), source('bank', 2000n)];

t.test('FIFO draws on the provider whose funds came first (lineage_test.go TestSequentialAllocation_FIFO, MultiProvider_FIFO)', async (t) => {
  t.same(allocate('FIFO', [source('s1', 10000n)], 5000n), [{ provider: 's1', amount: 5000n }], 'one source covers the amount');
  t.same(allocate('FIFO', [source('s1', 3000n), source('s2', 5000n)], 6000n), [{ provider: 's1', amount: 3000n }, { provider: 's2', amount: 3000n }], 'several needed');
  t.same(allocate('FIFO', [source('s1', 5000n), source('s2', 3000n)], 6000n), [{ provider: 's1', amount: 5000n }, { provider: 's2', amount: 1000n }], 'the first exhausted');
  t.same(allocate('FIFO', [], 1000n), [], 'no sources, no shares');
  t.same(allocate('FIFO', ALICE, 7000n), [{ provider: 'stripe', amount: 5000n }, { provider: 'paypal', amount: 2000n }], '$70: stripe, then paypal');
  t.same(allocate('FIFO', ALICE, 10000n).map((share) => share.provider), ['stripe', 'paypal', 'bank'], '$100: all three in order');
  t.same(allocate('FIFO', ALICE, 3000n), [{ provider: 'stripe', amount: 3000n }], '$30: stripe alone');
});

t.test('LIFO draws on the provider whose funds came last (MultiProvider_LIFO)', async (t) => {
  t.same(allocate('LIFO', ALICE, 4000n), [{ provider: 'bank', amount: 2000n }, { provider: 'paypal', amount: 2000n }], '$40: bank, then paypal');
  t.same(allocate('LIFO', ALICE, 10000n).map((share) => share.provider), ['bank', 'paypal', 'stripe'], '$100: all three, newest first');
  t.same(allocate('LIFO', [source('old', 5000n), source('new', 3000n)], 4000n)[0], { provider: 'new', amount: 3000n }, 'TestCalculateAllocation: newest first');
});

t.test('PROPORTIONAL splits by what each has, exactly (MultiProvider_PROPORTIONAL, TestProportionalAllocation)', async (t) => {
  const providers = [source('stripe', 6000n), source('paypal', 3000n), source('bank', 1000n)];
  t.same(allocate('PROPORTIONAL', providers, 5000n), [
    { provider: 'stripe', amount: 3000n }, { provider: 'paypal', amount: 1500n }, { provider: 'bank', amount: 500n },
  ], '$50 split 60/30/10');
  t.equal(sharesTotal(allocate('PROPORTIONAL', providers, 10000n)), 10000n, '$100 uses all funds');
  t.equal(sharesTotal(allocate('PROPORTIONAL', [source('s1', 5000n), source('s2', 5000n)], 6000n)), 6000n, 'equal proportions');
  t.equal(sharesTotal(allocate('PROPORTIONAL', [source('s1', 7500n), source('s2', 2500n)], 8000n)), 8000n, 'unequal proportions');
  t.same(allocate('PROPORTIONAL', [source('stripe', 6000n), source('paypal', 4000n)], 5000n),
    [{ provider: 'stripe', amount: 3000n }, { provider: 'paypal', amount: 2000n }], 'lineage_integration_test.go: 60/40 of $50');
  t.equal(sharesTotal(allocate('PROPORTIONAL', providers, 20000n)), 10000n, 'capped at what the providers have');
});

t.test('PROPORTIONAL: the units floors leave over go to the largest remainders, ties to the earliest funds', async (t) => {
  // Blnk: floor(2*1/3) = 0 twice, then the last "takes the rest" capped at 1: 1 of 2 allocated.
  t.same(allocate('PROPORTIONAL', [source('a', 1n), source('b', 1n), source('c', 1n)], 2n), [{ provider: 'a', amount: 1n }, { provider: 'b', amount: 1n }]);
  // Quotas 1.5, 1.5, 2: floors 1, 1, 2, one unit left, the tie between a and b goes to a.
  t.same(allocate('PROPORTIONAL', [source('a', 3n), source('b', 3n), source('c', 4n)], 5n),
    [{ provider: 'a', amount: 2n }, { provider: 'b', amount: 1n }, { provider: 'c', amount: 2n }]);
  // Quotas 0.7, 2.3 (of 3 from 7 and 23): floors 0, 2, and the unit left goes to the 0.7.
  t.same(allocate('PROPORTIONAL', [source('a', 7n), source('b', 23n)], 3n), [{ provider: 'a', amount: 1n }, { provider: 'b', amount: 2n }]);
  t.same(allocate('PROPORTIONAL', [source('a', 10n ** 30n), source('b', 1n)], 10n ** 29n),
    [{ provider: 'a', amount: 10n ** 29n }], 'amounts far beyond 64 bits stay exact');
});

t.test('edge cases (TestLineageIntegration_EdgeCases)', async (t) => {
  for (const strategy of ['FIFO', 'LIFO', 'PROPORTIONAL'] as const) {
    t.same(allocate(strategy, [source('s1', 5000n)], 0n), [], `${strategy}: nothing to allocate`);
    t.same(allocate(strategy, [source('s1', 3000n)], 5000n), [{ provider: 's1', amount: 3000n }], `${strategy}: only what is there`);
    t.same(allocate(strategy, [source('s1', 5000n)], 5000n), [{ provider: 's1', amount: 5000n }], `${strategy}: exactly what is there`);
    t.same(allocate(strategy, [source('spent', 0n), source('s1', 10n)], 5n), [{ provider: 's1', amount: 5n }], `${strategy}: a provider with nothing left gives nothing`);
  }
});

t.test('every allocation sums to min(amount, funds), never passes a provider\'s funds, proportional within one unit of its quota', async (t) => {
  const random = seededRandom(t, 'ALLOCATION_SEED');
  const strategies: AllocationStrategy[] = ['FIFO', 'LIFO', 'PROPORTIONAL'];
  let failures = 0;
  for (let round = 0; round < 3_000 && failures < 5; round += 1) {
    const count = 1 + random.int(8);
    const sources = Array.from({ length: count }, (_, index) => source(`p${index}`, BigInt(random.int(4) === 0 ? 0 : random.int(1_000_000))));
    const total = sources.reduce((sum, entry) => sum + entry.available, 0n);
    const amount = BigInt(1 + random.int(1_200_000));
    const strategy = random.pick(strategies);
    const shares = allocate(strategy, sources, amount);
    const expected = amount < total ? amount : total;
    const problems: string[] = [];
    if (sharesTotal(shares) !== expected) problems.push(`sum ${sharesTotal(shares)} is not ${expected}`);
    for (const share of shares) {
      const from = sources.find((entry) => entry.provider === share.provider) as FundSource;
      if (share.amount <= 0n || share.amount > from.available) problems.push(`${share.provider}: ${share.amount} of ${from.available}`);
      // |share - expected * available / total| < 1, in integers: |share * total - expected * available| < total.
      const off = share.amount * total - expected * from.available;
      if (strategy === 'PROPORTIONAL' && (off < 0n ? -off : off) >= total) problems.push(`${share.provider}: ${share.amount} is not within a unit of its quota`);
    }
    if (new Set(shares.map((share) => share.provider)).size !== shares.length) problems.push('a provider twice');
    if (problems.length > 0) {
      failures += 1;
      t.fail(`${strategy} ${amount} over ${sources.map((entry) => entry.available).join(',')}: ${problems.join('; ')}`);
    }
  }
  t.equal(failures, 0, 'no allocation broke a rule');
});

t.test('sharesBetween: what a commit settles of a hold\'s shares, in their order', async (t) => {
  const shares = [{ provider: 'a', amount: 30n }, { provider: 'b', amount: 50n }];
  t.same(sharesBetween(shares, 0n, 20n), [{ provider: 'a', amount: 20n }]);
  t.same(sharesBetween(shares, 20n, 20n), [{ provider: 'a', amount: 10n }, { provider: 'b', amount: 10n }]);
  t.same(sharesBetween(shares, 40n, 100n), [{ provider: 'b', amount: 40n }], 'past the tagged funds: untagged, nothing');
  t.same(sharesBetween(shares, 80n, 20n), [], 'all of it untagged');
  t.same(sharesBetween(shares, 0n, 80n), shares, 'everything');
});
