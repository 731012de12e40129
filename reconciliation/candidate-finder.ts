// Finds, for each probe (an external record, or a group of them), the internal transactions that could
// satisfy a rule, through the indexes of the candidate source: never by comparing a probe with the whole
// ledger. For each rule the narrowest lookup it allows is used (engine/matching-rules.ts ruleLookup):
//   reference equals         the transaction with that reference (references are unique)
//   amount equals (+ drift)  transactions whose amount lies in the band the drift allows, at each
//                            precision the currency is recorded with; with the rule's time window too,
//                            if it has one, walking whichever of the two indexes spans fewer entries
//                            for a sample of the probes (a 1% band of a busy ledger can hold thousands
//                            of transactions where an hour holds a few dozen, or the other way round)
//   a date window            transactions recorded within it
//   reference or description the texts containing the probe's (trigram index) and the texts the
//   contains                 probe's contains (prefix walk), both folded as the check folds them
//   description equals       the folded descriptions equal to the probe's
// Every candidate a rule can accept lies in its lookup, so the union over a run's rules, checked exactly
// afterwards (rule-evaluation.ts), is the same set a comparison with every transaction would give. A rule
// that never holds finds nothing; one no index narrows is answered by the matcher's scan (matcher.ts).
//
// For one_to_many the probes look up group members instead: an amount cannot find a group (its sum is
// compared, not any member's), so that lookup is not used there; a text or a date finds a member.
//
// Bounds: probes go out in batches of `probes_per_batch`; a batch answering more than `batch_rows_max`
// rows is split in halves, down to single probes; a probe with more than `candidates_per_record_max`
// candidates under one rule is "too broad" and reported rather than matched on a partial view. A needle
// of one or two characters is looked for in at most `short_text_scan_rows_max` texts; the walks of a
// run take at most `text_walk_steps_max` index seeks, past which the run fails with that reason.

import { foldCase, ruleLookup, type RuleLookup } from '../engine/matching-rules.js';
import type { CandidateSource } from './candidate-source.js';
import type {
  AmountLookup,
  AmountProbe,
  DateProbe,
  InternalTransaction,
  ProbedTransaction,
  ReferenceProbe,
  TextField,
  TextProbe,
} from '../engine/reconciliation-records.js';
import type { MatchSide } from './match-sides.js';
import type { PreparedRule } from './rule-evaluation.js';

export interface FinderLimits {
  probes_per_batch: number;
  batch_rows_max: number;
  candidates_per_record_max: number;
  /** Folded texts read through for a `contains` needle of one or two characters. */
  short_text_scan_rows_max: number;
  /** Index seeks of a run's prefix walks (texts a statement's text contains). */
  text_walk_steps_max: number;
}

export const DEFAULT_FINDER_LIMITS: FinderLimits = {
  probes_per_batch: 1_000,
  batch_rows_max: 50_000,
  candidates_per_record_max: 1_000,
  short_text_scan_rows_max: 100_000,
  text_walk_steps_max: 20_000_000,
};

