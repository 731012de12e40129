// The write-ahead log in LMDB. Appends are buffered and sealed into a record once the task that appended
// them is done, or sooner when a record is full; while the records in flight are at their bound, appends
// gather into the next record: that is the group commit. Records are keyed by the seq of their first
// event and committed by lmdb-js on a libuv pool thread. With overlappingSync the fsync of one commit
// runs while the next commit is written, so two records are in the pipeline at once (and no more:
// events that arrive while both are busy wait for the next record; records_in_flight_max raises it);
// a record counts as durable only when its own `flushed` promise resolves (separateFlushed), and
// `durable(seq)` resolves then. A failed write is fatal: memory already holds events the disk does not,
// so the process must stop and replay.
//
// With a replicator (replication on, this node leading) a sealed record is also handed to it, and it
// counts as durable only once both its flush and its replication have reported: one gate, so every
// reader of durable records (acknowledgements, lookups, index, hooks, snapshots) sees only what the
// group has committed. The disk's bound (records_in_flight_max) counts records still being flushed;
// records flushed and waiting for the replicator have a bound of their own (records_replicating_max), so
// the disk goes on writing the next records while earlier ones commit elsewhere. A replication that
// fails is not fatal like a disk: the log stops taking events, every waiter is refused with the
// replicator's error, and the owner (replication/replication-node.ts) rejoins. Whether the records at the log's
// end were sealed as the group's leader (and so may be dropped on rejoining if the group never committed
// them) is one mark written when the lead is taken or a ledger opens alone (leader-seals.ts), never per record.

import { open, type Database, type RootDatabase } from 'lmdb';
import path from 'node:path';
import type { LedgerEvent, LoggedEvent } from '../engine/events.js';
import { assert } from '../engine/assert.js';
import type { ChainPosition, EventLog } from '../engine/ports.js';
import { commitFailureCause, handleLmdbOrphanRejections } from '../threads/lmdb-commit-failure.js';
import { dropRecordsPastGapAtEnd, type GapAtEnd } from './gap-at-end.js';
import type { WriteFault } from './injected-disk-full.js';
import { LeaderSeals } from './leader-seals.js';
import {
  checkedRecords,
  CorruptRecordError,
  decodeLogRecord,
  decodeOpened,
  encodeLogRecord,
  GENESIS_CHECKSUM,
  openLogRecord,
  sizedEventsIn,
  type DecodedLogRecord,
  type OpenedLogRecord,
  type SizedEvent,
} from './log-record-codec.js';

export interface LmdbLogOptions {
  /** Directory of the LMDB environment (data/wal). */
  dir: string;
  /** Events per record before a record is sealed early. */
  record_events_max?: number;
  /** Called once if a write fails; the process cannot continue safely. */
  onFatal?: (error: Error) => void;
  /** Records being written to disk at once (RECORDS_IN_FLIGHT_MAX unless set). */
  records_in_flight_max?: number;
  /**
   * With a replicator: records sealed and not yet durable (on disk and replicated), a bound of its own
   * so that records wait for the replicator without holding up the disk (records_in_flight_max unless set).
   */
  records_replicating_max?: number;
  /** Test hooks only (injected-disk-full.ts): the error a full disk would give a write now, if any. */
  writeFault?: WriteFault;
  /**
   * A thread that only reads the log while the ledger's own thread appends to it (the index's and the
   * balance history's): it takes the log as its owner opened it, so nothing at its end is looked over or
   * dropped here (gap-at-end.ts is the owner's to run).
   */
  reader?: boolean;
}

/** A record as it was sealed, handed to a replicator: its seq range and its exact bytes. */
export interface SealedRecord {
  first_seq: number;
  last_seq: number;
  bytes: Buffer;
}

/**
 * Where sealed records are committed beside the local disk (PostgreSQL, replication/record-replicator.ts). Called
 * once per sealed record, in log order; the promise resolves when the record is committed there and
 * rejects when it is not (and will not be): the log then stops, see `replicationLost`.
 */
