// What the engine needs from the outside world, declared here and implemented at the edges: wal/ gives
// the log and the transaction store, bin/ gives the clock and the id source. Tests inject fakes.

import type { LedgerEvent } from './events.js';
import type { TransactionRecord } from './records.js';

export interface Clock {
  /** Current time in epoch milliseconds. */
  now(): number;
}

export type IdPrefix = 'ldg' | 'bln' | 'txn' | 'idt' | 'hook' | 'key' | 'rule' | 'upload' | 'recon' | 'bulk';

export interface IdSource {
  /** A fresh unique id `<prefix>_<uuid>`. Ids from one source sort in creation order. */
  next(prefix: IdPrefix): string;
}

/** The write-ahead log as the engine sees it: appends are synchronous, durability is awaited elsewhere. */
export interface EventLog {
  /** Buffers the event for the next group commit and returns its sequence number. */
  append(event: LedgerEvent): number;
  /** Sequence number of the last appended event (0 when empty). */
  readonly appendedSeq: number;
}

/**
 * Every transaction ever recorded, by id and by reference. Reads are synchronous (decide cannot await);
 * writes come only from apply, as full records.
 */
export interface TransactionStore {
  get(transactionId: string): TransactionRecord | undefined;
  idForReference(reference: string): string | undefined;
  put(record: TransactionRecord): void;
}
