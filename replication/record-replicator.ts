// The leader's replicator (wal/lmdb-log.ts RecordReplicator): sealed records are committed in the
// group's log (replication/postgres/postgres-log-store.ts) on the leader's own pipelined connection, each
// statement carrying the leader's term and the first seq of the record before its first one, so
// PostgreSQL takes it only from the current leader and only right after the log's end.
//
// Group commit across the network: the log hands each record over as it hands it to LMDB, so its
// PostgreSQL commit runs while its local fsync does. Up to `statements_in_flight_max` statements are on
// the wire at once; records sealed while they are gather here and go out together, up to
// RECORDS_PER_APPEND_MAX records or `batch_bytes_max` bytes a statement, as one multi-row INSERT: one
// transaction and one WAL flush in PostgreSQL for the lot. Each record's promise resolves when the
// statement holding it has committed; the log acknowledges a write only once its record's fsync and
// commit have both reported, and every earlier record's too.
//
// The first refusal or error ends it: that record and every later one (sent or still gathering) are
// refused to their waiters with REPL_NOT_LEADER (a 503: the outcome of those writes is unknown to the
// client, which retries with the same reference), and the node steps down and rejoins.

import { NodeRefusal } from '../http/ports/node-refusal.js';
import type { PostgresClient } from './postgres/postgres-client.js';
import { appendRecords, RECORDS_PER_APPEND_MAX } from './postgres/postgres-log-store.js';
import type { RecordReplicator, SealedRecord } from '../wal/lmdb-log.js';

export interface ReplicatorLimits {
  /** Statements sent and not yet answered. */
  statements_in_flight_max: number;
  /** Bytes of records in one statement (a single larger record still goes, alone). */
  batch_bytes_max: number;
}

export const DEFAULT_REPLICATOR_LIMITS: ReplicatorLimits = {
  statements_in_flight_max: 2,
  batch_bytes_max: 8 * 1024 * 1024,
};

interface Gathered {
  record: SealedRecord;
  resolve: () => void;
  reject: (error: Error) => void;
}

export class PostgresRecordReplicator implements RecordReplicator {
  private failure: NodeRefusal | undefined;
  /** Why replication stopped, as it was found (for the log of the step-down). */
  cause: Error | undefined;
  /** Records handed over and not yet sent, in log order. */
  private gathered: Gathered[] = [];
  /** Records sent in statements not yet answered, in log order. */
  private readonly sent = new Set<Gathered>();
  private statementsInFlight = 0;

  constructor(
    private readonly client: PostgresClient,
    readonly term: number,
    /** The first seq of the last record in the group's log when this leader began (0: empty). */
    private previousFirstSeq: number,
    private readonly limits: ReplicatorLimits = DEFAULT_REPLICATOR_LIMITS,
  ) {}

  replicate(record: SealedRecord): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise<void>((resolve, reject) => {
      this.gathered.push({ record, resolve, reject });
      this.send();
    });
  }

  /** Sends what is gathered, one statement at a time, while fewer than the limit are in flight. */
  private send(): void {
    while (!this.failure && this.gathered.length > 0 && this.statementsInFlight < this.limits.statements_in_flight_max) {
      let bytes = 0;
      let count = 0;
      for (const { record } of this.gathered) {
        if (count === RECORDS_PER_APPEND_MAX || (count > 0 && bytes + record.bytes.length > this.limits.batch_bytes_max)) break;
        bytes += record.bytes.length;
        count += 1;
      }
      const batch = this.gathered.splice(0, count);
      for (const item of batch) this.sent.add(item);
      const append = { term: this.term, previous_first_seq: this.previousFirstSeq, records: batch.map((item) => item.record) };
      this.previousFirstSeq = batch[batch.length - 1]!.record.first_seq;
      this.statementsInFlight += 1;
      appendRecords(this.client, append).then(
        () => {
          this.statementsInFlight -= 1;
          for (const item of batch) {
            this.sent.delete(item);
            item.resolve();
          }
          this.send();
        },
        (error: Error) => {
          this.statementsInFlight -= 1;
          this.stop(error);
        },
      );
    }
  }

  /** Refuses everything from now on, including every record sent and not yet answered; the error every waiter gets. */
  stop(cause: Error): NodeRefusal {
    this.cause ??= cause;
    this.failure ??= notLeader();
    const failure = this.failure;
    for (const item of [...this.sent, ...this.gathered.splice(0)]) item.reject(failure);
    this.sent.clear();
    return failure;
  }
}

/** The refusal of a write this node could not get committed by the group. */
export function notLeader(): NodeRefusal {
  return new NodeRefusal('REPL_NOT_LEADER');
}
