// Transactions by id and by reference, kept in their own LMDB environment (data/lookup) beside the log.
//
// The log already holds every version of every transaction record, so the lookups store positions, not
// copies: id -> the key of the log record holding the transaction's newest version, and
// reference -> id for references the client chose. A reference Folio generated is derived from the id
// (engine/records.ts: generatedReference), so it is found through the id and needs no entry of its
// own. Reading an older transaction decodes its log record (recently read records are cached by the log).
// This keeps the per-transaction cost of the lookups to one or two small keys.
//
// One exception: a transaction whose newest version comes from a metadata patch exists in the log only
// as its earlier record plus the patch, so that version is kept whole (encoded as the log encodes a
// transaction) in a table of its own, and its position says so (PATCHED). A later full record moves
// the position back to its log record.
//
// The log is the only thing on the acknowledgement path. Lookups are written behind it: apply puts full
// records into an in-memory overlay that reads see at once; each sealed log record becomes a generation,
// and once the log reports it durable its entries are written to LMDB in batches together with a
// checkpoint (the last seq they cover). Only durable events ever reach the lookup environment, so after a
// crash it never knows a transaction the log does not. At start-up it catches up from its checkpoint by
// reading the log. Deleting data/lookup is safe: it rebuilds.

import { open, type Database, type RootDatabase } from 'lmdb';
import path from 'node:path';
import type { TransactionStore } from '../engine/ports.js';
import { hasGeneratedReference, idOfGeneratedReference, type MetaData, type TransactionRecord } from '../engine/records.js';
import { ByteReader, ByteWriter } from '../codec/byte-writer.js';
import { readTransaction, writeTransaction } from '../codec/event-codec.js';
import type { LedgerEvent } from '../engine/events.js';
import { mergeMetaData, metadataTarget } from '../engine/metadata.js';

const CHECKPOINT_KEY = 'checkpoint';
/**
 * How long durable records may wait before they are written. Each lookup write ends in an fsync that
 * competes with the log's own; writing every few dozen milliseconds keeps that contention negligible.
 */
const WRITE_INTERVAL_MS = 50;
/** Records waiting beyond which a write starts at once instead of at the next interval. */
const WRITE_BATCH_RECORDS = 20_000;
/** Records per LMDB write batch while catching up from the log. */
const CATCH_UP_BATCH_RECORDS = 50_000;
/**
 * LMDB keys are limited in size (lmdb-js throws past its key buffer). Nothing Folio stores has a key
 * anywhere near this long, so a longer one cannot be found and is not looked up.
 */
const LOOKUP_KEY_LENGTH_MAX = 500;
/** The position of a transaction whose newest version is kept whole in the `patched` table. */
const PATCHED = -1;

/** A log record as the store reads it (wal/log-record-codec.ts DecodedLogRecord satisfies it). */
export interface LogRecordEvents {
  first_seq: number;
  last_seq: number;
  events: LedgerEvent[];
}

/** How the store reads the log: one record by key, and all records from the one holding a seq. */
export interface LogReader {
  logRecordAt(key: number): LogRecordEvents | undefined;
  logRecordsFrom(seq: number): Iterable<LogRecordEvents>;
}

interface Generation {
  /** Key of the log record these puts came from (the seq of its first event). */
  recordKey: number;
  lastSeq: number;
  /** In put order; a transaction put twice appears twice (the later put wins when written). */
  records: TransactionRecord[];
}

interface Position {
  transactionId: string;
  /** Undefined when the reference is the one generated from the id (it has no entry of its own). */
  reference: string | undefined;
  recordKey: number;
  /** The record itself, when its newest version came from a metadata patch (recordKey is PATCHED). */
  patched?: TransactionRecord;
}

