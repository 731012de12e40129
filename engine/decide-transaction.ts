// Deciding a new transaction: resolve both balances (creating `@name` balances on first use), enforce
// reference uniqueness with idempotent retries, and either queue the transaction behind its source
// balance or, with skip_queue, check funds and apply it at once. Pure: reads state, returns an event.

import type { CreateTransactionCommand } from './commands.js';
import { canonicalJson } from './canonical-json.js';
import type { LedgerEvent, Posting } from './events.js';
import type { LedgerState } from './ledger-state.js';
import type { IdSource } from './ports.js';
import { availableAmount, GENERAL_LEDGER_ID, type BalanceRecord, type TransactionRecord } from './records.js';
import { reject, type Rejection } from './rejections.js';
import { transactionHash } from './transaction-hash.js';

export interface DecideContext {
  now: number;
  ids: IdSource;
}

export type TransactionDecision =
  | { kind: 'event'; event: LedgerEvent; transaction: TransactionRecord }
  | { kind: 'existing'; transaction: TransactionRecord }
  | { kind: 'rejected'; rejection: Rejection };

export function decideCreateTransaction(
  state: LedgerState,
  command: CreateTransactionCommand,
  context: DecideContext,
): TransactionDecision {
  if (command.reference !== '') {
    const existingId = state.transactions.idForReference(command.reference);
    if (existingId !== undefined) return replayOrConflict(state, existingId, command);
  }
  const created: BalanceRecord[] = [];
  const source = resolveBalance(state, command.source, command.currency, context, created);
  if ('code' in source) return { kind: 'rejected', rejection: source };
  const destination = resolveBalance(state, command.destination, command.currency, context, created);
  if ('code' in destination) return { kind: 'rejected', rejection: destination };
  if (source.balance_id === destination.balance_id) {
    return rejected(reject('TXN_SAME_SOURCE_DESTINATION', 'source and destination are the same balance'));
  }
  const transactionId = context.ids.next('txn');
  const reference = command.reference !== '' ? command.reference : context.ids.next('ref');
  const base: TransactionRecord = {
    transaction_id: transactionId,
    parent_transaction: '',
    source: source.balance_id,
    destination: destination.balance_id,
    reference,
    currency: command.currency,
    precise_amount: command.precise_amount,
    precision: command.precision,
    description: command.description,
    status: 'QUEUED',
    hash: transactionHash({
      precise_amount: command.precise_amount,
      reference,
      currency: command.currency,
      source: source.balance_id,
      destination: destination.balance_id,
    }),
    allow_overdraft: command.allow_overdraft,
    inflight: false,
    skip_queue: command.skip_queue,
    created_at: context.now,
    inflight_expiry_date: 0,
    inflight_commit_date: 0,
    scheduled_for: 0,
    meta_data: command.meta_data,
  };
  const balances = created.length > 0 ? created : undefined;
  if (!command.skip_queue) {
    return { kind: 'event', transaction: base, event: { type: 'transaction.queued', at: context.now, balances, transactions: [base] } };
  }
  const shortfall = checkFunds(source, base);
  if (shortfall) return rejected(shortfall);
  const applied: TransactionRecord = { ...base, status: 'APPLIED' };
  return {
    kind: 'event',
    transaction: applied,
    event: { type: 'transaction.applied', at: context.now, balances, transactions: [applied], postings: transferPostings(applied) },
  };
}

/**
 * Applying a queued transaction when its turn comes: the funds check happens now, against the balance
 * as it stands after everything queued before it.
 */
export function decideQueuedTransaction(state: LedgerState, queued: TransactionRecord, now: number): LedgerEvent {
  const source = state.balances.get(queued.source);
  const shortfall = source ? checkFunds(source, queued) : reject('BAL_NOT_FOUND', `balance ${queued.source} not found`);
  if (shortfall) {
    const record: TransactionRecord = { ...queued, status: 'REJECTED', rejection: shortfall };
    return { type: 'transaction.rejected', at: now, transactions: [record] };
  }
  const record: TransactionRecord = { ...queued, status: 'APPLIED' };
  return { type: 'transaction.applied', at: now, transactions: [record], postings: transferPostings(record) };
}

