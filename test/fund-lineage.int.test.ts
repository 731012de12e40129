// Fund lineage over HTTP, following Blnk's own integration tests (lineage_integration_test.go: full
// flow, lineage to lineage, LIFO and PROPORTIONAL, inflight hold, commit and void) and docs
// (transactions/lineage, reference/get-balance-lineage, reference/get-transaction-lineage), against a
// real server: the allocation is there the moment the debit is acknowledged (no outbox to wait for),
// a dry run shows it and writes nothing, and it comes back the same after a restart from the log,
// from a snapshot, and from a point-in-time restore.

import path from 'node:path';
import t from 'tap';
import { restoreDataDir } from '../ops/restore.js';
import { snapshotNow, startTestServer, tempDataDir, type TestServer } from './helpers/test-server.js';

const SCHEDULE = { every_events: 0, every_seconds: 0, keep: 5 };

async function created(server: TestServer, route: string, body: unknown): Promise<any> {
  const answer = await server.request('POST', route, body);
  if (answer.status !== 201) throw new Error(`POST ${route}: ${answer.status} ${answer.text}`);
  return answer.body;
}

async function get(server: TestServer, route: string): Promise<any> {
  const answer = await server.request('GET', route);
  if (answer.status !== 200) throw new Error(`GET ${route}: ${answer.status} ${answer.text}`);
  return answer.body;
}

/** A balance with an identity of its own that tracks lineage with `strategy`. */
async function trackedBalance(server: TestServer, firstName: string, strategy: string): Promise<string> {
  const identity = await created(server, '/identities', { identity_type: 'individual', first_name: firstName, last_name: 'User', category: 'individual' });
  const balance = await created(server, '/balances', { ledger_id: 'general_ledger_id', identity_id: identity.identity_id, currency: 'USD', track_fund_lineage: true, allocation_strategy: strategy });
  return balance.balance_id;
}

/** A credit from @world tagged with `provider`, in major units at precision 100, as Blnk's tests send them. */
function deposit(balanceId: string, amount: number, provider: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { description: 'test', source: '@world', destination: balanceId, amount, precision: 100, currency: 'USD', allow_overdraft: true, skip_queue: true, meta_data: { BLNK_LINEAGE_PROVIDER: provider }, ...extra };
}

function spend(source: string, destination: string, amount: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { description: 'test', source, destination, amount, precision: 100, currency: 'USD', skip_queue: true, ...extra };
}

/** The providers of a balance's lineage as [provider, amount, available, spent]. */
async function providersOf(server: TestServer, balanceId: string): Promise<Array<[string, number, number, number]>> {
  const lineage = await get(server, `/balances/${balanceId}/lineage`);
  return lineage.providers.map((provider: any) => [provider.provider, provider.amount, provider.available, provider.spent]);
}

