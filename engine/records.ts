// The records the ledger keeps. Times are epoch milliseconds decided by the injected clock (0 means
// "unset"); amounts are bigint counts of the smallest unit. The HTTP edge turns these into the wire shapes.

import type { RoundingRule } from './exchange-rate.js';
import type { AllocationStrategy, FundShare } from './fund-allocation.js';
import type { Precondition } from './precondition.js';
import type { Rejection } from './rejections.js';

export type MetaData = Record<string, unknown>;

/**
 * The metadata of records created without any, shared by all of them. Metadata is never changed in
 * place (an update replaces the object), and freezing makes any attempt fail loudly; sharing it spares
 * a million auto-created balances a million empty objects.
 */
export const EMPTY_META: MetaData = Object.freeze({}) as MetaData;

export const GENERAL_LEDGER_ID = 'general_ledger_id';

const TRANSACTION_ID_PREFIX = 'txn_';
const GENERATED_REFERENCE_PREFIX = 'ref_';

/**
 * The reference Folio gives a transaction recorded without one: `ref_` and the same UUID as its id.
 * Being derived from the id, it needs no index of its own: the lookups find it through the id (see
 * lookups/lmdb-transaction-store.ts), which spares an index entry for most transactions.
 */
export function generatedReference(transactionId: string): string {
  return GENERATED_REFERENCE_PREFIX + transactionId.slice(TRANSACTION_ID_PREFIX.length);
}

/** The id a reference would belong to if Folio generated it, or undefined when it cannot be one. */
export function idOfGeneratedReference(reference: string): string | undefined {
  return reference.startsWith(GENERATED_REFERENCE_PREFIX) ? TRANSACTION_ID_PREFIX + reference.slice(GENERATED_REFERENCE_PREFIX.length) : undefined;
}

/**
 * Whether the record's reference is the one generated from its id. Compared in place, character by
 * character, rather than by building the generated reference: this runs for every transaction recorded.
 */
export function hasGeneratedReference(record: { transaction_id: string; reference: string }): boolean {
  const id = record.transaction_id;
  const reference = record.reference;
  const tail = id.length - TRANSACTION_ID_PREFIX.length;
  if (reference.length !== GENERATED_REFERENCE_PREFIX.length + tail) return false;
  if (!id.startsWith(TRANSACTION_ID_PREFIX) || !reference.startsWith(GENERATED_REFERENCE_PREFIX)) return false;
  for (let index = 0; index < tail; index += 1) {
    if (reference.charCodeAt(GENERATED_REFERENCE_PREFIX.length + index) !== id.charCodeAt(TRANSACTION_ID_PREFIX.length + index)) return false;
  }
  return true;
}

export interface LedgerRecord {
  ledger_id: string;
  name: string;
  created_at: number;
  meta_data: MetaData;
}

/**
 * A closed period of a ledger (engine/closed-periods.ts): nothing dated at or before `closes_at` may move
 * its balances any more. `sealed_seq` is the last event logged before the close, `sealed_hash` the checksum
 * (hex) of the log record ending there: the position of the log's checksum chain the close seals.
 */
export interface PeriodRecord {
  period_id: string;
  ledger_id: string;
  closes_at: number;
  sealed_seq: number;
  sealed_hash: string;
  created_at: number;
}

export interface BalanceRecord {
  balance_id: string;
  ledger_id: string;
  identity_id: string;
  /** The `@name` of an internal balance, or a caller-chosen label; '' when none. */
  indicator: string;
  currency: string;
  credit_balance: bigint;
  debit_balance: bigint;
  inflight_credit_balance: bigint;
  inflight_debit_balance: bigint;
  /** Increases by one with every change to the amounts. */
  version: number;
  created_at: number;
  meta_data: MetaData;
  /** Set (true) on a balance that tracks fund lineage (fund-lineage.ts); absent on every other. */
  track_fund_lineage?: boolean;
  /** How its debits draw on tagged funds, when not FIFO (Blnk's default, which absent means). */
  allocation_strategy?: AllocationStrategy;
}

export type TransactionStatus = 'QUEUED' | 'APPLIED' | 'INFLIGHT' | 'VOID' | 'REJECTED' | 'SCHEDULED';

/** What a derived transaction does to its `parent_transaction`. */
export type TransactionAction = 'commit' | 'void' | 'refund';

