// The split arithmetic on its own: how a total is shared out (fixed amounts, percentages, one "left")
// and how source shares pair with destination shares. Exactness is the point: no unit may be lost or
// created, whatever the inputs. Hand-picked cases pin the documented rounding rule; seeded random inputs
// compare engine/split-distribution.ts with the separately written reference in helpers/split-oracle.ts.

import t from 'tap';
import { distribute, pairShares, type ShareRequest } from '../engine/split-distribution.js';
import { SeededRandom, seededTest, seedsToRun } from './helpers/seeded-random.js';
import { oracleDistribute, oracleInvalidReason, oraclePair } from './helpers/split-oracle.js';

const fixed = (amount: bigint | number): ShareRequest => ({ kind: 'fixed', amount: BigInt(amount) });
const left: ShareRequest = { kind: 'left' };
/** `pct('33.33')` is 33.33%. */
function pct(text: string): ShareRequest {
  const [whole, fractionPart = ''] = text.split('.');
  return { kind: 'percent', numerator: BigInt(`${whole}${fractionPart}`), denominator: 10n ** BigInt(fractionPart.length) };
}

function amounts(total: bigint | number, shares: ShareRequest[]): bigint[] | string {
  const result = distribute(BigInt(total), shares);
  return result.ok ? result.value : `invalid: ${result.rejection.message}`;
}

t.test('the examples in the rule', async (t) => {
  t.same(amounts(100, [pct('33.33'), pct('33.33'), pct('33.34')]), [33n, 33n, 34n]);
  t.same(amounts(10, [pct('50'), pct('50')]), [5n, 5n]);
});

t.test('without "left": the units lost to rounding go to the largest discarded fractions', async (t) => {
  // 0.7, 1.4, 4.9 -> floors 0, 1, 4; the two missing units go to .9 then .7.
  t.same(amounts(7, [pct('10'), pct('20'), pct('70')]), [1n, 1n, 5n]);
  // 1.5, 2.5, 6 -> a tie between the first two; the earlier one gets the unit.
  t.same(amounts(10, [pct('15'), pct('25'), pct('60')]), [2n, 2n, 6n]);
  t.same(amounts(7, [pct('50'), pct('50')]), [4n, 3n], 'tie: earlier share first');
  t.same(amounts(1, [pct('50'), pct('50')]), [1n, 0n], 'one unit cannot be halved');
  t.same(amounts(3, [pct('25'), pct('25'), pct('50')]), [1n, 1n, 1n], '0.75, 0.75, 1.5: both .75s beat the .5');
  t.same(amounts(5, [pct('10'), pct('10'), pct('80')]), [1n, 0n, 4n], '0.5, 0.5, 4: one missing unit, the earlier tie wins');
  // Fractional percentages with different denominators: 12.345% + 87.655% of 1000 = 123.45 + 876.55.
  t.same(amounts(1000, [pct('12.345'), pct('87.655')]), [123n, 877n], '.55 beats .45');
  // Fixed shares are exact; the percentages cover the rest exactly.
  t.same(amounts(200, [fixed(100), pct('50')]), [100n, 100n]);
  t.same(amounts(3, [fixed(1), pct('33.33333'), pct('33.33334')]).toString(), 'invalid: shares do not add up to the total (add a "left" share for the rest)',
    'fixed plus percentages that are not exact is refused');
  t.same(amounts(5, [fixed(2), pct('30'), pct('30')]), [2n, 2n, 1n], '1.5 and 1.5 -> the tie goes to the earlier share');
});

t.test('with "left": every percentage is rounded down and the residue stays in "left"', async (t) => {
  t.same(amounts(7, [pct('10'), pct('20'), left]), [0n, 1n, 6n]);
  t.same(amounts(10, [pct('33'), pct('33'), left]), [3n, 3n, 4n]);
  t.same(amounts(101, [fixed(1), pct('50'), left]), [1n, 50n, 50n]);
  t.same(amounts(100, [left, pct('25')]), [75n, 25n], '"left" may come first');
  t.same(amounts(42, [left]), [42n], '"left" alone takes everything');
  t.same(amounts(100, [fixed(100), left]), [100n, 0n], 'nothing remains for "left"');
  t.same(amounts(99, [pct('100'), left]), [99n, 0n]);
  t.same(amounts(3, [fixed(2), pct('50'), left]), [2n, 1n, 0n], '1.5 rounds down to 1, leaving 0');
});

