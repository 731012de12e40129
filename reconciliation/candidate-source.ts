// What matching needs from the ledger's query side, declared here as matching uses it; runtime/ plugs in the
// SQLite index (index/reconciliation-queries.ts). Every lookup goes through an index and is bounded:
// a batch of probes answers at most `rowsMax` rows or `undefined` (more than that: the caller splits
// the batch), and groups are read only up to `membersMax` members. The one read that is not a lookup,
// the scan a rule no index narrows is answered by, comes a page at a time and is bounded by its caller
// (matcher.ts). Only APPLIED transactions are ever returned.

import type {
  AmountLookup,
  AmountProbe,
  DateProbe,
  InternalGroupingField,
  InternalTransaction,
  ProbedTransaction,
  ReferenceProbe,
  ScanPage,
  TextField,
  TextProbe,
} from '../engine/reconciliation-records.js';

export interface CandidateSource {
  byReference(probes: ReferenceProbe[], rowsMax: number): Promise<ProbedTransaction[] | undefined>;
  byAmount(probes: AmountProbe[], rowsMax: number, through: AmountLookup): Promise<ProbedTransaction[] | undefined>;
  /** Index entries the probes' bands and windows span (each count stopped at `cap`), summed. */
  bandSizes(probes: AmountProbe[], cap: number): Promise<{ amount: number; time: number }>;
  byDate(probes: DateProbe[], rowsMax: number): Promise<ProbedTransaction[] | undefined>;
  /** Members of each group by key; keys with more than `membersMax` transactions are only named. */
  groupMembers(field: InternalGroupingField, keys: string[], membersMax: number): Promise<{ groups: Map<string, InternalTransaction[]>; tooLarge: string[] }>;
  /**
   * Transactions whose folded text contains the probe's (the trigram index); a needle shorter than three
   * characters is looked for by reading the folded texts through, only while they number at most
   * `shortScanRowsMax` (`undefined` past that).
   */
  byTextContaining(field: TextField, probes: TextProbe[], rowsMax: number, shortScanRowsMax: number): Promise<ProbedTransaction[] | undefined>;
  /** Transactions whose folded text the probe's contains (a prefix walk), within `stepsBudget.left` index seeks. */
  byTextWithin(field: TextField, probes: TextProbe[], rowsMax: number, stepsBudget: { left: number }): Promise<ProbedTransaction[] | undefined>;
  /** Transactions whose folded text is the probe's. */
  byFoldedText(field: TextField, probes: TextProbe[], rowsMax: number): Promise<ProbedTransaction[] | undefined>;
  /** A page of the applied transactions, in a fixed order, after the position `after` (0 for the first). */
  scanApplied(after: number, limit: number): Promise<ScanPage>;
  /** How many applied transactions a scan reads. */
  appliedCount(): Promise<number>;
  /** The precisions transactions in a currency have been recorded with. */
  precisions(currency: string): Promise<bigint[]>;
}