/** One side's share of a split transaction, as requested and as computed. */
export interface SplitShare {
  /** The balance as the caller named it (id or `@name`). */
  identifier: string;
  /** The resolved balance id. */
  balance_id: string;
  /** The requested share as text: a fixed amount, `<n>%`, or `left` (a precise share as its digits). */
  distribution: string;
  /** The exact amount this share came to. */
  precise_amount: bigint;
}


/**
 * The optional fields of a transaction record, in the order a new record gets them (newTransaction).
 * The log's decoder adds them back in the same order, so a record read from the log has the same keys
 * in the same order as the one recorded.
 */
export const OPTIONAL_TRANSACTION_FIELDS = [
  'batch_id', 'committed_amount', 'rejection', 'sources', 'destinations', 'atomic', 'legs', 'action', 'effective_date',
  'overdraft_limit', 'preconditions', 'fund_allocation', 'lineage_provider', 'exchange',
] as const satisfies ReadonlyArray<keyof TransactionRecord>;

export interface TransactionRecord {
  transaction_id: string;
  parent_transaction: string;
  /** Resolved balance ids (an `@name` given by the caller is resolved before recording). */
  source: string;
  destination: string;
  reference: string;
  currency: string;
  precise_amount: bigint;
  precision: bigint;
  description: string;
  status: TransactionStatus;
  /** SHA-256 hex over the core details; see transaction-hash.ts. */
  hash: string;
  allow_overdraft: boolean;
  inflight: boolean;
  skip_queue: boolean;
  created_at: number;
  inflight_expiry_date: number;
  inflight_commit_date: number;
  scheduled_for: number;
  meta_data: MetaData;
  /** Why a REJECTED transaction was refused. */
  rejection?: Rejection;
  /** Split transactions: the shares on each side (a plain side leaves these undefined). */
  sources?: SplitShare[];
  destinations?: SplitShare[];
  /** Split and bulk: all-or-nothing. */
  atomic?: boolean;
  /** Split parents, once processed: the ids of the leg transactions that move the money. */
  legs?: string[];
  /** Set on a transaction created by an action on its parent (commit or void of a hold, a refund). */
  action?: TransactionAction;
  /** Holds: how much has been committed so far. */
  committed_amount?: bigint;
  /** Transactions recorded by one bulk request share its id. */
  batch_id?: string;
  /**
   * When the money moved for the books (epoch ms), if the client dated it back; never after
   * `created_at`. Balance history counts the transaction at this time; without it, at `created_at`.
   */
  effective_date?: number;
  /**
   * How far below zero the source may go, in the smallest unit (Blnk's `overdraft_limit` times the
   * precision); absent when the request set none. See posting-draft.ts checkFunds.
   */
  overdraft_limit?: bigint;
  /**
   * What must hold when the transaction is carried out (preconditions.ts), as the request gave them;
   * kept so a queued or scheduled one is checked when its turn comes.
   */
  preconditions?: Precondition[];
  /**
   * A debit of a balance that tracks fund lineage: which providers' tagged funds it drew on and how much
   * of each, in the order drawn (a hold: what it reserved; a commit: what it settled). Blnk's
   * BLNK_FUND_ALLOCATION. Decided by the engine (decide-lineage.ts), never taken from a request.
   */
  fund_allocation?: FundShare[];
  /** A tagged credit into a balance that tracks lineage from one that does not: the provider, as decided. */
  lineage_provider?: string;
  /**
   * An exchange between currencies (exchange.ts): the rate, the destination's currency, precision and
   * amount (a commit or void of an exchange hold: its part). Absent on every other transaction.
   */
  exchange?: ExchangeTerms;
}

/** What a create asks of an exchange (commands.ts; engine/exchange.ts): the rate and the destination's currency and precision. */
export interface ExchangeRequest {
  /** The rate as the transaction shows it: the caller's decimal text, or `numerator/denominator`. */
  rate: string;
  /** The rate in lowest terms: destination units per source unit, in major units. */
  rate_numerator: bigint;
  rate_denominator: bigint;
  destination_currency: string;
  destination_precision: bigint;
  /** How an amount that does not convert to a whole smallest unit is rounded; absent: it is refused. */
  rounding?: RoundingRule;
}

/** What an exchange's record keeps: the request and the destination amount it came to. */
export interface ExchangeTerms extends ExchangeRequest {
  /** For a hold's commit or void: the part of the hold's destination amount it settles or releases. */
  destination_precise_amount: bigint;
}

/** Split parents carry shares instead of moving money themselves; their legs do the moving. */
export function isSplit(record: TransactionRecord): boolean {
  return record.sources !== undefined || record.destinations !== undefined;
}

