// An existing ledger becoming a replicated group: the first leader of an empty group uploads the log it
// already has, record by record in order, under its term, with the same append every leader uses (so
// the term and the chain are checked by PostgreSQL as for any record), `records_per_batch` pipelined
// at a time. It answers the first seq of the last record uploaded: where the leader's own appends go on.

import { appendRecord } from './postgres/postgres-log-store.js';
import type { PostgresClient } from './postgres/postgres-client.js';
import type { LmdbLog } from '../wal/lmdb-log.js';

export async function uploadLog(log: LmdbLog, client: PostgresClient, term: number, recordsPerBatch: number): Promise<number> {
  let previous = 0;
  let batch: Array<Promise<void>> = [];
  for (const logRecord of log.logRecords(1)) {
    const bytes = log.rawRecord(logRecord.first_seq);
    if (!bytes) throw new Error(`the local log has no record at seq ${logRecord.first_seq}`);
    batch.push(appendRecord(client, { term, first_seq: logRecord.first_seq, last_seq: logRecord.last_seq, previous_first_seq: previous, bytes }));
    previous = logRecord.first_seq;
    if (batch.length >= recordsPerBatch) {
      await Promise.all(batch);
      batch = [];
    }
  }
  await Promise.all(batch);
  return previous;
}