export interface RecordReplicator {
  replicate(record: SealedRecord): Promise<void>;
}

const RECORD_EVENTS_MAX_DEFAULT = 10_000;
/**
 * Records being committed at once. Each LMDB commit costs the event loop a fixed amount (lmdb-js queues
 * every write batch as new async work), so a record per event-loop turn made many small commits under
 * load. With two in flight (one being written while the last one's fsync finishes, as overlappingSync
 * allows) events that arrive meanwhile wait and go out together in the next record: fewer, larger
 * commits, and no more latency than the disk imposes anyway.
 */
const RECORDS_IN_FLIGHT_MAX = 2;
/** Decoded records kept for random reads (lookups of older transactions), counted in events. */
const RECORD_CACHE_EVENTS_MAX = 50_000;
const RESOLVED: Promise<void> = Promise.resolve();

interface Deferred {
  lastSeq: number;
  /** Seq of the record's first event (its key), once sealed. */
  firstSeq?: number;
  /** The record's bytes as written, and its events, handed to durable-record listeners (then dropped). */
  record?: Buffer;
  events?: readonly LedgerEvent[];
  /** Set when this record's own flush reported; it counts only once every earlier record has too. */
  flushed?: boolean;
  /** Set when the replicator committed this record (or none was asked to). */
  replicated?: boolean;
  stats?: CommitStats;
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: Error) => void;
}

function deferred(lastSeq: number): Deferred {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  promise.catch(() => undefined); // failures are reported through onFatal; waiters may be gone
  return { lastSeq, promise, resolve, reject };
}

/** A log record that is on disk: its seq range and its bytes, exactly as stored under `first_seq`. */
export interface DurableRecord {
  first_seq: number;
  last_seq: number;
  /** Absent for a record sealed before any durable-record listener was registered. */
  bytes?: Buffer;
  /** The events in it, as the engine built them (or as a copied record decoded); absent with the bytes. */
  events?: readonly LedgerEvent[];
}

export interface CommitStats {
  events: number;
  bytes: number;
  milliseconds: number;
}

export class LmdbLog implements EventLog {
  private readonly env: RootDatabase;
  private readonly records: Database<Buffer, number>;
  private readonly recordEventsMax: number;
  private readonly onFatal: (error: Error) => void;
  private pending: LedgerEvent[] = [];
  private pendingDeferred: Deferred | undefined;
  private readonly inFlight: Deferred[] = [];
  private sealScheduled = false;
  private lastChecksum: Buffer = GENESIS_CHECKSUM;
  private failure: Error | undefined;
  private _appendedSeq = 0;
  private _durableSeq = 0;
  private sealedSeq = 0;
  private readonly commitListeners: Array<(stats: CommitStats) => void> = [];
  /** Recently decoded records by key, oldest first (a Map keeps insertion order: LRU by re-inserting). */
  private readonly recordCache = new Map<number, DecodedLogRecord>();
  private recordCacheEvents = 0;
  private readonly sealListeners: Array<(lastSeq: number) => void> = [];
  private readonly durableRecordListeners: Array<(record: DurableRecord) => void> = [];
  private readonly recordsInFlightMax: number;
  private readonly recordsReplicatingMax: number;
  /** Records handed to LMDB whose flush has not reported yet. */
  private recordsFlushing = 0;
  private replicator: RecordReplicator | undefined;
  /** Opened when first needed (on the thread that opens the ledger; a reader's thread never needs it). */
  private leaderSeals: LeaderSeals | undefined;
  private readonly replicationLostListeners: Array<(error: Error) => void> = [];
  /** Records dropped on opening because they followed a record the disk never took (gap-at-end.ts). */
  readonly gapDropped: GapAtEnd | undefined;
  private readonly writeFault: WriteFault | undefined;

