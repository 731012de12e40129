// The balance actors' mailboxes: queued transactions wait in their source balance's mailbox and are
// applied in arrival order. Balances with waiting work form a ring that the queue runner serves one item
// per balance per turn, so a hot balance cannot starve the others. The ring changes only through
// enqueue and remove, which apply calls: a balance joins at the end when work arrives, and moves to the
// end each time its head leaves. Its order is therefore a function of the log, and a replayed engine
// serves pending work in exactly the order the original would have. Mailboxes exist only while
// non-empty, which keeps a million idle balances cheap.
//
// Beside the queues, per balance, the totals the waiting transactions will take from it and give to it
// once carried out (Blnk's queued_debit_balance and queued_credit_balance), kept as transactions join
// and leave, never by walking the queues: a split's shares each count against their own balance,
// wherever the split waits. The commit or void of a hold counts for nothing: it moves only what the
// hold already holds, which the balances' inflight amounts show.

import { assert, fail } from './assert.js';
import type { TransactionRecord } from './records.js';

/** A FIFO with O(1) push and shift (arrays shift in O(n) once they grow). */
class Fifo<T> {
  private items: T[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  peek(): T | undefined {
    return this.items[this.head];
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined as T;
    this.head += 1;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  /** Swaps the first item matching `match` for `item` (a linear scan: used only for rare edits). */
  replace(match: (item: T) => boolean, item: T): boolean {
    for (let index = this.head; index < this.items.length; index += 1) {
      if (match(this.items[index] as T)) {
        this.items[index] = item;
        return true;
      }
    }
    return false;
  }

  *[Symbol.iterator](): IterableIterator<T> {
    for (let index = this.head; index < this.items.length; index += 1) yield this.items[index] as T;
  }
}

export class Mailboxes {
  private readonly boxes = new Map<string, Fifo<TransactionRecord>>();
  private readonly queuedById = new Map<string, TransactionRecord>();
  /** Balances with waiting work, in the order the runner will serve them (a Map keeps insertion order). */
  private readonly ring = new Map<string, true>();
  /** Per balance, what queued transactions will take from it and give to it; absent when nothing. */
  private readonly queuedDebits = new Map<string, bigint>();
  private readonly queuedCredits = new Map<string, bigint>();

  /** Number of queued transactions across all mailboxes. */
  get size(): number {
    return this.queuedById.size;
  }

  depth(balanceId: string): number {
    return this.boxes.get(balanceId)?.length ?? 0;
  }

  isQueued(transactionId: string): boolean {
    return this.queuedById.has(transactionId);
  }

  queued(transactionId: string): TransactionRecord | undefined {
    return this.queuedById.get(transactionId);
  }

  enqueue(balanceId: string, record: TransactionRecord): void {
    if (this.queuedById.has(record.transaction_id)) fail(`transaction ${record.transaction_id} queued twice`);
    let box = this.boxes.get(balanceId);
    if (!box) {
      box = new Fifo();
      this.boxes.set(balanceId, box);
      this.ring.set(balanceId, true);
    }
    box.push(record);
    this.queuedById.set(record.transaction_id, record);
    this.count(record, 1n);
  }

  /** A newer version of a queued transaction (same id, still QUEUED) takes its place in line. */
  update(balanceId: string, record: TransactionRecord): void {
    const box = this.boxes.get(balanceId);
    const replaced = box?.replace((queued) => queued.transaction_id === record.transaction_id, record) ?? false;
    if (!replaced) fail(`transaction ${record.transaction_id} is not queued on ${balanceId}`);
    this.count(this.queuedById.get(record.transaction_id) as TransactionRecord, -1n);
    this.queuedById.set(record.transaction_id, record);
    this.count(record, 1n);
  }

  /** The next transaction the balance will apply. */
  head(balanceId: string): TransactionRecord | undefined {
    return this.boxes.get(balanceId)?.peek();
  }

  /** Removes the head of the balance's mailbox; it must be the given transaction (order is the contract). */
  remove(balanceId: string, transactionId: string): void {
    const box = this.boxes.get(balanceId);
    const head = box?.peek();
    assert(box && head && head.transaction_id === transactionId,
      `transaction ${transactionId} left mailbox ${balanceId} out of order`);
    box.shift();
    this.queuedById.delete(transactionId);
    this.count(head, -1n);
    // Served: to the end of the ring if more is waiting, out of it otherwise.
    this.ring.delete(balanceId);
    if (box.length === 0) this.boxes.delete(balanceId);
    else this.ring.set(balanceId, true);
  }

  /** What the transactions waiting anywhere will take from the balance once carried out. */
  queuedDebit(balanceId: string): bigint {
    return this.queuedDebits.get(balanceId) ?? 0n;
  }

  /** What the transactions waiting anywhere will give to the balance once carried out. */
  queuedCredit(balanceId: string): bigint {
    return this.queuedCredits.get(balanceId) ?? 0n;
  }

  /** Adds (sign 1) or takes away (sign -1) what a queued record moves, to the totals of each balance. */
  private count(record: TransactionRecord, sign: bigint): void {
    if (record.action === 'commit' || record.action === 'void') return;
    if (record.sources) for (const share of record.sources) addTo(this.queuedDebits, share.balance_id, sign * share.precise_amount);
    else addTo(this.queuedDebits, record.source, sign * record.precise_amount);
    if (record.destinations) for (const share of record.destinations) addTo(this.queuedCredits, share.balance_id, sign * share.precise_amount);
    else addTo(this.queuedCredits, record.destination, sign * record.precise_amount);
  }

  /** The balance whose head the runner should apply next (the ring moves when that head is removed). */
  nextReady(): string | undefined {
    for (const balanceId of this.ring.keys()) return balanceId;
    return undefined;
  }

  /** Balances with waiting work, in serving order (for snapshots and tests). */
  ringOrder(): string[] {
    return [...this.ring.keys()];
  }

  /** Every queued transaction in mailbox order, for snapshots. */
  *all(): IterableIterator<[string, TransactionRecord]> {
    for (const [balanceId, box] of this.boxes) for (const record of box) yield [balanceId, record];
  }
}

/** Moves a balance's total by `delta`, dropping it when it comes back to zero (idle balances cost nothing). */
function addTo(totals: Map<string, bigint>, balanceId: string, delta: bigint): void {
  const total = (totals.get(balanceId) ?? 0n) + delta;
  assert(total >= 0n, `queued total of ${balanceId} below zero`);
  if (total === 0n) totals.delete(balanceId);
  else totals.set(balanceId, total);
}