t.test('Blnk TestLineageFullFlow: two tagged deposits, a payment to a balance without lineage', async (t) => {
  const dataDir = tempDataDir();
  let server = await startTestServer({ dataDir, snapshots: SCHEDULE });
  let running = true;
  t.teardown(async () => {
    if (running) await server.stop();
  });
  const alice = await trackedBalance(server, 'Alice', 'FIFO');
  const aliceView = await get(server, `/balances/${alice}`);
  t.match(aliceView, { track_fund_lineage: true, allocation_strategy: 'FIFO' }, 'the balance shows its lineage settings as Blnk\'s does');
  await created(server, '/transactions', deposit(alice, 50, 'stripe', { reference: 'stripe_dep' }));
  await created(server, '/transactions', deposit(alice, 30, 'paypal', { reference: 'paypal_dep' }));
  const merchant = (await created(server, '/balances', { ledger_id: 'general_ledger_id', currency: 'USD' })).balance_id;
  t.match(await get(server, `/balances/${merchant}`), { track_fund_lineage: false, allocation_strategy: 'FIFO' });

  // A dry run shows the allocation the payment would make, and writes nothing.
  const dryRun = await server.request('POST', '/transactions', spend(alice, merchant, 70, { dry_run: true }));
  t.equal(dryRun.status, 200);
  t.same(dryRun.body.fund_allocation, [{ provider: 'stripe', precise_amount: '5000' }, { provider: 'paypal', precise_amount: '2000' }], 'the dry run shows the allocation');
  t.same(await providersOf(server, alice), [['stripe', 5000, 5000, 0], ['paypal', 3000, 3000, 0]], 'and the lineage is as it was');

  const payment = await created(server, '/transactions', spend(alice, merchant, 70, { reference: 'payment' }));
  t.same(payment.meta_data.BLNK_FUND_ALLOCATION, [{ provider: 'stripe', amount: 5000 }, { provider: 'paypal', amount: 2000 }], 'the allocation is in the answer to the debit itself');
  const lineage = await get(server, `/balances/${alice}/lineage`);
  t.match(lineage, { balance_id: alice, total_with_lineage: 1000, aggregate_balance_id: '' }, 'Blnk: TotalWithLineage 1000');
  t.same(await providersOf(server, alice), [['stripe', 5000, 0, 5000], ['paypal', 3000, 1000, 2000]], 'Blnk: stripe all spent, paypal 1000 left');
  t.same(Object.keys(lineage.providers[0]).slice(0, 5), ['provider', 'amount', 'available', 'spent', 'shadow_balance_id'], 'Blnk\'s provider fields');
  const transactionLineage = await get(server, `/transactions/${payment.transaction_id}/lineage`);
  t.same(transactionLineage, {
    transaction_id: payment.transaction_id,
    fund_allocation: [{ provider: 'stripe', amount: 5000 }, { provider: 'paypal', amount: 2000 }],
    shadow_transactions: [],
  });
  t.same((await get(server, `/transactions/${payment.transaction_id}`)).meta_data.BLNK_FUND_ALLOCATION, transactionLineage.fund_allocation, 'GET /transactions/:id shows it in meta_data');
  const merchantLineage = await server.request('GET', `/balances/${merchant}/lineage`);
  t.equal(merchantLineage.status, 400, 'a balance without lineage: 400 (Blnk: "does not have fund lineage tracking enabled")');
  t.equal(merchantLineage.body.error_detail.code, 'GEN_BAD_REQUEST');
  t.match(merchantLineage.body.error_detail.message, 'does not have fund lineage tracking enabled');
  t.same(await get(server, `/transactions/${(await get(server, '/transactions/reference/stripe_dep')).transaction_id}/lineage`), {
    transaction_id: (await get(server, '/transactions/reference/stripe_dep')).transaction_id, shadow_transactions: [],
  }, 'a credit has no fund allocation (Blnk: omitted)');

  // The same after a restart from the log, from a snapshot, and in a point-in-time restore.
  const expected = await get(server, `/balances/${alice}/lineage`);
  await server.stop();
  server = await startTestServer({ dataDir, snapshots: SCHEDULE });
  t.same(await get(server, `/balances/${alice}/lineage`), expected, 'replayed from the log: the same lineage');
  t.same(await get(server, `/transactions/${payment.transaction_id}/lineage`), transactionLineage, 'and the same allocation, from the lookup store');
  const snapshot = await snapshotNow(server);
  await created(server, '/transactions', spend(alice, merchant, 5, { reference: 'after-snapshot' }));
  const afterSeq = server.runtime.log.appendedSeq;
  const expectedAfter = await get(server, `/balances/${alice}/lineage`);
  t.same(expectedAfter.providers.map((provider: any) => provider.available), [0, 500]);
  await server.stop();
  server = await startTestServer({ dataDir, snapshots: SCHEDULE });
  t.ok(server.runtime.startup.snapshotSeq >= snapshot.seq, 'started from the snapshot');
  t.same(await get(server, `/balances/${alice}/lineage`), expectedAfter, 'from the snapshot and the log after it: the same lineage');
  // Decided again after the restart, from the lineage the snapshot brought back.
  const later = await created(server, '/transactions', spend(alice, merchant, 1, { reference: 'after-restart' }));
  t.same(later.meta_data.BLNK_FUND_ALLOCATION, [{ provider: 'paypal', amount: 100 }], 'a debit after the restart draws on what is left');
  const beforeLater = (await get(server, `/balances/${alice}/lineage`)).providers.map((provider: any) => provider.available);
  t.same(beforeLater, [0, 400]);
  running = false;
  await server.stop();
  for (const [toSeq, lineageThen, when] of [[snapshot.seq, expected, 'the snapshot\'s seq'], [afterSeq, expectedAfter, 'the spend after it']] as const) {
    const target = path.join(tempDataDir(), 'restored');
    await restoreDataDir({ snapshotFile: snapshot.file, targetDir: target, toSeq });
    const restored = await startTestServer({ dataDir: target, snapshots: SCHEDULE });
    t.same(await get(restored, `/balances/${alice}/lineage`), lineageThen, `restored to ${when}: the lineage as it was then`);
    await restored.stop();
  }
});