  private constructor(options: LmdbLogOptions) {
    this.env = open({ path: options.dir, overlappingSync: true, separateFlushed: true, maxDbs: 4, mapSize: 1024 ** 3 });
    this.records = this.env.openDB<Buffer, number>({ name: 'log', encoding: 'binary' });
    this.recordEventsMax = options.record_events_max ?? RECORD_EVENTS_MAX_DEFAULT;
    this.onFatal = options.onFatal ?? ((error) => { throw error; });
    this.writeFault = options.writeFault;
    this.recordsInFlightMax = options.records_in_flight_max ?? RECORDS_IN_FLIGHT_MAX;
    assert(this.recordsInFlightMax >= 1, 'records_in_flight_max must be at least 1');
    this.recordsReplicatingMax = options.records_replicating_max ?? this.recordsInFlightMax;
    assert(this.recordsReplicatingMax >= this.recordsInFlightMax, 'records_replicating_max must be at least records_in_flight_max');
    // A record the disk never took may be followed by one it did (gap-at-end.ts): the log ends before it.
    this.gapDropped = options.reader ? undefined : dropRecordsPastGapAtEnd(this.records);
    const last = this.lastLogRecord();
    if (last) {
      this._appendedSeq = this._durableSeq = this.sealedSeq = last.last_seq;
      this.lastChecksum = last.checksum;
    }
  }

  static open(options: LmdbLogOptions): LmdbLog {
    handleLmdbOrphanRejections();
    return new LmdbLog(options);
  }

  static directoryIn(dataDir: string): string {
    return path.join(dataDir, 'wal');
  }

  get appendedSeq(): number {
    return this._appendedSeq;
  }

  get durableSeq(): number {
    return this._durableSeq;
  }

  /** Events appended but not yet on disk. */
  get unflushedEvents(): number {
    return this._appendedSeq - this._durableSeq;
  }

  /**
   * Buffers events for the next record. A record takes everything buffered when it is sealed, and a
   * record is sealed early only between calls, so the events of one call always share a record (one
   * call may make a record longer than record_events_max).
   */
  appendAll(events: readonly LedgerEvent[]): number {
    if (this.failure) throw this.failure;
    for (const event of events) this.pending.push(event);
    this._appendedSeq += events.length;
    if (this.pending.length >= this.recordEventsMax) this.seal();
    else if (!this.sealScheduled) {
      // Sealed once the work that appended is done (its task and the microtasks it queued), not a turn
      // of the loop later: a lone write goes to disk at once. Under load the group commit comes from the
      // bound on records in flight (seal() waits while it is reached), not from waiting for the turn.
      this.sealScheduled = true;
      queueMicrotask(() => {
        this.sealScheduled = false;
        this.seal();
      });
    }
    return this._appendedSeq;
  }

  /** Resolves once every event up to `seq` is on disk. */
  durable(seq: number): Promise<void> {
    if (seq <= this._durableSeq) return RESOLVED;
    if (this.failure) return Promise.reject(this.failure);
    if (seq > this.sealedSeq) {
      this.pendingDeferred ??= deferred(this._appendedSeq);
      return this.pendingDeferred.promise;
    }
    const logRecord = this.inFlight.find((candidate) => candidate.lastSeq >= seq);
    return logRecord ? logRecord.promise : RESOLVED;
  }

  /** Seals what is buffered now and waits until all of it is on disk. */
  flush(): Promise<void> {
    this.seal();
    return this.durable(this._appendedSeq);
  }

  onCommit(listener: (stats: CommitStats) => void): void {
    this.commitListeners.push(listener);
  }

  /**
   * Called with each record once it is durable, in log order: readers that follow the log (the index
   * projector) can take the bytes from here instead of reading them back through LMDB's memory map.
   */
  onDurableRecord(listener: (record: DurableRecord) => void): void {
    this.durableRecordListeners.push(listener);
  }

  /** Called after each record is handed to LMDB with the seq of its last event. */
  onSeal(listener: (lastSeq: number) => void): void {
    this.sealListeners.push(listener);
  }