export class LmdbTransactionStore implements TransactionStore {
  private readonly env: RootDatabase;
  private readonly positions: Database<number, string>;
  private readonly idByReference: Database<string, string>;
  private readonly meta: Database<number, string>;
  private readonly patched: Database<Buffer, string>;
  /** Records put from metadata patches and not yet written (see PATCHED). */
  private readonly fromPatch = new WeakSet<TransactionRecord>();
  /** Everything put and not yet written to LMDB, for reads. */
  private readonly overlay = new Map<string, TransactionRecord>();
  private readonly referenceOverlay = new Map<string, string>();
  /** Puts since the log last sealed a record, then one generation per sealed record. */
  private unsealed: TransactionRecord[] = [];
  private readonly generations: Generation[] = [];
  private sealedSeq = 0;
  private durableSeq = 0;
  private writing: Promise<void> | undefined;
  private writeTimer: NodeJS.Timeout | undefined;
  private muted = false;
  private _checkpoint: number;

  private constructor(dir: string, private readonly log: LogReader) {
    this.env = open({ path: dir, maxDbs: 8, mapSize: 1024 ** 3 });
    this.positions = this.env.openDB<number, string>({ name: 'positions', encoding: 'ordered-binary' });
    this.idByReference = this.env.openDB<string, string>({ name: 'references', encoding: 'string' });
    this.meta = this.env.openDB<number, string>({ name: 'meta', encoding: 'msgpack' });
    this.patched = this.env.openDB<Buffer, string>({ name: 'patched', encoding: 'binary' });
    this._checkpoint = this.meta.get(CHECKPOINT_KEY) ?? 0;
  }

  static open(dir: string, log: LogReader): LmdbTransactionStore {
    return new LmdbTransactionStore(dir, log);
  }

  static directoryIn(dataDir: string): string {
    return path.join(dataDir, 'lookup');
  }

  /** The last log seq whose records are in LMDB. */
  get checkpoint(): number {
    return this._checkpoint;
  }

  /** Records held in memory waiting to be written. */
  get backlog(): number {
    return this.overlay.size;
  }

  get(transactionId: string): TransactionRecord | undefined {
    const fresh = this.overlay.get(transactionId);
    if (fresh || !fitsKey(transactionId)) return fresh;
    const recordKey = this.positions.get(transactionId);
    if (recordKey === undefined) return undefined;
    if (recordKey === PATCHED) return this.readPatched(transactionId);
    return this.readRecord(transactionId, recordKey);
  }

  idForReference(reference: string): string | undefined {
    const fresh = this.referenceOverlay.get(reference);
    if (fresh !== undefined) return fresh;
    const generatedFor = idOfGeneratedReference(reference);
    if (generatedFor !== undefined && this.overlay.get(generatedFor)?.reference === reference) return generatedFor;
    if (!fitsKey(reference)) return undefined;
    const stored = this.idByReference.get(reference);
    if (stored !== undefined || generatedFor === undefined) return stored;
    return this.get(generatedFor)?.reference === reference ? generatedFor : undefined;
  }

  put(record: TransactionRecord, patched = false): void {
    if (this.muted) return;
    if (patched) this.fromPatch.add(record);
    this.overlay.set(record.transaction_id, record);
    // A patch changes metadata only. A rejected refund's reference may since have been taken over by a
    // new refund of the same original, and the patch must not take it back.
    if (!patched && !hasGeneratedReference(record)) this.referenceOverlay.set(record.reference, record.transaction_id);
    this.unsealed.push(record);
  }

  patchMetaData(transactionId: string, patch: MetaData): void {
    if (this.muted) return;
    const record = this.get(transactionId);
    if (!record) throw new Error(`metadata patch for unknown transaction ${transactionId}`);
    this.put({ ...record, meta_data: mergeMetaData(record.meta_data, patch) }, true);
  }

  /** The log sealed a record ending at `lastSeq`: every put since the last seal came from its events. */
  sealed(lastSeq: number): void {
    const recordKey = this.sealedSeq + 1;
    this.sealedSeq = lastSeq;
    if (this.unsealed.length === 0) return;
    this.generations.push({ recordKey, lastSeq, records: this.unsealed });
    this.unsealed = [];
  }

  /** The log is durable up to `seq`: the generations it covers may be written. */
  logDurable(seq: number): void {
    this.durableSeq = seq;
    if (this.writing) return;
    if (this.overlay.size >= WRITE_BATCH_RECORDS) this.writeNow();
    else this.writeTimer ??= setTimeout(() => this.writeNow(), WRITE_INTERVAL_MS).unref();
  }

