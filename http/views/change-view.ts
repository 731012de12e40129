// One committed change as the change feed shows it (GET /events): the logged event with its seq (the
// cursor), its type and time, and what it changed in the API's own shapes: records after the change as
// the routes render them (ledgers, closed periods, balances, transactions, identities, API keys and hooks without their
// secrets, matching rules, uploads, runs, monitors), the exact signed postings per balance field, ids of
// what was deleted. Bulk reconciliation data (a statement's rows, a run's matches) is counted, not
// copied: it is read through the reconciliation routes. As TigerBeetle's change data capture does, a
// change carries enough for a consumer to follow balances without asking the API (the postings), and
// its seq orders and names it, so a consumer that keeps the last seq it processed resumes exactly there.

import type { LedgerEvent } from '../../engine/events.js';
import { transactionJson } from '../../wire/transaction-json.js';
import { matchingRuleView, reconciliationView, uploadView } from '../../wire/reconciliation-views.js';
import { balanceView, ledgerView, monitorView, periodView, timeText } from '../../wire/views.js';
import { apiKeyView, hookView } from '../access/access-views.js';
import { identityView } from './identity-view.js';

export function changeView(seq: number, event: LedgerEvent): Record<string, unknown> {
  const change: Record<string, unknown> = { seq, type: event.type, at: timeText(event.at) };
  if (event.ledgers) change.ledgers = event.ledgers.map(ledgerView);
  if (event.balances) change.balances = event.balances.map(balanceView);
  if (event.transactions) change.transactions = event.transactions.map(transactionJson);
  if (event.postings) {
    change.postings = event.postings.map((posting) => {
      const view: Record<string, unknown> = { balance_id: posting.balance_id, field: posting.field, precise_amount: posting.amount };
      if (posting.effective_at !== undefined) view.effective_at = timeText(posting.effective_at);
      return view;
    });
  }
  if (event.balance_meta) change.balance_meta = event.balance_meta;
  if (event.metadata_patches) change.metadata_patches = event.metadata_patches;
  if (event.identities) change.identities = event.identities.map(identityView);
  if (event.deleted_identities) change.deleted_identities = event.deleted_identities;
  if (event.api_keys) change.api_keys = event.api_keys.map((key) => apiKeyView(key));
  if (event.hooks) change.hooks = event.hooks.map(hookView);
  if (event.deleted_hooks) change.deleted_hooks = event.deleted_hooks;
  if (event.matching_rules) change.matching_rules = event.matching_rules.map(matchingRuleView);
  if (event.deleted_matching_rules) change.deleted_matching_rules = event.deleted_matching_rules;
  if (event.uploads) change.uploads = event.uploads.map(uploadView);
  if (event.external_records) {
    change.external_records = event.external_records.map((chunk) => ({ upload_id: chunk.upload_id, first_position: chunk.first_position, count: chunk.records.length }));
  }
  if (event.reconciliations) change.reconciliations = event.reconciliations.map(reconciliationView);
  if (event.reconciliation_results) {
    change.reconciliation_results = event.reconciliation_results.map((chunk) => ({
      reconciliation_id: chunk.reconciliation_id, matches: chunk.matches.length, unmatched: chunk.unmatched.length,
    }));
  }
  if (event.balance_identities) change.balance_identities = event.balance_identities;
  if (event.monitors) change.monitors = event.monitors.map(monitorView);
  if (event.deleted_monitors) change.deleted_monitors = event.deleted_monitors;
  if (event.periods) change.periods = event.periods.map(periodView);
  if (event.monitor_alerts) change.monitor_alerts = event.monitor_alerts.map((alert) => ({ monitor: monitorView(alert.monitor), balance: balanceView(alert.balance) }));
  return change;
}
