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
// A rule no index can narrow (matching-rules.ts ruleLookup: say `currency equals` alone, or `amount
// greater_than`) is answered by a scan: the applied transactions are read a page at a time and every
// probe is compared with every one of them (one_to_many: the groups they make are). It is exact, it
// reports progress page by page, and it is bounded: past `scan_pair_checks_max` comparisons (or, for
// one_to_many, `scan_group_rows_max` transactions held as groups) the run stops and fails with that
// reason; it is never refused up front.
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
import { ruleLookup } from '../engine/matching-rules.js';
import { CandidateFinder, DEFAULT_FINDER_LIMITS, RunBoundExceeded, type FinderLimits, type Probe } from './candidate-finder.js';
import {
  externalGroupSide,
  externalSide,
  internalGroupSide,
  internalSide,
  type MatchSide,
} from './match-sides.js';
import { amountGap, assignPairs, type CandidatePair } from './pair-assignment.js';
import { firstHoldingRule, prepareRule, ruleHolds, type PreparedRule } from './rule-evaluation.js';

export interface MatcherLimits extends FinderLimits {
  /** Transactions a group may have under one_to_many; larger groups are not read. */
  group_members_max: number;
  /** Applied transactions a scan reads at a time. */
  scan_page_rows: number;
  /** Comparisons of a probe with a transaction (or group) a run's scan may make: about ten seconds of a core. */
  scan_pair_checks_max: number;
  /** Transactions a one_to_many scan may hold as groups (their memory). */
  scan_group_rows_max: number;
}

export const DEFAULT_MATCHER_LIMITS: MatcherLimits = {
  ...DEFAULT_FINDER_LIMITS,
  group_members_max: 1_000,
  scan_page_rows: 2_000,
  scan_pair_checks_max: 20_000_000,
  scan_group_rows_max: 200_000,
};

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
  // Progress only ever goes up: the scan reports its share first, then the batches theirs.
  let reported = 0;
  const report = async (processed: number): Promise<void> => {
    if (processed <= reported) return;
    reported = processed;
    await onProgress(processed);
  };
  const mode = request.strategy === 'one_to_many' ? 'group_members' : 'transactions';
  const scanRules = rules.filter((rule) => ruleLookup(rule.rule, mode).kind === 'scan');
  const scan = new Scan(source, probes.filter((probe) => probe.refusal === undefined), scanRules, limits, request.records.length, report);
  const scanned = scanRules.length === 0 ? undefined
    : request.strategy === 'one_to_many' ? await scan.groups(request.grouping_criteria as InternalGroupingField) : await scan.singles();
  const pairs: CandidatePair[] = [];
  const tooBroad = new Set<number>();
  let processed = 0;
  for (let start = 0; start < probes.length; start += limits.probes_per_batch) {
    const batch = probes.slice(start, start + limits.probes_per_batch).filter((probe) => probe.refusal === undefined);
    const found = request.strategy === 'one_to_many'
      ? await groupPairs(finder, source, batch, rules, request.grouping_criteria as InternalGroupingField, limits, scanned as ScannedGroups | undefined)
      : await singlePairs(finder, batch, rules, scanned as ScannedSingles | undefined);
    pairs.push(...found.pairs);
    for (const key of found.tooBroad) tooBroad.add(key);
    for (const probe of probes.slice(start, start + limits.probes_per_batch)) processed += probe.positions.length;
    await report(processed);
  }
  const assignment = assignPairs(pairs, { refuseTies: request.strategy !== 'one_to_one' });
  return results(probes, request.records, assignment, tooBroad);
}

/** What a scan found for single transactions: per probe, the transactions a scanned rule holds for. */
interface ScannedSingles {
  candidates: Map<number, Map<string, InternalTransaction>>;
  tooBroad: Set<number>;
}

/** What a one_to_many scan found: every group of applied transactions, by key. */
interface ScannedGroups {
  groups: Map<string, InternalTransaction[]>;
}

/** The scan of the applied transactions for rules no index narrows (see the header). */
class Scan {
  private checks = 0;

  constructor(
    private readonly source: CandidateSource,
    private readonly probes: ExternalProbe[],
    private readonly rules: PreparedRule[],
    private readonly limits: MatcherLimits,
    private readonly records: number,
    private readonly report: (processed: number) => Promise<void>,
  ) {}

  /** Reads every page of applied transactions, reporting progress as the share of the ledger read (up to 90%). */
  private async pages(onPage: (rows: InternalTransaction[]) => void): Promise<void> {
    const total = Math.max(1, await this.source.appliedCount());
    let read = 0;
    let after = 0;
    for (;;) {
      const page = await this.source.scanApplied(after, this.limits.scan_page_rows);
      onPage(page.rows);
      read += page.rows.length;
      await this.report(Math.floor((this.records * 0.9 * Math.min(read, total)) / total));
      if (page.next === undefined) return;
      after = page.next;
    }
  }

  private count(comparisons: number, what: string): void {
    this.checks += comparisons;
    if (this.checks <= this.limits.scan_pair_checks_max) return;
    const names = this.rules.map((rule) => rule.rule.rule_id).join(', ');
    throw new RunBoundExceeded(`matching rule ${names} has no criterion an index can narrow (reference, amount equals, a date window, `
      + `description equals, or a contains without a drift), so it is answered by comparing the records with every ${what}; `
      + `that passed ${this.limits.scan_pair_checks_max.toLocaleString('en-US')} comparisons (scan_pair_checks_max)`);
  }

