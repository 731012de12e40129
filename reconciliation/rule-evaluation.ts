// Whether a rule holds between an external side and an internal side, exactly: amounts are compared as
// cross-multiplied bigints (an amount drift of 0.01 is the fraction 1/100, never a double), dates as
// integer milliseconds. A rule holds when all its criteria do; a run's rules are tried in the order the
// run names them, and the first that holds is the match's rule.
//
//   amount      equals: |E - I| <= drift x I (drift 0 when none); greater_than: E > I; less_than: E < I.
//               Only within one currency: an amount in another currency is a different amount.
//   currency    equals: the same code; contains: see below.
//   reference,  equals: the same text (any of a group's), not empty; contains: one contains the other,
//   description ignoring case, neither empty.
//   date        equals: |Te - Ti| <= drift (seconds, 0 when none); after: Te > Ti (by at most the drift,
//               when one is given); before: Te < Ti (likewise).

import { type Fraction } from '../engine/exact-fraction.js';
import { amountDrift, dateDriftMs, dateRelation } from '../engine/matching-rules.js';
import type { MatchingCriterion, MatchingRuleRecord } from '../engine/reconciliation-records.js';
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
  switch (criterion.field) {
    case 'amount':
      return amountCheck(criterion);
    case 'date':
      return dateCheck(criterion);
    case 'currency':
      return textCheck(criterion.operator === 'equals', (side) => (side.currency === '' ? [] : [side.currency]));
    case 'reference':
      return textCheck(criterion.operator === 'equals', (side) => side.references);
    case 'description':
      return textCheck(criterion.operator === 'equals', (side) => side.descriptions);
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
  switch (dateRelation(criterion.operator)) {
    case 'equals': {
      const allowed = drift ?? 0;
      return (external, internal) => Math.abs(external.date - internal.date) <= allowed;
    }
    case 'after':
      return (external, internal) => external.date > internal.date && (drift === undefined || external.date - internal.date <= drift);
    case 'before':
      return (external, internal) => external.date < internal.date && (drift === undefined || internal.date - external.date <= drift);
  }
}

function textCheck(equals: boolean, values: (side: MatchSide) => string[]): Check {
  if (equals) {
    return (external, internal) => {
      const theirs = values(internal);
      return values(external).some((value) => value !== '' && theirs.includes(value));
    };
  }
  return (external, internal) => {
    const theirs = values(internal).filter((value) => value !== '').map((value) => value.toLowerCase());
    return values(external).some((value) => {
      if (value === '') return false;
      const ours = value.toLowerCase();
      return theirs.some((other) => ours.includes(other) || other.includes(ours));
    });
  };
}
