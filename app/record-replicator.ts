// The leader's replicator (wal/lmdb-log.ts RecordReplicator): each sealed record becomes one INSERT on
// the leader's own pipelined connection (replication/postgres-log-store.ts), carrying the leader's term
// and the first seq of the record before it, so PostgreSQL takes it only from the current leader and only
// right after the log's end. The first refusal or error ends it: that record and every later one are
// refused to their waiters with REPL_NOT_LEADER (a 503: the outcome of those writes is unknown to the
// client, which retries with the same reference), and the node steps down and rejoins.

import { ApiError, BACKPRESSURE_RETRY_AFTER_SECONDS } from '../http/api-error.js';
import type { PostgresClient } from '../replication/postgres-client.js';
import { appendRecord } from '../replication/postgres-log-store.js';
import type { RecordReplicator, SealedRecord } from '../wal/lmdb-log.js';

export class PostgresRecordReplicator implements RecordReplicator {
  private failure: ApiError | undefined;
  /** Why replication stopped, as it was found (for the log of the step-down). */
  cause: Error | undefined;

  constructor(
    private readonly client: PostgresClient,
    readonly term: number,
    /** The first seq of the last record in the group's log when this leader began (0: empty). */
    private previousFirstSeq: number,
  ) {}

  replicate(record: SealedRecord): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    const append = {
      term: this.term, first_seq: record.first_seq, last_seq: record.last_seq, previous_first_seq: this.previousFirstSeq, bytes: record.bytes,
    };
    this.previousFirstSeq = record.first_seq;
    return appendRecord(this.client, append).catch((error: Error) => {
      throw this.stop(error);
    });
  }

  /** Refuses everything from now on; the error every waiter gets. */
  stop(cause: Error): ApiError {
    this.cause ??= cause;
    this.failure ??= notLeader();
    return this.failure;
  }
}

/** The refusal of a write this node could not get committed by the group. */
export function notLeader(): ApiError {
  return new ApiError('REPL_NOT_LEADER', 'this node lost the lead before the write was committed: its outcome is unknown; retry it with the same reference', undefined, {
    'Retry-After': String(BACKPRESSURE_RETRY_AFTER_SECONDS),
  });
}
