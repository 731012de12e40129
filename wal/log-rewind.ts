// Rewinding the LMDB log: the records at its end, newest first, and dropping every record after a seq.
// A node that rejoins a replicated group (replication/replication-node.ts) may hold records at the end of its
// log that the group never committed: it sealed and fsynced them as leader, then lost its lease before
// PostgreSQL took them, so no client was ever told they happened. They are dropped here, before the log
// is opened for serving, so nothing downstream (engine, lookups, index, snapshots) ever applies them.
// The environment is opened as the server opens it (wal/lmdb-log.ts), with nothing else holding it: the
// data directory's lock is taken by the caller first. Which of the records at the end were sealed as the
// group's leader, the only ones a rejoin may drop, is the log's mark (leader-seals.ts), read and cleared here.

import { open, type Database, type RootDatabase } from 'lmdb';
import { assert } from '../engine/assert.js';
import { dropRecordsPastGapAtEnd } from './gap-at-end.js';
import { LeaderSeals } from './leader-seals.js';
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

/** The records that start after a seq: how many, and the first seq of the oldest of them. */
export interface RecordsAfter {
  count: number;
  first_seq?: number;
}

export class LogRewind {
  private readonly seals: LeaderSeals;

  private constructor(private readonly env: RootDatabase, private readonly records: Database<Buffer, number>) {
    this.seals = LeaderSeals.in(env);
  }

  /** Opens the log in `walDir` for rewinding (creating an empty one if there is none). */
  static open(walDir: string): LogRewind {
    const env = open({ path: walDir, maxDbs: 4, mapSize: MAP_BYTES });
    const records = env.openDB<Buffer, number>({ name: LOG_DB_NAME, encoding: 'binary' });
    // Compared with the group's only as far as the disk really holds it (gap-at-end.ts).
    dropRecordsPastGapAtEnd(records);
    return new LogRewind(env, records);
  }

  /**
   * The records from the end back (or from the one holding `fromSeq`, or the last before it), newest
   * first, each checked against its own checksum.
   */
  *newestFirst(fromSeq?: number): Generator<RecordPlace> {
    for (const { key, value } of this.records.getRange(fromSeq === undefined ? { reverse: true } : { start: fromSeq, reverse: true })) {
      const { first_seq, last_seq, checksum } = openLogRecord(key, value);
      yield { first_seq, last_seq, checksum };
    }
  }

  /** Seq of the last event (0 for an empty log). */
  endSeq(): number {
    for (const place of this.newestFirst()) return place.last_seq;
    return 0;
  }

  /** The records whose first seq is after `seq`, counted by key (none is read). */
  recordsAfter(seq: number): RecordsAfter {
    const count = this.records.getKeysCount({ start: seq + 1 });
    if (count === 0) return { count };
    for (const key of this.records.getKeys({ start: seq + 1, limit: 1 })) return { count, first_seq: key };
    return { count };
  }

  /** The seq from which this node sealed the log's records as the group's leader, if it did. */
  leaderSealsFromSeq(): number | undefined {
    return this.seals.fromSeq();
  }

  /** Removes the leader's mark, flushed (the log is now a prefix of the group's). */
  async forgetLeaderSeals(): Promise<void> {
    await this.seals.set(undefined);
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
