// Runs reconciliations. A run is recorded in the log before it starts (`reconciliation.started`, so the
// client's 201 names a run that survives a crash), reports progress as it goes, and ends with its results
// and the marks on matched transactions recorded all at once (`reconciliation.completed`) or with a
// reason (`reconciliation.failed`). The server's notification webhook hears of both from the log itself
// (hooks/reconciliation-notifications.ts), so a crash right after the event cannot lose the message.
//
//   background  POST /reconciliation/start: queued, one run at a time, over an upload's records read
//               back from the query index.
//   instant     POST /reconciliation/start-instant: up to 10,000 records in the request, matched at once
//               and answered with the result. Not a dry run: the records are stored as an upload first.
//   dry run     either kind with dry_run: nothing is written, not even the run's record; a background dry
//               run's record and results are kept in memory only (the newest `dry_runs_kept`), for GET.
//
// A run cut off by a restart (found `started` or `in_progress` at start-up) is taken up again from the
// beginning: its results are only ever recorded whole, so there is nothing half-done to undo. After
// `attempts_max` attempts it is marked failed instead, so a run that brings the server down cannot do
// so forever.

import type { CommandOf, CommandOp } from '../engine/commands.js';
import type { ResultOf } from '../engine/ledger-engine.js';
import type { LedgerView } from '../engine/ledger-view.js';
import type { RunResults, StartReconciliationCommand } from '../engine/decide-reconciliation.js';
import { rulesRefusal } from '../engine/decide-reconciliation.js';
import type { Clock, IdSource } from '../engine/ports.js';
import type { Rejection } from '../engine/rejections.js';
import { reject } from '../engine/rejections.js';
import type { Outcome } from '../engine/result.js';
import type {
  ExternalRecord,
  MatchingRuleRecord,
  ReconciliationRecord,
  ReconciliationStrategy,
} from '../engine/reconciliation-records.js';
import type { CandidateSource } from './candidate-source.js';
import { RunBoundExceeded } from './candidate-finder.js';
import { matchRecords, DEFAULT_MATCHER_LIMITS, type MatcherLimits } from './matcher.js';

export interface RunnerLimits {
  /** Background runs waiting for their turn; more are refused (503) before anything is recorded. */
  queued_runs_max: number;
  /** Instant runs matching at once; more are refused (503). */
  instant_runs_concurrent_max: number;
  /** Attempts of a run interrupted by restarts before it is marked failed. */
  attempts_max: number;
  /** Background dry runs whose results are kept in memory. */
  dry_runs_kept: number;
  /** How long a run waits for the query index to hold what it must read. */
  index_wait_ms: number;
}

export const DEFAULT_RUNNER_LIMITS: RunnerLimits = {
  queued_runs_max: 100,
  instant_runs_concurrent_max: 2,
  attempts_max: 3,
  dry_runs_kept: 16,
  index_wait_ms: 30_000,
};

/** What a run reads: candidates and an upload's records, from the query index as of a log seq. */
export interface RunReads {
  candidates(asOfSeq: number, waitMs: number): CandidateSource;
  uploadRecords(asOfSeq: number, waitMs: number, uploadId: string, count: number): Promise<ExternalRecord[]>;
}

/** The ledger as a run uses it: commands to record runs, and reads of rules, uploads and runs. */
export interface RunnerLedger {
  run<K extends CommandOp>(command: CommandOf<K>): Outcome<ResultOf<K>>;
  readonly view: LedgerView;
}

export interface RunnerDependencies {
  ledger: RunnerLedger;
  durable(seq: number): Promise<void>;
  visibleSeq(): number;
  reads: RunReads;
  ids: IdSource;
  clock: Clock;
  limits?: Partial<RunnerLimits>;
  matcherLimits?: MatcherLimits;
  onError?: (error: Error, reconciliationId: string) => void;
}

export interface RunRequest {
  strategy: ReconciliationStrategy;
  grouping_criteria: string;
  matching_rule_ids: string[];
}

