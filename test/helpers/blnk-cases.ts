// Blnk's documented requests and the answers its own sources expect, written down as data in our words:
// each case names where the expectation comes from (a Go API test in blnkfinance/blnk `api/*_test.go`,
// its error table `internal/apierror/codes.go`, its docs or its SDK's tests), the request, and what
// the answer must hold (status, error code, a partial body). `{name}` in a path or body is filled from
// the set-up (test/blnk-compat.int.test.ts): ledger, balance, other (a second balance), identity,
// txn (an applied transaction), reference (its reference), hold (an open inflight transaction),
// rule (a matching rule: reference contains), tracked (a balance of `identity` that tracks fund lineage,
// topped up with 10,000 tagged `stripe`), debit (a purchase of 2,500 from it), as Blnk's lineage docs.
// Where Folio answers differently on purpose, the case says so and docs/decisions-blnk.md says why.

export interface BlnkCase {
  name: string;
  /** Where in Blnk's sources or docs the expectation is written. */
  source: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  body?: unknown;
  status: number;
  code?: string;
  /** A partial body the answer must match (tap's t.match). */
  match?: unknown;
}

export const BLNK_CASES: readonly BlnkCase[] = [
  // service
  { name: 'service check', source: 'api/api.go GET /', method: 'GET', path: '/', status: 200, match: { message: 'server running...' } },

  // ledgers
  { name: 'unknown ledger', source: 'api/ledger_api_test.go; codes.go LGR_NOT_FOUND', method: 'GET', path: '/ledgers/ldg_missing', status: 404, code: 'LGR_NOT_FOUND' },
  { name: 'ledger by name in the query string', source: 'api/ledger_api_test.go "Query param filter"', method: 'GET', path: '/ledgers?name_eq=Compat%20ledger', status: 200, match: [{ ledger_id: '{ledger}' }] },
  { name: 'bad logical operator', source: 'api/ledger_api_test.go "Malformed filter operator"', method: 'GET', path: '/ledgers?name_eq=x&logical_operator=xor', status: 400 },
  { name: 'update of an unknown ledger', source: 'api/ledger_api_test.go TestUpdateLedger', method: 'PUT', path: '/ledgers/ldg_missing', body: { name: 'x' }, status: 404, code: 'LGR_NOT_FOUND' },

  // balances
  { name: 'balances by currency, none match', source: 'api/api_coverage_test.go "Query param filter"', method: 'GET', path: '/balances?currency_eq=ZZZNONE', status: 200, match: [] },
  { name: 'balances, malformed filter', source: 'api/api_coverage_test.go "Malformed filter"', method: 'GET', path: '/balances?currency_eq=USD&logical_operator=xor', status: 400 },
  { name: 'balance with its identity', source: 'api/balance_api_test.go "include=identity"', method: 'GET', path: '/balances/{balance}?include=identity', status: 200, match: { balance_id: '{balance}', identity: { identity_id: '{identity}' } } },
  { name: 'balance with its ledger', source: 'api/balance_api_test.go "include=ledger"', method: 'GET', path: '/balances/{balance}?include=ledger', status: 200, match: { ledger: { ledger_id: '{ledger}' } } },
  { name: 'balance with its queued amounts', source: 'api/balance.go GetBalance with_queued; model/balance.go queued_debit_balance, queued_credit_balance', method: 'GET', path: '/balances/{balance}?with_queued=true', status: 200, match: { balance_id: '{balance}', queued_debit_balance: 0, queued_credit_balance: 0 } },
  { name: 'balance without with_queued', source: 'model/balance.go queued_*_balance omitempty', method: 'GET', path: '/balances/{balance}?with_queued=false', status: 200, match: { balance_id: '{balance}', queued_debit_balance: undefined } },
  { name: 'balance in an unknown ledger', source: 'codes.go LGR_NOT_FOUND', method: 'POST', path: '/balances', body: { ledger_id: 'ldg_missing', currency: 'USD' }, status: 404, code: 'LGR_NOT_FOUND' },
  { name: 'indicator outside the general ledger', source: 'api/model/balance.go validator', method: 'POST', path: '/balances', body: { ledger_id: '{ledger}', currency: 'USD', indicator: '@cash' }, status: 400 },
  { name: 'indicator without @', source: 'api/model/balance.go validator', method: 'POST', path: '/balances', body: { ledger_id: 'general_ledger_id', currency: 'USD', indicator: 'cash' }, status: 400 },
  { name: 'indicator with a space', source: 'api/model/balance.go validator', method: 'POST', path: '/balances', body: { ledger_id: 'general_ledger_id', currency: 'USD', indicator: '@petty cash' }, status: 400 },
  { name: 'allocation strategy not known', source: 'api/model/balance.go validator', method: 'POST', path: '/balances', body: { ledger_id: '{ledger}', currency: 'USD', allocation_strategy: 'RANDOM' }, status: 400 },
  { name: 'allocation strategy in any case', source: 'api/model/balance.go validator', method: 'POST', path: '/balances', body: { ledger_id: '{ledger}', currency: 'USD', allocation_strategy: 'fifo' }, status: 201 },
  { name: 'give a balance to an identity', source: 'api/balance.go UpdateBalanceIdentity', method: 'PUT', path: '/balances/{other}/identity', body: { identity_id: '{identity}' }, status: 200, match: { message: 'Balance identity updated successfully' } },
  { name: 'identity of an unknown balance', source: 'api/balance.go UpdateBalanceIdentity', method: 'PUT', path: '/balances/bln_missing/identity', body: { identity_id: '{identity}' }, status: 404, code: 'BAL_NOT_FOUND' },
  { name: 'identity_id missing', source: 'api/balance.go UpdateBalanceIdentity', method: 'PUT', path: '/balances/{other}/identity', body: {}, status: 400, code: 'GEN_VALIDATION_ERROR' },
  { name: 'balance snapshots', source: 'api/balance.go TakeBalanceSnapshots', method: 'POST', path: '/balances-snapshots?batch_size=100', status: 200, match: { message: /Snapshotting in progress/ } },
  { name: 'balance snapshots, bad batch size', source: 'api/balance.go TakeBalanceSnapshots', method: 'POST', path: '/balances-snapshots?batch_size=-1', status: 400, code: 'GEN_VALIDATION_ERROR' },
  { name: 'balance at a time, bad timestamp', source: 'codes.go BAL_INVALID_TIMESTAMP', method: 'GET', path: '/balances/{balance}/at?timestamp=yesterday', status: 400, code: 'BAL_INVALID_TIMESTAMP' },

  // fund lineage
  { name: 'a balance that tracks lineage shows it', source: 'model/balance.go track_fund_lineage, allocation_strategy', method: 'GET', path: '/balances/{tracked}', status: 200, match: { balance_id: '{tracked}', track_fund_lineage: true, allocation_strategy: 'FIFO' } },
  { name: 'a balance that does not, too', source: 'model/balance.go; database/balance.go (FIFO by default)', method: 'GET', path: '/balances/{other}', status: 200, match: { track_fund_lineage: false, allocation_strategy: 'FIFO' } },
  { name: 'lineage without an identity', source: 'api/model/model.go ValidateCreateBalance "identity_id is required when track_fund_lineage is enabled"', method: 'POST', path: '/balances', body: { ledger_id: '{ledger}', currency: 'USD', track_fund_lineage: true }, status: 400, match: { error_detail: { details: { identity_id: 'identity_id is required when track_fund_lineage is enabled' } } } },
  { name: 'balance lineage', source: 'docs: reference/get-balance-lineage 200; transactions/lineage "Get balance lineage"', method: 'GET', path: '/balances/{tracked}/lineage', status: 200, match: { balance_id: '{tracked}', total_with_lineage: 7500, aggregate_balance_id: '', providers: [{ provider: 'stripe', amount: 10000, available: 7500, spent: 2500, shadow_balance_id: '' }] } },
  { name: 'balance lineage, tracking disabled', source: 'api/balance_api_test.go TestGetBalanceLineage "Lineage tracking disabled"; api/errors.go', method: 'GET', path: '/balances/{other}/lineage', status: 400, code: 'GEN_BAD_REQUEST' },
  { name: 'balance lineage, nonexistent balance', source: 'api/balance_api_test.go TestGetBalanceLineage "Nonexistent balance"; docs 404', method: 'GET', path: '/balances/bln_nonexistent/lineage', status: 404, code: 'BAL_NOT_FOUND' },
  { name: 'transaction lineage of a debit', source: 'docs: reference/get-transaction-lineage 200 (shadow transactions: none here, docs/decisions-blnk.md)', method: 'GET', path: '/transactions/{debit}/lineage', status: 200, match: { transaction_id: '{debit}', fund_allocation: [{ provider: 'stripe', amount: 2500 }], shadow_transactions: [] } },
  { name: 'the allocation in the debit\'s metadata', source: 'docs: transactions/lineage "Attach the breakdown to the transaction metadata under BLNK_FUND_ALLOCATION"', method: 'GET', path: '/transactions/{debit}', status: 200, match: { meta_data: { BLNK_FUND_ALLOCATION: [{ provider: 'stripe', amount: 2500 }] } } },
  { name: 'transaction lineage of an applied transaction', source: 'api/transaction_query_api_test.go TestGetTransactionLineage "Existing transaction"', method: 'GET', path: '/transactions/{txn}/lineage', status: 200, match: { transaction_id: '{txn}', fund_allocation: undefined, shadow_transactions: [] } },
  { name: 'transaction lineage, nonexistent transaction', source: 'api/transaction_query_api_test.go TestGetTransactionLineage "Nonexistent transaction"; docs 404', method: 'GET', path: '/transactions/txn_nonexistent/lineage', status: 404, code: 'TXN_NOT_FOUND' },

  // transactions
  { name: 'transaction by reference in the query string', source: 'api/transaction_query_api_test.go', method: 'GET', path: '/transactions?reference_eq={reference}', status: 200, match: [{ transaction_id: '{txn}' }] },
  { name: 'transactions, malformed filter', source: 'api/transaction_query_api_test.go', method: 'GET', path: '/transactions?status_eq=APPLIED&logical_operator=xor', status: 400 },
  { name: 'precision that is not a whole number', source: 'codes.go TXN_PRECISION_NOT_INTEGER', method: 'POST', path: '/transactions', body: { description: 'test', amount: 1, precision: 1.5, currency: 'USD', source: '@world', destination: '{balance}', reference: 'compat-precision' }, status: 400, code: 'TXN_PRECISION_NOT_INTEGER' },
  { name: 'precision 0 means the default 1', source: 'model/precision_edge_test.go "zero precision defaults to 1"', method: 'POST', path: '/transactions', body: { description: 'test', amount: 42, precision: 0, currency: 'USD', source: '@world', destination: '{balance}', reference: 'compat-precision-zero', allow_overdraft: true, skip_queue: true }, status: 201, match: { precise_amount: 42, precision: 1 } },
  { name: 'amount 0 beside a precise_amount is no amount', source: 'model/precision_edge_test.go "existing positive precise amount drives the decimal amount"', method: 'POST', path: '/transactions', body: { description: 'test', amount: 0, precise_amount: 1001, precision: 100, currency: 'USD', source: '@world', destination: '{balance}', reference: 'compat-amount-zero', allow_overdraft: true, skip_queue: true }, status: 201, match: { precise_amount: 1001, amount: 10.01 } },
  { name: 'bulk with no transactions', source: 'codes.go TXN_BULK_EMPTY; api/model/bulk_request_test.go', method: 'POST', path: '/transactions/bulk', body: { transactions: [] }, status: 400, code: 'TXN_BULK_EMPTY' },
  { name: 'bulk statuses in lower case', source: 'SDK BulkTransactionStatus (applied | inflight | queued)', method: 'POST', path: '/transactions/bulk', body: { skip_queue: true, transactions: [{ description: 'test', precise_amount: 5, currency: 'USD', source: '@world', destination: '{balance}', reference: 'compat-bulk-1', allow_overdraft: true }] }, status: 201, match: { batch_id: /^bulk_/, status: 'applied', transaction_count: 1 } },
  { name: 'bulk run_async', source: 'docs: bulk transactions, run_async', method: 'POST', path: '/transactions/bulk', body: { run_async: true, skip_queue: true, transactions: [{ description: 'test', precise_amount: 5, currency: 'USD', source: '@world', destination: '{balance}', reference: 'compat-bulk-2', allow_overdraft: true }] }, status: 202, match: { message: 'Bulk transaction processing started', batch_id: /^bulk_/ } },
  { name: 'bulk commit with no transactions', source: 'api/transaction_bulk_inflight_test.go', method: 'POST', path: '/transactions/inflight/bulk/commit', body: { transactions: [] }, status: 400, code: 'TXN_BULK_EMPTY' },
  { name: 'bulk void over the limit', source: 'api/transaction_bulk_inflight_test.go', method: 'POST', path: '/transactions/inflight/bulk/void', body: { transaction_ids: Array.from({ length: 101 }, (_, index) => `txn_${index}`) }, status: 400, code: 'TXN_BULK_LIMIT_EXCEEDED' },
  { name: 'bulk void: per-item results', source: 'api/transaction_bulk_inflight_test.go; SDK BulkCommitInflightResponse', method: 'POST', path: '/transactions/inflight/bulk/void', body: { skip_queue: true, transaction_ids: ['{hold}', 'txn_missing'] }, status: 200, match: { succeeded: 1, failed: 1, results: [{ transaction_id: '{hold}', status: 'succeeded' }, { transaction_id: 'txn_missing', status: 'failed', code: 'NOT_FOUND' }] } },
  { name: 'commit of an unknown hold', source: 'codes.go TXN_NOT_FOUND', method: 'PUT', path: '/transactions/inflight/txn_missing', body: { status: 'commit' }, status: 404, code: 'TXN_NOT_FOUND' },
  { name: 'queue recovery', source: 'SDK RecoverQueueResponse; docs: queue recovery', method: 'POST', path: '/transactions/recover?threshold=10m', status: 200, match: { recovered: 0, threshold: '10m0s' } },
  { name: 'queue recovery, bad threshold', source: 'api: RecoverQueuedTransactions', method: 'POST', path: '/transactions/recover?threshold=soon', status: 400 },

  // identities
  { name: 'identity by first name in the query string', source: 'api/api_coverage_test.go "Query param filter matches"', method: 'GET', path: '/identities?first_name_eq=Compat', status: 200, match: [{ identity_id: '{identity}' }] },
  { name: 'identities, malformed filter', source: 'api/api_coverage_test.go "Malformed filter"', method: 'GET', path: '/identities?first_name_eq=x&logical_operator=xor', status: 400 },
  { name: 'balances, negative offset', source: 'api/api_coverage_test.go "Invalid offset"', method: 'GET', path: '/balances?offset=-1', status: 400, code: 'GEN_VALIDATION_ERROR' },
  { name: 'balances, bad limit', source: 'api/api_coverage_test.go "Invalid limit"', method: 'GET', path: '/balances?limit=abc', status: 400, code: 'GEN_VALIDATION_ERROR' },
  { name: 'ledgers, bad limit', source: 'api/ledger.go GetAllLedgers "Invalid limit value"', method: 'GET', path: '/ledgers?limit=abc', status: 400, code: 'GEN_VALIDATION_ERROR' },
  { name: 'transactions, bad limit and offset coerced', source: 'api/transactions.go GetAllTransactions', method: 'GET', path: '/transactions?limit=abc&offset=-5', status: 200 },
  { name: 'identities, bad limit coerced', source: 'api/api_coverage_test.go "Bad limit coerced"', method: 'GET', path: '/identities?limit=abc', status: 200 },
  { name: 'update of an unknown identity, whatever the body', source: 'api/identity_test.go', method: 'PUT', path: '/identities/idt_missing', body: { nonsense: true }, status: 404, code: 'IDT_NOT_FOUND' },
  { name: 'identity under a caller-chosen id', source: 'docs: reference/create-identity identity_id; database/identity_test.go CallerSuppliedID_Preserved', method: 'POST', path: '/identities', body: { identity_id: 'idt_11111111-1111-4111-8111-111111111111', identity_type: 'individual', first_name: 'Alice', last_name: 'Smith' }, status: 201, match: { identity_id: 'idt_11111111-1111-4111-8111-111111111111', first_name: 'Alice' } },
  { name: 'the same identity id again', source: 'docs: reference/create-identity "Duplicate values return a conflict response" (Blnk\'s handler turns it into IDT_VALIDATION_ERROR; docs/decisions-blnk.md)', method: 'POST', path: '/identities', body: { identity_id: 'idt_11111111-1111-4111-8111-111111111111', identity_type: 'individual' }, status: 409, code: 'GEN_CONFLICT' },
  { name: 'identity id without the idt_ prefix', source: 'database/identity_test.go CallerSuppliedID_BadPrefix', method: 'POST', path: '/identities', body: { identity_id: 'user_123', identity_type: 'individual' }, status: 400, code: 'IDT_VALIDATION_ERROR', match: { error_detail: { details: { identity_id: "identity_id must start with the 'idt_' prefix" } } } },
  { name: 'identity id that is not a UUID', source: 'database/identity_test.go CallerSuppliedID_BadUUID; docs: reference/create-identity 400', method: 'POST', path: '/identities', body: { identity_id: 'idt_not-a-uuid', identity_type: 'individual' }, status: 400, code: 'IDT_VALIDATION_ERROR', match: { error_detail: { details: { identity_id: "identity_id suffix after 'idt_' must be a valid UUID" } } } },
  { name: 'tokenize without a key', source: 'api/identity_tokenization_api_test.go "disabled"', method: 'POST', path: '/identities/{identity}/tokenize/firstName', status: 403, code: 'IDT_TOKENIZATION_DISABLED' },
  { name: 'tokenize a field that cannot be', source: 'api/identity_tokenization_api_test.go', method: 'POST', path: '/identities/{identity}/tokenize/category', status: 400, code: 'IDT_FIELD_NOT_TOKENIZABLE' },

  // balance monitors
  { name: 'monitor on an unknown balance', source: 'api/balance_monitor tests', method: 'POST', path: '/balance-monitors', body: { balance_id: 'bln_missing', condition: { field: 'balance', operator: '>', value: 1, precision: 100 } }, status: 404, code: 'BAL_NOT_FOUND' },
  { name: 'unknown monitor', source: 'codes.go BAL_MONITOR_NOT_FOUND', method: 'GET', path: '/balance-monitors/mon_missing', status: 404, code: 'BAL_MONITOR_NOT_FOUND' },

  // reconciliation: every rule Blnk's validateRule accepts, and runs Blnk's docs describe
  { name: 'the docs\' default matcher', source: 'docs: reconciliations/matching-rules "Default matcher"', method: 'POST', path: '/reconciliation/matching-rules', body: { name: 'Default matcher', description: 'Amount with 1% drift matcher', criteria: [{ field: 'amount', operator: 'equals', allowable_drift: 0.01 }, { field: 'currency', operator: 'equals' }, { field: 'date', operator: 'equals', allowable_drift: 1800 }, { field: 'reference', operator: 'contains' }] }, status: 201, match: { rule_id: /^rule_/ } },
  { name: 'reference contains alone', source: 'reconciliation_test.go TestMatchingRules "Reference partial matching"', method: 'POST', path: '/reconciliation/matching-rules', body: { name: 'partial', criteria: [{ field: 'reference', operator: 'contains' }] }, status: 201 },
  { name: 'description contains alone', source: 'reconciliation_test.go TestMatchingRules "Description partial matching"', method: 'POST', path: '/reconciliation/matching-rules', body: { name: 'partial', criteria: [{ field: 'description', operator: 'contains' }] }, status: 201 },
  { name: 'a pair that never holds is still a rule', source: 'reconciliation_rules_test.go "every valid field x operator combination passes"', method: 'POST', path: '/reconciliation/matching-rules', body: { name: 'dead', criteria: [{ field: 'amount', operator: 'contains' }] }, status: 201 },
  { name: 'drift unchecked outside equals', source: 'reconciliation_rules_test.go "amount greater_than negative drift unchecked"', method: 'POST', path: '/reconciliation/matching-rules', body: { name: 'd', criteria: [{ field: 'amount', operator: 'greater_than', allowable_drift: -50 }] }, status: 201 },
  { name: 'a date drift of a year', source: 'reconciliation_rules_test.go "date drift one year"', method: 'POST', path: '/reconciliation/matching-rules', body: { name: 'd', criteria: [{ field: 'date', operator: 'equals', allowable_drift: 31536000 }] }, status: 201 },
  { name: 'a negative date drift', source: 'reconciliation_rules_test.go "date drift -1"', method: 'POST', path: '/reconciliation/matching-rules', body: { name: 'd', criteria: [{ field: 'date', operator: 'equals', allowable_drift: -1 }] }, status: 400, code: 'RECON_RULE_INVALID' },
  { name: 'an amount drift above 1', source: 'reconciliation_rules_test.go "amount drift just above 1"', method: 'POST', path: '/reconciliation/matching-rules', body: { name: 'd', criteria: [{ field: 'amount', operator: 'equals', allowable_drift: 1.000001 }] }, status: 400, code: 'RECON_RULE_INVALID' },
  { name: 'an operator Blnk does not know', source: 'reconciliation_rules_test.go TestRecon_ValidateOperator', method: 'POST', path: '/reconciliation/matching-rules', body: { name: 'd', criteria: [{ field: 'amount', operator: 'regex' }] }, status: 400, code: 'RECON_RULE_INVALID' },
  { name: 'a statement line holding the reference in longer text', source: 'docs: matching-rules "REF-12345" contains "12345"', method: 'POST', path: '/reconciliation/start-instant', body: { strategy: 'one_to_one', matching_rule_ids: ['{rule}'], dry_run: true, external_transactions: [{ id: 'bank-1', amount: 100, currency: 'USD', reference: 'PAYMENT COMPAT-REF-1 RECEIVED', description: '', date: '2025-03-17T10:00:00Z' }] }, status: 200, match: { status: 'completed', matched_transactions: 1, matches: [{ internal_transaction_ids: ['{txn}'] }] } },
  { name: 'one_to_many grouped by description', source: 'docs: reconciliations/strategies "group by parent_transaction, description or reference"', method: 'POST', path: '/reconciliation/start-instant', body: { strategy: 'one_to_many', grouping_criteria: 'description', matching_rule_ids: ['{rule}'], dry_run: true, external_transactions: [{ id: 'bank-2', amount: 100, currency: 'USD', reference: 'compat-ref-1', description: '', date: '2025-03-17T10:00:00Z' }] }, status: 200, match: { status: 'completed' } },
  { name: 'one_to_many grouped by created_at', source: 'docs: cloud/reconciliation/strategy one-to-many grouping criteria', method: 'POST', path: '/reconciliation/start-instant', body: { strategy: 'one_to_many', grouping_criteria: 'created_at', matching_rule_ids: ['{rule}'], dry_run: true, external_transactions: [{ id: 'bank-3', amount: 100, currency: 'USD', reference: 'compat-ref-1', description: '', date: '2025-03-17T10:00:00Z' }] }, status: 200, match: { status: 'completed', matched_transactions: 1 } },
  { name: 'many_to_one grouped by source', source: 'database/reconciliation.go groupedExternalTransactionsQuery "source"', method: 'POST', path: '/reconciliation/start-instant', body: { strategy: 'many_to_one', grouping_criteria: 'source', matching_rule_ids: ['{rule}'], dry_run: true, external_transactions: [{ id: 'bank-4', amount: 100, currency: 'USD', reference: 'compat-ref-1', description: '', date: '2025-03-17T10:00:00Z' }] }, status: 200, match: { status: 'completed' } },

  // search
  { name: "a balance's transactions by its id", source: 'docs search/typesense/querying "Search for a specific balance\'s transactions"', method: 'POST', path: '/search/transactions', body: { q: '{balance}', query_by: 'source,destination', sort_by: 'created_at:desc' }, status: 200, match: { found: Number, facet_counts: [], hits: Array, search_cutoff: false } },
  { name: 'counts per status and currency', source: 'docs search/typesense/faceting "Quick start"', method: 'POST', path: '/search/transactions', body: { q: '*', facet_by: 'status,currency' }, status: 200, match: { facet_counts: [{ field_name: 'status', counts: Array, stats: { total_values: Number } }, { field_name: 'currency', counts: [{ count: Number, value: 'USD', highlighted: 'USD' }], stats: { total_values: 1 } }] } },
  { name: "an identity's balances per currency", source: 'docs search/typesense/faceting "Combining faceting with filters"', method: 'POST', path: '/search/balances', body: { q: '*', filter_by: 'identity_id:={identity}', facet_by: 'currency' }, status: 200, match: { found: Number, facet_counts: [{ field_name: 'currency', counts: [{ count: Number, value: 'USD' }] }] } },
  { name: 'filter_by with ||', source: 'Typesense filter_by (Blnk passes it through)', method: 'POST', path: '/search/transactions', body: { q: '*', filter_by: 'status:=APPLIED || status:=INFLIGHT' }, status: 200, match: { found: Number, hits: Array } },
  { name: 'grouped by status', source: 'Typesense group_by (typesense-go SearchCollectionParams.GroupBy)', method: 'POST', path: '/search/transactions', body: { q: '*', group_by: 'status', group_limit: 1 }, status: 200, match: { found: Number, grouped_hits: [{ found: Number, group_key: [String], hits: [{ document: Object }] }] } },
  // Differences kept on purpose (docs/decisions-blnk.md "Search"): joins and the other unserved parameters are refused by name.
  { name: 'a join is refused, not ignored', source: 'docs search/typesense/joins', method: 'POST', path: '/search/balances', body: { q: '*', include_fields: '$identities(*)' }, status: 400, code: 'SRCH_QUERY_INVALID' },
  { name: 'an unserved parameter is refused, not ignored', source: 'typesense-go SearchCollectionParams.PinnedHits', method: 'POST', path: '/search/transactions', body: { q: '*', pinned_hits: '{txn}:1' }, status: 400, code: 'SRCH_QUERY_INVALID' },
  { name: 'search, malformed JSON', source: 'api/search_api_test.go "Invalid JSON body"', method: 'POST', path: '/search/ledgers', body: '{bad', status: 400 },
  { name: 'multi-search', source: 'api/search_api_test.go MultiSearch', method: 'POST', path: '/multi-search', body: { searches: [{ collection: 'ledgers', q: '*' }, { collection: 'balances', q: '*' }] }, status: 200, match: { results: [{ found: Number }, { found: Number }] } },
];
