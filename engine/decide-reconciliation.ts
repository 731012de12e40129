// Decisions for reconciliation: matching rules (create, update, delete), uploads of external records,
// and the life of a run (started -> in_progress -> completed | failed). Matching itself happens outside
// the engine (reconciliation/), reading the query index; what it found comes back here to be recorded:
// the results in chunks and the marks on matched transactions as metadata patches, all decided at once
// so the events go into one log record (a run is completed wholly or not at all).

import type { LedgerEvent, MetadataPatch } from './events.js';
import type { LedgerState } from './ledger-state.js';
import { checkRule, type RuleCommand } from './matching-rules.js';
import type { IdSource } from './ports.js';
import {
  EXTERNAL_RECORDS_MAX,
  RECONCILIATION_CHUNK_ROWS_MAX,
  RUN_RULES_MAX,
  type ExternalRecord,
  type ExternalRecordsChunk,
  type MatchingRuleRecord,
  type ReconciliationMatch,
  type ReconciliationRecord,
  type ReconciliationStrategy,
  type UnmatchedExternal,
  type UploadKind,
  type UploadRecord,
} from './reconciliation-records.js';
import type { RegistryDecision } from './decide-registry.js';
import { assert } from './assert.js';
import { reject } from './rejections.js';
import { accept, refuse, type Decided } from './result.js';

function decided<T>(record: T, event: LedgerEvent): RegistryDecision<T> {
  return accept({ record, event });
}

// ---- matching rules ----

export function decideCreateMatchingRule(command: RuleCommand, now: number, ids: IdSource): RegistryDecision<MatchingRuleRecord> {
  const checked = checkRule(command);
  if (!checked.ok) return refuse(reject('RECON_RULE_INVALID', `invalid matching rule: ${checked.rejection.message}`));
  const rule: MatchingRuleRecord = {
    rule_id: ids.next('rule'), name: command.name, description: command.description, criteria: checked.value, created_at: now, updated_at: now,
  };
  return decided(rule, { type: 'matching_rule.created', at: now, matching_rules: [rule] });
}

export function decideUpdateMatchingRule(state: LedgerState, ruleId: string, command: RuleCommand, now: number): RegistryDecision<MatchingRuleRecord> {
  const current = state.matchingRules.get(ruleId);
  if (!current) return refuse(reject('RECON_RULE_NOT_FOUND', `matching rule ${ruleId} not found`));
  const checked = checkRule(command);
  if (!checked.ok) return refuse(reject('RECON_RULE_INVALID', `invalid matching rule: ${checked.rejection.message}`));
  const rule: MatchingRuleRecord = { ...current, name: command.name, description: command.description, criteria: checked.value, updated_at: now };
  return decided(rule, { type: 'matching_rule.updated', at: now, matching_rules: [rule] });
}

export function decideDeleteMatchingRule(state: LedgerState, ruleId: string, now: number): RegistryDecision<MatchingRuleRecord> {
  const current = state.matchingRules.get(ruleId);
  if (!current) return refuse(reject('RECON_RULE_NOT_FOUND', `matching rule ${ruleId} not found`));
  return decided(current, { type: 'matching_rule.deleted', at: now, deleted_matching_rules: [ruleId] });
}

// ---- uploads ----

export interface UploadCommand {
  source: string;
  kind: UploadKind;
  /** Checked by the edge: at most EXTERNAL_RECORDS_MAX, ids unique, amounts exact. */
  records: ExternalRecord[];
}

/** An upload as one event: its summary and its records in chunks (never an event per record). */
export function decideUpload(command: UploadCommand, now: number, ids: IdSource): RegistryDecision<UploadRecord> {
  assert(command.records.length <= EXTERNAL_RECORDS_MAX, 'upload over the record limit reached the engine');
  const upload: UploadRecord = { upload_id: ids.next('upload'), source: command.source, record_count: command.records.length, kind: command.kind, created_at: now };
  const chunks: ExternalRecordsChunk[] = [];
  for (let start = 0; start < command.records.length; start += RECONCILIATION_CHUNK_ROWS_MAX) {
    chunks.push({ upload_id: upload.upload_id, first_position: start, records: command.records.slice(start, start + RECONCILIATION_CHUNK_ROWS_MAX) });
  }
  return decided(upload, { type: 'reconciliation.uploaded', at: now, uploads: [upload], external_records: chunks });
}