export interface FinishedRun {
  record: ReconciliationRecord;
  results: RunResults;
}

/** A refusal of a start: a rejection of the engine's, or the runner's own for load. */
export type StartRefusal = Rejection;

interface DryRun extends FinishedRun {
  uploadRecords?: ExternalRecord[];
}

/** A run stopped because the server is closing: it stays in progress in the log and resumes at the next start. */
class RunStopped extends Error {}

export class ReconciliationRunner {
  private readonly limits: RunnerLimits;
  private readonly queue: Array<() => Promise<void>> = [];
  private running: Promise<void> | undefined;
  private instantRuns = 0;
  /** Set until work starts, and while it is paused (a fence, a shutdown): nothing is appended then. */
  private stopped = true;
  /** Background dry runs, oldest first. */
  private readonly dryRuns = new Map<string, DryRun>();

  constructor(private readonly deps: RunnerDependencies) {
    this.limits = { ...DEFAULT_RUNNER_LIMITS, ...deps.limits };
  }

  // ---- starting runs ----

  /** Records a background run and queues it; the answer is durable when it resolves. */
  async startBackground(command: StartReconciliationCommand, dryRun: boolean): Promise<Outcome<ReconciliationRecord>> {
    if (this.queue.length >= this.limits.queued_runs_max) return busy(`${this.queue.length} reconciliations are waiting; try again later`);
    if (dryRun) return this.startDryBackground(command);
    const outcome = this.deps.ledger.run({ op: 'reconciliation.start', ...command });
    if (!outcome.ok) return outcome;
    await this.deps.durable(outcome.seq);
    this.enqueue(outcome.value.reconciliation_id);
    return outcome;
  }

  private startDryBackground(command: StartReconciliationCommand): Outcome<ReconciliationRecord> {
    const { view } = this.deps.ledger;
    const upload = view.upload(command.upload_id);
    if (!upload) return { ok: false, rejection: reject('RECON_UPLOAD_NOT_FOUND', `upload ${command.upload_id} not found`) };
    const refusal = rulesRefusal((ruleId) => view.matchingRule(ruleId), command.matching_rule_ids);
    if (refusal) return { ok: false, rejection: refusal };
    const record = this.newDryRecord(command, upload.upload_id, upload.source, upload.record_count);
    const asOf = this.deps.visibleSeq();
    this.keepDryRun({ record, results: { matches: [], unmatched: [] } });
    this.queue.push(async () => {
      try {
        record.status = 'in_progress';
        const records = await this.deps.reads.uploadRecords(asOf, this.limits.index_wait_ms, upload.upload_id, upload.record_count);
        const results = await this.match(asOf, command, records, true, (processed) => {
          record.processed_count = processed;
        });
        this.keepDryRun({ record: completed(record, results, this.deps.clock.now()), results, uploadRecords: records });
      } catch (error) {
        Object.assign(record, { status: 'failed', failure_reason: (error as Error).message, completed_at: this.deps.clock.now() });
      }
    });
    this.pump();
    return { ok: true, value: record, seq: asOf };
  }

