// What matching needs from the ledger's query side, declared here as matching uses it; app/ plugs in the
// SQLite index (index/reconciliation-queries.ts). Every lookup goes through an index and is bounded:
// a batch of probes answers at most `rowsMax` rows or `undefined` (more than that: the caller splits
// the batch), and groups are read only up to `membersMax` members. Only APPLIED transactions are ever
// returned.

import type { InternalGroupingField } from '../engine/reconciliation-records.js';
import type { InternalTransaction } from './match-sides.js';

export interface ReferenceProbe {
  probe: number;
  reference: string;
}

export interface AmountProbe {
  probe: number;
  currency: string;
  /** The precision of the internal transactions this band is for. */
  precision: bigint;
  /** Inclusive bounds on precise_amount; no `high` means no upper bound. */
  low: bigint;
  high?: bigint;
  /** A time window on the internal date as well, when the rule gives one (epoch ms, inclusive). */
  fromMs?: number;
  toMs?: number;
}

export interface DateProbe {
  probe: number;
  fromMs: number;
  toMs: number;
  /** Only this currency, when the rule asks for the same currency. */
  currency?: string;
}

export interface ProbedTransaction {
  probe: number;
  row: InternalTransaction;
}

/** Which index an amount lookup with a time window walks: the amount's, or the time's. */
export type AmountLookup = 'amount' | 'time';

export interface CandidateSource {
  byReference(probes: ReferenceProbe[], rowsMax: number): Promise<ProbedTransaction[] | undefined>;
  byAmount(probes: AmountProbe[], rowsMax: number, through: AmountLookup): Promise<ProbedTransaction[] | undefined>;
  /** Index entries the probes' bands and windows span (each count stopped at `cap`), summed. */
  bandSizes(probes: AmountProbe[], cap: number): Promise<{ amount: number; time: number }>;
  byDate(probes: DateProbe[], rowsMax: number): Promise<ProbedTransaction[] | undefined>;
  /** Members of each group by key; keys with more than `membersMax` transactions are only named. */
  groupMembers(field: InternalGroupingField, keys: string[], membersMax: number): Promise<{ groups: Map<string, InternalTransaction[]>; tooLarge: string[] }>;
  /** The precisions transactions in a currency have been recorded with. */
  precisions(currency: string): Promise<bigint[]>;
}
