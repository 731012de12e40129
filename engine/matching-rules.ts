// What a matching rule may say, and what it lets a run look up. A rule is a list of criteria, all of
// which must hold (rules of a run are OR'ed). The check here is the one place the closed sets of fields,
// operators and drifts are enforced; a rule that breaks them is refused with RECON_RULE_INVALID.
//
// A rule must also narrow the search: a run never compares every external record with every ledger
// transaction, it looks candidates up through indexes (the anchors below), so every rule needs at least
// one criterion an index can answer: `reference` equals, `amount` equals (with or without drift), or
// `date` equals, or before/after with a drift (a bounded time window).

import { parseDecimalFraction, type Fraction } from './exact-fraction.js';
import {
  MATCH_FIELDS,
  MATCH_OPERATORS,
  OPERATORS_BY_FIELD,
  RULE_CRITERIA_MAX,
  type MatchField,
  type MatchingCriterion,
  type MatchingRuleRecord,
  type MatchOperator,
  type ReconciliationStrategy,
} from './reconciliation-records.js';

/** The widest date drift: ten years of seconds. */
export const DATE_DRIFT_SECONDS_MAX = 10 * 366 * 24 * 3600;

/** A rule as a client sends it, shapes checked, meaning not yet. */
export interface RuleCommand {
  name: string;
  description: string;
  criteria: Array<{ field: string; operator: string; allowable_drift?: string }>;
}

export type RuleCheck = { ok: true; criteria: MatchingCriterion[] } | { ok: false; message: string };

export function checkRule(command: RuleCommand): RuleCheck {
  if (command.name.trim() === '') return { ok: false, message: 'name: must not be empty' };
  if (command.criteria.length === 0) return { ok: false, message: 'criteria: at least one criterion is required' };
  if (command.criteria.length > RULE_CRITERIA_MAX) return { ok: false, message: `criteria: at most ${RULE_CRITERIA_MAX}` };
  const criteria: MatchingCriterion[] = [];
  for (const [index, given] of command.criteria.entries()) {
    const checked = checkCriterion(given);
    if (typeof checked === 'string') return { ok: false, message: `criteria.${index}: ${checked}` };
    criteria.push(checked);
  }
  const rule = { criteria } as MatchingRuleRecord;
  if (!hasAnchor(ruleAnchors(rule))) {
    return {
      ok: false,
      message: 'criteria: a rule needs one criterion that narrows the candidates: reference equals, amount equals, '
        + 'date equals, or date before/after with an allowable_drift',
    };
  }
  return { ok: true, criteria };
}

function checkCriterion(given: { field: string; operator: string; allowable_drift?: string }): MatchingCriterion | string {
  if (!(MATCH_FIELDS as readonly string[]).includes(given.field)) return `field must be one of ${MATCH_FIELDS.join(', ')}`;
  const field = given.field as MatchField;
  if (!(MATCH_OPERATORS as readonly string[]).includes(given.operator)) return `operator must be one of ${MATCH_OPERATORS.join(', ')}`;
  const operator = given.operator as MatchOperator;
  if (!OPERATORS_BY_FIELD[field].includes(operator)) return `operator ${operator} does not apply to ${field} (use ${OPERATORS_BY_FIELD[field].join(', ')})`;
  const criterion: MatchingCriterion = { field, operator };
  if (given.allowable_drift === undefined) return criterion;
  const drift = parseDecimalFraction(given.allowable_drift);
  if (!drift) return 'allowable_drift must be a decimal number';
  if (drift.numerator < 0n) return 'allowable_drift must not be negative';
  if (field === 'amount') {
    if (operator !== 'equals') return 'allowable_drift on amount applies to equals only';
    if (drift.numerator > drift.denominator) return 'allowable_drift for amount is a fraction of the internal amount, from 0 to 1 (0.01 = 1%)';
  } else if (field === 'date') {
    if (drift.numerator > BigInt(DATE_DRIFT_SECONDS_MAX) * drift.denominator) return `allowable_drift for date is in seconds, at most ${DATE_DRIFT_SECONDS_MAX}`;
    if ((drift.numerator * 1000n) % drift.denominator !== 0n) return 'allowable_drift for date is in seconds with at most 3 decimals';
  } else {
    return 'allowable_drift applies to amount and date only';
  }
  criterion.allowable_drift = given.allowable_drift.trim();
  return criterion;
}