t.test('a huge total is split exactly', async (t) => {
  const total = 10n ** 39n + 7n;
  const result = amounts(total, [pct('33.33'), pct('33.33'), pct('33.34')]);
  t.ok(Array.isArray(result));
  if (Array.isArray(result)) t.equal(result.reduce((sum, amount) => sum + amount, 0n), total);
});

t.test('every invalid case is refused', async (t) => {
  const invalid: Array<[string, bigint, ShareRequest[]]> = [
    ['no shares', 100n, []],
    ['two "left" shares', 100n, [left, left]],
    ['two "left" shares with others', 100n, [fixed(10), left, pct('10'), left]],
    ['a zero fixed share', 100n, [fixed(0), left]],
    ['a negative fixed share', 100n, [fixed(-5), left]],
    ['a zero percentage', 100n, [pct('0'), left]],
    ['a zero percentage with decimals', 100n, [pct('0.000'), left]],
    ['percentages over 100%', 100n, [pct('60'), pct('50')]],
    ['percentages over 100% with "left"', 100n, [pct('60'), pct('40.001'), left]],
    ['one percentage over 100%', 100n, [pct('150')]],
    ['fixed shares over the total', 100n, [fixed(60), fixed(41)]],
    ['fixed shares over the total with "left"', 100n, [fixed(101), left]],
    ['fixed plus percentages over the total', 100n, [fixed(60), pct('50'), left]],
    ['100% plus a fixed share', 100n, [pct('100'), fixed(1)]],
    ['percentages under 100% without "left"', 100n, [pct('50')]],
    ['fixed shares under the total without "left"', 100n, [fixed(30), fixed(60)]],
    ['fixed plus percentages under the total without "left"', 100n, [fixed(30), pct('50')]],
    ['thirds written as decimals do not cover the total', 100n, [pct('33.333'), pct('33.333'), pct('33.333')]],
  ];
  for (const [name, total, shares] of invalid) {
    const result = distribute(total, shares);
    t.equal(result.ok, false, name);
    if (!result.ok) t.ok(result.rejection.message.length > 0, `${name}: says why`);
    t.not(oracleInvalidReason(total, shares), undefined, `${name}: the reference agrees`);
  }
});

