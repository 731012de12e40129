// Blnk's own TypeScript SDK (npm @blnkfinance/blnk-typescript, unchanged) driving a real Folio server:
// every SDK method, called the way its docs show, must succeed and read back what it expects. The
// methods Folio does not offer on purpose are listed in SKIPPED with the reason (docs/decisions-blnk.md);
// the test fails if the SDK grows a method that is neither called nor listed.

import { BlnkInit } from '@blnkfinance/blnk-typescript';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { HookReceiver } from './helpers/hook-receiver.js';
import { startTestServer, tempDataDir, type TestServer } from './helpers/test-server.js';

const TOKEN_KEY = Buffer.alloc(32, 9);
const QUIET = { info: () => undefined, error: () => undefined, warn: () => undefined, debug: () => undefined };

/** SDK methods left out on purpose (decisions-blnk.md): none. */
const SKIPPED = new Set<string>();

type Sdk = ReturnType<typeof BlnkInit>;
interface Answer { status: number; message?: string; data: any }

/** Methods of every service the SDK exposes, as `Service.method`. */
function sdkMethods(sdk: Sdk): string[] {
  const names: string[] = [];
  for (const [service, instance] of Object.entries(sdk as unknown as Record<string, object>)) {
    if (!/^[A-Z]/.test(service) || typeof instance !== 'object' || instance === null) continue;
    for (const method of Object.getOwnPropertyNames(Object.getPrototypeOf(instance))) {
      if (method !== 'constructor' && typeof (instance as Record<string, unknown>)[method] === 'function') names.push(`${service}.${method}`);
    }
  }
  return names.sort();
}

