// The shapes of the API's answers the console reads (docs/api-reference.md and /openapi.json have them
// all). Amounts are `Exact`: a number when it is a safe integer, else the text of its digits (api.ts).

export type Exact = number | string;

export interface Ledger {
  ledger_id: string;
  name: string;
  created_at: string;
  meta_data: Record<string, unknown> | null;
}

export interface Balance {
  balance_id: string;
  ledger_id: string;
  identity_id: string;
  indicator: string;
  currency: string;
  balance: Exact;
  credit_balance: Exact;
  debit_balance: Exact;
  inflight_balance: Exact;
  inflight_credit_balance: Exact;
  inflight_debit_balance: Exact;
  available_balance: Exact;
  queued_debit_balance?: Exact;
  queued_credit_balance?: Exact;
  version: number;
  created_at: string;
  meta_data: Record<string, unknown> | null;
  track_fund_lineage: boolean;
  allocation_strategy: string;
}

export interface Share {
  identifier: string;
  distribution: string;
  precise_amount: Exact;
}

export interface Transaction {
  transaction_id: string;
  parent_transaction: string;
  source: string;
  destination: string;
  reference: string;
  currency: string;
  precise_amount: Exact;
  precision: Exact;
  description: string;
  status: string;
  hash: string;
  allow_overdraft: boolean;
  inflight: boolean;
  skip_queue: boolean;
  created_at: string;
  scheduled_for: string;
  effective_date: string;
  inflight_expiry_date: string;
  inflight_commit_date: string;
  meta_data: Record<string, unknown> | null;
  rejection?: { code: string; reason: string; message: string };
  sources?: Share[];
  destinations?: Share[];
  atomic?: boolean;
  legs?: string[];
  batch_id?: string;
  precise_committed_amount?: Exact;
}

export interface FilterAnswer<T> {
  data: T[];
  total_count?: number;
}

export interface SearchAnswer<T> {
  found: number;
  out_of: number;
  page: number;
  hits: Array<{ document: T }>;
}

export interface BalanceChange {
  at: string;
  version: number;
  balance: Exact;
  credit_balance: Exact;
  debit_balance: Exact;
  inflight_balance: Exact;
  available_balance: Exact;
}

export interface BalanceHistory {
  balance_id: string;
  currency: string;
  changes: BalanceChange[];
  next_cursor: string | null;
}

export interface BalanceLineage {
  balance_id: string;
  total_with_lineage: Exact;
  providers: Array<{ provider: string; amount: Exact; available: Exact; spent: Exact; inflight_amount: Exact; inflight_spent: Exact }>;
}

export interface TransactionLineage {
  transaction_id: string;
  fund_allocation?: Array<{ provider: string; amount: Exact }>;
}

/** A log record in the checksum chain, and the seq of the transaction's event in it. */
export interface ChainRecordPosition {
  seq: number;
  record_first_seq: number;
  record_last_seq: number;
  record_checksum: string;
  prev_checksum: string;
}

/** GET /transactions/:id/log-position. */
export interface TransactionLogPosition extends ChainRecordPosition {
  transaction_id: string;
  last_changed: ChainRecordPosition | null;
}

export interface Monitor {
  monitor_id: string;
  balance_id: string;
  description: string;
  call_back_url: string;
  condition: { field: string; operator: string; precision: Exact; precise_value: Exact };
  created_at: string;
}

export interface Upload {
  upload_id: string;
  source: string;
  record_count: number;
  created_at: string;
}

export interface Reconciliation {
  reconciliation_id: string;
  upload_id: string;
  source: string;
  status: string;
  strategy: string;
  grouping_criteria: string;
  matching_rule_ids: string[];
  matched_transactions: number;
  unmatched_transactions: number;
  processed_count: number;
  total_count: number;
  is_dry_run: boolean;
  started_at: string;
  completed_at: string;
  failure_reason?: string;
}

export interface MatchingRule {
  rule_id: string;
  name: string;
  description: string;
  criteria: Array<{ field: string; operator: string; allowable_drift?: number | string }>;
}

export interface ExternalRecord {
  id: string;
  precise_amount: Exact;
  precision: Exact;
  currency: string;
  reference: string;
  description: string;
  date: string;
}

export interface Match {
  external_transaction_id: string;
  internal_transaction_ids: string[];
  rule_id: string;
  precise_amount_difference: Exact;
  difference_precision: Exact;
  time_difference_seconds: number;
}

export interface Unmatched {
  external_transaction_id: string;
  reason: string;
  record: ExternalRecord;
}

export interface ResultsPage<T> {
  total_count: number;
  offset: number;
  limit: number;
  data: T[];
}

export interface Health {
  status: string;
  version: string;
  role: 'leader' | 'standby' | 'single';
  term: number;
  applied_seq: number;
  leader?: { name: string; url: string };
  lag_ms?: number;
}

export interface ReindexStatus {
  status: string;
  index_checkpoint_seq: number;
  index_lag_events: number;
  index_lag_seconds: number;
  phase: string;
  finished_at?: string;
  error?: string;
}

export interface GroupNode {
  name: string;
  role: string;
  term: number;
  applied_seq: number;
  behind_events: number;
  lag_ms: number | null;
  url: string;
  reported_ms_ago: number;
  silent: boolean;
}

export interface Inspection {
  role: string;
  term: number;
  applied_seq: number;
  node?: string;
  phase?: string;
  lease?: { term: number; holder: string; url: string; expires_in_ms: number };
  lag_percentiles_ms?: { p50: number; p99: number; max: number; samples: number };
  group?: { lease: { term: number; holder: string; url: string; expires_in_ms: number }; log_end_seq: number; nodes: GroupNode[] };
  group_error?: string;
}

export interface Snapshot {
  seq: number;
  file: string;
  size_bytes: number;
  state_hash: string;
  created_at: number;
}

export interface Hook {
  hook_id: string;
  name: string;
  url: string;
  type: string;
  active: boolean;
  timeout: number;
  retry_count: number;
}

export interface HookDelivery {
  event_id: string;
  event: string;
  transaction_id: string;
  hook_type: string;
  seq: number;
  status: string;
  attempts: number;
  retries: number;
  last_attempt_at: string;
  next_attempt_at: string;
  last_failure: string;
}
