// Splitting an exact total over several balances, and pairing the shares of the sources with those of
// the destinations. All arithmetic is on bigints; no unit is ever lost or created.
//
// A share is asked for as a fixed amount (already converted to the smallest unit), a percentage of the
// total, or "left" (whatever remains). The rule for percentages:
//   1. each percentage share is first rounded down: floor(total × percent / 100);
//   2. with a "left" share, the units rounded away simply stay in "left";
//   3. without one, the percentages and fixed amounts must cover the total exactly (as exact fractions),
//      and the few units lost to rounding down go one each to the percentage shares with the largest
//      discarded fractions, the earlier share first on a tie (the largest-remainder method).
// So 100 split 33.33% / 33.33% / 33.34% gives 33 / 33 / 34, and 10 split 50% / 50% gives 5 / 5.

import { accept, refuse, type Result } from './result.js';
export type ShareRequest =
  | { kind: 'fixed'; amount: bigint }
  | { kind: 'percent'; /** numerator / denominator of the percentage, e.g. 33.5% = 335/10 */ numerator: bigint; denominator: bigint }
  | { kind: 'left' };

/** The amount of each share, or why the shares cannot divide the total. */
export type DistributionResult = Result<bigint[], { code: 'DISTRIBUTION_INVALID'; message: string }>;

export function distribute(total: bigint, shares: ShareRequest[]): DistributionResult {
  const fail = (message: string): DistributionResult => refuse({ code: 'DISTRIBUTION_INVALID', message });
  if (shares.length === 0) return fail('at least one share is needed');
  const leftIndexes = shares.flatMap((share, index) => (share.kind === 'left' ? [index] : []));
  if (leftIndexes.length > 1) return fail('only one share may be "left"');
  const amounts = new Array<bigint>(shares.length).fill(0n);
  let fixedTotal = 0n;
  // Percentages are summed as the exact fraction Σ(numerator/denominator) over a common denominator.
  let percentNumerator = 0n;
  let percentDenominator = 1n;
  const remainders: Array<{ index: number; numerator: bigint; denominator: bigint }> = [];
  for (const [index, share] of shares.entries()) {
    if (share.kind === 'fixed') {
      if (share.amount <= 0n) return fail('fixed shares must be greater than zero');
      amounts[index] = share.amount;
      fixedTotal += share.amount;
    } else if (share.kind === 'percent') {
      if (share.numerator <= 0n || share.denominator <= 0n) return fail('percentages must be greater than zero');
      // share = total × numerator / (denominator × 100)
      const divisor = share.denominator * 100n;
      const exact = total * share.numerator;
      amounts[index] = exact / divisor;
      remainders.push({ index, numerator: exact % divisor, denominator: divisor });
      percentNumerator = percentNumerator * share.denominator + share.numerator * percentDenominator;
      percentDenominator *= share.denominator;
    }
  }
  if (percentNumerator > 100n * percentDenominator) return fail('percentages add up to more than 100%');
  if (fixedTotal > total) return fail('fixed shares add up to more than the total');
  const allocated = amounts.reduce((sum, amount) => sum + amount, 0n);
  if (allocated > total) return fail('shares add up to more than the total');
  const leftIndex = leftIndexes[0];
  if (leftIndex !== undefined) {
    amounts[leftIndex] = total - allocated;
    return accept(amounts);
  }
  // Without "left", fixed + exact percentages must be the whole total: fixed/total + percent/100 = 1.
  const coversTotal = (total - fixedTotal) * 100n * percentDenominator === percentNumerator * total;
  if (!coversTotal) return fail('shares do not add up to the total (add a "left" share for the rest)');
  let shortfall = total - allocated;
  remainders.sort((a, b) => {
    const difference = a.numerator * b.denominator - b.numerator * a.denominator;
    return difference > 0n ? -1 : difference < 0n ? 1 : a.index - b.index;
  });
  for (const remainder of remainders) {
    if (shortfall === 0n) break;
    amounts[remainder.index] = (amounts[remainder.index] as bigint) + 1n;
    shortfall -= 1n;
  }
  if (shortfall !== 0n) return fail('shares do not add up to the total');
  return accept(amounts);
}

export interface Flow {
  sourceIndex: number;
  destinationIndex: number;
  amount: bigint;
}

/**
 * Pairs source shares with destination shares: walk both lists in order, each step moving as much as
 * both the current source and the current destination still have. Deterministic, exact, and at most
 * sources + destinations - 1 flows. Both lists must add up to the same total.
 */
export function pairShares(sourceAmounts: bigint[], destinationAmounts: bigint[]): Flow[] {
  const flows: Flow[] = [];
  const sourceLeft = [...sourceAmounts];
  const destinationLeft = [...destinationAmounts];
  let sourceIndex = 0;
  let destinationIndex = 0;
  while (sourceIndex < sourceLeft.length && destinationIndex < destinationLeft.length) {
    const fromSource = sourceLeft[sourceIndex] as bigint;
    const toDestination = destinationLeft[destinationIndex] as bigint;
    const amount = fromSource < toDestination ? fromSource : toDestination;
    if (amount > 0n) flows.push({ sourceIndex, destinationIndex, amount });
    sourceLeft[sourceIndex] = fromSource - amount;
    destinationLeft[destinationIndex] = toDestination - amount;
    if (sourceLeft[sourceIndex] === 0n) sourceIndex += 1;
    if (destinationLeft[destinationIndex] === 0n) destinationIndex += 1;
  }
  return flows;
}
