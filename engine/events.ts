// Events: what the log stores. An event is the outcome of one decided command and carries every derived
// value (ids, times, full records after the change, the exact postings), so applying it needs no clock,
// no randomness and no lookups beyond the state it changes. Replaying the same events gives the same state.

import type { BalanceRecord, LedgerRecord, TransactionRecord } from './records.js';

/** Which amount of a balance a posting moves. */
export type PostingField = 'credit' | 'debit' | 'inflight_credit' | 'inflight_debit';

/** One signed change to one amount of one balance. */
export interface Posting {
  balance_id: string;
  field: PostingField;
  amount: bigint;
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
  | 'transaction.bulk';

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
}

/** A logged event with its position in the log. */
export interface LoggedEvent {
  seq: number;
  event: LedgerEvent;
}