  private writeNow(): void {
    clearTimeout(this.writeTimer);
    this.writeTimer = undefined;
    if (!this.writing) this.writeEligible();
  }

  private writeEligible(): void {
    const written: Generation[] = [];
    let lastSeq = this._checkpoint;
    while (this.generations.length > 0 && (this.generations[0] as Generation).lastSeq <= this.durableSeq) {
      const generation = this.generations.shift() as Generation;
      written.push(generation);
      lastSeq = generation.lastSeq;
    }
    if (written.length === 0) {
      // Every record from events up to the durable seq is written; events without records count too.
      this.advanceCheckpoint(this.durableSeq);
      return;
    }
    // Positions go in put order, so a transaction put more than once ends at its newest record.
    const positions: Position[] = [];
    for (const generation of written) {
      for (const record of generation.records) {
        const position: Position = { transactionId: record.transaction_id, reference: clientReference(record), recordKey: generation.recordKey };
        if (this.fromPatch.has(record)) {
          position.recordKey = PATCHED;
          position.patched = record;
          position.reference = undefined; // a patch never moves a reference (see put)
        }
        positions.push(position);
      }
    }
    this.writing = this.writeBatch(positions, lastSeq).then(() => {
      for (const generation of written) {
        for (const record of generation.records) {
          const id = record.transaction_id;
          if (this.overlay.get(id) === record) this.overlay.delete(id);
          if (this.referenceOverlay.get(record.reference) === id && !this.overlay.has(id)) {
            this.referenceOverlay.delete(record.reference);
          }
        }
      }
      this.writing = undefined;
      if (this.generations.length > 0) this.logDurable(this.durableSeq);
    });
  }

  /**
   * Queues the positions and then the checkpoint as plain puts in one event turn, which lmdb-js commits
   * together from its writer thread. The checkpoint goes last, so even if the batch were split it never
   * lands before the entries it covers.
   */
  private writeBatch(positions: Iterable<Position>, lastSeq: number): Promise<void> {
    for (const position of positions) {
      void this.positions.put(position.transactionId, position.recordKey);
      if (position.patched) void this.patched.put(position.transactionId, encodeRecord(position.patched));
      if (position.reference !== undefined) void this.idByReference.put(position.reference, position.transactionId);
    }
    return this.meta.put(CHECKPOINT_KEY, lastSeq).then(() => this.advanceCheckpoint(lastSeq));
  }

  private advanceCheckpoint(seq: number): void {
    if (seq > this._checkpoint) this._checkpoint = seq;
  }

  /**
   * Brings LMDB up to the end of the log by reading the records after the checkpoint. A checkpoint past
   * the end of the log means the lookups belong to another history: they are dropped and rebuilt.
   */
  async catchUp(logEndSeq: number): Promise<number> {
    if (this._checkpoint > logEndSeq) await this.reset();
    let batch: Position[] = [];
    let lastSeq = this._checkpoint;
    let written = 0;
    // The newest position of each transaction in `batch`: a patch merges over the version it names.
    const pending = new Map<string, Position>();
    const add = (position: Position): void => {
      batch.push(position);
      pending.set(position.transactionId, position);
    };
    for (const logRecord of this.log.logRecordsFrom(this._checkpoint + 1)) {
      if (logRecord.last_seq <= this._checkpoint) continue;
      for (const event of logRecord.events) {
        for (const record of event.transactions ?? []) {
          add({ transactionId: record.transaction_id, reference: clientReference(record), recordKey: logRecord.first_seq });
        }
        for (const patch of event.metadata_patches ?? []) {
          if (metadataTarget(patch.entity_id) !== 'transaction') continue;
          const base = this.pendingRecord(pending.get(patch.entity_id)) ?? this.get(patch.entity_id);
          if (!base) continue; // the log is checked by replay; a patch without its record cannot be placed
          const merged = { ...base, meta_data: mergeMetaData(base.meta_data, patch.meta_data) };
          add({ transactionId: merged.transaction_id, reference: undefined, recordKey: PATCHED, patched: merged });
        }
      }
      lastSeq = logRecord.last_seq;
      if (batch.length >= CATCH_UP_BATCH_RECORDS) {
        written += batch.length;
        await this.writeBatch(batch, lastSeq);
        batch = [];
        pending.clear();
      }
    }
    written += batch.length;
    if (lastSeq > this._checkpoint) await this.writeBatch(batch, lastSeq);
    this.durableSeq = Math.max(this.durableSeq, lastSeq);
    this.sealedSeq = Math.max(this.sealedSeq, logEndSeq);
    return written;
  }