/** The amount drift of a criterion as an exact fraction (0 when none). */
export function amountDrift(criterion: MatchingCriterion): Fraction {
  if (criterion.allowable_drift === undefined) return { numerator: 0n, denominator: 1n };
  return parseDecimalFraction(criterion.allowable_drift) as Fraction;
}

/** The date drift of a criterion in milliseconds (0 when none); undefined when none was given. */
export function dateDriftMs(criterion: MatchingCriterion): number | undefined {
  if (criterion.allowable_drift === undefined) return undefined;
  const drift = parseDecimalFraction(criterion.allowable_drift) as Fraction;
  return Number((drift.numerator * 1000n) / drift.denominator);
}

/** The date operators as what they ask of the external date against the internal one. */
export function dateRelation(operator: MatchOperator): 'equals' | 'after' | 'before' {
  if (operator === 'after' || operator === 'greater_than') return 'after';
  if (operator === 'before' || operator === 'less_than') return 'before';
  return 'equals';
}

/**
 * What an index can find for a rule: internal transactions by reference, by amount within the drift,
 * or by date within a window around the external date (offsets in ms: the internal date lies in
 * [external + fromMs, external + toMs]).
 */
export interface RuleAnchors {
  reference: boolean;
  amountDrift?: Fraction;
  dateWindow?: { fromMs: number; toMs: number };
}

export function ruleAnchors(rule: Pick<MatchingRuleRecord, 'criteria'>): RuleAnchors {
  const anchors: RuleAnchors = { reference: false };
  for (const criterion of rule.criteria) {
    if (criterion.field === 'reference' && criterion.operator === 'equals') anchors.reference = true;
    if (criterion.field === 'amount' && criterion.operator === 'equals' && anchors.amountDrift === undefined) {
      anchors.amountDrift = amountDrift(criterion);
    }
    if (criterion.field === 'date') {
      const window = dateWindowOf(criterion);
      if (window) anchors.dateWindow = anchors.dateWindow ? intersect(anchors.dateWindow, window) : window;
    }
  }
  return anchors;
}

function dateWindowOf(criterion: MatchingCriterion): { fromMs: number; toMs: number } | undefined {
  const drift = dateDriftMs(criterion);
  switch (dateRelation(criterion.operator)) {
    case 'equals':
      return { fromMs: -(drift ?? 0), toMs: drift ?? 0 };
    case 'after':
      // The external date is after the internal one, by at most the drift.
      return drift === undefined ? undefined : { fromMs: -drift, toMs: -1 };
    case 'before':
      return drift === undefined ? undefined : { fromMs: 1, toMs: drift };
  }
}

function intersect(a: { fromMs: number; toMs: number }, b: { fromMs: number; toMs: number }): { fromMs: number; toMs: number } {
  return { fromMs: Math.max(a.fromMs, b.fromMs), toMs: Math.min(a.toMs, b.toMs) };
}

export function hasAnchor(anchors: RuleAnchors): boolean {
  return anchors.reference || anchors.amountDrift !== undefined || anchors.dateWindow !== undefined;
}

/**
 * Why a rule cannot serve a strategy, if it cannot. one_to_many compares an external record with the
 * sum of a group, so an amount cannot find the group: its members are found by reference or by date
 * (the group's date is its earliest member's).
 */
export function strategyRefusal(rule: MatchingRuleRecord, strategy: ReconciliationStrategy): string | undefined {
  if (strategy !== 'one_to_many') return undefined;
  const anchors = ruleAnchors(rule);
  if (anchors.reference || anchors.dateWindow !== undefined) return undefined;
  return `rule ${rule.rule_id} cannot find candidates for one_to_many: the members of a group are found by reference (equals) or by date (equals, or before/after with an allowable_drift)`;
}
