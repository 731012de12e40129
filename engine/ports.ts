// What the engine needs from the outside world, declared here and implemented at the edges: wal/ gives
// the log and the transaction store, bin/ gives the clock and the id source. Tests inject fakes.

import type { LedgerEvent } from './events.js';
import type { MetaData, TransactionRecord } from './records.js';

export interface Clock {
  /** Current time in epoch milliseconds. */
  now(): number;
}

export type IdPrefix = 'ldg' | 'bln' | 'txn' | 'idt' | 'hook' | 'key' | 'rule' | 'upload' | 'recon' | 'bulk' | 'mon' | 'prd';

export interface IdSource {
  /** A fresh unique id `<prefix>_<uuid>`. Ids from one source sort in creation order. */
  next(prefix: IdPrefix): string;
}

/** The write-ahead log as the engine sees it: appends are synchronous, durability is awaited elsewhere. */
export interface EventLog {
  /**
   * Buffers the events for the next group commit, all in one log record whatever else is buffered (so a
   * crash keeps all of them or none), and returns the sequence number of the last.
   */
  appendAll(events: readonly LedgerEvent[]): number;
  /** Sequence number of the last appended event (0 when empty). */
  readonly appendedSeq: number;
  /**
   * Seals everything appended so far into log records now, and names where the checksum chain then
   * stands: the seq of the last event and the checksum (hex) of the record ending at it. What is
   * appended after this call goes into a later record. (A log that keeps no checksums names ''.)
   */
  sealNow(): ChainPosition;
}

/** A position in the log's checksum chain (wal/log-record-codec.ts). */
export interface ChainPosition {
  seq: number;
  checksum: string;
}

/**
 * Every transaction ever recorded, by id and by reference. Reads are synchronous (decide cannot await);
 * writes come only from apply, and apply never reads the store back: replicas of the state (snapshot
 * worker, verify) use a store that keeps nothing. Writes are full records, or metadata patches over the
 * stored version of a settled transaction (the store merges them: engine/metadata.ts). `patched` marks
 * a full record whose version the log holds only as a patch (a store that reads records back from the
 * log keeps such a record whole).
 */
export interface TransactionStore {
  get(transactionId: string): TransactionRecord | undefined;
  /** Whether a transaction was ever recorded, without reading it (cheap where get decodes a log record). */
  has(transactionId: string): boolean;
  idForReference(reference: string): string | undefined;
  put(record: TransactionRecord, patched?: boolean): void;
  patchMetaData(transactionId: string, patch: MetaData): void;
}
