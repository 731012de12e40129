// Reconciliation records as clients see them: times as ISO 8601, exact amounts as digits with their
// precision beside them, the display amount as exact decimal text written as a JSON number, a rule's
// drift as the number the client sent (its exact text).

import type {
  ExternalRecord,
  MatchingRuleRecord,
  ReconciliationMatch,
  ReconciliationRecord,
  UploadRecord,
} from '../engine/reconciliation-records.js';
import { RawJson } from '../engine/exact-json.js';
import { preciseToDecimalText } from './amounts.js';
import { timeText } from './views.js';

export function matchingRuleView(rule: MatchingRuleRecord): Record<string, unknown> {
  return {
    rule_id: rule.rule_id,
    name: rule.name,
    description: rule.description,
    criteria: rule.criteria.map((criterion) => {
      const view: Record<string, unknown> = { field: criterion.field, operator: criterion.operator };
      if (criterion.allowable_drift !== undefined) view.allowable_drift = new RawJson(criterion.allowable_drift);
      return view;
    }),
    created_at: timeText(rule.created_at),
    updated_at: timeText(rule.updated_at),
  };
}

export function uploadView(upload: UploadRecord): Record<string, unknown> {
  return {
    upload_id: upload.upload_id,
    record_count: upload.record_count,
    source: upload.source,
    status: 'success',
    created_at: timeText(upload.created_at),
  };
}

export function reconciliationView(run: ReconciliationRecord): Record<string, unknown> {
  const view: Record<string, unknown> = {
    reconciliation_id: run.reconciliation_id,
    upload_id: run.upload_id,
    source: run.source,
    status: run.status,
    strategy: run.strategy,
    grouping_criteria: run.grouping_criteria,
    matching_rule_ids: run.matching_rule_ids,
    matched_transactions: run.matched_transactions,
    unmatched_transactions: run.unmatched_transactions,
    processed_count: run.processed_count,
    total_count: run.total_count,
    is_dry_run: run.is_dry_run,
    attempts: run.attempts,
    started_at: timeText(run.started_at),
    completed_at: timeText(run.completed_at),
  };
  if (run.failure_reason !== '') view.failure_reason = run.failure_reason;
  return view;
}

/** An exact amount as a JSON number written from its digits (no double in between). */
function exactNumber(amount: bigint, precision: bigint): RawJson {
  return new RawJson(preciseToDecimalText(amount, precision));
}

export function matchView(match: ReconciliationMatch): Record<string, unknown> {
  return {
    external_transaction_id: match.external_id,
    internal_transaction_id: match.internal_ids[0] ?? '',
    internal_transaction_ids: match.internal_ids,
    rule_id: match.rule_id,
    amount_difference: exactNumber(match.amount_difference, match.difference_precision),
    precise_amount_difference: match.amount_difference,
    difference_precision: match.difference_precision,
    time_difference_seconds: match.time_difference_ms / 1000,
  };
}

export function externalRecordView(record: ExternalRecord, source: string): Record<string, unknown> {
  return {
    id: record.id,
    amount: exactNumber(record.amount, record.precision),
    precise_amount: record.amount,
    precision: record.precision,
    currency: record.currency,
    reference: record.reference,
    description: record.description,
    date: timeText(record.date),
    source,
  };
}

export function unmatchedView(reason: string, record: ExternalRecord, source: string): Record<string, unknown> {
  return { external_transaction_id: record.id, reason, record: externalRecordView(record, source) };
}
