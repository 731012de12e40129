// The records of reconciliation: matching rules, uploads of external (bank statement) records, runs and
// their results. Amounts are exact: an external amount is a signed bigint count of the smallest unit of
// its currency with its precision beside it; a rule's allowable drift is kept as the exact decimal text
// the client sent. Times are epoch milliseconds (0 = unset).
//
// Uploads and results can hold 10,000 rows each. They travel in the log as chunks of at most
// RECONCILIATION_CHUNK_ROWS_MAX rows (one event carries a few chunks, never one event per row), are
// folded into the query index for reading, and are never held in the engine's memory: the working state
// keeps only the small records (rules, upload summaries, run records).

/** Rows per chunk of an upload or of a run's results, in the log and in the index's slices. */
export const RECONCILIATION_CHUNK_ROWS_MAX = 1_000;
/** External records per upload and per instant run (../shared/spec/interface.md 8). */
export const EXTERNAL_RECORDS_MAX = 10_000;
/** Criteria per matching rule, and rules per run: small sets, evaluated for every candidate pair. */
export const RULE_CRITERIA_MAX = 16;
export const RUN_RULES_MAX = 16;

export const MATCH_FIELDS = ['amount', 'currency', 'reference', 'description', 'date'] as const;
export type MatchField = (typeof MATCH_FIELDS)[number];

export const MATCH_OPERATORS = ['equals', 'contains', 'greater_than', 'less_than', 'before', 'after'] as const;
export type MatchOperator = (typeof MATCH_OPERATORS)[number];

/**
 * Which operators each field takes: every pairing of a field with equals, contains, greater_than and
 * less_than (the public Blnk ledger accepts all twenty, and so does Folio), plus before and after on
 * dates. On dates greater_than and less_than mean after and before. A pairing with no meaning
 * (DEAD_CRITERIA) is accepted and never holds, as in Blnk.
 */
export const OPERATORS_BY_FIELD: Record<MatchField, readonly MatchOperator[]> = {
  amount: ['equals', 'contains', 'greater_than', 'less_than'],
  currency: ['equals', 'contains', 'greater_than', 'less_than'],
  reference: ['equals', 'contains', 'greater_than', 'less_than'],
  description: ['equals', 'contains', 'greater_than', 'less_than'],
  date: ['equals', 'contains', 'before', 'after', 'greater_than', 'less_than'],
};

/** Pairings that compare nothing: a rule holding one of them never holds (Blnk: "fail closed"). */
export function isDeadCriterion(criterion: Pick<MatchingCriterion, 'field' | 'operator'>): boolean {
  switch (criterion.field) {
    case 'amount':
    case 'date':
      return criterion.operator === 'contains';
    case 'currency':
    case 'reference':
    case 'description':
      return criterion.operator === 'greater_than' || criterion.operator === 'less_than';
  }
}

/** One condition of a rule, comparing the external side with the internal side. */
export interface MatchingCriterion {
  field: MatchField;
  operator: MatchOperator;
  /**
   * Exact decimal text, as the client sent it. For `amount` with `equals`: a fraction of the internal
   * amount, 0 to 1. For `date`: seconds (equals: either way; before/after: by at most that much).
   * For `contains` on text: the Levenshtein allowance in percent of the longer text, as Blnk has it.
   * Elsewhere it is kept and has no effect (Blnk ignores it there too). Absent means none.
   */
  allowable_drift?: string;
}

export interface MatchingRuleRecord {
  rule_id: string;
  name: string;
  description: string;
  criteria: MatchingCriterion[];
  created_at: number;
  updated_at: number;
}

/** One line of a statement, as uploaded and converted. */
export interface ExternalRecord {
  id: string;
  /** Signed count of the currency's smallest unit (a debit on a statement may be negative). */
  amount: bigint;
  /** 10^(minor units of the currency), as the upload converted the amount with it. */
  precision: bigint;
  currency: string;
  reference: string;
  description: string;
  date: number;
}

export type UploadKind = 'file' | 'instant';

export interface UploadRecord {
  upload_id: string;
  source: string;
  record_count: number;
  kind: UploadKind;
  created_at: number;
}

/** Records of one upload, in order, starting at `first_position` (0-based across the upload). */
export interface ExternalRecordsChunk {
  upload_id: string;
  first_position: number;
  records: ExternalRecord[];
}

export const STRATEGIES = ['one_to_one', 'one_to_many', 'many_to_one'] as const;
export type ReconciliationStrategy = (typeof STRATEGIES)[number];

/**
 * What `grouping_criteria` may name. one_to_many groups internal transactions by one of their fields
 * (Blnk's list, plus `batch_id` and Blnk's documented `description`; members are found through an index
 * of the query side: see docs/decisions-recon.md); many_to_one groups the external records of the run by
 * one of theirs (`date` groups by UTC calendar day; `source` by the upload's source, so all of them).
 */
