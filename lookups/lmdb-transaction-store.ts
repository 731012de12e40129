// Transactions by id and by reference, kept in their own LMDB environment (data/lookup) beside the log.
//
// The log already holds every version of every transaction record, so the lookups store positions, not
// copies: id -> the key of the log record holding the transaction's newest version, and
// reference -> id for references the client chose. A reference Folio generated is derived from the id
// (engine/records.ts: generatedReference), so it is found through the id and needs no entry of its
// own. Reading an older transaction decodes its log record (recently read records are cached by the log).
// This keeps the per-transaction cost of the lookups to one or two small keys.
//
// One exception: a transaction whose newest version comes from metadata patches exists in the log only
// as its earlier record plus the patches. Its position then names that record together with the
// patches merged into one, kept in a table of its own (`metadata_patches`), and a read merges the two:
// so patching an old transaction never reads it back (a reconciliation run marks ten thousand of them;
// reading each back meant decoding its whole log record). A transaction patched while its record was
// still in memory is kept whole instead (PATCHED, in the `patched` table), as are versions written so
// by earlier releases. A later full record moves the position back to its log record.
//
// The log is the only thing on the acknowledgement path. Lookups are written behind it: apply puts full
// records into an in-memory overlay that reads see at once; each sealed log record becomes a generation,
// and once the log reports it durable its entries are written to LMDB in batches together with a
// checkpoint (the last seq they cover). Only durable events ever reach the lookup environment, so after a
// crash it never knows a transaction the log does not. At start-up it catches up from its checkpoint by
// reading the log. Deleting data/lookup is safe: it rebuilds.
//
// Beside the newest position, `created` keeps the key of the log record that first held each
// transaction (written only if absent, so the first version wins): where the transaction entered the
// log's checksum chain (GET /transactions/:id/log-position). Lookups written before that table existed
// lack it for older transactions, so they are rebuilt from the log once (CREATED_COMPLETE_KEY).

import { open, type Database, type RootDatabase } from 'lmdb';
import path from 'node:path';
import type { TransactionStore } from '../engine/ports.js';
import { hasGeneratedReference, idOfGeneratedReference, type MetaData, type TransactionRecord } from '../engine/records.js';
import { ByteReader, ByteWriter } from '../codec/byte-writer.js';
import { readMeta, writeMeta } from '../codec/balance-codec.js';
import { readTransaction, writeTransaction } from '../codec/event-codec.js';
import type { LedgerEvent } from '../engine/events.js';
import { mergeMetaData, metadataTarget } from '../engine/metadata.js';
import { commitFailureCause, handleLmdbOrphanRejections } from '../threads/lmdb-commit-failure.js';

const CHECKPOINT_KEY = 'checkpoint';
/** Set once `created` holds every transaction up to the checkpoint (lookups written before it existed do not). */
const CREATED_COMPLETE_KEY = 'created_complete';
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
/**
 * Positions at or below this name a log record and the merged patches in `metadata_patches`: the
 * record key k is stored as -1 - k.
 */
const PATCH_OVER_RECORD_MAX = -2;

/**
 * lmdb-js's asynchronous put takes PutOptions at run time (MDB_NOOVERWRITE: the entry is written only
 * when the key is absent), though its types declare them for putSync alone.
 */
type PutIfAbsent = (key: string, value: number, options: { noOverwrite: true }) => Promise<boolean>;

function patchOver(recordKey: number): number {
  return -1 - recordKey;
}

function recordUnderPatch(position: number): number {
  return -1 - position;
}

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
  /** Patches of transactions already in LMDB: each the merge of all their patches so far. */
  patches: PendingPatch[];
}

interface PendingPatch {
  transactionId: string;
  patch: MetaData;
}

interface Position {
  transactionId: string;
  /** Undefined when the reference is the one generated from the id (it has no entry of its own). */
  reference: string | undefined;
  recordKey: number;
  /** The record itself, when its newest version came from a metadata patch (recordKey is PATCHED). */
  patched?: TransactionRecord;
  /** The merged patches over the record the position names (recordKey <= PATCH_OVER_RECORD_MAX). */
  patch?: MetaData;
  /** Set when the position names the log record of a whole version (a put, not a patch): `created` takes it if it has none. */
  whole?: boolean;
}

/** Where a transaction stands in the log: the record that first held it, and the one holding its newest whole version. */
export interface RecordKeys {
  created: number;
  /** Undefined when not known: a version kept whole after a metadata patch (PATCHED) names no record. */
  newest: number | undefined;
}

