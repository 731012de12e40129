// From candidate pairs to matches. Every (probe, candidate) pair for which a rule holds is scored by its
// amount gap (exact: |E - I| as a fraction), then its time gap, and ties break by the candidate's id and
// then the probe's position, so a run always gives the same answer. Pairs are taken best first across
// the whole run, each probe at most once and each internal transaction at most once: a duplicated
// statement line cannot claim a transaction its original already has, whichever comes first in the file.
//
// Under the grouped strategies a probe whose two best candidates tie (same amount gap and time gap) is
// ambiguous: it is reported unmatched rather than matched by a guess. one_to_one breaks such ties by id,
// as ../shared/spec/decisions.md says.

import { compareFractions, type Fraction } from '../engine/exact-fraction.js';
import type { MatchSide } from './match-sides.js';

export interface CandidatePair {
  probe: number;
  /** Ties break on this: the transaction id, or a group's first member id. */
  candidateKey: string;
  internalIds: string[];
  ruleId: string;
  /** |E - I|; undefined when the sides are in different currencies (ranks after every amount). */
  amountGap: Fraction | undefined;
  timeGap: number;
  external: MatchSide;
  internal: MatchSide;
}

export interface Assignment {
  assigned: Map<number, CandidatePair>;
  ambiguous: Set<number>;
  /** Probes that had at least one pair (unassigned ones lost theirs to better pairs). */
  hadPairs: Set<number>;
}

export function amountGap(external: MatchSide, internal: MatchSide): Fraction | undefined {
  if (external.currency === '' || external.currency !== internal.currency) return undefined;
  const e = external.amount * internal.precision;
  const i = internal.amount * external.precision;
  return { numerator: e > i ? e - i : i - e, denominator: external.precision * internal.precision };
}

export function comparePairs(a: CandidatePair, b: CandidatePair): number {
  const gap = compareGaps(a.amountGap, b.amountGap);
  if (gap !== 0) return gap;
  if (a.timeGap !== b.timeGap) return a.timeGap - b.timeGap;
  if (a.candidateKey !== b.candidateKey) return a.candidateKey < b.candidateKey ? -1 : 1;
  return a.probe - b.probe;
}

function compareGaps(a: Fraction | undefined, b: Fraction | undefined): number {
  if (a === undefined || b === undefined) return a === b ? 0 : a === undefined ? 1 : -1;
  return compareFractions(a, b);
}

function sameScore(a: CandidatePair, b: CandidatePair): boolean {
  return compareGaps(a.amountGap, b.amountGap) === 0 && a.timeGap === b.timeGap;
}

export function assignPairs(pairs: CandidatePair[], options: { refuseTies: boolean }): Assignment {
  pairs.sort(comparePairs);
  const hadPairs = new Set<number>();
  const ambiguous = new Set<number>();
  if (options.refuseTies) {
    const best = new Map<number, CandidatePair>();
    for (const pair of pairs) {
      hadPairs.add(pair.probe);
      const first = best.get(pair.probe);
      if (!first) best.set(pair.probe, pair);
      else if (first.candidateKey !== pair.candidateKey && sameScore(first, pair)) ambiguous.add(pair.probe);
    }
  }
  const assigned = new Map<number, CandidatePair>();
  const claimed = new Set<string>();
  for (const pair of pairs) {
    hadPairs.add(pair.probe);
    if (assigned.has(pair.probe) || ambiguous.has(pair.probe)) continue;
    if (pair.internalIds.some((id) => claimed.has(id))) continue;
    for (const id of pair.internalIds) claimed.add(id);
    assigned.set(pair.probe, pair);
  }
  return { assigned, ambiguous, hadPairs };
}