export const INTERNAL_GROUPING_FIELDS = [
  'parent_transaction', 'batch_id', 'reference', 'source', 'destination', 'description', 'transaction_id', 'currency', 'status', 'created_at',
] as const;
export type InternalGroupingField = (typeof INTERNAL_GROUPING_FIELDS)[number];
export const EXTERNAL_GROUPING_FIELDS = ['id', 'reference', 'description', 'currency', 'amount', 'date', 'source'] as const;
export type ExternalGroupingField = (typeof EXTERNAL_GROUPING_FIELDS)[number];

export type ReconciliationStatus = 'started' | 'in_progress' | 'completed' | 'failed';

export interface ReconciliationRecord {
  reconciliation_id: string;
  upload_id: string;
  /** The upload's source, kept with the run so runs can be searched by it. */
  source: string;
  strategy: ReconciliationStrategy;
  /** '' for one_to_one. */
  grouping_criteria: string;
  matching_rule_ids: string[];
  is_dry_run: boolean;
  status: ReconciliationStatus;
  started_at: number;
  completed_at: number;
  matched_transactions: number;
  unmatched_transactions: number;
  /** External records looked at so far, of `total_count`. */
  processed_count: number;
  total_count: number;
  /** Why a failed run failed; '' otherwise. */
  failure_reason: string;
  /** Times the run was started, a resume after a restart included. */
  attempts: number;
}

/** Why an external record found no partner. */
export const UNMATCHED_REASONS = [
  'no_candidate', 'already_matched', 'ambiguous', 'too_many_candidates', 'mixed_currency',
] as const;
export type UnmatchedReason = (typeof UNMATCHED_REASONS)[number];

/** One external record and the internal transaction(s) it was matched with. */
export interface ReconciliationMatch {
  /** Position of the external record in its upload. */
  position: number;
  external_id: string;
  internal_ids: string[];
  rule_id: string;
  /**
   * external - internal (sums for groups), exactly, as a count of 1/difference_precision units: the
   * least common multiple of the two sides' precisions.
   */
  amount_difference: bigint;
  difference_precision: bigint;
  /** external date - internal date (the earliest of a group). */
  time_difference_ms: number;
}

export interface UnmatchedExternal {
  position: number;
  external_id: string;
  reason: UnmatchedReason;
}

/** A slice of a run's results, in the log and in the index. */
export interface ReconciliationResultsChunk {
  reconciliation_id: string;
  matches: ReconciliationMatch[];
  unmatched: UnmatchedExternal[];
}

// ---- the candidate lookups: what matching (reconciliation/) asks of the query index (index/) ----

/** An APPLIED transaction as matching reads it from the query index. */
export interface InternalTransaction {
  transaction_id: string;
  parent_transaction: string;
  batch_id: string;
  source: string;
  destination: string;
  reference: string;
  description: string;
  currency: string;
  precise_amount: bigint;
  precision: bigint;
  created_at: number;
  /**
   * An exchange's other leg (engine/exchange.ts): the destination's currency and amount, which an
   * external record in that currency is compared with (reconciliation/match-sides.ts). Absent otherwise.
   */
  exchange_leg?: { currency: string; precise_amount: bigint; precision: bigint };
}

/** A candidate found for one probe (`probe` is the caller's number for it). */
export interface ProbedTransaction {
  probe: number;
  row: InternalTransaction;
}

export interface ReferenceProbe {
  probe: number;
  reference: string;
}

export interface AmountProbe {
  probe: number;
  currency: string;
  /** The precision of the internal transactions this band is for. */
  precision: bigint;
  /** Inclusive bounds on precise_amount at that precision; no `high` means no upper bound. */
  low: bigint;
  high?: bigint;
  /** A time window on created_at as well, when the rule gives one (epoch ms, inclusive). */
  fromMs?: number;
  toMs?: number;
}

export interface DateProbe {
  probe: number;
  fromMs: number;
  toMs: number;
  /** Only transactions in this currency, when the rule asks for the same currency. */
  currency?: string;
}

/** Which index an amount lookup with a time window walks: the amount's, or the time's. */
export type AmountLookup = 'amount' | 'time';

/** The text fields a `contains` (or a description `equals`) looks candidates up by. */
export type TextField = 'reference' | 'description';

/** A text lookup: `text` is already folded (matching-rules.ts foldCase), never empty. */
export interface TextProbe {
  probe: number;
  text: string;
}

/** Where a scan of the applied transactions has got to: after the transaction with this row key. */
export interface ScanPage {
  rows: InternalTransaction[];
  /** Pass back for the next page; undefined when there is none. */
  next?: number;
}