  /**
   * Seals what is buffered into a record now, one more in flight than the bounds allow if need be (a
   * close of a period names the chain's position, engine/closed-periods.ts: rare, and a record more in
   * flight only delays the next one), and names where the chain stands.
   */
  sealNow(): ChainPosition {
    if (this.failure) throw this.failure;
    this.sealPending();
    return { seq: this.sealedSeq, checksum: this.lastChecksum.toString('hex') };
  }

  private seal(): void {
    if (this.pending.length === 0 || this.failure) return;
    // Sealed again as soon as a record in flight is flushed or durable (advanceDurable), unless the
    // record is full. Without a replicator a record is durable when flushed: the first bound is the one.
    const busy = this.recordsFlushing >= this.recordsInFlightMax
      || this.inFlight.length >= (this.replicator ? this.recordsReplicatingMax : this.recordsInFlightMax);
    if (busy && this.pending.length < this.recordEventsMax) return;
    this.sealPending();
  }

  private sealPending(): void {
    if (this.pending.length === 0) return;
    const events = this.pending;
    const firstSeq = this.sealedSeq + 1;
    this.pending = [];
    const record = encodeLogRecord({ first_seq: firstSeq, prev_checksum: this.lastChecksum, events });
    this.write(firstSeq, firstSeq + events.length - 1, record, events);
  }

  /**
   * Appends a record exactly as another log wrote it (a follower copying its leader's log, so the
   * checksum chain stays identical). The record must follow on from this log's last one, and nothing
   * may be buffered here: a follower appends no events of its own. The caller applies the record's
   * events to its state first, as the engine does before it appends.
   */
  appendRecord(logRecord: DecodedLogRecord, record: Buffer): void {
    if (this.failure) throw this.failure;
    assert(this.pending.length === 0, 'a copied record cannot follow events of this log still being sealed');
    if (logRecord.first_seq !== this.sealedSeq + 1) throw new CorruptRecordError(logRecord.first_seq, `expected a record starting at seq ${this.sealedSeq + 1}`);
    if (!logRecord.prev_checksum.equals(this.lastChecksum)) throw new CorruptRecordError(logRecord.first_seq, 'does not chain to the record before it');
    this._appendedSeq = logRecord.last_seq;
    this.write(logRecord.first_seq, logRecord.last_seq, record, logRecord.events, false);
  }

  /**
   * From now on every record sealed is also committed through `replicator` before it counts as durable
   * (a node that has just taken the lead). Nothing of this log's own may be waiting: what was sealed
   * before came from the group (copied records) and is committed there already.
   */
  replicateTo(replicator: RecordReplicator): void {
    assert(this.pending.length === 0, 'a replicator is installed before this log appends events of its own');
    this.replicator = replicator;
  }

  /**
   * Marks every record this log seals from now on as sealed by the group's leader (leader-seals.ts), and
   * waits until the mark is on disk: a node that has just taken the lead, before it seals anything of its
   * own. Those records, if the group never commits them, are the ones a rejoin may drop.
   */
  async sealAsLeader(): Promise<void> {
    assert(this.pending.length === 0 && !this.replicator, 'the lead is marked before this log appends events of its own');
    await this.seals().set(this.sealedSeq + 1);
  }

  /**
   * Marks the log as sealed without a group from now on (a ledger opened as a single node or a cutover
   * follower, before it appends or copies anything): no record of it may be dropped by a rejoin.
   */
  async sealAsSingleNode(): Promise<void> {
    await this.seals().set(undefined);
  }

  /** The seq from which this log's records were sealed as the group's leader, if they were. */
  leaderSealsFromSeq(): number | undefined {
    return this.seals().fromSeq();
  }

  private seals(): LeaderSeals {
    this.leaderSeals ??= LeaderSeals.in(this.env);
    return this.leaderSeals;
  }

  /** Called once if the replicator refuses a record: the log has stopped taking events. */
  onReplicationLost(listener: (error: Error) => void): void {
    this.replicationLostListeners.push(listener);
  }

