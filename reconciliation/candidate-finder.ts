// Finds, for each probe (an external record, or a group of them), the internal transactions that could
// satisfy a rule, through the indexes of the candidate source: never by comparing a probe with the whole
// ledger. For each rule the narrowest lookup it allows is used (engine/matching-rules.ts ruleAnchors):
//   reference equals         the transaction with that reference (references are unique)
//   amount equals (+ drift)  transactions whose amount lies in the band the drift allows, at each
//                            precision the currency is recorded with; with the rule's time window too,
//                            if it has one, walking whichever of the two indexes spans fewer entries
//                            for a sample of the probes (a 1% band of a busy ledger can hold thousands
//                            of transactions where an hour holds a few dozen, or the other way round)
//   a date window            transactions recorded within it
// Every candidate a rule can accept lies in its lookup, so the union over a run's rules, checked exactly
// afterwards (rule-evaluation.ts), is the same set a comparison with every transaction would give.
//
// For one_to_many the probes look up group members instead: an amount cannot find a group (its sum is
// compared, not any member's), so only the reference and date lookups are used there.
//
// Bounds: probes go out in batches of `probes_per_batch`; a batch answering more than `batch_rows_max`
// rows is split in halves, down to single probes; a probe with more than `candidates_per_record_max`
// candidates under one rule is "too broad" and reported rather than matched on a partial view.

import { ruleAnchors, type RuleAnchors } from '../engine/matching-rules.js';
import type { CandidateSource } from './candidate-source.js';
import type {
  AmountLookup,
  AmountProbe,
  DateProbe,
  InternalTransaction,
  ProbedTransaction,
  ReferenceProbe,
} from '../engine/reconciliation-records.js';
import type { MatchSide } from './match-sides.js';
import type { PreparedRule } from './rule-evaluation.js';

export interface FinderLimits {
  probes_per_batch: number;
  batch_rows_max: number;
  candidates_per_record_max: number;
}

export const DEFAULT_FINDER_LIMITS: FinderLimits = {
  probes_per_batch: 1_000,
  batch_rows_max: 50_000,
  candidates_per_record_max: 1_000,
};

/** Probes sampled to choose between an amount band and a time window, and where each count stops. */
const SAMPLE_PROBES = 16;
const SAMPLE_COUNT_CAP = 2_000;

export interface Probe {
  key: number;
  side: MatchSide;
}

export interface FoundCandidates {
  /** Probe key -> candidate transactions by id. */
  candidates: Map<number, Map<string, InternalTransaction>>;
  /** Probes for which some rule's lookup was too broad. */
  tooBroad: Set<number>;
}

export type FindMode = 'transactions' | 'group_members';

export class CandidateFinder {
  private readonly precisionsByCurrency = new Map<string, bigint[]>();

  constructor(private readonly source: CandidateSource, private readonly limits: FinderLimits = DEFAULT_FINDER_LIMITS) {}

  async find(probes: Probe[], rules: PreparedRule[], mode: FindMode): Promise<FoundCandidates> {
    const found: FoundCandidates = { candidates: new Map(), tooBroad: new Set() };
    for (const probe of probes) found.candidates.set(probe.key, new Map());
    for (const rule of rules) {
      const anchors = ruleAnchors(rule.rule);
      const perProbe = new Map<number, Map<string, InternalTransaction>>();
      const collect = (rows: ProbedTransaction[]): void => {
        for (const { probe, row } of rows) {
          let map = perProbe.get(probe);
          if (!map) perProbe.set(probe, (map = new Map()));
          map.set(row.transaction_id, row);
        }
      };
      const tooBroad = (probe: number): void => {
        found.tooBroad.add(probe);
      };
      await this.lookUp(probes, rule, anchors, mode, collect, tooBroad);
      for (const [probe, rows] of perProbe) {
        if (rows.size > this.limits.candidates_per_record_max) {
          found.tooBroad.add(probe);
          continue;
        }
        const into = found.candidates.get(probe) as Map<string, InternalTransaction>;
        for (const [id, row] of rows) into.set(id, row);
      }
    }
    return found;
  }