// ---- runs ----

export interface StartReconciliationCommand {
  upload_id: string;
  strategy: ReconciliationStrategy;
  /** '' for one_to_one; the edge has checked it against the strategy's grouping fields. */
  grouping_criteria: string;
  matching_rule_ids: string[];
}

/** A run's record, once its upload and rules are known to exist and to suit the strategy. */
export function decideStartReconciliation(
  state: LedgerState,
  command: StartReconciliationCommand,
  now: number,
  ids: IdSource,
): RegistryDecision<ReconciliationRecord> {
  const upload = state.uploads.get(command.upload_id);
  if (!upload) return refuse(reject('RECON_UPLOAD_NOT_FOUND', `upload ${command.upload_id} not found`));
  const refusal = rulesRefusal((ruleId) => state.matchingRules.get(ruleId), command.matching_rule_ids);
  if (refusal) return refuse(refusal);
  const record: ReconciliationRecord = {
    reconciliation_id: ids.next('recon'),
    upload_id: upload.upload_id,
    source: upload.source,
    strategy: command.strategy,
    grouping_criteria: command.grouping_criteria,
    matching_rule_ids: [...command.matching_rule_ids],
    is_dry_run: false,
    status: 'started',
    started_at: now,
    completed_at: 0,
    matched_transactions: 0,
    unmatched_transactions: 0,
    processed_count: 0,
    total_count: upload.record_count,
    failure_reason: '',
    attempts: 1,
  };
  return decided(record, { type: 'reconciliation.started', at: now, reconciliations: [record] });
}

/**
 * The rules of a run: each must exist. Every rule serves every strategy (matching-rules.ts ruleLookup):
 * one a run cannot look up through an index is answered by a bounded scan, not refused.
 */
export function rulesRefusal(ruleOf: (ruleId: string) => MatchingRuleRecord | undefined, ruleIds: string[]): ReturnType<typeof reject> | undefined {
  if (ruleIds.length > RUN_RULES_MAX) return reject('RECON_RULE_INVALID', `at most ${RUN_RULES_MAX} matching rules per run`);
  for (const ruleId of ruleIds) {
    if (!ruleOf(ruleId)) return reject('RECON_RULE_NOT_FOUND', `matching rule ${ruleId} not found`);
  }
  return undefined;
}

function runOf(state: LedgerState, reconciliationId: string): Decided<ReconciliationRecord> {
  const record = state.reconciliations.get(reconciliationId);
  if (!record) return refuse(reject('RECON_NOT_FOUND', `reconciliation ${reconciliationId} not found`));
  if (record.status === 'completed' || record.status === 'failed') {
    return refuse(reject('GEN_CONFLICT', `reconciliation ${reconciliationId} is already ${record.status}`));
  }
  return accept(record);
}

/** A run at work: how many external records it has looked at. */
export function decideReconciliationProgress(state: LedgerState, reconciliationId: string, processed: number, now: number): RegistryDecision<ReconciliationRecord> {
  const current = runOf(state, reconciliationId);
  if (!current.ok) return current;
  const record: ReconciliationRecord = { ...current.value, status: 'in_progress', processed_count: processed };
  return decided(record, { type: 'reconciliation.progressed', at: now, reconciliations: [record] });
}

/** A run cut off by a restart, taken up again from the start (its results were never recorded). */
export function decideResumeReconciliation(state: LedgerState, reconciliationId: string, now: number): RegistryDecision<ReconciliationRecord> {
  const current = runOf(state, reconciliationId);
  if (!current.ok) return current;
  const record: ReconciliationRecord = { ...current.value, status: 'started', processed_count: 0, attempts: current.value.attempts + 1 };
  return decided(record, { type: 'reconciliation.progressed', at: now, reconciliations: [record] });
}