export class LmdbTransactionStore implements TransactionStore {
  private readonly env: RootDatabase;
  private readonly positions: Database<number, string>;
  private readonly idByReference: Database<string, string>;
  private readonly meta: Database<number, string>;
  private readonly patched: Database<Buffer, string>;
  private readonly patches: Database<Buffer, string>;
  private readonly created: Database<number, string>;
  /**
   * Merged patches of transactions already in LMDB that are not written yet, by id (the newest merge):
   * what reads see at once, as the overlay is for records.
   */
  private readonly pendingPatches = new Map<string, MetaData>();
  private unsealedPatches: PendingPatch[] = [];
  /** Records put from metadata patches and not yet written (see PATCHED). */
  private readonly fromPatch = new WeakSet<TransactionRecord>();
  /** Everything put and not yet written to LMDB, for reads. */
  private readonly overlay = new Map<string, TransactionRecord>();
  private readonly referenceOverlay = new Map<string, string>();
  /** Puts since the log last sealed a record, then one generation per sealed record. */
  private unsealed: TransactionRecord[] = [];
  private readonly generations: Generation[] = [];
  /** Generations being written to LMDB now: still read for record keys until their write is visible. */
  private inWrite: Generation[] = [];
  private sealedSeq = 0;
  private durableSeq = 0;
  private writing: Promise<void> | undefined;
  private writeTimer: NodeJS.Timeout | undefined;
  private muted = false;
  /** A batch's commit failed: nothing more is written (LMDB's write state is not to be trusted after it). */
  private failed = false;
  private _checkpoint: number;

  private constructor(dir: string, private readonly log: LogReader, private readonly onFailed: (error: Error) => void) {
    this.env = open({ path: dir, maxDbs: 8, mapSize: 1024 ** 3 });
    this.positions = this.env.openDB<number, string>({ name: 'positions', encoding: 'ordered-binary' });
    this.idByReference = this.env.openDB<string, string>({ name: 'references', encoding: 'string' });
    this.meta = this.env.openDB<number, string>({ name: 'meta', encoding: 'msgpack' });
    this.patched = this.env.openDB<Buffer, string>({ name: 'patched', encoding: 'binary' });
    // Binary, written by the codec's metadata writer: metadata may hold integers beyond 64 bits.
    this.patches = this.env.openDB<Buffer, string>({ name: 'metadata_patches', encoding: 'binary' });
    this.created = this.env.openDB<number, string>({ name: 'created', encoding: 'ordered-binary' });
    this._checkpoint = this.meta.get(CHECKPOINT_KEY) ?? 0;
  }

  /**
   * `onFailed` is told once if a batch cannot be committed (a full or failing disk): the lookups then
   * stop where their checkpoint is, and the process is expected to stop and catch them up from the log
   * at its next start, as it does after a crash. Without it the failure is thrown where it happens.
   */
  static open(dir: string, log: LogReader, onFailed: (error: Error) => void = (error) => { throw error; }): LmdbTransactionStore {
    handleLmdbOrphanRejections();
    return new LmdbTransactionStore(dir, log, onFailed);
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
    const position = this.positions.get(transactionId);
    if (position === undefined) return undefined;
    return this.resolve(transactionId, position);
  }

  /** The newest version of a transaction from its position in LMDB, with any patch not yet written. */
  private resolve(transactionId: string, position: number): TransactionRecord | undefined {
    const pending = this.pendingPatches.get(transactionId);
    if (position === PATCHED) return withPatch(this.readPatched(transactionId), pending);
    if (position > 0) return withPatch(this.readRecord(transactionId, position), pending);
    // The pending merge already holds the written one (patchMetaData merges over it).
    return withPatch(this.readRecord(transactionId, recordUnderPatch(position)), pending ?? this.writtenPatch(transactionId));
  }

  has(transactionId: string): boolean {
    if (this.overlay.has(transactionId)) return true;
    return fitsKey(transactionId) && this.positions.doesExist(transactionId);
  }