  async singles(): Promise<ScannedSingles> {
    const candidates = new Map<number, Map<string, InternalTransaction>>();
    const tooBroad = new Set<number>();
    await this.pages((rows) => {
      const active = this.probes.filter((probe) => !tooBroad.has(probe.key));
      this.count(rows.length * active.length, 'applied transaction');
      for (const row of rows) {
        const internal = internalSide(row);
        for (const probe of active) {
          // An exchange is compared by the leg in the record's currency (match-sides.ts).
          const side = row.exchange_leg === undefined ? internal : internalSide(row, probe.side.currency);
          if (tooBroad.has(probe.key) || !this.rules.some((rule) => ruleHolds(rule, probe.side, side))) continue;
          let found = candidates.get(probe.key);
          if (!found) candidates.set(probe.key, (found = new Map()));
          found.set(row.transaction_id, row);
          if (found.size > this.limits.candidates_per_record_max) {
            tooBroad.add(probe.key);
            candidates.delete(probe.key);
          }
        }
      }
    });
    return { candidates, tooBroad };
  }

  async groups(field: InternalGroupingField): Promise<ScannedGroups> {
    const groups = new Map<string, InternalTransaction[]>();
    let held = 0;
    await this.pages((rows) => {
      held += rows.length;
      if (held > this.limits.scan_group_rows_max) {
        throw new RunBoundExceeded(`a one_to_many run whose rules no index can narrow reads every group of the ledger; it holds more than `
          + `${this.limits.scan_group_rows_max.toLocaleString('en-US')} applied transactions (scan_group_rows_max)`);
      }
      for (const row of rows) {
        const key = groupKeyOf(row, field);
        if (key === '') continue;
        const members = groups.get(key);
        if (members) members.push(row);
        else groups.set(key, [row]);
      }
    });
    this.count(groups.size * this.probes.length, 'group of transactions');
    return { groups };
  }
}

/** A transaction's group under one_to_many ('' when it belongs to none, as with no batch). */
export function groupKeyOf(transaction: InternalTransaction, field: InternalGroupingField): string {
  switch (field) {
    case 'status': return 'APPLIED';
    case 'created_at': return String(transaction.created_at);
    default: return transaction[field];
  }
}

async function singlePairs(
  finder: CandidateFinder,
  probes: ExternalProbe[],
  rules: PreparedRule[],
  scanned: ScannedSingles | undefined,
): Promise<{ pairs: CandidatePair[]; tooBroad: Set<number> }> {
  const found = await finder.find(probes, rules, 'transactions');
  const pairs: CandidatePair[] = [];
  for (const probe of probes) {
    if (scanned?.tooBroad.has(probe.key)) found.tooBroad.add(probe.key);
    if (found.tooBroad.has(probe.key)) continue;
    const candidates = new Map(found.candidates.get(probe.key) ?? []);
    for (const [id, transaction] of scanned?.candidates.get(probe.key) ?? []) candidates.set(id, transaction);
    for (const transaction of candidates.values()) {
      const pair = pairFor(probe, rules, internalSide(transaction, probe.side.currency), transaction.transaction_id, [transaction.transaction_id]);
      if (pair) pairs.push(pair);
    }
  }
  return { pairs, tooBroad: found.tooBroad };
}

/**
 * one_to_many: members found by lookup name their groups; each group is read whole and compared as one.
 * After a scan every group is at hand, and each probe is compared with all of them.
 */
async function groupPairs(
  finder: CandidateFinder,
  source: CandidateSource,
  probes: ExternalProbe[],
  rules: PreparedRule[],
  field: InternalGroupingField,
  limits: MatcherLimits,
  scanned: ScannedGroups | undefined,
): Promise<{ pairs: CandidatePair[]; tooBroad: Set<number> }> {
  if (scanned) return scannedGroupPairs(probes, rules, scanned, limits);
  const found = await finder.find(probes, rules, 'group_members');
  const keysByProbe = new Map<number, Set<string>>();
  const allKeys = new Set<string>();
  for (const probe of probes) {
    const keys = new Set<string>();
    for (const member of (found.candidates.get(probe.key) ?? new Map<string, InternalTransaction>()).values()) {
      const key = groupKeyOf(member, field);
      if (key !== '') keys.add(key);
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

function scannedGroupPairs(probes: ExternalProbe[], rules: PreparedRule[], scanned: ScannedGroups, limits: MatcherLimits): { pairs: CandidatePair[]; tooBroad: Set<number> } {
  const pairs: CandidatePair[] = [];
  const tooBroad = new Set<number>();
  const sides = [...scanned.groups.values()].map((members) => {
    const ids = members.map((member) => member.transaction_id).sort();
    return { side: internalGroupSide(members), ids };
  });
  for (const probe of probes) {
    const held: CandidatePair[] = [];
    for (const { side, ids } of sides) {
      const pair = pairFor(probe, rules, side, ids[0] as string, ids);
      if (pair) held.push(pair);
    }
    if (held.length > limits.candidates_per_record_max) tooBroad.add(probe.key);
    else pairs.push(...held);
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
    // Every record of a run comes from one upload, of one source: they make one group.
    case 'source': return '';
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