  /**
   * Stops taking events and refuses every waiter with `error` (a leader whose lease ran out): nothing
   * more is acknowledged. Records already on disk stay; those the group never committed are dropped on
   * rejoining (log-rewind.ts).
   */
  stopAppending(error: Error): void {
    this.replicationLost(error);
  }

  /** The checksum of the last record sealed: with appendedSeq, where this log's chain stands. */
  get lastRecordChecksum(): Buffer {
    return this.lastChecksum;
  }

  /**
   * Hands a sealed record to LMDB (and to the replicator, for a record of this log's own); its waiters
   * resolve once it and every record before it are on disk and replicated.
   */
  private write(firstSeq: number, lastSeq: number, record: Buffer, events: readonly LedgerEvent[], own = true): void {
    const waiter = this.pendingDeferred ?? deferred(lastSeq);
    waiter.lastSeq = lastSeq;
    this.pendingDeferred = undefined;
    this.lastChecksum = Buffer.from(record.subarray(0, 32));
    this.sealedSeq = lastSeq;
    waiter.firstSeq = firstSeq;
    if (this.durableRecordListeners.length > 0) {
      waiter.record = record;
      waiter.events = events;
    }
    this.inFlight.push(waiter);
    const started = performance.now();
    this.recordsFlushing += 1;
    const fault = this.writeFault?.();
    const written = (fault ? Promise.reject(fault) : this.records.put(firstSeq, record)) as Promise<boolean> & { flushed?: Promise<unknown> };
    const flushed = written.then(() => written.flushed ?? this.records.flushed);
    flushed.then(
      () => {
        this.recordsFlushing -= 1;
        waiter.flushed = true;
        waiter.stats = { events: lastSeq - firstSeq + 1, bytes: record.length, milliseconds: performance.now() - started };
        this.advanceDurable();
      },
      (error: Error) => this.failed(error),
    );
    const replicator = own ? this.replicator : undefined;
    if (!replicator) waiter.replicated = true;
    else {
      replicator.replicate({ first_seq: firstSeq, last_seq: lastSeq, bytes: record }).then(
        () => {
          waiter.replicated = true;
          this.advanceDurable();
        },
        (error: Error) => this.replicationLost(error),
      );
    }
    for (const listener of this.sealListeners) listener(lastSeq);
  }

  /** Moves the durable seq over every record whose flush (and replication) has reported, in log order. */
  private advanceDurable(): void {
    while (this.inFlight.length > 0 && (this.inFlight[0] as Deferred).flushed && (this.inFlight[0] as Deferred).replicated) {
      const waiter = this.inFlight.shift() as Deferred;
      this._durableSeq = waiter.lastSeq;
      waiter.resolve();
      if (this.durableRecordListeners.length > 0) {
        const durable: DurableRecord = { first_seq: waiter.firstSeq as number, last_seq: waiter.lastSeq };
        if (waiter.record) {
          durable.bytes = waiter.record;
          durable.events = waiter.events;
        }
        waiter.record = undefined;
        waiter.events = undefined;
        for (const listener of this.durableRecordListeners) listener(durable);
      }
      for (const listener of this.commitListeners) listener(waiter.stats as CommitStats);
    }
    if (this.pending.length > 0 && !this.sealScheduled) this.seal();
  }

  private failed(error: Error): void {
    // Every failed record's commitError is handled, not only the first's: with two records in flight
    // both commits can fail, each with a promise of its own, and one left alone ends the process with
    // exit 1 instead of the report below (a server under `ulimit -f`, 2026-12-02).
    const cause = commitFailureCause(error);
    if (this.failure) return;
    this.stop(error);
    // Stopped first, at once: nothing from here on is acknowledged. The report waits for the disk's own
    // error, which lmdb-js gives a moment after its generic one (threads/lmdb-commit-failure.ts).
    void cause.then((disk) => this.onFatal(disk));
  }

  /**
   * The replicator refused a record: it, and everything sealed after it, will never be acknowledged.
   * Unlike a disk failure the process goes on (the records on disk are intact); the owner drops what the
   * group never committed when it rejoins.
   */
  private replicationLost(error: Error): void {
    if (this.failure) return;
    this.stop(error);
    for (const listener of this.replicationLostListeners) listener(error);
  }

