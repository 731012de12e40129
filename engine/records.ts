// The records the ledger keeps. Times are epoch milliseconds decided by the injected clock (0 means
// "unset"); amounts are bigint counts of the smallest unit. The HTTP edge turns these into the wire shapes.

export type MetaData = Record<string, unknown>;

export const GENERAL_LEDGER_ID = 'general_ledger_id';

export interface LedgerRecord {
  ledger_id: string;
  name: string;
  created_at: number;
  meta_data: MetaData;
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
}

export type TransactionStatus = 'QUEUED' | 'APPLIED' | 'INFLIGHT' | 'VOID' | 'REJECTED' | 'SCHEDULED';

export interface RejectionInfo {
  code: string;
  reason: string;
  message: string;
}

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
  rejection?: RejectionInfo;
}

export function balanceAmount(balance: BalanceRecord): bigint {
  return balance.credit_balance - balance.debit_balance;
}

export function inflightAmount(balance: BalanceRecord): bigint {
  return balance.inflight_credit_balance - balance.inflight_debit_balance;
}

/** What the balance can still send: its balance less what outgoing holds have reserved. */
export function availableAmount(balance: BalanceRecord): bigint {
  return balanceAmount(balance) - balance.inflight_debit_balance;
}