  /**
   * An instant run over records given in the request. Not dry: the records become an upload and the run
   * is recorded with it (in one log record), then matched at once and completed.
   */
  async runInstant(request: RunRequest, records: ExternalRecord[], dryRun: boolean): Promise<Outcome<FinishedRun>> {
    if (this.instantRuns >= this.limits.instant_runs_concurrent_max) return busy('too many instant reconciliations at once; try again shortly');
    const asOf = this.deps.visibleSeq();
    const refusal = rulesRefusal((ruleId) => this.deps.ledger.view.matchingRule(ruleId), request.matching_rule_ids);
    if (refusal) return { ok: false, rejection: refusal };
    this.instantRuns += 1;
    try {
      if (dryRun) {
        const record = this.newDryRecord({ ...request, upload_id: '' }, '', 'instant', records.length);
        let results: RunResults;
        try {
          results = await this.match(asOf, request, records, false, () => undefined);
        } catch (error) {
          // A run that reached one of its bounds fails with the reason, as a recorded one does.
          if (!(error instanceof RunBoundExceeded)) throw error;
          Object.assign(record, { status: 'failed', failure_reason: error.message, completed_at: this.deps.clock.now() });
          return { ok: true, value: { record, results: { matches: [], unmatched: [] } }, seq: asOf };
        }
        return { ok: true, value: { record: completed(record, results, this.deps.clock.now()), results }, seq: asOf };
      }
      const { ledger } = this.deps;
      const upload = ledger.run({ op: 'reconciliation.upload', upload: { source: 'instant', kind: 'instant', records } });
      if (!upload.ok) return upload;
      const started = ledger.run({ op: 'reconciliation.start', ...request, upload_id: upload.value.upload_id });
      if (!started.ok) return started;
      await this.deps.durable(started.seq);
      return await this.carryOut(started.value, asOf, records, false);
    } finally {
      this.instantRuns -= 1;
    }
  }

  // ---- background work ----

  /**
   * Starts work, taking up runs a restart (or a pause) cut off: call once the index is open and the
   * ledger may append.
   */
  resumeInterrupted(): void {
    this.stopped = false;
    const { ledger } = this.deps;
    for (const record of ledger.view.reconciliations()) {
      if (record.status !== 'started' && record.status !== 'in_progress') continue;
      if (record.attempts >= this.limits.attempts_max) {
        const reason = `interrupted by a restart ${record.attempts} times; not resumed again`;
        ledger.run({ op: 'reconciliation.fail', reconciliation_id: record.reconciliation_id, reason });
        continue;
      }
      const resumed = ledger.run({ op: 'reconciliation.resume', reconciliation_id: record.reconciliation_id });
      if (resumed.ok) this.enqueue(record.reconciliation_id);
    }
  }

  private enqueue(reconciliationId: string): void {
    this.queue.push(async () => {
      const record = this.deps.ledger.view.reconciliation(reconciliationId);
      if (!record || record.status === 'completed' || record.status === 'failed') return;
      const asOf = this.deps.visibleSeq();
      try {
        const upload = this.deps.ledger.view.upload(record.upload_id);
        if (!upload) throw new Error(`upload ${record.upload_id} is gone`);
        const records = await this.deps.reads.uploadRecords(asOf, this.limits.index_wait_ms, upload.upload_id, upload.record_count);
        await this.carryOut(record, asOf, records, true);
      } catch (error) {
        if (error instanceof RunStopped) return;
        await this.fail(reconciliationId, (error as Error).message);
      }
    });
    this.pump();
  }

  private pump(): void {
    if (this.running || this.stopped) return;
    const next = this.queue.shift();
    if (!next) return;
    this.running = next().finally(() => {
      this.running = undefined;
      this.pump();
    });
  }

  /** Matches a recorded run and records the outcome; a failure is recorded as the run's failure. */
  private async carryOut(record: ReconciliationRecord, asOf: number, records: ExternalRecord[], stoppable: boolean): Promise<Outcome<FinishedRun>> {
    const { ledger } = this.deps;
    const id = record.reconciliation_id;
    let results: RunResults;
    try {
      results = await this.match(asOf, record, records, stoppable, async (processed) => {
        if (processed >= records.length) return;
        const progress = ledger.run({ op: 'reconciliation.progress', reconciliation_id: id, processed });
        if (progress.ok) await this.deps.durable(progress.seq);
      });
    } catch (error) {
      if (error instanceof RunStopped) throw error;
      const failed = await this.fail(id, (error as Error).message);
      return failed ?? { ok: false, rejection: reject('RECON_NOT_FOUND', `reconciliation ${id} not found`) };
    }
    const completed = ledger.run({ op: 'reconciliation.complete', reconciliation_id: id, results });
    if (!completed.ok) return completed;
    await this.deps.durable(completed.seq);
    return { ok: true, value: { record: completed.value, results }, seq: completed.seq };
  }

