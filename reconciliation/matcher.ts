// One reconciliation run's matching, for the three strategies:
//   one_to_one   each external record against single transactions;
//   many_to_one  external records grouped by `grouping_criteria` (their own field), each group as one
//                record against single transactions: every member is matched to the same transaction;
//   one_to_many  each external record against groups of transactions sharing `grouping_criteria` (a
//                field of theirs), found through members that the rule's reference or date lookup
//                reaches, then read whole through the index of that field.
// Candidates come from the index (candidate-finder.ts), rules are checked exactly (rule-evaluation.ts),
// pairs are assigned best first (pair-assignment.ts). Every external record ends up in exactly one of
// the matches or the unmatched, in upload order.
//
// Bounds (docs/decisions-recon.md): a group of transactions is read only up to `group_members_max`
// members, and a record whose candidate groups include a larger one is reported `too_many_candidates`;
// external groups are bounded by the upload itself (10,000 records).

import { lcm } from '../engine/exact-fraction.js';
import type {
  InternalTransaction,
  ExternalGroupingField,
  ExternalRecord,
  InternalGroupingField,
  ReconciliationMatch,
  ReconciliationStrategy,
  UnmatchedExternal,
  UnmatchedReason,
  MatchingRuleRecord,
} from '../engine/reconciliation-records.js';
import type { RunResults } from '../engine/decide-reconciliation.js';
import type { CandidateSource } from './candidate-source.js';
import { CandidateFinder, DEFAULT_FINDER_LIMITS, type FinderLimits, type Probe } from './candidate-finder.js';
import {
  externalGroupSide,
  externalSide,
  internalGroupSide,
  internalSide,
  type MatchSide,
} from './match-sides.js';
import { amountGap, assignPairs, type CandidatePair } from './pair-assignment.js';
import { firstHoldingRule, prepareRule, type PreparedRule } from './rule-evaluation.js';

export interface MatcherLimits extends FinderLimits {
  /** Transactions a group may have under one_to_many; larger groups are not read. */
  group_members_max: number;
}

export const DEFAULT_MATCHER_LIMITS: MatcherLimits = { ...DEFAULT_FINDER_LIMITS, group_members_max: 1_000 };

export interface MatchRequest {
  strategy: ReconciliationStrategy;
  grouping_criteria: string;
  rules: MatchingRuleRecord[];
  /** The external records, in upload order (position = index). */
  records: ExternalRecord[];
}

/** How many external records have been looked at; called after each batch of probes. */
export type ProgressListener = (processed: number) => void | Promise<void>;

/** A probe: one external record, or one group of them, with the positions it stands for. */
interface ExternalProbe extends Probe {
  positions: number[];
  /** Set when the probe cannot be matched whatever the candidates (a group mixing currencies). */
  refusal?: UnmatchedReason;
}

export async function matchRecords(
  source: CandidateSource,
  request: MatchRequest,
  onProgress: ProgressListener = () => undefined,
  limits: MatcherLimits = DEFAULT_MATCHER_LIMITS,
): Promise<RunResults> {
  const rules = request.rules.map(prepareRule);
  const finder = new CandidateFinder(source, limits);
  const probes = request.strategy === 'many_to_one'
    ? externalGroups(request.records, request.grouping_criteria as ExternalGroupingField)
    : request.records.map((record, position): ExternalProbe => ({ key: position, side: externalSide(record), positions: [position] }));
  const pairs: CandidatePair[] = [];
  const tooBroad = new Set<number>();
  let processed = 0;
  for (let start = 0; start < probes.length; start += limits.probes_per_batch) {
    const batch = probes.slice(start, start + limits.probes_per_batch).filter((probe) => probe.refusal === undefined);
    const found = request.strategy === 'one_to_many'
      ? await groupPairs(finder, source, batch, rules, request.grouping_criteria as InternalGroupingField, limits)
      : await singlePairs(finder, batch, rules);
    pairs.push(...found.pairs);
    for (const key of found.tooBroad) tooBroad.add(key);
    for (const probe of probes.slice(start, start + limits.probes_per_batch)) processed += probe.positions.length;
    await onProgress(processed);
  }
  const assignment = assignPairs(pairs, { refuseTies: request.strategy !== 'one_to_one' });
  return results(probes, request.records, assignment, tooBroad);
}

async function singlePairs(finder: CandidateFinder, probes: ExternalProbe[], rules: PreparedRule[]): Promise<{ pairs: CandidatePair[]; tooBroad: Set<number> }> {
  const found = await finder.find(probes, rules, 'transactions');
  const pairs: CandidatePair[] = [];
  for (const probe of probes) {
    if (found.tooBroad.has(probe.key)) continue;
    for (const transaction of (found.candidates.get(probe.key) ?? new Map<string, InternalTransaction>()).values()) {
      const pair = pairFor(probe, rules, internalSide(transaction), transaction.transaction_id, [transaction.transaction_id]);
      if (pair) pairs.push(pair);
    }
  }
  return { pairs, tooBroad: found.tooBroad };
}