  /**
   * The log records of a transaction sealed into the log (undefined for one not sealed yet, or unknown):
   * the one that first held it and the one holding its newest whole version.
   */
  recordKeys(transactionId: string): RecordKeys | undefined {
    if (!fitsKey(transactionId)) return undefined;
    const waiting = [...this.inWrite, ...this.generations];
    const inGenerations = (newestFirst: boolean): number | undefined => {
      const order = newestFirst ? [...waiting].reverse() : waiting;
      for (const generation of order) {
        if (generation.records.some((record) => record.transaction_id === transactionId && !this.fromPatch.has(record))) return generation.recordKey;
      }
      return undefined;
    };
    const created = this.created.get(transactionId) ?? inGenerations(false);
    if (created === undefined) return undefined;
    const fresh = inGenerations(true);
    if (fresh !== undefined) return { created, newest: fresh };
    const position = this.positions.get(transactionId);
    const newest = position === undefined || position === PATCHED ? undefined : position > 0 ? position : recordUnderPatch(position);
    return { created, newest };
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

  /**
   * A record still in memory is merged at once. One already in LMDB is not read back: the patch is
   * merged with the patches it already has, and reads merge them over the record when they ask.
   */
  patchMetaData(transactionId: string, patch: MetaData): void {
    if (this.muted) return;
    const fresh = this.overlay.get(transactionId);
    if (fresh) {
      this.put({ ...fresh, meta_data: mergeMetaData(fresh.meta_data, patch) }, true);
      return;
    }
    const position = fitsKey(transactionId) ? this.positions.get(transactionId) : undefined;
    if (position === undefined) throw new Error(`metadata patch for unknown transaction ${transactionId}`);
    const before = this.pendingPatches.get(transactionId) ?? (position <= PATCH_OVER_RECORD_MAX ? this.writtenPatch(transactionId) : undefined);
    const merged = mergeMetaData(before ?? {}, patch);
    this.pendingPatches.set(transactionId, merged);
    this.unsealedPatches.push({ transactionId, patch: merged });
  }

  /** The log sealed a record ending at `lastSeq`: every put since the last seal came from its events. */
  sealed(lastSeq: number): void {
    const recordKey = this.sealedSeq + 1;
    this.sealedSeq = lastSeq;
    if (this.unsealed.length === 0 && this.unsealedPatches.length === 0) return;
    this.generations.push({ recordKey, lastSeq, records: this.unsealed, patches: this.unsealedPatches });
    this.unsealed = [];
    this.unsealedPatches = [];
  }

  /** The log is durable up to `seq`: the generations it covers may be written. */
  logDurable(seq: number): void {
    this.durableSeq = seq;
    if (this.writing || this.failed) return;
    if (this.overlay.size >= WRITE_BATCH_RECORDS) this.writeNow();
    else this.writeTimer ??= setTimeout(() => this.writeNow(), WRITE_INTERVAL_MS).unref();
  }

  private writeNow(): void {
    clearTimeout(this.writeTimer);
    this.writeTimer = undefined;
    if (!this.writing && !this.failed) this.writeEligible();
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
    // Positions go in put order, so a transaction put more than once ends at its newest record. A
    // generation's patches go before its records: a patch lands there only for a transaction not in
    // memory, so a record of the same generation is newer.
    const positions: Position[] = [];
    for (const generation of written) {
      for (const pending of generation.patches) positions.push(this.patchedPosition(pending));
      for (const record of generation.records) {
        const position: Position = { transactionId: record.transaction_id, reference: clientReference(record), recordKey: generation.recordKey, whole: true };
        if (this.fromPatch.has(record)) {
          position.recordKey = PATCHED;
          position.patched = record;
          position.reference = undefined; // a patch never moves a reference (see put)
          position.whole = undefined;
        }
        positions.push(position);
      }
    }
    this.inWrite = written;
    this.writing = this.writeBatch(positions, lastSeq).then(() => {
      this.inWrite = [];
      for (const generation of written) {
        for (const { transactionId, patch } of generation.patches) {
          if (this.pendingPatches.get(transactionId) === patch) this.pendingPatches.delete(transactionId);
        }
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
    }, async (error: unknown) => {
      // The batch stays in memory (reads keep finding it there); nothing more is written.
      this.failed = true;
      this.writing = undefined;
      const cause = await commitFailureCause(error);
      this.onFailed(new Error(`transaction lookups could not be written: ${cause.message}`, { cause }));
    });
  }

  /**
   * Queues the positions and then the checkpoint as plain puts in one event turn, which lmdb-js commits
   * together from its writer thread. The checkpoint goes last, so even if the batch were split it never
   * lands before the entries it covers.
   */
  /**
   * Where a patched transaction already in LMDB now stands: its record with the merged patches, or,
   * over a version kept whole, that version with the patch merged in (read from `patched`, never from
   * the log).
   */
  private patchedPosition({ transactionId, patch }: PendingPatch): Position {
    const position = this.positions.get(transactionId) as number;
    if (position === PATCHED) {
      const whole = this.readPatched(transactionId) as TransactionRecord;
      return { transactionId, reference: undefined, recordKey: PATCHED, patched: { ...whole, meta_data: mergeMetaData(whole.meta_data, patch) } };
    }
    const recordKey = position > 0 ? patchOver(position) : position;
    return { transactionId, reference: undefined, recordKey, patch };
  }

  private writeBatch(positions: Iterable<Position>, lastSeq: number): Promise<void> {
    // lmdb-js answers the plain puts of one commit with one promise, and a put that may not overwrite
    // with a promise of its own; a failed commit rejects them all. Each distinct one is watched, so none
    // is left rejected unhandled; the failure is reported once, through the checkpoint's (writeEligible).
    const watched = new Set<Promise<unknown>>();
    const watch = (written: Promise<unknown>): void => {
      if (watched.has(written)) return;
      watched.add(written);
      written.catch(reportedWithTheBatch);
    };
    for (const position of positions) {
      watch(this.positions.put(position.transactionId, position.recordKey));
      if (position.whole) watch((this.created.put as unknown as PutIfAbsent).call(this.created, position.transactionId, position.recordKey, { noOverwrite: true }));
      if (position.patched) watch(this.patched.put(position.transactionId, encodeRecord(position.patched)));
      if (position.patch) watch(this.patches.put(position.transactionId, encodePatch(position.patch)));
      if (position.reference !== undefined) watch(this.idByReference.put(position.reference, position.transactionId));
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
    if (this._checkpoint > logEndSeq || this.meta.get(CREATED_COMPLETE_KEY) !== 1) await this.reset();
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
          add({ transactionId: record.transaction_id, reference: clientReference(record), recordKey: logRecord.first_seq, whole: true });
        }
        for (const patch of event.metadata_patches ?? []) {
          if (metadataTarget(patch.entity_id) !== 'transaction') continue;
          const position = this.caughtUpPatch(patch.entity_id, patch.meta_data, pending.get(patch.entity_id));
          // The log is checked by replay; a patch without its record cannot be placed.
          if (position) add(position);
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
      this.patches.clearSync();
      this.created.clearSync();
      this.meta.put(CHECKPOINT_KEY, 0);
      this.meta.put(CREATED_COMPLETE_KEY, 1);
    });
    this._checkpoint = 0;
  }

  /** While muted, puts are ignored: used while replaying events the lookups already hold. */
  setMuted(muted: boolean): void {
    this.muted = muted;
  }

  /**
   * A patch met while catching up, over the transaction's position in the batch so far or else in LMDB:
   * merged with the patches already over its record, or into a version kept whole.
   */
  private caughtUpPatch(transactionId: string, patch: MetaData, inBatch: Position | undefined): Position | undefined {
    const merged = (patches: MetaData | undefined): MetaData => mergeMetaData(patches ?? {}, patch);
    if (inBatch) {
      if (inBatch.patched) {
        const whole = inBatch.patched;
        return { transactionId, reference: undefined, recordKey: PATCHED, patched: { ...whole, meta_data: merged(whole.meta_data) } };
      }
      if (inBatch.patch) return { transactionId, reference: undefined, recordKey: inBatch.recordKey, patch: merged(inBatch.patch) };
      return { transactionId, reference: undefined, recordKey: patchOver(inBatch.recordKey), patch: merged(undefined) };
    }
    const position = fitsKey(transactionId) ? this.positions.get(transactionId) : undefined;
    if (position === undefined) return undefined;
    if (position === PATCHED) {
      const whole = this.readPatched(transactionId);
      return whole ? { transactionId, reference: undefined, recordKey: PATCHED, patched: { ...whole, meta_data: merged(whole.meta_data) } } : undefined;
    }
    if (position > 0) return { transactionId, reference: undefined, recordKey: patchOver(position), patch: merged(undefined) };
    return { transactionId, reference: undefined, recordKey: position, patch: merged(this.writtenPatch(transactionId)) };
  }

  /** The merged patches written over a transaction's record, if any. */
  private writtenPatch(transactionId: string): MetaData | undefined {
    const bytes = this.patches.get(transactionId);
    return bytes === undefined ? undefined : readMeta(new ByteReader(bytes));
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
      const record = this.resolve(key, value);
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

/** A rejection reported through the batch's own commit (writeEligible), not on its own. */
function reportedWithTheBatch(): void {}

function withPatch(record: TransactionRecord | undefined, patch: MetaData | undefined): TransactionRecord | undefined {
  return record && patch ? { ...record, meta_data: mergeMetaData(record.meta_data, patch) } : record;
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

function encodePatch(patch: MetaData): Buffer {
  recordWriter.reset();
  writeMeta(recordWriter, patch);
  return Buffer.from(recordWriter.bytes());
}

function encodeRecord(record: TransactionRecord): Buffer {
  recordWriter.reset();
  writeTransaction(recordWriter, record);
  return Buffer.from(recordWriter.bytes());
}
