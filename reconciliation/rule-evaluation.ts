// Whether a rule holds between an external side and an internal side, exactly: amounts are compared as
// cross-multiplied bigints (an amount drift of 0.01 is the fraction 1/100, never a double), dates as
// integer milliseconds. A rule holds when all its criteria do; a run's rules are tried in the order the
// run names them, and the first that holds is the match's rule.
//
//   amount      equals: |E - I| <= drift x I (drift 0 when none); greater_than: E > I; less_than: E < I.
//               Only within one currency: an amount in another currency is a different amount.
//   currency    equals: the same code; contains: see below.
//   reference,  equals: the same text (any of a group's), not empty; contains: one contains the other,
//   description ignoring case (matching-rules.ts foldCase), neither empty; with an allowable_drift of p,
//               also when their Levenshtein distance (in characters) is at most p% of the longer one's
//               length in UTF-8 bytes, rounded down (Blnk's partialMatch, in integers).
//   date        equals: |Te - Ti| <= drift (seconds, 0 when none); after: Te > Ti (by at most the drift,
//               when a positive one is given); before: Te < Ti (likewise).
//   anything else (amount contains, reference greater_than, ...): never holds, as in Blnk.

import { type Fraction } from '../engine/exact-fraction.js';
import { amountDrift, containsDrift, dateDriftMs, dateRelation, foldCase } from '../engine/matching-rules.js';
import { isDeadCriterion, type MatchingCriterion, type MatchingRuleRecord } from '../engine/reconciliation-records.js';
import type { MatchSide } from './match-sides.js';

type Check = (external: MatchSide, internal: MatchSide) => boolean;

export interface PreparedRule {
  rule: MatchingRuleRecord;
  checks: Check[];
}

export function prepareRule(rule: MatchingRuleRecord): PreparedRule {
  return { rule, checks: rule.criteria.map(checkFor) };
}

export function ruleHolds(rule: PreparedRule, external: MatchSide, internal: MatchSide): boolean {
  for (const check of rule.checks) if (!check(external, internal)) return false;
  return true;
}

/** The first of the rules (in order) that holds, if any. */
export function firstHoldingRule(rules: PreparedRule[], external: MatchSide, internal: MatchSide): PreparedRule | undefined {
  for (const rule of rules) if (ruleHolds(rule, external, internal)) return rule;
  return undefined;
}

function checkFor(criterion: MatchingCriterion): Check {
  if (isDeadCriterion(criterion)) return () => false;
  switch (criterion.field) {
    case 'amount':
      return amountCheck(criterion);
    case 'date':
      return dateCheck(criterion);
    case 'currency':
      return textCheck(criterion, (side) => (side.currency === '' ? [] : [side.currency]));
    case 'reference':
      return textCheck(criterion, (side) => side.references);
    case 'description':
      return textCheck(criterion, (side) => side.descriptions);
  }
}

/** E and I cross-multiplied to a common scale: E x Pi and I x Pe. */
function scaled(external: MatchSide, internal: MatchSide): { e: bigint; i: bigint } {
  return { e: external.amount * internal.precision, i: internal.amount * external.precision };
}

function amountCheck(criterion: MatchingCriterion): Check {
  const sameCurrency = (external: MatchSide, internal: MatchSide): boolean => external.currency !== '' && external.currency === internal.currency;
  if (criterion.operator === 'greater_than') {
    return (external, internal) => {
      if (!sameCurrency(external, internal)) return false;
      const { e, i } = scaled(external, internal);
      return e > i;
    };
  }
  if (criterion.operator === 'less_than') {
    return (external, internal) => {
      if (!sameCurrency(external, internal)) return false;
      const { e, i } = scaled(external, internal);
      return e < i;
    };
  }
  const drift = amountDrift(criterion);
  return (external, internal) => sameCurrency(external, internal) && withinDrift(external, internal, drift);
}

/** |E - I| <= drift x I, as |E Pi - I Pe| x d <= n x I Pe for drift n/d. */
export function withinDrift(external: MatchSide, internal: MatchSide, drift: Fraction): boolean {
  const { e, i } = scaled(external, internal);
  const gap = e > i ? e - i : i - e;
  return gap * drift.denominator <= drift.numerator * i;
}

function dateCheck(criterion: MatchingCriterion): Check {
  const drift = dateDriftMs(criterion);
  const within = drift === undefined ? () => true : withinMs(drift);
  switch (dateRelation(criterion.operator)) {
    case 'equals': {
      const allowed = withinMs(drift ?? 0n);
      return (external, internal) => allowed(external.date, internal.date);
    }
    case 'after':
      return (external, internal) => external.date > internal.date && within(external.date, internal.date);
    case 'before':
      return (external, internal) => external.date < internal.date && within(external.date, internal.date);
  }
}

/**
 * |a - b| <= drift, exactly. Dates are safe integers, so a difference below 2^53 is exact in a double and
 * one at or above it exceeds every drift below 2^53; a wider drift is compared in bigints.
 */
function withinMs(drift: bigint): (a: number, b: number) => boolean {
  if (drift <= BigInt(Number.MAX_SAFE_INTEGER)) {
    const allowed = Number(drift);
    return (a, b) => Math.abs(a - b) <= allowed;
  }
  return (a, b) => {
    const gap = BigInt(a) - BigInt(b);
    return (gap < 0n ? -gap : gap) <= drift;
  };
}

function textCheck(criterion: MatchingCriterion, values: (side: MatchSide) => string[]): Check {
  if (criterion.operator === 'equals') {
    return (external, internal) => {
      const theirs = values(internal);
      return values(external).some((value) => value !== '' && theirs.includes(value));
    };
  }
  const percent = containsDrift(criterion);
  return (external, internal) => {
    const theirs = values(internal).filter((value) => value !== '').map(foldCase);
    return values(external).some((value) => {
      if (value === '') return false;
      const ours = foldCase(value);
      return theirs.some((other) => ours.includes(other) || other.includes(ours) || closeEnough(ours, other, percent));
    });
  };
}

const utf8 = new TextEncoder();

/** Blnk's fuzzy half of contains: distance <= floor(longer UTF-8 length x percent / 100). */
export function closeEnough(a: string, b: string, percent: Fraction): boolean {
  if (percent.numerator === 0n) return false;
  const longer = BigInt(Math.max(utf8.encode(a).length, utf8.encode(b).length));
  const allowed = (longer * percent.numerator) / (100n * percent.denominator);
  return levenshteinWithin(Array.from(a), Array.from(b), allowed > 1_000_000n ? 1_000_000 : Number(allowed));
}

/** Whether the edit distance of two sequences of characters is at most `limit` (a band of the table). */
export function levenshteinWithin(a: string[], b: string[], limit: number): boolean {
  if (Math.abs(a.length - b.length) > limit) return false;
  if (limit >= Math.max(a.length, b.length)) return true;
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    const current = new Array<number>(b.length + 1).fill(limit + 1);
    current[0] = i;
    let best = current[0];
    const from = Math.max(1, i - limit);
    const to = Math.min(b.length, i + limit);
    for (let j = from; j <= to; j += 1) {
      const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min(substitution, (previous[j] as number) + 1, (current[j - 1] as number) + 1);
      if ((current[j] as number) < best) best = current[j] as number;
    }
    if (best > limit) return false;
    previous = current;
  }
  return (previous[b.length] as number) <= limit;
}