/** A run stopped at one of its bounds: the message is the run's failure reason. */
export class RunBoundExceeded extends Error {}

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
  private readonly walkSteps: { left: number };

  constructor(private readonly source: CandidateSource, private readonly limits: FinderLimits = DEFAULT_FINDER_LIMITS) {
    this.walkSteps = { left: limits.text_walk_steps_max };
  }

  async find(probes: Probe[], rules: PreparedRule[], mode: FindMode): Promise<FoundCandidates> {
    const found: FoundCandidates = { candidates: new Map(), tooBroad: new Set() };
    for (const probe of probes) found.candidates.set(probe.key, new Map());
    for (const rule of rules) {
      const lookup = ruleLookup(rule.rule, mode);
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
      await this.lookUp(probes, rule, lookup, collect, tooBroad);
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
    lookup: RuleLookup,
    collect: (rows: ProbedTransaction[]) => void,
    tooBroad: (probe: number) => void,
  ): Promise<void> {
    switch (lookup.kind) {
      case 'reference': {
        const lookups: ReferenceProbe[] = [];
        for (const { key, side } of probes) {
          for (const reference of new Set(side.references)) if (reference !== '') lookups.push({ probe: key, reference });
        }
        await this.batched(lookups, (batch, rowsMax) => this.source.byReference(batch, rowsMax), collect, tooBroad);
        return;
      }
      case 'amount': {
        const lookups = await this.amountProbes(probes, lookup);
        const through = lookup.dateWindow ? await this.narrower(lookups) : 'amount';
        await this.batched(lookups, (batch, rowsMax) => this.source.byAmount(batch, rowsMax, through), collect, tooBroad);
        return;
      }
      case 'date': {
        const { window } = lookup;
        if (window.fromMs > window.toMs) return;
        const sameCurrency = rule.rule.criteria.some((criterion) => criterion.field === 'currency' && criterion.operator === 'equals');
        const lookups: DateProbe[] = [];
        for (const { key, side } of probes) {
          if (sameCurrency && side.currency === '') continue;
          const probe: DateProbe = { probe: key, fromMs: clampTime(side.date + window.fromMs), toMs: clampTime(side.date + window.toMs) };
          if (sameCurrency) probe.currency = side.currency;
          lookups.push(probe);
        }
        await this.batched(lookups, (batch, rowsMax) => this.source.byDate(batch, rowsMax), collect, tooBroad);
        return;
      }
      case 'text_contains': {
        const lookups = textProbes(probes, lookup.field);
        await this.batched(lookups, (batch, rowsMax) => this.source.byTextContaining(lookup.field, batch, rowsMax, this.limits.short_text_scan_rows_max), collect, tooBroad);
        await this.batched(lookups, async (batch, rowsMax) => {
          const rows = await this.source.byTextWithin(lookup.field, batch, rowsMax, this.walkSteps);
          if (this.walkSteps.left < 0) {
            throw new RunBoundExceeded(`rule ${rule.rule.rule_id}: finding the ${lookup.field}s the statement's texts contain took more than `
              + `${this.limits.text_walk_steps_max.toLocaleString('en-US')} index seeks (text_walk_steps_max); split the statement into smaller uploads`);
          }
          return rows;
        }, collect, tooBroad);
        return;
      }
      case 'text_equals': {
        const lookups = textProbes(probes, lookup.field);
        await this.batched(lookups, (batch, rowsMax) => this.source.byFoldedText(lookup.field, batch, rowsMax), collect, tooBroad);
        return;
      }
      case 'never':
      case 'scan':
        // Nothing to look up: the rule never holds, or the matcher scans for it (matcher.ts).
        return;
    }
  }

  /**
   * The amount bands of the probes: for internal amount I and external E at drift n/d, |E - I| <= n/d x I
   * means E/(1 + n/d) <= I <= E/(1 - n/d), in each precision the currency is recorded with.
   */
  private async amountProbes(probes: Probe[], lookup: Extract<RuleLookup, { kind: 'amount' }>): Promise<AmountProbe[]> {
    const { drift } = lookup;
    const window = lookup.dateWindow;
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
          probe.fromMs = clampTime(side.date + window.fromMs);
          probe.toMs = clampTime(side.date + window.toMs);
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

/** The text lookups of the probes: each distinct, non-empty text of the field, folded as the check folds it. */
function textProbes(probes: Probe[], field: TextField): TextProbe[] {
  const lookups: TextProbe[] = [];
  for (const { key, side } of probes) {
    const texts = field === 'reference' ? side.references : side.descriptions;
    for (const text of new Set(texts.filter((value) => value !== '').map(foldCase))) lookups.push({ probe: key, text });
  }
  return lookups;
}

/** Times the index holds lie within a JavaScript date's range; a window reaching past it stops there. */
const TIME_LIMIT_MS = 8.64e15;

function clampTime(ms: number): number {
  return Math.min(TIME_LIMIT_MS, Math.max(-TIME_LIMIT_MS, ms));
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