/** Shares of one of several shapes, so that valid and invalid, with and without "left", all come up. */
function randomShares(random: SeededRandom): { total: bigint; shares: ShareRequest[] } {
  const shape = random.int(0, 3);
  const total = random.pick([
    () => BigInt(random.int(1, 20)),
    () => BigInt(random.int(1, 1_000_000)),
    () => random.bigDigits(random.int(16, 40)),
  ])();
  const count = random.int(1, 8);
  const randomPercent = (maxBasisPoints: number): ShareRequest => {
    const places = random.int(0, 4);
    const scale = 10 ** places;
    const numerator = BigInt(random.int(0, Math.max(1, Math.floor((maxBasisPoints / 100) * scale))));
    return { kind: 'percent', numerator, denominator: BigInt(scale) };
  };
  if (shape === 0) {
    // Anything at all: often invalid, which exercises the refusals.
    const shares: ShareRequest[] = [];
    for (let index = 0; index < count; index += 1) {
      const kind = random.int(0, 5);
      if (kind <= 1) shares.push(fixed(random.bigInt(0n, (total * 6n) / 10n + 1n)));
      else if (kind <= 3) shares.push(randomPercent(random.int(1, 6000)));
      else shares.push(left);
    }
    return { total, shares };
  }
  if (shape === 1) {
    // Percentages summing to exactly 100% (in hundredths of a percent), no "left".
    const cuts = Array.from({ length: count - 1 }, () => random.int(0, 10_000)).sort((a, b) => a - b);
    const bounds = [0, ...cuts, 10_000];
    const shares: ShareRequest[] = [];
    for (let index = 0; index < count; index += 1) {
      const basisPoints = (bounds[index + 1] as number) - (bounds[index] as number);
      if (basisPoints > 0) shares.push({ kind: 'percent', numerator: BigInt(basisPoints), denominator: 100n });
    }
    return { total, shares };
  }
  if (shape === 2) {
    // Fixed shares plus percentages that together cover a total divisible by 10,000 exactly.
    const multiple = random.pick([1n, BigInt(random.int(1, 1000)), random.bigDigits(random.int(10, 30))]);
    const exactTotal = 10_000n * multiple;
    const percentShares = random.int(1, 4);
    const basis = Array.from({ length: percentShares }, () => random.int(1, Math.floor(9_000 / percentShares)));
    const used = basis.reduce((sum, value) => sum + value, 0);
    let fixedRest = multiple * BigInt(10_000 - used);
    const shares: ShareRequest[] = basis.map((value) => ({ kind: 'percent', numerator: BigInt(value), denominator: 100n }));
    while (fixedRest > 0n) {
      const piece = random.chance(0.5) ? fixedRest : random.bigInt(1n, fixedRest);
      shares.splice(random.int(0, shares.length), 0, fixed(piece));
      fixedRest -= piece;
    }
    return { total: exactTotal, shares };
  }
  // Fixed and percentages well within the total, plus one "left" somewhere.
  const shares: ShareRequest[] = [];
  let budget = 10_000;
  for (let index = 0; index < count; index += 1) {
    if (random.chance(0.3) && total >= BigInt(count * 3)) shares.push(fixed(random.bigInt(1n, total / BigInt(count * 3))));
    else {
      const basisPoints = random.int(1, Math.max(1, Math.floor(budget / 3)));
      budget -= basisPoints;
      shares.push({ kind: 'percent', numerator: BigInt(basisPoints), denominator: 100n });
    }
  }
  shares.splice(random.int(0, shares.length), 0, left);
  return { total, shares };
}

t.test('random splits: exact, the documented rule, and the same validity as the reference', async (t) => {
  for (const seed of seedsToRun([1, 20260101, 777])) {
    await seededTest(t, 'random distributions', seed, (t, random) => {
      let valid = 0;
      let refused = 0;
      let roundedUp = 0;
      for (let round = 0; round < 4_000; round += 1) {
        const { total, shares } = randomShares(random);
        const result = distribute(total, shares);
        const expected = oracleDistribute(total, shares);
        const describe = (): string => `total ${total}, shares ${JSON.stringify(shares, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))}`;
        if (!result.ok) {
          refused += 1;
          if (expected !== undefined) throw new Error(`refused (${result.rejection.message}) but the reference accepts: ${describe()}`);
          continue;
        }
        valid += 1;
        if (expected === undefined) throw new Error(`accepted but the reference refuses (${oracleInvalidReason(total, shares)}): ${describe()}`);
        const sum = result.value.reduce((acc, amount) => acc + amount, 0n);
        if (sum !== total) throw new Error(`shares sum to ${sum}, not ${total}: ${describe()}`);
        for (const [index, share] of shares.entries()) {
          const amount = result.value[index] as bigint;
          if (amount < 0n) throw new Error(`negative share: ${describe()}`);
          if (share.kind === 'fixed' && amount !== share.amount) throw new Error(`fixed share changed: ${describe()}`);
          if (share.kind === 'percent') {
            const floor = (total * share.numerator) / (share.denominator * 100n);
            const hasLeft = shares.some((other) => other.kind === 'left');
            if (amount < floor || amount > floor + (hasLeft ? 0n : 1n)) throw new Error(`percentage share ${amount} off its floor ${floor}: ${describe()}`);
            if (amount > floor) roundedUp += 1;
          }
        }
        if (result.value.some((amount, index) => amount !== expected[index])) {
          throw new Error(`amounts ${result.value.join(',')} differ from the reference ${expected.join(',')}: ${describe()}`);
        }
      }
      t.ok(valid > 500, `${valid} valid splits checked`);
      t.ok(refused > 200, `${refused} invalid splits refused`);
      t.ok(roundedUp > 200, `${roundedUp} percentage shares got a unit lost to rounding`);
    });
  }
});

