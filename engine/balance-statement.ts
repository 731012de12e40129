// A balance's statement for a window of time, folded from the log alone (as engine/balance-fold.ts folds
// a balance): the opening balance (every settled movement counting before `from`), each settled movement
// counting inside [from, to] with the transaction that made it and the balance after it, and the closing
// balance (opening plus the movements). "Settled" is the balance's `balance` (credit minus debit): holds
// move only its inflight amounts and appear when committed. A movement counts at its posting's effective
// time (a back-dated transaction's `effective_date`) else at its event's time, as everywhere in Folio, so
// the movements are ordered by that time, then by log order; the fold reads the log to its end because a
// later event may carry a back-dated movement. All amounts are exact bigints in the smallest unit.
//
// Which transaction made a movement: an event's transactions that move money (APPLIED, not holds, not
// split parents, which move nothing themselves) and name the balance as source or destination, paired in order with the
// event's settled postings to the balance. Every such transaction makes exactly one such posting, so the
// pairing is exact; should the counts ever differ, the movement is shown without a transaction rather
// than with a wrong one (the amounts never depend on the pairing).

import type { LedgerEvent, Posting } from './events.js';
import type { TransactionRecord } from './records.js';

/** Movements one statement may hold in its window: a longer window is refused, asking for a shorter one. */
export const STATEMENT_MOVEMENTS_MAX = 100_000;

export interface StatementMovement {
  /** The log seq of the event that recorded it. */
  seq: number;
  /** When it counts (epoch ms). */
  at: number;
  transaction_id: string | null;
  reference: string | null;
  /** Signed change to the balance: a credit is positive, a debit negative. */
  amount: bigint;
  /** The balance right after it, in statement order. */
  running_balance: bigint;
}

export interface StatementTotals {
  opening_balance: bigint;
  closing_balance: bigint;
  total_credits: bigint;
  total_debits: bigint;
  movement_count: number;
}

export interface StatementPage extends StatementTotals {
  /** The page of movements asked for (offset, limit), in statement order. */
  movements: StatementMovement[];
}

const isSettled = (posting: Posting): boolean => posting.field === 'credit' || posting.field === 'debit';
/** Settled transfers and commits: not holds (a fully committed hold is APPLIED too), not split parents. */
const movesMoney = (transaction: TransactionRecord): boolean =>
  transaction.status === 'APPLIED' && transaction.inflight !== true && transaction.sources === undefined && transaction.destinations === undefined;

/** The fold, fed events in log order (runtime/balance-folds.ts reads the log in chunks). */
export class StatementFold {
  private opening = 0n;
  private credits = 0n;
  private debits = 0n;
  private readonly window: Array<Omit<StatementMovement, 'running_balance'> & { order: number }> = [];
  /** Set once the window holds more than STATEMENT_MOVEMENTS_MAX movements: the fold stops collecting. */
  tooLong = false;

  constructor(readonly balanceId: string, readonly fromMs: number, readonly toMs: number) {}

  feed(seq: number, event: LedgerEvent): void {
    if (!event.postings) return;
    let makers: TransactionRecord[] | undefined;
    let settled = 0;
    for (const posting of event.postings) {
      if (posting.balance_id !== this.balanceId || !isSettled(posting)) continue;
      settled += 1;
      const at = posting.effective_at ?? event.at;
      if (at > this.toMs) continue;
      const amount = posting.field === 'credit' ? posting.amount : -posting.amount;
      if (at < this.fromMs) {
        this.opening += amount;
        continue;
      }
      if (posting.field === 'credit') this.credits += posting.amount;
      else this.debits += posting.amount;
      if (this.window.length >= STATEMENT_MOVEMENTS_MAX) {
        this.tooLong = true;
        continue;
      }
      makers ??= (event.transactions ?? []).filter((transaction) =>
        movesMoney(transaction) && (transaction.source === this.balanceId || transaction.destination === this.balanceId));
      this.window.push({ seq, at, transaction_id: null, reference: null, amount, order: settled - 1 });
    }
    // Pairs this event's movements in the window with the transactions that made them (see the header).
    if (makers && makers.length === settled) {
      for (let index = this.window.length - 1; index >= 0; index -= 1) {
        const movement = this.window[index] as (typeof this.window)[number];
        if (movement.seq !== seq) break;
        const maker = makers[movement.order] as TransactionRecord;
        movement.transaction_id = maker.transaction_id;
        movement.reference = maker.reference;
      }
    }
  }

  /** The statement's totals and the page of movements from `offset`, at most `limit` of them. */
  page(offset: number, limit: number): StatementPage {
    const ordered = [...this.window].sort((a, b) => a.at - b.at || a.seq - b.seq || a.order - b.order);
    const movements: StatementMovement[] = [];
    let running = this.opening;
    for (const [index, { order: _order, ...movement }] of ordered.entries()) {
      running += movement.amount;
      if (index >= offset && movements.length < limit) movements.push({ ...movement, running_balance: running });
    }
    return {
      opening_balance: this.opening,
      closing_balance: this.opening + this.credits - this.debits,
      total_credits: this.credits,
      total_debits: this.debits,
      movement_count: ordered.length,
      movements,
    };
  }
}
