// What a matching rule may say, and how a run looks its candidates up. A rule is a list of criteria, all
// of which must hold (rules of a run are OR'ed). The check here is the one place the closed sets of
// fields, operators and drifts are enforced; a rule that breaks them is refused with RECON_RULE_INVALID.
//
// Folio accepts every rule the public Blnk ledger accepts: any of its five fields with equals, contains,
// greater_than or less_than (plus before/after on dates), and a drift wherever Blnk leaves it unchecked.
// What a rule lets a run look up (ruleLookup) decides only how fast it is answered, never whether it is:
//   reference equals, an amount band, a date window   the B-tree indexes (candidate-finder.ts)
//   reference/description contains                     the trigram full-text index and a prefix walk
//   description equals                                 the index of folded descriptions
//   a criterion that never holds                       nothing: the rule finds no candidate
//   anything else                                      a scan of the applied transactions, bounded and
//                                                      reported as it goes (matcher.ts)

import { accept, refuse, type Result } from './result.js';
import { parseDecimalFraction, type Fraction } from './exact-fraction.js';
import {
  isDeadCriterion,
  MATCH_FIELDS,
  MATCH_OPERATORS,
  OPERATORS_BY_FIELD,
  RULE_CRITERIA_MAX,
  type MatchField,
  type MatchingCriterion,
  type MatchingRuleRecord,
  type MatchOperator,
  type TextField,
} from './reconciliation-records.js';

/** A rule as a client sends it, shapes checked, meaning not yet. */
export interface RuleCommand {
  name: string;
  description: string;
  criteria: Array<{ field: string; operator: string; allowable_drift?: string }>;
}

/** A rule's criteria checked, or the first thing wrong with them. */
export type RuleCheck = Result<MatchingCriterion[], { code: 'RULE_INVALID'; message: string }>;

export function checkRule(command: RuleCommand): RuleCheck {
  if (command.name.trim() === '') return refuse({ code: 'RULE_INVALID', message: 'name: must not be empty' });
  if (command.criteria.length === 0) return refuse({ code: 'RULE_INVALID', message: 'criteria: at least one criterion is required' });
  if (command.criteria.length > RULE_CRITERIA_MAX) return refuse({ code: 'RULE_INVALID', message: `criteria: at most ${RULE_CRITERIA_MAX}` });
  const criteria: MatchingCriterion[] = [];
  for (const [index, given] of command.criteria.entries()) {
    const checked = checkCriterion(given);
    if (typeof checked === 'string') return refuse({ code: 'RULE_INVALID', message: `criteria.${index}: ${checked}` });
    criteria.push(checked);
  }
  return accept(criteria);
}

/**
 * Blnk checks a drift only under equals: on amounts from 0 to 1, on dates not negative (and unbounded
 * above). Any other drift is taken as given; matching gives it the meaning the criterion has for it.
 */
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
  if (operator === 'equals' && field === 'amount') {
    if (drift.numerator < 0n || drift.numerator > drift.denominator) return 'allowable_drift for amount must be between 0 and 1 (a fraction of the internal amount: 0.01 = 1%)';
  }
  if (operator === 'equals' && field === 'date' && drift.numerator < 0n) return 'allowable_drift for date must not be negative (seconds)';
  criterion.allowable_drift = given.allowable_drift.trim();
  return criterion;
}

/** Text as `contains` and text lookups compare it: lower case (the index holds the same folding). */
export function foldCase(text: string): string {
  return text.toLowerCase();
}

/** The Levenshtein allowance of a `contains` criterion, in percent (0 when none or not positive). */
export function containsDrift(criterion: MatchingCriterion): Fraction {
  const drift = criterion.allowable_drift === undefined ? undefined : parseDecimalFraction(criterion.allowable_drift);
  if (!drift || drift.numerator <= 0n) return { numerator: 0n, denominator: 1n };
  return drift;
}

/** The amount drift of a criterion as an exact fraction (0 when none). */
export function amountDrift(criterion: MatchingCriterion): Fraction {
  if (criterion.allowable_drift === undefined) return { numerator: 0n, denominator: 1n };
  return parseDecimalFraction(criterion.allowable_drift) as Fraction;
}