t.test('every SDK method against a real server', async (t) => {
  const receiver = new HookReceiver();
  await receiver.start();
  t.teardown(() => receiver.stop());
  const server: TestServer = await startTestServer(
    { dataDir: tempDataDir(), snapshots: { every_events: 0, every_seconds: 0, keep: 2 } },
    { tokenizationKey: TOKEN_KEY },
  );
  t.teardown(() => server.stop());
  const sdk = BlnkInit('', { baseUrl: server.url, logger: QUIET, retryCount: 1 } as Parameters<typeof BlnkInit>[1]);
  const called = new Set<string>();

  /** Calls one SDK method and checks its status; the answer's data for the next steps. */
  async function call(name: string, status: number, run: () => Promise<Answer>): Promise<any> {
    called.add(name);
    const answer = await run();
    t.equal(answer.status, status, `${name}: ${status}${answer.status === status ? '' : ` (${JSON.stringify(answer).slice(0, 300)})`}`);
    return answer.data;
  }

  t.match(await call('System.health', 200, () => sdk.System.health()), { status: 'UP' });

  // Ledgers
  const ledger = await call('Ledgers.create', 201, () => sdk.Ledgers.create({ name: 'Customer wallets', meta_data: { project: 'sdk' } }));
  t.match(ledger, { ledger_id: /^ldg_/, name: 'Customer wallets' });
  t.match(await call('Ledgers.get', 200, () => sdk.Ledgers.get(ledger.ledger_id)), { name: 'Customer wallets' });
  t.match(await call('Ledgers.update', 200, () => sdk.Ledgers.update(ledger.ledger_id, { name: 'Wallets' })), { name: 'Wallets' });

  // Identities and tokenization
  const person = { identity_type: 'individual', first_name: 'Grace', last_name: 'Hopper', other_names: '', gender: 'female', dob: '1906-12-09T00:00:00Z', email_address: 'grace@example.com', phone_number: '+10000000', nationality: 'US', organization_name: '', category: 'customer', street: '1 Navy Way', country: 'US', state: 'VA', post_code: '22202', city: 'Arlington', meta_data: {} };
  const identity = await call('Identity.create', 201, () => sdk.Identity.create(person as never));
  const identityId = identity.identity_id as string;
  t.match(await call('Identity.get', 200, () => sdk.Identity.get(identityId)), { first_name: 'Grace' });
  t.ok((await call('Identity.list', 200, () => sdk.Identity.list())).length >= 1, 'identities listed');
  t.match(await call('Identity.update', 200, () => sdk.Identity.update(identityId, { ...person, city: 'Washington' } as never)), { city: 'Washington' });
  await call('Identity.tokenizeField', 200, () => sdk.Identity.tokenizeField(identityId, 'first_name' as never));
  await call('Identity.tokenize', 200, () => sdk.Identity.tokenize(identityId, { fields: ['email_address', 'phone_number'] } as never));
  t.same((await call('Identity.getTokenizedFields', 200, () => sdk.Identity.getTokenizedFields(identityId))).tokenized_fields.sort(), ['EmailAddress', 'FirstName', 'PhoneNumber']);
  t.match(await call('Identity.detokenizeField', 200, () => sdk.Identity.detokenizeField(identityId, 'first_name' as never)), { value: 'Grace' });
  t.match(await call('Identity.detokenize', 200, () => sdk.Identity.detokenize(identityId, { fields: ['email_address'] } as never)), { fields: { email_address: 'grace@example.com' } });

  // Balances
  const balance = await call('LedgerBalances.create', 201, () => sdk.LedgerBalances.create({ ledger_id: ledger.ledger_id, currency: 'USD', meta_data: { owner: 'grace' } } as never));
  const balanceId = balance.balance_id as string;
  const other = (await sdk.LedgerBalances.create({ ledger_id: ledger.ledger_id, currency: 'USD' } as never)).data as { balance_id: string };
  await call('LedgerBalances.updateIdentity', 200, () => sdk.LedgerBalances.updateIdentity(balanceId, { identity_id: identityId }));

  // Transactions: funding, a hold, commit, refund, lookups
  const funded = await call('Transactions.create', 201, () => sdk.Transactions.create({
    amount: 750.5, precision: 100, reference: 'sdk-fund-1', currency: 'USD', source: '@world', destination: balanceId,
    description: 'Funding', allow_overdraft: true, skip_queue: true, meta_data: { channel: 'sdk' },
  } as never));
  t.match(funded, { status: 'APPLIED', precise_amount: 75050 });
  t.match(await call('Transactions.get', 200, () => sdk.Transactions.get(funded.transaction_id)), { reference: 'sdk-fund-1' });
  t.match(await call('Transactions.getByReference', 200, () => sdk.Transactions.getByReference('sdk-fund-1')), { transaction_id: funded.transaction_id });
  const holdAnswer = await sdk.Transactions.create({ amount: 10, precision: 100, reference: 'sdk-hold-1', currency: 'USD', source: balanceId, destination: other.balance_id, description: 'Hold', inflight: true, skip_queue: true } as never);
  t.equal(holdAnswer.status, 201, `a hold: ${JSON.stringify(holdAnswer).slice(0, 300)}`);
  const hold = holdAnswer.data as { transaction_id: string };
  t.match(await call('Transactions.updateStatus', 200, () => sdk.Transactions.updateStatus(hold.transaction_id, { status: 'commit', skip_queue: true } as never)), { status: 'APPLIED' });
  t.match(await call('Transactions.refund', 201, () => sdk.Transactions.refund(hold.transaction_id, { skip_queue: true })), { status: 'APPLIED' });

  const bulk = await call('Transactions.createBulk', 201, () => sdk.Transactions.createBulk({
    inflight: true, skip_queue: true,
    transactions: [1, 2].map((index) => ({ amount: index, precision: 100, reference: `sdk-bulk-${index}`, description: `bulk ${index}`, currency: 'USD', source: '@world', destination: balanceId, allow_overdraft: true })),
  } as never));
  t.match(bulk, { batch_id: /^bulk_/, status: 'inflight', transaction_count: 2 });
  const holds = ((await server.request('POST', '/transactions/filter', { filters: [{ field: 'status', operator: 'eq', value: 'INFLIGHT' }] })).body.data as Array<{ transaction_id: string }>).map((row) => row.transaction_id);
  t.equal(holds.length, 2, 'the bulk holds');
  t.match(await call('Transactions.bulkCommitInflight', 200, () => sdk.Transactions.bulkCommitInflight({ skip_queue: true, transactions: [{ transaction_id: holds[0] as string }] } as never)), { succeeded: 1, failed: 0, results: [{ transaction_id: holds[0], status: 'succeeded' }] });
  t.match(await call('Transactions.bulkVoidInflight', 200, () => sdk.Transactions.bulkVoidInflight({ skip_queue: true, transaction_ids: [holds[1] as string] } as never)), { succeeded: 1, failed: 0 });
  t.match(await call('Transactions.recoverQueue', 200, () => sdk.Transactions.recoverQueue({ threshold: '5m' })), { recovered: 0, threshold: '5m0s' });

  // Fund lineage, as Blnk's docs (transactions/lineage) walk through it: tag, spend, read both lineages.
  const tracked = (await sdk.LedgerBalances.create({ ledger_id: ledger.ledger_id, identity_id: identityId, currency: 'USD', track_fund_lineage: true, allocation_strategy: 'FIFO' } as never)).data as { balance_id: string; track_fund_lineage: boolean };
  t.equal(tracked.track_fund_lineage, true);
  for (const [provider, amount] of [['stripe', 100], ['paypal', 50]] as const) {
    await sdk.Transactions.create({ amount, precision: 100, currency: 'USD', reference: `sdk-lineage-${provider}`, source: '@World', destination: tracked.balance_id, description: 'Top up', skip_queue: true, allow_overdraft: true, meta_data: { BLNK_LINEAGE_PROVIDER: provider } } as never);
  }
  const purchase = (await sdk.Transactions.create({ amount: 120, precision: 100, currency: 'USD', reference: 'sdk-lineage-purchase', source: tracked.balance_id, destination: '@MerchantSettlement', description: 'Purchase', skip_queue: true } as never)).data as { transaction_id: string };
  const balanceLineage = await call('LedgerBalances.getLineage', 200, () => sdk.LedgerBalances.getLineage(tracked.balance_id));
  t.match(balanceLineage, { balance_id: tracked.balance_id, total_with_lineage: 3000, providers: [{ provider: 'stripe', amount: 10000, available: 0, spent: 10000 }, { provider: 'paypal', amount: 5000, available: 3000, spent: 2000 }] });
  const transactionLineage = await call('Transactions.getLineage', 200, () => sdk.Transactions.getLineage(purchase.transaction_id));
  t.same(transactionLineage, { transaction_id: purchase.transaction_id, fund_allocation: [{ provider: 'stripe', amount: 10000 }, { provider: 'paypal', amount: 2000 }], shadow_transactions: [] });

  // Reads of balances, now and in the past
  t.match(await call('LedgerBalances.get', 200, () => sdk.LedgerBalances.get(balanceId)), { balance_id: balanceId, identity_id: identityId });
  const world = await call('LedgerBalances.getByIndicator', 200, () => sdk.LedgerBalances.getByIndicator('@world', 'USD'));
  t.match(world, { indicator: '@world' });
  await call('LedgerBalances.createSnapshot', 200, () => sdk.LedgerBalances.createSnapshot({ batch_size: 100 }));
  const at = await call('LedgerBalances.getAt', 200, () => sdk.LedgerBalances.getAt(balanceId, { timestamp: new Date(Date.now() + 1000).toISOString() }));
  t.match(at, { balance: { balance_id: balanceId } });

  // Balance monitors
  const monitor = await call('BalanceMonitor.create', 201, () => sdk.BalanceMonitor.create({ balance_id: balanceId, condition: { field: 'balance', operator: '>', value: 10_000, precision: 100 }, description: 'big', call_back_url: 'https://example.invalid/cb' }));
  t.match(monitor, { monitor_id: /^mon_/ });
  t.match(await call('BalanceMonitor.get', 200, () => sdk.BalanceMonitor.get(monitor.monitor_id)), { balance_id: balanceId });
  t.equal((await call('BalanceMonitor.list', 200, () => sdk.BalanceMonitor.list())).length, 1);
  await call('BalanceMonitor.update', 200, () => sdk.BalanceMonitor.update(monitor.monitor_id, { balance_id: balanceId, condition: { field: 'balance', operator: '<', value: 0, precision: 100 }, description: 'negative' }));
  await call('BalanceMonitor.delete', 200, () => sdk.BalanceMonitor.delete(monitor.monitor_id));

  // Metadata, search, filters
  // 201, as ../shared/spec/interface.md 4.11 fixes it (Blnk answers 200; the SDK takes either).
  t.match(await call('Metadata.update', 201, () => sdk.Metadata.update(balanceId, { meta_data: { tier: 'gold' } })), { meta_data: { owner: 'grace', tier: 'gold' } });
  const reindex = await call('Search.startReindex', 202, () => sdk.Search.startReindex());
  t.ok(reindex, 'reindex started');
  await call('Search.getReindexStatus', 200, () => sdk.Search.getReindexStatus());
  const found = await call('Search.search', 200, () => sdk.Search.search({ q: 'sdk-fund-1', query_by: 'reference' }, 'transactions'));
  t.ok(found.found >= 1, 'search finds the transaction');
  const filtered = await call('Search.filter', 200, () => sdk.Search.filter({ filters: [{ field: 'currency', operator: 'eq', value: 'USD' }] } as never, 'balances'));
  t.ok(filtered.data.length >= 2, 'filter finds the balances');

  // Hooks and API keys
  const hook = await call('Hooks.create', 201, () => sdk.Hooks.create({ name: 'sdk hook', url: `${receiver.url}/hook`.replace('127.0.0.1', 'hooks.example.invalid'), type: 'POST_TRANSACTION', active: false, timeout: 5, retry_count: 1 }));
  const hookId = (hook.hook_id ?? hook.id) as string;
  t.ok((await call('Hooks.list', 200, () => sdk.Hooks.list({ type: 'POST_TRANSACTION' }))).length >= 1);
  await call('Hooks.get', 200, () => sdk.Hooks.get(hookId));
  await call('Hooks.update', 200, () => sdk.Hooks.update(hookId, { name: 'sdk hook 2', url: 'https://hooks.example.invalid/2', type: 'POST_TRANSACTION', active: false, timeout: 5, retry_count: 1 }));
  t.match(await call('Hooks.delete', 200, () => sdk.Hooks.delete(hookId)), { message: 'hook deleted successfully' });
  const key = await call('ApiKeys.create', 201, () => sdk.ApiKeys.create({ name: 'sdk key', owner: 'owner-1', scopes: ['ledgers:read'], expires_at: new Date(Date.now() + 86_400_000).toISOString().replace(/\.\d+Z$/, 'Z') }));
  t.ok((await call('ApiKeys.list', 200, () => sdk.ApiKeys.list({ owner: 'owner-1' }))).length >= 1);
  await call('ApiKeys.delete', 204, () => sdk.ApiKeys.delete(key.api_key_id, { owner: 'owner-1' }));

  // Reconciliation: a statement line for the funding transfer above, matched by reference and amount.
  const statement = path.join(server.dataDir, 'statement.csv');
  fs.writeFileSync(statement, 'id,amount,reference,currency,description,date\nstmt-1,750.50,sdk-fund-1,USD,funding,2026-01-01T00:00:00Z\n');
  const upload = await call('Reconciliation.upload', 201, () => sdk.Reconciliation.upload(statement, 'bank'));
  t.match(upload, { upload_id: /.+/, record_count: 1 });
  const rule = await call('Reconciliation.createMatchingRule', 201, () => sdk.Reconciliation.createMatchingRule({
    name: 'by reference', description: 'reference and amount', criteria: [{ field: 'reference', operator: 'equals' }, { field: 'amount', operator: 'equals' }],
  }));
  await call('Reconciliation.updateMatchingRule', 200, () => sdk.Reconciliation.updateMatchingRule(rule.rule_id, {
    name: 'by reference and amount', description: 'reference and amount', criteria: [{ field: 'reference', operator: 'equals' }, { field: 'amount', operator: 'equals', allowable_drift: 0 }],
  }));
  const run = await call('Reconciliation.run', 201, () => sdk.Reconciliation.run({
    upload_id: upload.upload_id, strategy: 'one_to_one', dry_run: false, grouping_criteria: 'reference', matching_rule_ids: [rule.rule_id],
  }));
  let state: any;
  for (let attempt = 0; attempt < 600; attempt += 1) {
    state = await call('Reconciliation.get', 200, () => sdk.Reconciliation.get(run.reconciliation_id));
    if (state.status === 'completed' || state.status === 'failed') break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  t.match(state, { status: 'completed', matched_transactions: 1, unmatched_transactions: 0 }, 'the statement line matches the funding transfer');
  const instant = await call('Reconciliation.runInstant', 200, () => sdk.Reconciliation.runInstant({
    external_transactions: [{ id: 'stmt-2', amount: 750.5, reference: 'sdk-fund-1', currency: 'USD', description: 'funding', date: '2026-01-01T00:00:00Z', source: 'bank' }],
    strategy: 'one_to_one', dry_run: true, matching_rule_ids: [rule.rule_id],
  }));
  t.ok(instant.reconciliation_id, 'an instant run answers with its id');
  t.match(await call('Reconciliation.deleteMatchingRule', 200, () => sdk.Reconciliation.deleteMatchingRule(rule.rule_id)), { message: /deleted/ });

  const missing = sdkMethods(sdk).filter((name) => !called.has(name) && !SKIPPED.has(name));
  t.same(missing, [], 'every SDK method is called or listed as left out');
});
