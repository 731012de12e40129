// Events: what the log stores. An event is the outcome of one decided command and carries every derived
// value (ids, times, full records after the change, the exact postings), so applying it needs no clock,
// no randomness and no lookups beyond the state it changes. Replaying the same events gives the same state.

import type {
  ApiKeyRecord,
  BalanceRecord,
  HookRecord,
  IdentityRecord,
  LedgerRecord,
  MetaData,
  MonitorRecord,
  PeriodRecord,
  TransactionRecord,
} from './records.js';
import type { LineageMove } from './fund-lineage.js';
import type {
  ExternalRecordsChunk,
  MatchingRuleRecord,
  ReconciliationRecord,
  ReconciliationResultsChunk,
  UploadRecord,
} from './reconciliation-records.js';

/** Which amount of a balance a posting moves. */
export type PostingField = 'credit' | 'debit' | 'inflight_credit' | 'inflight_debit';

/** One signed change to one amount of one balance. */
export interface Posting {
  balance_id: string;
  field: PostingField;
  amount: bigint;
  /**
   * When the change counts for balance history (a transaction's `effective_date`), if not when the
   * event was decided: never later than that. Balances now are moved all the same.
   */
  effective_at?: number;
}

/** Names what happened, for logs and hooks; applying an event never depends on it. */
export type EventType =
  | 'ledger.created'
  | 'ledger.updated'
  | 'balance.created'
  | 'transaction.queued'
  | 'transaction.scheduled'
  | 'transaction.applied'
  | 'transaction.inflight'
  | 'transaction.committed'
  | 'transaction.voided'
  | 'transaction.rejected'
  | 'transaction.bulk'
  | 'identity.created'
  | 'identity.updated'
  | 'identity.deleted'
  | 'metadata.updated'
  | 'api_key.created'
  | 'api_key.revoked'
  | 'api_key.used'
  | 'hook.created'
  | 'hook.updated'
  | 'hook.deleted'
  | 'matching_rule.created'
  | 'matching_rule.updated'
  | 'matching_rule.deleted'
  | 'reconciliation.uploaded'
  | 'reconciliation.started'
  | 'reconciliation.progressed'
  | 'reconciliation.results'
  | 'reconciliation.completed'
  | 'reconciliation.failed'
  | 'balance.identity_updated'
  | 'balance_monitor.created'
  | 'balance_monitor.updated'
  | 'balance_monitor.deleted'
  | 'system.error'
  | 'period.closed';

export interface LedgerEvent {
  type: EventType;
  /** When the event was decided (epoch ms). */
  at: number;
  /** Ledgers created or changed, as full records after the change. */
  ledgers?: LedgerRecord[];
  /** Balances created by this event, with zero amounts. */
  balances?: BalanceRecord[];
  /** Transactions created or changed, as full records after the change. */
  transactions?: TransactionRecord[];
  /** Amount changes; for every currency they sum to zero on each side (see ledger-state.ts). */
  postings?: Posting[];
  /**
   * New metadata of existing balances, whole (balances are otherwise changed only by postings). Written
   * by logs from before metadata changes were patches; still applied on replay.
   */
  balance_meta?: Array<{ balance_id: string; meta_data: MetaData }>;
  /** Metadata changes: each patch merged over the current metadata of the record the id names. */
  metadata_patches?: MetadataPatch[];
  /** Identities created or changed (full records), and ids of deleted ones. */
  identities?: IdentityRecord[];
  deleted_identities?: string[];
  /** API keys created or changed (full records: revocation, last use). */
  api_keys?: ApiKeyRecord[];
  /** Hooks created or changed (full records), and ids of deleted ones. */
  hooks?: HookRecord[];
  deleted_hooks?: string[];
  /** Matching rules created or changed (full records), and ids of deleted ones. */
  matching_rules?: MatchingRuleRecord[];
  deleted_matching_rules?: string[];
  /** Uploads of external records: the summaries (kept in the state) and the records in chunks (not). */
  uploads?: UploadRecord[];
  external_records?: ExternalRecordsChunk[];
  /** Reconciliation runs created or changed (full records), and chunks of a run's results (not kept in the state). */
  reconciliations?: ReconciliationRecord[];
  reconciliation_results?: ReconciliationResultsChunk[];
  /** Balances given to another identity (Blnk's PUT /balances/:id/identity). */
  balance_identities?: Array<{ balance_id: string; identity_id: string }>;
  /** Balance monitors created or changed (full records), and ids of deleted ones. */
  monitors?: MonitorRecord[];
  deleted_monitors?: string[];
  /** Changes to the tagged funds of balances that track fund lineage (fund-lineage.ts), decided with the postings. */
  lineage?: LineageMove[];
  /** Monitors whose condition this event's postings made true (engine/balance-monitors.ts); applying ignores them. */
  monitor_alerts?: MonitorAlert[];
  /**
   * How a batch recorded with `run_async` stands (Blnk announces those batches as bulk_transaction.*);
   * applying ignores it. Absent for every other batch.
   */
  batch?: BatchSummary;
  /** Failures of the server's own work after it was acknowledged (Blnk's system.error); applying ignores them. */
  system_errors?: SystemError[];
  /** Periods of ledgers closed by this event (engine/closed-periods.ts). */
  periods?: PeriodRecord[];
}

/** A batch as its request was answered: recorded whole (with the items' shared status) or cut short. */
export interface BatchSummary {
  batch_id: string;
  status: 'applied' | 'inflight' | 'failed';
  /** Items recorded. */
  transaction_count: number;
  /** Why a batch was cut short (status `failed`): the items before it stand. */
  error?: string;
}

export interface SystemError {
  message: string;
}

/** A monitor that fired, with the balance as the event leaves it. */
export interface MonitorAlert {
  monitor: MonitorRecord;
  balance: BalanceRecord;
}

/** Keys merged over the metadata of a ledger, balance, transaction or identity (engine/metadata.ts). */
export interface MetadataPatch {
  entity_id: string;
  meta_data: MetaData;
}

/** A logged event with its position in the log. */
export interface LoggedEvent {
  seq: number;
  event: LedgerEvent;
}