/**
 * The date drift of a criterion in whole milliseconds, rounded down (dates are whole milliseconds, so
 * |Te - Ti| <= drift holds exactly when it holds for the drift rounded down); undefined when none was
 * given, or when it is not positive on before/after (Blnk ignores a drift there; Folio reads a positive
 * one as "by at most").
 */
export function dateDriftMs(criterion: MatchingCriterion): bigint | undefined {
  if (criterion.allowable_drift === undefined) return undefined;
  const drift = parseDecimalFraction(criterion.allowable_drift) as Fraction;
  if (dateRelation(criterion.operator) !== 'equals' && drift.numerator <= 0n) return undefined;
  return (drift.numerator * 1000n) / drift.denominator;
}

/** The date operators as what they ask of the external date against the internal one. */
export function dateRelation(operator: MatchOperator): 'equals' | 'after' | 'before' {
  if (operator === 'after' || operator === 'greater_than') return 'after';
  if (operator === 'before' || operator === 'less_than') return 'before';
  return 'equals';
}

/** Any two dates JavaScript can hold are closer than this: a wider window is the whole time line. */
const DATE_SPAN_MS_MAX = 2 * 8.64e15;

/** Offsets in ms from the external date: the internal date lies in [external + fromMs, external + toMs]. */
export interface DateWindow {
  fromMs: number;
  toMs: number;
}

/**
 * How a run finds a rule's candidates (see the header), the narrowest first. `mode` is what the lookup
 * finds: single transactions, or the members of groups (one_to_many), which an amount cannot find (a
 * group's sum is compared, not any member's).
 */
export type RuleLookup =
  | { kind: 'never' }
  | { kind: 'reference' }
  | { kind: 'amount'; drift: Fraction; dateWindow?: DateWindow }
  | { kind: 'date'; window: DateWindow }
  | { kind: 'text_contains'; field: TextField }
  | { kind: 'text_equals'; field: TextField }
  | { kind: 'scan' };

export function ruleLookup(rule: Pick<MatchingRuleRecord, 'criteria'>, mode: 'transactions' | 'group_members'): RuleLookup {
  const { criteria } = rule;
  if (criteria.some(isDeadCriterion)) return { kind: 'never' };
  if (criteria.some((criterion) => criterion.field === 'reference' && criterion.operator === 'equals')) return { kind: 'reference' };
  const window = dateWindowOfRule(rule);
  const amount = criteria.find((criterion) => criterion.field === 'amount' && criterion.operator === 'equals');
  if (amount && mode === 'transactions') {
    const lookup: RuleLookup = { kind: 'amount', drift: amountDrift(amount) };
    if (window) lookup.dateWindow = window;
    return lookup;
  }
  if (window) return { kind: 'date', window };
  // A contains with a Levenshtein allowance also holds for texts that contain neither way: no index finds those.
  const exactContains = (field: TextField) => criteria.some((criterion) => criterion.field === field && criterion.operator === 'contains' && containsDrift(criterion).numerator === 0n);
  if (exactContains('reference')) return { kind: 'text_contains', field: 'reference' };
  if (criteria.some((criterion) => criterion.field === 'description' && criterion.operator === 'equals')) return { kind: 'text_equals', field: 'description' };
  if (exactContains('description')) return { kind: 'text_contains', field: 'description' };
  return { kind: 'scan' };
}

/** The window every date criterion of the rule allows (their intersection), if any bounds it. */
function dateWindowOfRule(rule: Pick<MatchingRuleRecord, 'criteria'>): DateWindow | undefined {
  let window: DateWindow | undefined;
  for (const criterion of rule.criteria) {
    if (criterion.field !== 'date') continue;
    const own = dateWindowOf(criterion);
    if (own) window = window ? { fromMs: Math.max(window.fromMs, own.fromMs), toMs: Math.min(window.toMs, own.toMs) } : own;
  }
  return window;
}

export function dateWindowOf(criterion: MatchingCriterion): DateWindow | undefined {
  const driftMs = dateDriftMs(criterion);
  const drift = driftMs === undefined ? undefined : Number(driftMs > BigInt(DATE_SPAN_MS_MAX) ? BigInt(DATE_SPAN_MS_MAX) : driftMs);
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