t.test('Blnk TestLineageToLineageTransfer: the tags travel to a receiver that tracks lineage', async (t) => {
  const server = await startTestServer({ dataDir: tempDataDir() });
  t.teardown(() => server.stop());
  const sender = await trackedBalance(server, 'Sender', 'FIFO');
  const receiver = await trackedBalance(server, 'Receiver', 'FIFO');
  await created(server, '/transactions', deposit(sender, 100, 'stripe'));
  await created(server, '/transactions', deposit(sender, 50, 'bank'));
  const transfer = await created(server, '/transactions', spend(sender, receiver, 80));
  t.match(await get(server, `/balances/${sender}/lineage`), { total_with_lineage: 7000 });
  t.same(await providersOf(server, sender), [['stripe', 10000, 2000, 8000], ['bank', 5000, 5000, 0]]);
  t.match(await get(server, `/balances/${receiver}/lineage`), { total_with_lineage: 8000 });
  t.same(await providersOf(server, receiver), [['stripe', 8000, 8000, 0]], 'the receiver holds stripe funds only');
  t.same((await get(server, `/transactions/${transfer.transaction_id}/lineage`)).fund_allocation, [{ provider: 'stripe', amount: 8000 }]);
  // The receiver spends them on: they leave lineage at a balance that does not track it.
  await created(server, '/transactions', spend(receiver, '@payouts', 20));
  t.same(await providersOf(server, receiver), [['stripe', 8000, 6000, 2000]]);
});

t.test('Blnk TestLineageAllocationStrategies: LIFO and PROPORTIONAL', async (t) => {
  const server = await startTestServer({ dataDir: tempDataDir() });
  t.teardown(() => server.stop());
  const lifo = await trackedBalance(server, 'LIFO', 'lifo');
  await created(server, '/transactions', deposit(lifo, 40, 'stripe'));
  await created(server, '/transactions', deposit(lifo, 30, 'bank'));
  const lifoSpend = await created(server, '/transactions', spend(lifo, '@merchant', 25));
  t.same((await get(server, `/transactions/${lifoSpend.transaction_id}/lineage`)).fund_allocation, [{ provider: 'bank', amount: 2500 }], 'LIFO: bank (newest) first');
  t.match(await get(server, `/balances/${lifo}/lineage`), { total_with_lineage: 4500 });
  t.same(await providersOf(server, lifo), [['stripe', 4000, 4000, 0], ['bank', 3000, 500, 2500]]);

  const proportional = await trackedBalance(server, 'PROP', 'PROPORTIONAL');
  t.match(await get(server, `/balances/${proportional}`), { allocation_strategy: 'PROPORTIONAL' });
  await created(server, '/transactions', deposit(proportional, 60, 'stripe'));
  await created(server, '/transactions', deposit(proportional, 40, 'paypal'));
  const propSpend = await created(server, '/transactions', spend(proportional, '@merchant', 50));
  t.same((await get(server, `/transactions/${propSpend.transaction_id}/lineage`)).fund_allocation, [{ provider: 'stripe', amount: 3000 }, { provider: 'paypal', amount: 2000 }], '60/40 of $50');
  t.same(await providersOf(server, proportional), [['stripe', 6000, 3000, 3000], ['paypal', 4000, 2000, 2000]]);
  // A split Blnk's floors would lose a unit of: 0.01 from three equal providers is one unit, all accounted for.
  const three = await trackedBalance(server, 'Three', 'PROPORTIONAL');
  for (const provider of ['a', 'b', 'c']) await created(server, '/transactions', deposit(three, 0.01, provider));
  const odd = await created(server, '/transactions', spend(three, '@merchant', 0.02));
  t.same(odd.meta_data.BLNK_FUND_ALLOCATION, [{ provider: 'a', amount: 1 }, { provider: 'b', amount: 1 }], 'two units over three providers: every unit allocated');
});

