// What the reconciliation routes need from the running ledger, declared as they use it: runtime/ wires the
// runner (reconciliation/) and the query index behind it.

import type { RunResults, StartReconciliationCommand } from '../../engine/decide-reconciliation.js';
import type { Outcome } from '../../engine/result.js';
import type {
  ExternalRecord,
  ReconciliationMatch,
  ReconciliationRecord,
  ReconciliationStrategy,
} from '../../engine/reconciliation-records.js';
import type { QueryResult } from './query-port.js';

export interface InstantRun {
  strategy: ReconciliationStrategy;
  grouping_criteria: string;
  matching_rule_ids: string[];
}

export interface UnmatchedEntry {
  reason: string;
  record: ExternalRecord;
}

/** A background dry run's results and the records it matched (kept in memory only). */
export interface DryRunResults {
  results: RunResults;
  records: ExternalRecord[];
}

export interface ReconciliationPort {
  /** Records a background run (or, dry, keeps it in memory) and queues it. */
  startBackground(command: StartReconciliationCommand, dryRun: boolean): Promise<Outcome<ReconciliationRecord>>;
  /** Matches the records now and answers with the finished run. */
  runInstant(request: InstantRun, records: ExternalRecord[], dryRun: boolean): Promise<Outcome<{ record: ReconciliationRecord; results: RunResults }>>;
  /** A run's record: a recorded run, or a background dry run kept in memory. */
  record(reconciliationId: string): ReconciliationRecord | undefined | Promise<ReconciliationRecord | undefined>;
  /** A background dry run's results and records (memory only), if the id is one. */
  dryRun(reconciliationId: string): DryRunResults | undefined | Promise<DryRunResults | undefined>;
  /** A page of a recorded run's matches, in upload order, once the index holds `visibleSeq`. */
  matches(reconciliationId: string, offset: number, limit: number, visibleSeq: number): Promise<QueryResult<ReconciliationMatch[]>>;
  unmatched(reconciliationId: string, uploadId: string, offset: number, limit: number, visibleSeq: number): Promise<QueryResult<UnmatchedEntry[]>>;
}
