// A read-only view of the LMDB log (data/wal) for everything that reads the log beside the server: the
// snapshot worker's replica, `folio verify`, restore and backup. It opens the environment with
// readOnly, so it can run while the server writes (LMDB readers never block the writer), and it checks
// records exactly as the server's own reader does: each record's checksum, and the chain of
// prev_checksum links between consecutive records. A broken record stops the read with a
// CorruptRecordError that names it.

import { open, type Database, type RootDatabase } from 'lmdb';
import fs from 'node:fs';
import path from 'node:path';
import type { LoggedEvent } from '../engine/events.js';
import { checkedRecords, decodeLogRecord, decodeOpened, sizedEventsIn, type DecodedLogRecord, type SizedEvent } from './log-record-codec.js';

/** Anything that yields decoded, chain-checked log records from a key on (the server's LmdbLog too). */
export interface LogRecordSource {
  logRecords(fromKey?: number): Generator<DecodedLogRecord>;
}

/** Must match the writer's settings (wal/lmdb-log.ts): same named database and map size. */
const LOG_DB_NAME = 'log';
const MAP_BYTES = 1024 ** 3;

export class LogReader implements LogRecordSource {
  private constructor(private readonly env: RootDatabase, private readonly records: Database<Buffer, number>) {}

  /** Opens `<dataDir>/wal` read-only; throws if there is no log there. */
  static open(dataDir: string): LogReader {
    const dir = path.join(dataDir, 'wal');
    if (!fs.existsSync(path.join(dir, 'data.mdb'))) throw new Error(`no log at ${dir}`);
    const env = open({ path: dir, readOnly: true, maxDbs: 4, mapSize: MAP_BYTES });
    const records = env.openDB<Buffer, number>({ name: LOG_DB_NAME, encoding: 'binary' });
    return new LogReader(env, records);
  }

  /** Starts a fresh read transaction, so records committed since the last read become visible. */
  refresh(): void {
    this.env.resetReadTxn();
  }

  /** Seq of the last event in the log (0 when empty). Decodes (and so checks) only the last record. */
  endSeq(): number {
    for (const { key, value } of this.records.getRange({ reverse: true, limit: 1 })) return decodeLogRecord(key, value).last_seq;
    return 0;
  }

  /** Number of records (for progress). */
  recordCount(): number {
    return this.records.getCount();
  }

  /** Decoded records from `fromKey` on, each checked, and each linked to the one before it. */
  *logRecords(fromKey = 1): Generator<DecodedLogRecord> {
    for (const logRecord of checkedRecords(this.records.getRange({ start: fromKey }))) yield decodeOpened(logRecord);
  }

  /**
   * Events from `fromSeq` to `toSeq` with the bytes each takes in its record, checked as `logRecords`
   * does, each decoded only as it is pulled (the change feed in an HTTP worker, runtime/change-feed.ts).
   */
  sizedEvents(fromSeq: number, toSeq: number): Generator<SizedEvent & { seq: number }> {
    return sizedEventsIn(checkedRecords(this.records.getRange({ start: this.startKeyFor(fromSeq) })), fromSeq, toSeq);
  }

  /** Events from `fromSeq` to `toSeq`, with the same checks (reading starts at the record holding fromSeq). */
  *events(fromSeq = 1, toSeq = Number.MAX_SAFE_INTEGER): Generator<LoggedEvent> {
    for (const logRecord of this.logRecords(this.startKeyFor(fromSeq))) {
      for (let index = 0; index < logRecord.events.length; index += 1) {
        const seq = logRecord.first_seq + index;
        if (seq < fromSeq) continue;
        if (seq > toSeq) return;
        yield { seq, event: logRecord.events[index] as LedgerEvent };
      }
    }
  }

  /** The key of the record holding `seq`, or of the first one after it. */
  private startKeyFor(seq: number): number {
    for (const key of this.records.getKeys({ start: seq, reverse: true, limit: 1 })) return key;
    return seq;
  }

  /** The raw bytes of one record, as stored. */
  rawRecord(key: number): Buffer | undefined {
    return this.records.getBinary(key) ?? undefined;
  }

  /** A consistent copy of the whole environment into the empty directory `dir` (LMDB's env copy). */
  async copyTo(dir: string): Promise<void> {
    fs.mkdirSync(dir, { recursive: true });
    await this.env.backup(dir, false);
  }

  async close(): Promise<void> {
    await this.env.close();
  }
}

type LedgerEvent = LoggedEvent['event'];