  private async reset(): Promise<void> {
    await this.env.transaction(() => {
      this.positions.clearSync();
      this.idByReference.clearSync();
      this.patched.clearSync();
      this.meta.put(CHECKPOINT_KEY, 0);
    });
    this._checkpoint = 0;
  }

  /** While muted, puts are ignored: used while replaying events the lookups already hold. */
  setMuted(muted: boolean): void {
    this.muted = muted;
  }

  /** The record a position of the catch-up batch stands for. */
  private pendingRecord(position: Position | undefined): TransactionRecord | undefined {
    if (!position) return undefined;
    return position.patched ?? this.readRecord(position.transactionId, position.recordKey);
  }

  private readPatched(transactionId: string): TransactionRecord | undefined {
    const bytes = this.patched.get(transactionId);
    return bytes === undefined ? undefined : readTransaction(new ByteReader(bytes));
  }

  /** The newest version of a transaction inside the log record at `recordKey`. */
  private readRecord(transactionId: string, recordKey: number): TransactionRecord | undefined {
    const logRecord = this.log.logRecordAt(recordKey);
    if (!logRecord) return undefined;
    for (let eventIndex = logRecord.events.length - 1; eventIndex >= 0; eventIndex -= 1) {
      const records = logRecord.events[eventIndex]?.transactions;
      if (!records) continue;
      for (let index = records.length - 1; index >= 0; index -= 1) {
        if ((records[index] as TransactionRecord).transaction_id === transactionId) return records[index];
      }
    }
    return undefined;
  }

  /** Newest first; records still in memory are merged with those in LMDB. */
  list(offset: number, limit: number): TransactionRecord[] {
    const fresh = [...this.overlay.values()].sort((a, b) => compareIdsDescending(a.transaction_id, b.transaction_id));
    const result: TransactionRecord[] = [];
    let skipped = 0;
    let freshIndex = 0;
    const take = (record: TransactionRecord): boolean => {
      if (skipped < offset) skipped += 1;
      else result.push(record);
      return result.length >= limit;
    };
    for (const { key, value } of this.positions.getRange({ reverse: true })) {
      while (freshIndex < fresh.length && compareIdsDescending((fresh[freshIndex] as TransactionRecord).transaction_id, key) <= 0) {
        if (take(fresh[freshIndex] as TransactionRecord)) return result;
        freshIndex += 1;
      }
      if (this.overlay.has(key)) continue;
      if (skipped < offset) {
        skipped += 1; // skipped entries need not be read from the log
        continue;
      }
      const record = this.readRecord(key, value);
      if (record && take(record)) return result;
    }
    while (freshIndex < fresh.length) {
      if (take(fresh[freshIndex] as TransactionRecord)) return result;
      freshIndex += 1;
    }
    return result;
  }

  async close(): Promise<void> {
    this.writeNow();
    while (this.writing) {
      await this.writing;
      this.writeNow();
    }
    await this.env.close();
  }
}

/** The reference to index, unless it is the one generated from the id. */
function clientReference(record: TransactionRecord): string | undefined {
  return hasGeneratedReference(record) ? undefined : record.reference;
}

function fitsKey(key: string): boolean {
  return key.length <= LOOKUP_KEY_LENGTH_MAX;
}

function compareIdsDescending(a: string, b: string): number {
  return a < b ? 1 : a > b ? -1 : 0;
}

const recordWriter = new ByteWriter(4 * 1024);

function encodeRecord(record: TransactionRecord): Buffer {
  recordWriter.reset();
  writeTransaction(recordWriter, record);
  return Buffer.from(recordWriter.bytes());
}
