// Examples for the API reference, rendered by the API's own renderers from sample records, so an example
// shows exactly what a client receives (test/openapi.int.test.ts checks each against its schema).

import type { ApiKeyRecord, BalanceRecord, HookRecord, IdentityRecord, LedgerRecord, TransactionRecord } from '../../engine/records.js';
import { toJsonText } from '../../wire/json-text.js';
import { transactionJson } from '../../wire/transaction-json.js';
import { balanceView, ledgerView } from '../../wire/views.js';
import { balanceLineageView, transactionLineageView } from '../../wire/lineage-views.js';
import type { TrackedBalance } from '../../engine/fund-lineage.js';
import { apiKeyView, hookView } from '../access/access-views.js';
import { identityView } from '../views/identity-view.js';

const CREATED_AT = Date.UTC(2026, 4, 4, 10, 20, 30);

/** A rendered value as the JSON a client parses (bigints in samples are small enough for JSON.parse). */
export function asJson(value: unknown): unknown {
  return JSON.parse(toJsonText(value)) as unknown;
}

const ledger: LedgerRecord = { ledger_id: 'ldg_0196a4c2-57e1-7c1e-9d5a-2f1e0b6c9a01', name: 'Customer wallets', created_at: CREATED_AT, meta_data: { region: 'eu' } };

const balance: BalanceRecord = {
  balance_id: 'bln_0196a4c2-5a10-7b2e-8c31-6d4f2a9b7e02', ledger_id: ledger.ledger_id, identity_id: '', indicator: '', currency: 'USD',
  credit_balance: 15000n, debit_balance: 2500n, inflight_credit_balance: 0n, inflight_debit_balance: 1000n, version: 3,
  created_at: CREATED_AT, meta_data: {},
};

const transaction: TransactionRecord = {
  transaction_id: 'txn_0196a4c2-6b22-7d3f-a1b2-3c4d5e6f7a03', parent_transaction: '', source: balance.balance_id,
  destination: 'bln_0196a4c2-5a10-7b2e-8c31-6d4f2a9b7e04', reference: 'order-1042', currency: 'USD', precise_amount: 2500n,
  precision: 100n, description: 'Order 1042', status: 'APPLIED', hash: 'a'.repeat(64), allow_overdraft: false, inflight: false,
  skip_queue: true, created_at: CREATED_AT, inflight_expiry_date: 0, inflight_commit_date: 0, scheduled_for: 0, meta_data: { order: 1042 },
};

const identity: IdentityRecord = {
  identity_id: 'idt_0196a4c2-7c33-7e40-b2c3-4d5e6f7a8b05', identity_type: 'individual', organization_name: '', first_name: 'Ada',
  last_name: 'Lovelace', other_names: '', gender: '', dob: 0, email_address: 'ada@example.com', phone_number: '', nationality: '',
  category: '', street: '', city: 'London', state: '', country: 'GB', post_code: '', meta_data: {}, created_at: CREATED_AT,
};

const hook: HookRecord = {
  hook_id: 'hook_0196a4c2-8d44-7f51-83d4-5e6f7a8b9c06', name: 'ledger events', url: 'https://hooks.example.com/folio',
  type: 'POST_TRANSACTION', active: true, timeout: 10, retry_count: 3, created_at: CREATED_AT,
};

const apiKey: ApiKeyRecord = {
  api_key_id: 'key_0196a4c2-9e55-7062-94e5-6f7a8b9c0d07', name: 'checkout service', owner_id: 'team-payments',
  scopes: ['transactions:write', 'balances:read'], expires_at: Date.UTC(2027, 0, 1), created_at: CREATED_AT, last_used_at: 0,
  is_revoked: false, secret_hash: 'b'.repeat(64), rate_limit: { requests_per_second: 50, burst: 100 },
};

const tracked: TrackedBalance = {
  balance_id: balance.balance_id, allocation_strategy: 'FIFO',
  providers: [{ provider: 'stripe', received: 10000n, spent: 2500n, inflight_received: 0n, inflight_spent: 0n }],
};

export const EXAMPLES = {
  ledger: asJson(ledgerView(ledger)),
  balance: asJson(balanceView(balance)),
  transaction: asJson(transactionJson(transaction)),
  identity: asJson(identityView(identity)),
  hook: asJson(hookView(hook)),
  apiKey: asJson(apiKeyView(apiKey)),
  balanceLineage: asJson(balanceLineageView(tracked)),
  transactionLineage: asJson(transactionLineageView({ ...transaction, fund_allocation: [{ provider: 'stripe', amount: 2500n }] })),
};
