// A reference for the split rule documented at the top of engine/split-distribution.ts, written
// separately from it (exact fractions, a different order of checks) so tests can compare the two.
// Also the reference pairing of source shares with destination shares ("north-west corner" walk).

import type { ShareRequest } from '../../engine/split-distribution.js';

/** An exact non-negative fraction. */
interface Fraction {
  n: bigint;
  d: bigint;
}

function fraction(n: bigint, d: bigint): Fraction {
  return { n, d };
}

function add(a: Fraction, b: Fraction): Fraction {
  return { n: a.n * b.d + b.n * a.d, d: a.d * b.d };
}

function compare(a: Fraction, b: Fraction): number {
  const left = a.n * b.d;
  const right = b.n * a.d;
  return left < right ? -1 : left > right ? 1 : 0;
}

/** Why a set of shares is invalid under the documented rule, or undefined when it is valid. */
export function oracleInvalidReason(total: bigint, shares: ShareRequest[]): string | undefined {
  if (shares.length === 0) return 'no shares';
  if (shares.filter((share) => share.kind === 'left').length > 1) return 'two left shares';
  for (const share of shares) {
    if (share.kind === 'fixed' && share.amount <= 0n) return 'non-positive fixed share';
    if (share.kind === 'percent' && (share.numerator <= 0n || share.denominator <= 0n)) return 'non-positive percentage';
  }
  let percent = fraction(0n, 1n);
  let fixed = 0n;
  let floors = 0n;
  for (const share of shares) {
    if (share.kind === 'fixed') fixed += share.amount;
    if (share.kind === 'percent') {
      percent = add(percent, fraction(share.numerator, share.denominator));
      floors += (total * share.numerator) / (share.denominator * 100n);
    }
  }
  if (compare(percent, fraction(100n, 1n)) > 0) return 'over 100%';
  if (fixed > total) return 'fixed over total';
  if (fixed + floors > total) return 'shares over total';
  const hasLeft = shares.some((share) => share.kind === 'left');
  // Without "left": fixed + total × percent / 100 must equal the total exactly.
  if (!hasLeft && compare(add(fraction(fixed, 1n), fraction(total * percent.n, percent.d * 100n)), fraction(total, 1n)) !== 0) {
    return 'does not cover the total';
  }
  return undefined;
}

/** The amounts the documented rule gives, or undefined when the shares are invalid. */
export function oracleDistribute(total: bigint, shares: ShareRequest[]): bigint[] | undefined {
  if (oracleInvalidReason(total, shares) !== undefined) return undefined;
  const amounts: bigint[] = [];
  const discarded: Array<{ index: number; part: Fraction }> = [];
  for (const [index, share] of shares.entries()) {
    if (share.kind === 'fixed') amounts.push(share.amount);
    else if (share.kind === 'left') amounts.push(0n);
    else {
      const exact = fraction(total * share.numerator, share.denominator * 100n);
      const whole = exact.n / exact.d;
      amounts.push(whole);
      discarded.push({ index, part: fraction(exact.n - whole * exact.d, exact.d) });
    }
  }
  const given = amounts.reduce((sum, amount) => sum + amount, 0n);
  const leftIndex = shares.findIndex((share) => share.kind === 'left');
  if (leftIndex >= 0) {
    amounts[leftIndex] = total - given;
    return amounts;
  }
  // Largest remainder: hand the missing units out by discarded fraction, biggest first, earlier first on ties.
  const order = [...discarded].sort((a, b) => compare(b.part, a.part) || a.index - b.index);
  let missing = total - given;
  for (const { index } of order) {
    if (missing === 0n) break;
    amounts[index] = (amounts[index] as bigint) + 1n;
    missing -= 1n;
  }
  return missing === 0n ? amounts : undefined;
}

export interface OracleFlow {
  sourceIndex: number;
  destinationIndex: number;
  amount: bigint;
}

/** Source and destination shares paired in order, each step as much as both still have; no empty flows. */
export function oraclePair(sources: bigint[], destinations: bigint[]): OracleFlow[] {
  const flows: OracleFlow[] = [];
  const destinationLeft = [...destinations];
  let destinationIndex = 0;
  for (const [sourceIndex, sourceAmount] of sources.entries()) {
    let remaining = sourceAmount;
    while (remaining > 0n && destinationIndex < destinationLeft.length) {
      const room = destinationLeft[destinationIndex] as bigint;
      if (room === 0n) {
        destinationIndex += 1;
        continue;
      }
      const amount = remaining < room ? remaining : room;
      flows.push({ sourceIndex, destinationIndex, amount });
      remaining -= amount;
      destinationLeft[destinationIndex] = room - amount;
      if (room - amount === 0n) destinationIndex += 1;
    }
  }
  return flows;
}