  private stop(error: Error): void {
    this.failure = error;
    this.pending = [];
    for (const waiter of this.inFlight.splice(0)) waiter.reject(error);
    this.pendingDeferred?.reject(error);
    this.pendingDeferred = undefined;
  }

  /** The record holding `seq`, or the first one after it. */
  private startKeyFor(seq: number): number {
    for (const key of this.records.getKeys({ start: seq, reverse: true, limit: 1 })) return key;
    return seq;
  }

  /**
   * Every event from `fromSeq` to `toSeq` in order, checking each record's checksum and the chain
   * between the records read. Throws CorruptRecordError naming the first bad record.
   */
  *read(fromSeq = 1, toSeq = Number.MAX_SAFE_INTEGER): Generator<LoggedEvent> {
    for (const logRecord of this.openedLogRecords(this.startKeyFor(fromSeq))) {
      if (logRecord.first_seq > toSeq) return;
      let seq = logRecord.first_seq;
      for (const event of logRecord.events()) {
        if (seq > toSeq) return;
        if (seq >= fromSeq) yield { seq, event };
        seq += 1;
      }
    }
  }

  /** The record stored under `key` (the seq of its first event), decoded and checked; cached. */
  logRecordAt(key: number): DecodedLogRecord | undefined {
    const cached = this.recordCache.get(key);
    if (cached) {
      this.recordCache.delete(key);
      this.recordCache.set(key, cached);
      return cached;
    }
    const bytes = this.records.get(key);
    if (!bytes) return undefined;
    const logRecord = decodeLogRecord(key, bytes);
    this.recordCache.set(key, logRecord);
    this.recordCacheEvents += logRecord.events.length;
    for (const [oldKey, old] of this.recordCache) {
      if (this.recordCacheEvents <= RECORD_CACHE_EVENTS_MAX || oldKey === key) break;
      this.recordCache.delete(oldKey);
      this.recordCacheEvents -= old.events.length;
    }
    return logRecord;
  }

  /** The bytes of the record stored under `key` exactly as stored (a copy), if there is one. */
  rawRecord(key: number): Buffer | undefined {
    const bytes = this.records.getBinary(key);
    return bytes ? Buffer.from(bytes) : undefined;
  }

  /** Decoded records from the one holding `seq` on, checked as `logRecords` does. */
  logRecordsFrom(seq: number): Generator<DecodedLogRecord> {
    return this.logRecords(this.startKeyFor(seq));
  }

  /** Decoded records from `fromKey` on, verifying checksums and the chain between consecutive records. */
  *logRecords(fromKey = 1): Generator<DecodedLogRecord> {
    for (const logRecord of this.openedLogRecords(fromKey)) yield decodeOpened(logRecord);
  }

  /**
   * As `read`, each event with the bytes it takes in its record, decoded only as it is pulled: a reader
   * with a byte budget (the change feed) stops pulling once it is spent.
   */
  sizedEvents(fromSeq: number, toSeq: number): Generator<SizedEvent & { seq: number }> {
    return sizedEventsIn(this.openedLogRecords(this.startKeyFor(fromSeq)), fromSeq, toSeq);
  }

  /** As `logRecords`, with each record's events decoded only as they are iterated. */
  private openedLogRecords(fromKey: number): Generator<OpenedLogRecord> {
    return checkedRecords(this.records.getRange({ start: fromKey }));
  }

  private lastLogRecord(): OpenedLogRecord | undefined {
    for (const { key, value } of this.records.getRange({ reverse: true, limit: 1 })) return openLogRecord(key, value);
    return undefined;
  }

  async close(): Promise<void> {
    if (!this.failure) await this.flush();
    // A leader's log closed with everything committed by the group holds no record a rejoin may drop.
    if (this.replicator && !this.failure) await this.seals().set(undefined);
    await this.env.close();
  }
}
