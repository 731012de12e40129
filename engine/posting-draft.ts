// The postings a decision is building, with their running effect on each balance, so that a decision
// covering several movements (split legs, bulk items) checks each one against the balances as the
// earlier ones leave them, without touching the state itself.

import type { Posting, PostingField } from './events.js';
import { availableAmount, type BalanceRecord, type BalanceTotals, type TransactionRecord } from './records.js';
import { reject, type Rejection } from './rejections.js';

type Deltas = Record<PostingField, bigint>;

/** The overdraft terms a transaction carries (records.ts). */
export type OverdraftTerms = Pick<TransactionRecord, 'allow_overdraft' | 'overdraft_limit'>;

export class PostingDraft {
  readonly postings: Posting[] = [];
  /** Made on the first posting: most decisions check funds before posting anything. */
  private deltas: Map<string, Deltas> | undefined;

  /** The balance's available amount after the postings drafted so far. */
  available(balance: BalanceRecord): bigint {
    const delta = this.deltas?.get(balance.balance_id);
    if (!delta) return availableAmount(balance);
    return availableAmount(balance) + delta.credit - delta.debit - delta.inflight_debit;
  }

  /** The balance's totals after the postings drafted so far (the balance itself when none moved it). */
  totalsOf(balance: BalanceRecord): BalanceTotals {
    const delta = this.deltas?.get(balance.balance_id);
    if (!delta) return balance;
    return {
      credit_balance: balance.credit_balance + delta.credit,
      debit_balance: balance.debit_balance + delta.debit,
      inflight_credit_balance: balance.inflight_credit_balance + delta.inflight_credit,
      inflight_debit_balance: balance.inflight_debit_balance + delta.inflight_debit,
    };
  }

  /**
   * Refuses to move `amount` out of `source` when the overdraft terms do not allow it (Blnk's rule,
   * canProcessTransaction): `allow_overdraft` without a limit skips the check; otherwise what is
   * available (after holds, the postings drafted so far and the `queued` amount already waiting to leave
   * the balance, which is 0 unless the queued checks are on) must cover the amount, or, with a limit, the
   * available amount after it must stay at or above minus the limit, whether or not `allow_overdraft` is set.
   */
  checkFunds(source: BalanceRecord, amount: bigint, terms: OverdraftTerms, queued = 0n): Rejection | undefined {
    const limit = terms.overdraft_limit ?? 0n;
    if (terms.allow_overdraft && limit === 0n) return undefined;
    const available = this.available(source) - queued;
    if (available >= amount) return undefined;
    const has = queued === 0n ? `${available} available` : `${available} available after ${queued} already queued against it`;
    if (limit > 0n) {
      if (available - amount >= -limit) return undefined;
      return reject(
        'TXN_OVERDRAFT_LIMIT_EXCEEDED',
        `balance ${source.balance_id} has ${has}; ${amount} would leave ${available - amount}, below the overdraft limit of -${limit}`,
      );
    }
    return reject('TXN_INSUFFICIENT_FUNDS', `balance ${source.balance_id} has ${has}, ${amount} needed`);
  }

  add(postings: Posting[]): void {
    const deltas = (this.deltas ??= new Map());
    for (const posting of postings) {
      this.postings.push(posting);
      let delta = deltas.get(posting.balance_id);
      if (!delta) deltas.set(posting.balance_id, (delta = { credit: 0n, debit: 0n, inflight_credit: 0n, inflight_debit: 0n }));
      delta[posting.field] += posting.amount;
    }
  }

  /** A mark to roll back to, for all-or-nothing groups inside a larger decision. */
  mark(): number {
    return this.postings.length;
  }

  rollback(mark: number): void {
    for (const posting of this.postings.splice(mark)) {
      const delta = this.deltas?.get(posting.balance_id) as Deltas;
      delta[posting.field] -= posting.amount;
    }
  }
}

/** Postings dated for balance history (a transaction's effective date); 0 leaves them at the event's time. */
export function effectiveAt(postings: Posting[], at: number): Posting[] {
  if (at > 0) for (const posting of postings) posting.effective_at = at;
  return postings;
}

/** Settles a transfer: the source is debited and the destination credited. */
export function transferPostings(source: string, destination: string, amount: bigint): Posting[] {
  return [
    { balance_id: source, field: 'debit', amount },
    { balance_id: destination, field: 'credit', amount },
  ];
}

/** Places a hold: the amount is reserved on both sides without settling. */
export function holdPostings(source: string, destination: string, amount: bigint): Posting[] {
  return [
    { balance_id: source, field: 'inflight_debit', amount },
    { balance_id: destination, field: 'inflight_credit', amount },
  ];
}

/** Commits part of a hold: the reservation shrinks and the same amount settles. */
export function commitPostings(source: string, destination: string, amount: bigint): Posting[] {
  return [
    { balance_id: source, field: 'inflight_debit', amount: -amount },
    { balance_id: source, field: 'debit', amount },
    { balance_id: destination, field: 'inflight_credit', amount: -amount },
    { balance_id: destination, field: 'credit', amount },
  ];
}

/** Releases what remains of a hold. */
export function voidPostings(source: string, destination: string, amount: bigint): Posting[] {
  return [
    { balance_id: source, field: 'inflight_debit', amount: -amount },
    { balance_id: destination, field: 'inflight_credit', amount: -amount },
  ];
}