t.test('pairShares: hand-picked pairings', async (t) => {
  t.same(pairShares([30n, 70n], [50n, 50n]), [
    { sourceIndex: 0, destinationIndex: 0, amount: 30n },
    { sourceIndex: 1, destinationIndex: 0, amount: 20n },
    { sourceIndex: 1, destinationIndex: 1, amount: 50n },
  ]);
  t.same(pairShares([100n], [25n, 75n]), [
    { sourceIndex: 0, destinationIndex: 0, amount: 25n },
    { sourceIndex: 0, destinationIndex: 1, amount: 75n },
  ], 'one source fans out');
  t.same(pairShares([40n, 60n], [100n]), [
    { sourceIndex: 0, destinationIndex: 0, amount: 40n },
    { sourceIndex: 1, destinationIndex: 0, amount: 60n },
  ], 'many sources into one destination');
  t.same(pairShares([50n, 50n], [50n, 50n]), [
    { sourceIndex: 0, destinationIndex: 0, amount: 50n },
    { sourceIndex: 1, destinationIndex: 1, amount: 50n },
  ], 'matching boundaries give one flow per pair');
  t.same(pairShares([0n, 10n], [10n, 0n]), [{ sourceIndex: 1, destinationIndex: 0, amount: 10n }], 'empty shares make no flows');
  t.same(pairShares([], []), []);
});

/** A random list of shares adding up to `total` (zeros allowed). */
function randomParts(random: SeededRandom, total: bigint, count: number): bigint[] {
  const parts: bigint[] = [];
  let rest = total;
  for (let index = 0; index < count - 1; index += 1) {
    const part = random.chance(0.15) ? 0n : random.bigInt(0n, rest);
    parts.push(part);
    rest -= part;
  }
  parts.push(rest);
  return parts;
}

t.test('pairShares: random pairings are exact and minimal', async (t) => {
  for (const seed of seedsToRun([3, 4242])) {
    await seededTest(t, 'random pairings', seed, (t, random) => {
      for (let round = 0; round < 3_000; round += 1) {
        const total = random.chance(0.5) ? BigInt(random.int(0, 50)) : random.bigDigits(random.int(1, 40));
        const sources = randomParts(random, total, random.int(1, 10));
        const destinations = randomParts(random, total, random.int(1, 10));
        const flows = pairShares(sources, destinations);
        const describe = `sources ${sources.join(',')} destinations ${destinations.join(',')}`;
        const paid = sources.map(() => 0n);
        const received = destinations.map(() => 0n);
        let previous = { sourceIndex: -1, destinationIndex: -1 };
        for (const flow of flows) {
          if (flow.amount <= 0n) throw new Error(`empty flow: ${describe}`);
          if (flow.sourceIndex < previous.sourceIndex || flow.destinationIndex < previous.destinationIndex
            || (flow.sourceIndex === previous.sourceIndex && flow.destinationIndex === previous.destinationIndex)) {
            throw new Error(`flows out of order: ${describe}`);
          }
          previous = flow;
          paid[flow.sourceIndex] = (paid[flow.sourceIndex] as bigint) + flow.amount;
          received[flow.destinationIndex] = (received[flow.destinationIndex] as bigint) + flow.amount;
        }
        if (paid.some((amount, index) => amount !== sources[index])) throw new Error(`a source pays the wrong amount: ${describe}`);
        if (received.some((amount, index) => amount !== destinations[index])) throw new Error(`a destination gets the wrong amount: ${describe}`);
        const nonEmpty = sources.filter((amount) => amount > 0n).length + destinations.filter((amount) => amount > 0n).length;
        if (flows.length > Math.max(0, nonEmpty - 1)) throw new Error(`${flows.length} flows is more than needed: ${describe}`);
        const expected = oraclePair(sources, destinations);
        if (JSON.stringify(expected, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))
          !== JSON.stringify(flows, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))) {
          throw new Error(`pairing differs from the reference: ${describe}`);
        }
      }
      t.pass('3000 random pairings checked');
    });
  }
});