  private async fail(reconciliationId: string, reason: string): Promise<Outcome<FinishedRun> | undefined> {
    this.deps.onError?.(new Error(reason), reconciliationId);
    const failed = this.deps.ledger.run({ op: 'reconciliation.fail', reconciliation_id: reconciliationId, reason });
    if (!failed.ok) return undefined;
    await this.deps.durable(failed.seq);
    return { ok: true, value: { record: failed.value, results: { matches: [], unmatched: [] } }, seq: failed.seq };
  }

  private async match(
    asOf: number,
    request: RunRequest,
    records: ExternalRecord[],
    stoppable: boolean,
    onProgress: (processed: number) => void | Promise<void>,
  ): Promise<RunResults> {
    const rules = request.matching_rule_ids.map((ruleId) => this.deps.ledger.view.matchingRule(ruleId));
    if (rules.some((rule) => rule === undefined)) throw new Error('a matching rule of this run was deleted before it ran');
    const source = this.deps.reads.candidates(asOf, this.limits.index_wait_ms);
    return matchRecords(source, {
      strategy: request.strategy,
      grouping_criteria: request.grouping_criteria,
      rules: rules as MatchingRuleRecord[],
      records,
    }, async (processed) => {
      if (stoppable && this.stopped) throw new RunStopped('work is paused');
      await onProgress(processed);
    }, this.deps.matcherLimits ?? DEFAULT_MATCHER_LIMITS);
  }

  // ---- dry runs and reads ----

  private newDryRecord(command: RunRequest & { upload_id: string }, uploadId: string, source: string, total: number): ReconciliationRecord {
    return {
      reconciliation_id: this.deps.ids.next('recon'),
      upload_id: uploadId,
      source,
      strategy: command.strategy,
      grouping_criteria: command.grouping_criteria,
      matching_rule_ids: [...command.matching_rule_ids],
      is_dry_run: true,
      status: 'started',
      started_at: this.deps.clock.now(),
      completed_at: 0,
      matched_transactions: 0,
      unmatched_transactions: 0,
      processed_count: 0,
      total_count: total,
      failure_reason: '',
      attempts: 1,
    };
  }

  private keepDryRun(run: DryRun): void {
    this.dryRuns.delete(run.record.reconciliation_id);
    this.dryRuns.set(run.record.reconciliation_id, run);
    while (this.dryRuns.size > this.limits.dry_runs_kept) {
      const oldest = this.dryRuns.keys().next().value as string;
      this.dryRuns.delete(oldest);
    }
  }

  /** A run's record: recorded runs from the engine's state, background dry runs from memory. */
  record(reconciliationId: string): ReconciliationRecord | undefined {
    return this.deps.ledger.view.reconciliation(reconciliationId) ?? this.dryRuns.get(reconciliationId)?.record;
  }

  /** A background dry run's results and records, if it is one (kept in memory only). */
  dryRun(reconciliationId: string): { results: RunResults; records: ExternalRecord[] } | undefined {
    const run = this.dryRuns.get(reconciliationId);
    if (!run) return undefined;
    return { results: run.results, records: run.uploadRecords ?? [] };
  }

  /**
   * Stops work: queued runs are dropped (recorded ones stay `started` and are taken up again by
   * resumeInterrupted), the one running stops at its next batch, still in progress.
   */
  async pause(): Promise<void> {
    this.stopped = true;
    this.queue.length = 0;
    await this.running?.catch(() => undefined);
  }
}

function busy(message: string): Outcome<never> {
  return { ok: false, rejection: reject('QUEUE_BACKPRESSURE', message) };
}

function completed(record: ReconciliationRecord, results: RunResults, now: number): ReconciliationRecord {
  return Object.assign(record, {
    status: 'completed',
    completed_at: now,
    processed_count: record.total_count,
    matched_transactions: results.matches.length,
    unmatched_transactions: results.unmatched.length,
  } satisfies Partial<ReconciliationRecord>);
}