/** The balance whose mailbox a pending transaction waits in: its (first) source. */
/** The balances a transaction draws from: its source, or each source share's balance. */
export function sourceBalancesOf(record: TransactionRecord): string[] {
  return record.sources ? record.sources.map((share) => share.balance_id) : [record.source];
}

export function mailboxBalanceOf(record: TransactionRecord): string {
  return record.source !== '' ? record.source : (record.sources?.[0]?.balance_id ?? '');
}

/** What is still held by an inflight transaction. */
export function heldAmount(record: TransactionRecord): bigint {
  return record.precise_amount - (record.committed_amount ?? 0n);
}

/** The four running totals of a balance, which every derived amount is computed from. */
export type BalanceTotals = Pick<BalanceRecord, 'credit_balance' | 'debit_balance' | 'inflight_credit_balance' | 'inflight_debit_balance'>;

export function balanceAmount(balance: BalanceTotals): bigint {
  return balance.credit_balance - balance.debit_balance;
}

export function inflightAmount(balance: BalanceTotals): bigint {
  return balance.inflight_credit_balance - balance.inflight_debit_balance;
}

/** What the balance can still send: its balance less what outgoing holds have reserved. */
export function availableAmount(balance: BalanceTotals): bigint {
  return balanceAmount(balance) - balance.inflight_debit_balance;
}

export type IdentityType = 'individual' | 'organization';

export interface IdentityRecord {
  identity_id: string;
  identity_type: IdentityType;
  organization_name: string;
  first_name: string;
  last_name: string;
  other_names: string;
  gender: string;
  /** Date of birth, epoch ms (0 = unset). */
  dob: number;
  email_address: string;
  phone_number: string;
  nationality: string;
  category: string;
  street: string;
  city: string;
  state: string;
  country: string;
  post_code: string;
  meta_data: MetaData;
  created_at: number;
}

/** The identity fields a client sets (everything but the id and creation time). */
export type IdentityFields = Omit<IdentityRecord, 'identity_id' | 'created_at'>;

export interface ApiKeyRecord {
  api_key_id: string;
  name: string;
  owner_id: string;
  /** `resource:action` strings. */
  scopes: string[];
  expires_at: number;
  created_at: number;
  /** Last time the key authenticated a request, recorded in batches (0 = never). */
  last_used_at: number;
  is_revoked: boolean;
  /** SHA-256 (hex) of the key's secret part; the secret itself is never stored. */
  secret_hash: string;
  /**
   * The key that created this one, '' when the master key did (and on records from before keys were
   * tied to their creator). Revoking a key revokes every key it created, down the line.
   */
  created_by?: string;
  /**
   * The key's own request rate (a token bucket, http/access/rate-buckets.ts), set when it was made;
   * absent on keys made without one, which take the server's default (none unless configured).
   */
  rate_limit?: ApiKeyRateLimit;
}

/** A token bucket: refilled at `requests_per_second`, holding at most `burst` requests; whole numbers. */
export interface ApiKeyRateLimit {
  requests_per_second: number;
  burst: number;
}

export type MonitorField =
  | 'balance' | 'credit_balance' | 'debit_balance' | 'inflight_balance' | 'inflight_credit_balance' | 'inflight_debit_balance';
export type MonitorOperator = '>' | '<' | '>=' | '<=' | '=' | '==' | '!=';

/** What a balance monitor watches: `field operator precise_value`, the value given with its precision. */
export interface MonitorCondition {
  field: MonitorField;
  operator: MonitorOperator;
  /** The threshold in the smallest unit: the client's value times its precision, exactly. */
  precise_value: bigint;
  precision: bigint;
}

/** A balance monitor (engine/balance-monitors.ts). */
export interface MonitorRecord {
  monitor_id: string;
  balance_id: string;
  description: string;
  /** Kept for Blnk clients that send it; notifications go to the server's webhook (../shared/spec/decisions.md). */
  call_back_url: string;
  condition: MonitorCondition;
  created_at: number;
}

export type HookType = 'PRE_TRANSACTION' | 'POST_TRANSACTION';

export interface HookRecord {
  hook_id: string;
  name: string;
  url: string;
  type: HookType;
  active: boolean;
  /** Seconds per delivery attempt. */
  timeout: number;
  /** Further attempts after a failed delivery. */
  retry_count: number;
  created_at: number;
  /**
   * The hook's own signing secret, sealed by the edge (hooks/signing-secrets.ts): the engine only
   * carries it. Absent on hooks registered before hooks had secrets of their own.
   */
  signing_secret_sealed?: string;
}