export function checkFunds(source: BalanceRecord, transaction: TransactionRecord): Rejection | undefined {
  if (transaction.allow_overdraft) return undefined;
  const available = availableAmount(source);
  if (available >= transaction.precise_amount) return undefined;
  return reject(
    'TXN_INSUFFICIENT_FUNDS',
    `balance ${source.balance_id} has ${available} available, ${transaction.precise_amount} needed`,
  );
}

export function transferPostings(transaction: TransactionRecord): Posting[] {
  return [
    { balance_id: transaction.source, field: 'debit', amount: transaction.precise_amount },
    { balance_id: transaction.destination, field: 'credit', amount: transaction.precise_amount },
  ];
}

/**
 * A balance named by id must exist in the transaction's currency; an `@name` is looked up in the general
 * ledger by name and currency and, when absent, created as part of this decision.
 */
export function resolveBalance(
  state: LedgerState,
  name: string,
  currency: string,
  context: DecideContext,
  created: BalanceRecord[],
): BalanceRecord | Rejection {
  if (!name.startsWith('@')) {
    const balance = state.balances.get(name);
    if (!balance) return reject('BAL_NOT_FOUND', `balance ${name} not found`);
    if (balance.currency !== currency) {
      return reject('TXN_CURRENCY_MISMATCH', `balance ${name} holds ${balance.currency}, not ${currency}`);
    }
    return balance;
  }
  const existing = state.balanceByIndicator(name, currency)
    ?? created.find((balance) => balance.indicator === name && balance.currency === currency);
  if (existing) return existing;
  const balance = newBalance(context.ids.next('bln'), GENERAL_LEDGER_ID, currency, name, '', {}, context.now);
  created.push(balance);
  return balance;
}

export function newBalance(
  balanceId: string,
  ledgerId: string,
  currency: string,
  indicator: string,
  identityId: string,
  metaData: Record<string, unknown>,
  now: number,
): BalanceRecord {
  return {
    balance_id: balanceId,
    ledger_id: ledgerId,
    identity_id: identityId,
    indicator,
    currency,
    credit_balance: 0n,
    debit_balance: 0n,
    inflight_credit_balance: 0n,
    inflight_debit_balance: 0n,
    version: 0,
    created_at: now,
    meta_data: metaData,
  };
}

function replayOrConflict(state: LedgerState, existingId: string, command: CreateTransactionCommand): TransactionDecision {
  const existing = state.transaction(existingId);
  if (existing && isSameRequest(state, command, existing)) return { kind: 'existing', transaction: existing };
  return rejected(reject(
    'TXN_DUPLICATE_REFERENCE',
    `reference ${command.reference} is already used by transaction ${existingId} with a different request`,
  ));
}

/**
 * Whether a request repeats the one that created `existing`: every field the client sent must match,
 * with `@name` balances resolved (without creating anything). How to process it (skip_queue) does not
 * count. Checked only when a reference is reused, so the common path pays nothing for it.
 */
function isSameRequest(state: LedgerState, command: CreateTransactionCommand, existing: TransactionRecord): boolean {
  const resolvesTo = (name: string, balanceId: string): boolean =>
    name === balanceId || (name.startsWith('@') && state.balanceByIndicator(name, command.currency)?.balance_id === balanceId);
  return (
    existing.precise_amount === command.precise_amount &&
    existing.precision === command.precision &&
    existing.currency === command.currency &&
    existing.description === command.description &&
    existing.allow_overdraft === command.allow_overdraft &&
    resolvesTo(command.source, existing.source) &&
    resolvesTo(command.destination, existing.destination) &&
    canonicalJson(existing.meta_data) === canonicalJson(command.meta_data)
  );
}

function rejected(rejection: Rejection): TransactionDecision {
  return { kind: 'rejected', rejection };
}
