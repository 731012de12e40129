// Records as clients see them: times as ISO 8601 (the zero time for "unset"), exact amounts as bigint
// digits, the display `amount` as the double nearest the exact value, derived balance totals filled in.

import {
  availableAmount,
  balanceAmount,
  inflightAmount,
  type BalanceRecord,
  type LedgerRecord,
  type SplitShare,
  type TransactionRecord,
} from '../engine/records.js';
import { preciseToAmount, preciseToDecimalText } from './amounts.js';

export const ZERO_TIME = '0001-01-01T00:00:00Z';

export function timeText(epochMs: number): string {
  return epochMs === 0 ? ZERO_TIME : new Date(epochMs).toISOString();
}

export function ledgerView(ledger: LedgerRecord): Record<string, unknown> {
  return {
    ledger_id: ledger.ledger_id,
    name: ledger.name,
    created_at: timeText(ledger.created_at),
    meta_data: ledger.meta_data,
  };
}

export function balanceView(balance: BalanceRecord): Record<string, unknown> {
  return {
    balance_id: balance.balance_id,
    ledger_id: balance.ledger_id,
    identity_id: balance.identity_id,
    indicator: balance.indicator,
    currency: balance.currency,
    balance: balanceAmount(balance),
    credit_balance: balance.credit_balance,
    debit_balance: balance.debit_balance,
    inflight_balance: inflightAmount(balance),
    inflight_credit_balance: balance.inflight_credit_balance,
    inflight_debit_balance: balance.inflight_debit_balance,
    available_balance: availableAmount(balance),
    version: balance.version,
    created_at: timeText(balance.created_at),
    meta_data: balance.meta_data,
  };
}

export function transactionView(transaction: TransactionRecord): Record<string, unknown> {
  const view: Record<string, unknown> = {
    transaction_id: transaction.transaction_id,
    parent_transaction: transaction.parent_transaction,
    source: transaction.source,
    destination: transaction.destination,
    reference: transaction.reference,
    currency: transaction.currency,
    amount: preciseToAmount(transaction.precise_amount, transaction.precision),
    amount_string: preciseToDecimalText(transaction.precise_amount, transaction.precision),
    precise_amount: transaction.precise_amount,
    precision: transaction.precision,
    description: transaction.description,
    status: transaction.status,
    hash: transaction.hash,
    allow_overdraft: transaction.allow_overdraft,
    inflight: transaction.inflight,
    skip_queue: transaction.skip_queue,
    created_at: timeText(transaction.created_at),
    scheduled_for: timeText(transaction.scheduled_for),
    inflight_expiry_date: timeText(transaction.inflight_expiry_date),
    inflight_commit_date: timeText(transaction.inflight_commit_date),
    meta_data: transaction.meta_data,
  };
  if (transaction.rejection) view.rejection = transaction.rejection;
  if (transaction.sources) view.sources = transaction.sources.map(shareView);
  if (transaction.destinations) view.destinations = transaction.destinations.map(shareView);
  if (transaction.atomic !== undefined) view.atomic = transaction.atomic;
  if (transaction.legs) view.legs = transaction.legs;
  if (transaction.batch_id !== undefined) view.batch_id = transaction.batch_id;
  if (transaction.inflight && transaction.committed_amount !== undefined) {
    view.precise_committed_amount = transaction.committed_amount;
  }
  return view;
}

function shareView(share: SplitShare): Record<string, unknown> {
  return { identifier: share.identifier, distribution: share.distribution, precise_amount: share.precise_amount };
}