  private async lookUp(
    probes: Probe[],
    rule: PreparedRule,
    anchors: RuleAnchors,
    mode: FindMode,
    collect: (rows: ProbedTransaction[]) => void,
    tooBroad: (probe: number) => void,
  ): Promise<void> {
    if (anchors.reference) {
      const lookups: ReferenceProbe[] = [];
      for (const { key, side } of probes) {
        for (const reference of new Set(side.references)) if (reference !== '') lookups.push({ probe: key, reference });
      }
      await this.batched(lookups, (batch, rowsMax) => this.source.byReference(batch, rowsMax), collect, tooBroad);
      return;
    }
    if (anchors.amountDrift && mode === 'transactions') {
      const lookups = await this.amountProbes(probes, anchors);
      const through = anchors.dateWindow ? await this.narrower(lookups) : 'amount';
      await this.batched(lookups, (batch, rowsMax) => this.source.byAmount(batch, rowsMax, through), collect, tooBroad);
      return;
    }
    if (anchors.dateWindow) {
      const window = anchors.dateWindow;
      const sameCurrency = rule.rule.criteria.some((criterion) => criterion.field === 'currency' && criterion.operator === 'equals');
      const lookups: DateProbe[] = [];
      for (const { key, side } of probes) {
        if (window.fromMs > window.toMs) continue;
        if (sameCurrency && side.currency === '') continue;
        const probe: DateProbe = { probe: key, fromMs: side.date + window.fromMs, toMs: side.date + window.toMs };
        if (sameCurrency) probe.currency = side.currency;
        lookups.push(probe);
      }
      await this.batched(lookups, (batch, rowsMax) => this.source.byDate(batch, rowsMax), collect, tooBroad);
    }
    // A rule with no lookup usable in this mode finds nothing (a run refuses such rules up front).
  }

  /**
   * The amount bands of the probes: for internal amount I and external E at drift n/d, |E - I| <= n/d x I
   * means E/(1 + n/d) <= I <= E/(1 - n/d), in each precision the currency is recorded with.
   */
  private async amountProbes(probes: Probe[], anchors: RuleAnchors): Promise<AmountProbe[]> {
    const drift = anchors.amountDrift as { numerator: bigint; denominator: bigint };
    const window = anchors.dateWindow;
    const lookups: AmountProbe[] = [];
    for (const { key, side } of probes) {
      if (side.currency === '') continue;
      if (window && window.fromMs > window.toMs) continue;
      for (const precision of await this.precisions(side.currency)) {
        const scaled = side.amount * precision * drift.denominator;
        const lowDivisor = side.precision * (drift.denominator + drift.numerator);
        const probe: AmountProbe = { probe: key, currency: side.currency, precision, low: ceilDivide(scaled, lowDivisor) };
        if (drift.numerator < drift.denominator) probe.high = scaled / (side.precision * (drift.denominator - drift.numerator));
        if (probe.high !== undefined && probe.high < probe.low) continue;
        if (window) {
          probe.fromMs = side.date + window.fromMs;
          probe.toMs = side.date + window.toMs;
        }
        lookups.push(probe);
      }
    }
    return lookups;
  }

  /** Which index spans fewer entries for a sample of the lookups (spread over them). */
  private async narrower(lookups: AmountProbe[]): Promise<AmountLookup> {
    if (lookups.length === 0) return 'amount';
    const step = Math.max(1, Math.floor(lookups.length / SAMPLE_PROBES));
    const sample = lookups.filter((_, index) => index % step === 0).slice(0, SAMPLE_PROBES);
    const sizes = await this.source.bandSizes(sample, SAMPLE_COUNT_CAP);
    return sizes.time < sizes.amount ? 'time' : 'amount';
  }

  private async precisions(currency: string): Promise<bigint[]> {
    let precisions = this.precisionsByCurrency.get(currency);
    if (!precisions) {
      precisions = await this.source.precisions(currency);
      this.precisionsByCurrency.set(currency, precisions);
    }
    return precisions;
  }

  /** Runs lookups in batches, splitting a batch that answers too many rows, down to single probes. */
  private async batched<P extends { probe: number }>(
    lookups: P[],
    run: (batch: P[], rowsMax: number) => Promise<ProbedTransaction[] | undefined>,
    collect: (rows: ProbedTransaction[]) => void,
    tooBroad: (probe: number) => void,
  ): Promise<void> {
    const attempt = async (batch: P[]): Promise<void> => {
      if (batch.length === 0) return;
      const single = batch.every((lookup) => lookup.probe === (batch[0] as P).probe);
      const rows = await run(batch, single ? this.limits.candidates_per_record_max : this.limits.batch_rows_max);
      if (rows) {
        collect(rows);
        return;
      }
      if (single) {
        tooBroad((batch[0] as P).probe);
        return;
      }
      const middle = splitPoint(batch);
      await attempt(batch.slice(0, middle));
      await attempt(batch.slice(middle));
    };
    for (let start = 0; start < lookups.length; start += this.limits.probes_per_batch) {
      await attempt(lookups.slice(start, start + this.limits.probes_per_batch));
    }
  }
}

/** Where to halve a batch: between two probes, so one probe's lookups stay together. */
function splitPoint<P extends { probe: number }>(batch: P[]): number {
  const middle = Math.floor(batch.length / 2);
  for (let index = middle; index < batch.length; index += 1) {
    if ((batch[index] as P).probe !== (batch[index - 1] as P).probe) return index;
  }
  for (let index = middle; index > 0; index -= 1) {
    if ((batch[index] as P).probe !== (batch[index - 1] as P).probe) return index;
  }
  return middle;
}

function ceilDivide(numerator: bigint, denominator: bigint): bigint {
  return (numerator + denominator - 1n) / denominator;
}