export function decideFailReconciliation(state: LedgerState, reconciliationId: string, reason: string, now: number): RegistryDecision<ReconciliationRecord> {
  const current = runOf(state, reconciliationId);
  if (!current.ok) return current;
  const record: ReconciliationRecord = { ...current.value, status: 'failed', failure_reason: reason, completed_at: now };
  return decided(record, { type: 'reconciliation.failed', at: now, reconciliations: [record] });
}

export interface RunResults {
  matches: ReconciliationMatch[];
  unmatched: UnmatchedExternal[];
}

/**
 * A finished run: its results in chunks, then the marks on the transactions it matched (metadata
 * patches, in transaction id order, so that applying them reads the ledger's records in log order),
 * then the completed record.
 *
 * A mark is a fixed set of small system keys (reconciliation_id, reconciled_at, external_transaction_id
 * and, when several records matched one transaction, external_transaction_count): at most a few hundred
 * bytes, and a later run's mark replaces it. It is written whatever the transaction's metadata already
 * holds, so the 64 KiB bound on what clients write may be exceeded by that much; checking would mean
 * reading every matched transaction back, which is most of the cost of a large run.
 */
export function decideCompleteReconciliation(
  state: LedgerState,
  reconciliationId: string,
  results: RunResults,
  now: number,
): Decided<{ record: ReconciliationRecord; events: LedgerEvent[] }> {
  const current = runOf(state, reconciliationId);
  if (!current.ok) return current;
  const events: LedgerEvent[] = [];
  let unmatchedFrom = 0;
  for (let start = 0; start < results.matches.length || unmatchedFrom < results.unmatched.length; start += RECONCILIATION_CHUNK_ROWS_MAX) {
    const matches = results.matches.slice(start, start + RECONCILIATION_CHUNK_ROWS_MAX);
    const room = RECONCILIATION_CHUNK_ROWS_MAX - matches.length;
    const unmatched = results.unmatched.slice(unmatchedFrom, unmatchedFrom + room);
    unmatchedFrom += unmatched.length;
    events.push({ type: 'reconciliation.results', at: now, reconciliation_results: [{ reconciliation_id: reconciliationId, matches, unmatched }] });
  }
  const marks = marksFor(state, results.matches, reconciliationId, new Date(now).toISOString());
  for (let start = 0; start < marks.length; start += RECONCILIATION_CHUNK_ROWS_MAX) {
    events.push({ type: 'reconciliation.results', at: now, metadata_patches: marks.slice(start, start + RECONCILIATION_CHUNK_ROWS_MAX) });
  }
  const record: ReconciliationRecord = {
    ...current.value,
    status: 'completed',
    completed_at: now,
    processed_count: current.value.total_count,
    matched_transactions: results.matches.length,
    unmatched_transactions: results.unmatched.length,
  };
  events.push({ type: 'reconciliation.completed', at: now, reconciliations: [record] });
  return accept({ record, events });
}

/** One mark per matched transaction, in id order (version-7 ids: the order they were recorded in). */
function marksFor(state: LedgerState, matches: ReconciliationMatch[], reconciliationId: string, reconciledAt: string): MetadataPatch[] {
  const byInternal = new Map<string, { first: string; count: number }>();
  for (const match of matches) {
    for (const internalId of match.internal_ids) {
      const seen = byInternal.get(internalId);
      if (seen) seen.count += 1;
      else byInternal.set(internalId, { first: match.external_id, count: 1 });
    }
  }
  const ids = [...byInternal.keys()].sort();
  const patches: MetadataPatch[] = [];
  for (const internalId of ids) {
    assert(state.pendingTransaction(internalId) !== undefined || state.transactions.has(internalId), `a run matched unknown transaction ${internalId}`);
    const { first, count } = byInternal.get(internalId) as { first: string; count: number };
    const mark: Record<string, unknown> = { reconciliation_id: reconciliationId, reconciled_at: reconciledAt, external_transaction_id: first };
    if (count > 1) mark.external_transaction_count = count;
    patches.push({ entity_id: internalId, meta_data: mark });
  }
  return patches;
}
