// Records at the log's end that follow a record the disk never took. Each record is its own LMDB put,
// and with overlappingSync two are in flight at once (wal/lmdb-log.ts): when one commit fails (a full
// disk answers EIO) the process stops, but lmdb-js may still commit the next record, already queued, once
// space comes back, so the log on disk holds 1..493 and 496.. with 494-495 missing. No record past such a
// gap was ever durable in the log's sense, so none was ever acknowledged: the durable seq only moves over
// records in order, and the one before them never flushed (LmdbLog.advanceDurable). They are dropped when
// the log is opened, before anything reads it, so the node restarts where its disk really ends instead of
// refusing to open a log whose chain breaks. A gap further back than a writer can have in flight is not
// this: it is left for the chain check to refuse (log-record-codec.ts checkedRecords).

import type { Database } from 'lmdb';
import { CorruptRecordError, openLogRecord } from './log-record-codec.js';

/**
 * How many records past a gap may be dropped: far more than a writer ever has in flight
 * (records_in_flight_max is 2 by default), and few enough that nothing but a failed write explains them.
 */
export const RECORDS_PAST_GAP_MAX = 64;

export interface GapAtEnd {
  /** The last seq before the gap: the log ends here now. */
  kept_seq: number;
  /** The first seq of the records dropped, and how many. */
  dropped_from_seq: number;
  records_dropped: number;
}

/** Drops the records that follow a gap near the log's end (in one transaction); what it dropped, if any. */
export function dropRecordsPastGapAtEnd(records: Database<Buffer, number>): GapAtEnd | undefined {
  // Newest first: the last RECORDS_PAST_GAP_MAX records and the one before them, headers only matter.
  // A record that does not open ends the look: what is behind it is not this (and a start-up that needs
  // no record that far back must not fail on it: test/snapshot-startup.int.test.ts); the chain check
  // names it to whoever reads it.
  const newestFirst: Array<{ first_seq: number; last_seq: number }> = [];
  for (const { key, value } of records.getRange({ reverse: true, limit: RECORDS_PAST_GAP_MAX + 1 })) {
    let opened: { first_seq: number; last_seq: number };
    try {
      opened = openLogRecord(key, value);
    } catch (error) {
      if (error instanceof CorruptRecordError) break;
      throw error;
    }
    newestFirst.push({ first_seq: opened.first_seq, last_seq: opened.last_seq });
  }
  // The oldest break in that window: everything after it goes.
  let cut: { kept_seq: number; dropped_from_seq: number; records_dropped: number } | undefined;
  for (let newer = 0; newer + 1 < newestFirst.length; newer += 1) {
    const older = newestFirst[newer + 1] as { last_seq: number };
    const after = newestFirst[newer] as { first_seq: number };
    if (after.first_seq !== older.last_seq + 1) cut = { kept_seq: older.last_seq, dropped_from_seq: after.first_seq, records_dropped: newer + 1 };
  }
  if (!cut) return undefined;
  const keys = [...records.getKeys({ start: cut.kept_seq + 1 })];
  records.transactionSync(() => {
    for (const key of keys) records.removeSync(key);
  });
  return cut;
}
