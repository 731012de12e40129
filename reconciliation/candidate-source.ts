// What matching needs from the ledger's query side, declared here as matching uses it; app/ plugs in the
// SQLite index (index/reconciliation-queries.ts). Every lookup goes through an index and is bounded:
// a batch of probes answers at most `rowsMax` rows or `undefined` (more than that: the caller splits
// the batch), and groups are read only up to `membersMax` members. Only APPLIED transactions are ever
// returned.

import type {
  AmountLookup,
  AmountProbe,
  DateProbe,
  InternalGroupingField,
  InternalTransaction,
  ProbedTransaction,
  ReferenceProbe,
} from '../engine/reconciliation-records.js';

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
