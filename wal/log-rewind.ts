// Rewinding the LMDB log: the records at its end, newest first, and dropping every record after a seq.
// A node that rejoins a replicated group (app/replication-node.ts) may hold records at the end of its
// log that the group never committed: it sealed and fsynced them as leader, then lost its lease before
// PostgreSQL took them, so no client was ever told they happened. They are dropped here, before the log
// is opened for serving, so nothing downstream (engine, lookups, index, snapshots) ever applies them.
// The environment is opened as the server opens it (wal/lmdb-log.ts), with nothing else holding it: the
// data directory's lock is taken by the caller first.

import { open, type Database, type RootDatabase } from 'lmdb';
import { assert } from '../engine/assert.js';
import { openLogRecord } from './log-record-codec.js';

/** Must match the writer's settings (wal/lmdb-log.ts). */
const LOG_DB_NAME = 'log';
const MAP_BYTES = 1024 ** 3;

/** A record's place in the log and its checksum: what a rejoining node compares with the group's log. */
export interface RecordPlace {
  first_seq: number;
  last_seq: number;
  checksum: Buffer;
}

export class LogRewind {
  private constructor(private readonly env: RootDatabase, private readonly records: Database<Buffer, number>) {}

  /** Opens the log in `walDir` for rewinding (creating an empty one if there is none). */
  static open(walDir: string): LogRewind {
    const env = open({ path: walDir, maxDbs: 4, mapSize: MAP_BYTES });
    return new LogRewind(env, env.openDB<Buffer, number>({ name: LOG_DB_NAME, encoding: 'binary' }));
  }

  /** The records from the end back, newest first, each checked against its own checksum. */
  *newestFirst(): Generator<RecordPlace> {
    for (const { key, value } of this.records.getRange({ reverse: true })) {
      const { first_seq, last_seq, checksum } = openLogRecord(key, value);
      yield { first_seq, last_seq, checksum };
    }
  }

  /** Seq of the last event (0 for an empty log). */
  endSeq(): number {
    for (const place of this.newestFirst()) return place.last_seq;
    return 0;
  }

  /** Every record whose first seq is after `seq`, dropped in one transaction and flushed; how many. */
  async dropAfter(seq: number): Promise<number> {
    const keys = [...this.records.getKeys({ start: seq + 1 })];
    if (keys.length === 0) return 0;
    for (const { key, value } of this.records.getRange({ start: seq, reverse: true, limit: 1 })) {
      assert(openLogRecord(key, value).last_seq === seq, `seq ${seq} is inside a record: the log can only be rewound to a record's end`);
    }
    await this.records.transaction(() => {
      for (const key of keys) this.records.removeSync(key);
    });
    await this.records.flushed;
    return keys.length;
  }

  async close(): Promise<void> {
    await this.env.close();
  }
}