/** one_to_many: members found by lookup name their groups; each group is read whole and compared as one. */
async function groupPairs(
  finder: CandidateFinder,
  source: CandidateSource,
  probes: ExternalProbe[],
  rules: PreparedRule[],
  field: InternalGroupingField,
  limits: MatcherLimits,
): Promise<{ pairs: CandidatePair[]; tooBroad: Set<number> }> {
  const found = await finder.find(probes, rules, 'group_members');
  const keysByProbe = new Map<number, Set<string>>();
  const allKeys = new Set<string>();
  for (const probe of probes) {
    const keys = new Set<string>();
    for (const member of (found.candidates.get(probe.key) ?? new Map<string, InternalTransaction>()).values()) {
      if (member[field] !== '') keys.add(member[field]);
    }
    keysByProbe.set(probe.key, keys);
    for (const key of keys) allKeys.add(key);
  }
  const groups = new Map<string, InternalTransaction[]>();
  const tooLarge = new Set<string>();
  const keys = [...allKeys];
  for (let start = 0; start < keys.length; start += limits.probes_per_batch) {
    const read = await source.groupMembers(field, keys.slice(start, start + limits.probes_per_batch), limits.group_members_max);
    for (const [key, members] of read.groups) groups.set(key, members);
    for (const key of read.tooLarge) tooLarge.add(key);
  }
  const pairs: CandidatePair[] = [];
  const tooBroad = new Set(found.tooBroad);
  for (const probe of probes) {
    if (tooBroad.has(probe.key)) continue;
    const probeKeys = keysByProbe.get(probe.key) as Set<string>;
    if ([...probeKeys].some((key) => tooLarge.has(key))) {
      tooBroad.add(probe.key);
      continue;
    }
    for (const key of probeKeys) {
      const members = groups.get(key);
      if (!members || members.length === 0) continue;
      const ids = members.map((member) => member.transaction_id).sort();
      const pair = pairFor(probe, rules, internalGroupSide(members), ids[0] as string, ids);
      if (pair) pairs.push(pair);
    }
  }
  return { pairs, tooBroad };
}

function pairFor(probe: ExternalProbe, rules: PreparedRule[], internal: MatchSide, candidateKey: string, internalIds: string[]): CandidatePair | undefined {
  const rule = firstHoldingRule(rules, probe.side, internal);
  if (!rule) return undefined;
  return {
    probe: probe.key,
    candidateKey,
    internalIds,
    ruleId: rule.rule.rule_id,
    amountGap: amountGap(probe.side, internal),
    timeGap: Math.abs(probe.side.date - internal.date),
    external: probe.side,
    internal,
  };
}

/** many_to_one: the records grouped by a field of theirs, groups in order of their first record. */
function externalGroups(records: ExternalRecord[], field: ExternalGroupingField): ExternalProbe[] {
  const positionsByKey = new Map<string, number[]>();
  records.forEach((record, position) => {
    const key = externalGroupKey(record, field);
    const positions = positionsByKey.get(key);
    if (positions) positions.push(position);
    else positionsByKey.set(key, [position]);
  });
  const probes: ExternalProbe[] = [];
  for (const positions of positionsByKey.values()) {
    const members = positions.map((position) => records[position] as ExternalRecord);
    const side = externalGroupSide(members);
    const probe: ExternalProbe = { key: positions[0] as number, side, positions };
    if (side.currency === '') probe.refusal = 'mixed_currency';
    probes.push(probe);
  }
  return probes;
}

export function externalGroupKey(record: ExternalRecord, field: ExternalGroupingField): string {
  switch (field) {
    case 'id': return record.id;
    case 'reference': return record.reference;
    case 'description': return record.description;
    case 'currency': return record.currency;
    case 'amount': return `${record.amount}/${record.precision}`;
    // A day's records: the calendar day of the date, in UTC.
    case 'date': return new Date(record.date).toISOString().slice(0, 10);
  }
}

function results(
  probes: ExternalProbe[],
  records: ExternalRecord[],
  assignment: ReturnType<typeof assignPairs>,
  tooBroad: Set<number>,
): RunResults {
  const matches: ReconciliationMatch[] = [];
  const unmatched: UnmatchedExternal[] = [];
  for (const probe of probes) {
    const pair = assignment.assigned.get(probe.key);
    for (const position of probe.positions) {
      const record = records[position] as ExternalRecord;
      if (pair) matches.push(matchOf(position, record.id, pair));
      else unmatched.push({ position, external_id: record.id, reason: reasonFor(probe, assignment, tooBroad) });
    }
  }
  matches.sort((a, b) => a.position - b.position);
  unmatched.sort((a, b) => a.position - b.position);
  return { matches, unmatched };
}

function reasonFor(probe: ExternalProbe, assignment: ReturnType<typeof assignPairs>, tooBroad: Set<number>): UnmatchedReason {
  if (probe.refusal) return probe.refusal;
  if (tooBroad.has(probe.key)) return 'too_many_candidates';
  if (assignment.ambiguous.has(probe.key)) return 'ambiguous';
  if (assignment.hadPairs.has(probe.key)) return 'already_matched';
  return 'no_candidate';
}

/** The exact differences: external - internal in units of the two precisions' least common multiple. */
function matchOf(position: number, externalId: string, pair: CandidatePair): ReconciliationMatch {
  const precision = lcm(pair.external.precision, pair.internal.precision);
  const external = pair.external.amount * (precision / pair.external.precision);
  const internal = pair.internal.amount * (precision / pair.internal.precision);
  return {
    position,
    external_id: externalId,
    internal_ids: pair.internalIds,
    rule_id: pair.ruleId,
    amount_difference: external - internal,
    difference_precision: precision,
    time_difference_ms: pair.external.date - pair.internal.date,
  };
}