t.test('Blnk TestLineageInflightHold / Commit / Void: held tagged funds count once committed', async (t) => {
  const server = await startTestServer({ dataDir: tempDataDir() });
  t.teardown(() => server.stop());
  const balance = await trackedBalance(server, 'Commit', 'FIFO');
  const hold = await created(server, '/transactions', deposit(balance, 50, 'paypal', { inflight: true }));
  t.equal(hold.status, 'INFLIGHT');
  const held = await get(server, `/balances/${balance}/lineage`);
  t.match(held.providers, [{ provider: 'paypal', amount: 0, available: 0, inflight_amount: 5000 }], 'held: not yet available');
  const commit = await server.request('PUT', `/transactions/inflight/${hold.transaction_id}`, { status: 'commit', precise_amount: 5000, skip_queue: true });
  t.equal(commit.status, 200, commit.text);
  t.same(await providersOf(server, balance), [['paypal', 5000, 5000, 0]], 'committed: the shadow debit of 5000 in Blnk');
  await created(server, '/transactions', spend(balance, '@merchant', 30));
  t.same(await providersOf(server, balance), [['paypal', 5000, 2000, 3000]], 'Blnk: 3000 released, 2000 remaining');

  const voided = await trackedBalance(server, 'Void', 'FIFO');
  const voidHold = await created(server, '/transactions', deposit(voided, 75, 'bank', { inflight: true }));
  await server.request('PUT', `/transactions/inflight/${voidHold.transaction_id}`, { status: 'void', skip_queue: true });
  t.match((await get(server, `/balances/${voided}/lineage`)).providers, [{ provider: 'bank', amount: 0, inflight_amount: 0 }], 'voided: nothing held, nothing received');

  // A hold from a balance that tracks lineage reserves its funds; a partial commit settles them in order.
  const payer = await trackedBalance(server, 'Payer', 'FIFO');
  await created(server, '/transactions', deposit(payer, 40, 'stripe'));
  await created(server, '/transactions', deposit(payer, 60, 'bank'));
  const payment = await created(server, '/transactions', spend(payer, '@merchant', 70, { inflight: true }));
  t.same(payment.meta_data.BLNK_FUND_ALLOCATION, [{ provider: 'stripe', amount: 4000 }, { provider: 'bank', amount: 3000 }], 'the hold shows what it reserved');
  const partial = await server.request('PUT', `/transactions/inflight/${payment.transaction_id}`, { status: 'commit', precise_amount: 5000, skip_queue: true });
  t.same(partial.body.meta_data.BLNK_FUND_ALLOCATION, [{ provider: 'stripe', amount: 4000 }, { provider: 'bank', amount: 1000 }], 'the commit settles stripe first');
  t.same(await providersOf(server, payer), [['stripe', 4000, 0, 4000], ['bank', 6000, 5000, 1000]]);
  await server.request('PUT', `/transactions/inflight/${payment.transaction_id}`, { status: 'void', skip_queue: true });
  t.match((await get(server, `/balances/${payer}/lineage`)).providers, [{ provider: 'stripe', inflight_spent: 0 }, { provider: 'bank', available: 5000, inflight_spent: 0 }], 'the void releases the rest');
});

t.test('lineage refusals', async (t) => {
  const server = await startTestServer({ dataDir: tempDataDir() });
  t.teardown(() => server.stop());
  const noIdentity = await server.request('POST', '/balances', { ledger_id: 'general_ledger_id', currency: 'USD', track_fund_lineage: true });
  t.equal(noIdentity.status, 400, 'lineage needs an identity');
  t.match(noIdentity.body.error_detail.details, { identity_id: 'identity_id is required when track_fund_lineage is enabled' });
  const unknown = await server.request('GET', '/balances/bln_nonexistent/lineage');
  t.equal(unknown.status, 404, 'Blnk TestGetBalanceLineage "Nonexistent balance"');
  t.equal(unknown.body.error_detail.code, 'BAL_NOT_FOUND');
  const unknownTransaction = await server.request('GET', '/transactions/txn_nonexistent/lineage');
  t.equal(unknownTransaction.status, 404);
  t.equal(unknownTransaction.body.error_detail.code, 'TXN_NOT_FOUND');
  const balance = await trackedBalance(server, 'Bounds', 'LIFO');
  // The query index keeps the settings too: a filtered list shows them as GET /balances/:id does.
  const filtered = await server.request('POST', '/balances/filter', { filters: [{ field: 'balance_id', operator: 'eq', value: balance }] });
  t.match(filtered.body.data, [{ balance_id: balance, track_fund_lineage: true, allocation_strategy: 'LIFO' }], 'from the index, the same settings');
  const listed = await server.request('GET', `/balances?balance_id_eq=${balance}`);
  t.match(listed.body, [{ balance_id: balance, track_fund_lineage: true, allocation_strategy: 'LIFO' }], 'and in a list filtered in the query string');
  const longTag = await server.request('POST', '/transactions', deposit(balance, 1, 'x'.repeat(129)));
  t.equal(longTag.status, 400, 'a provider tag longer than 128 characters');
  t.equal(longTag.body.error_detail.code, 'TXN_VALIDATION_ERROR');
  for (let index = 0; index < 100; index += 1) await created(server, '/transactions', deposit(balance, 0.01, `provider-${index}`));
  const tooMany = await server.request('POST', '/transactions', deposit(balance, 0.01, 'one-more'));
  t.equal(tooMany.status, 400, 'the 101st provider of one balance');
  t.equal(tooMany.body.error_detail.code, 'BAL_LINEAGE_LIMIT_EXCEEDED');
  t.equal((await get(server, `/balances/${balance}/lineage`)).providers.length, 100);
});
