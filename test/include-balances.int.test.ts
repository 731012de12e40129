// Balances in the reply (engine/resulting-balances.ts; docs/decisions-beyond.md): `?include_balances=true`
// on a synchronous transfer, a split, a bulk (each item) and a hold's commit and void answers with every
// balance the write touched as of its own seq; concurrent transfers from one balance each see their own
// result, never one a later transfer made; without the flag nothing changes; a flag that is neither true
// nor false is a 400.

import t from 'tap';
import { createBalance, expectError, fund, openServer } from './helpers/http-fixture.js';

type Balance = { balance_id: string; balance: number; precise_balance?: unknown; version: number; [field: string]: unknown };

function byId(balances: Balance[] | undefined): Record<string, Balance> {
  return Object.fromEntries((balances ?? []).map((balance) => [balance.balance_id, balance]));
}

t.test('include_balances on every write that takes it', async (t) => {
  const server = await openServer(t);
  const alice = await createBalance(server);
  const bob = await createBalance(server);
  await fund(server, alice.balance_id, 1000);
  const transfer = (fields: Record<string, unknown> = {}) => ({
    description: 'test', precise_amount: 100, currency: 'USD', source: alice.balance_id, destination: bob.balance_id, skip_queue: true, ...fields,
  });

  await t.test('a synchronous transfer: both balances as it left them, in the balance\'s own shape', async (t) => {
    const plain = await server.request('POST', '/transactions', transfer());
    t.equal(plain.status, 201);
    t.notOk('balances' in plain.body, 'not asked, not given');
    const answered = await server.request('POST', '/transactions?include_balances=true', transfer());
    t.equal(answered.status, 201, answered.text);
    t.equal(answered.body.status, 'APPLIED');
    const balances = byId(answered.body.balances);
    t.same(Object.keys(balances).sort(), [alice.balance_id, bob.balance_id].sort(), 'both sides');
    t.equal(balances[alice.balance_id]?.balance, 800);
    t.equal(balances[bob.balance_id]?.balance, 200);
    for (const id of [alice.balance_id, bob.balance_id]) {
      t.same(balances[id], (await server.request('GET', `/balances/${id}`)).body, `${id} as GET /balances shows it (nothing came after)`);
    }
    expectError(t, await server.request('POST', '/transactions?include_balances=yes', transfer()), 400, 'TXN_VALIDATION_ERROR', 'a flag that is neither true nor false');
    const off = await server.request('POST', '/transactions?include_balances=false', transfer({ precise_amount: 1, destination: '@sink' }));
    t.equal(off.status, 201);
    t.notOk('balances' in off.body);
    await fund(server, alice.balance_id, 1);
  });

  await t.test('concurrent transfers from one balance: each answer shows the balance right after itself', async (t) => {
    const before = (await server.request('GET', `/balances/${alice.balance_id}`)).body as Balance;
    const count = 24;
    const answers = await Promise.all(Array.from({ length: count }, () => server.request('POST', '/transactions?include_balances=true', transfer({ precise_amount: 1, destination: '@concurrent' }))));
    const seen = answers.map((answer) => {
      t.equal(answer.status, 201, answer.text);
      return byId(answer.body.balances)[alice.balance_id]!;
    });
    t.same(seen.map((balance) => balance.balance).sort((a, b) => b - a), Array.from({ length: count }, (_, index) => before.balance - index - 1), 'every step once: none saw another transfer\'s result');
    t.equal(new Set(seen.map((balance) => balance.version)).size, count, 'every version once');
    await fund(server, alice.balance_id, count);
  });

  await t.test('a split: every leg\'s balance', async (t) => {
    const split = await server.request('POST', '/transactions?include_balances=true', {
      description: 'split', precise_amount: 100, currency: 'USD', source: alice.balance_id, skip_queue: true,
      destinations: [{ identifier: bob.balance_id, distribution: '60%' }, { identifier: '@split-rest', distribution: 'left' }],
    });
    t.equal(split.status, 201, split.text);
    const balances = Object.values(byId(split.body.balances));
    t.equal(balances.length, 3, 'the source and both destinations');
    t.ok(balances.some((balance) => balance.indicator === '@split-rest' && balance.balance === 40), 'the @name created by the split, with its 40');
  });

  await t.test('a bulk: each item with its balances, as the batch left them', async (t) => {
    const aliceNow = (await server.request('GET', `/balances/${alice.balance_id}`)).body.balance as number;
    const bulk = await server.request('POST', '/transactions/bulk?include_balances=true', {
      atomic: true, skip_queue: true,
      transactions: [transfer({ precise_amount: 10, reference: 'bulk-ib-0' }), transfer({ precise_amount: 20, destination: '@bulk-ib', reference: 'bulk-ib-1' })],
    });
    t.equal(bulk.status, 201, bulk.text);
    t.equal(bulk.body.transactions.length, 2);
    t.match(bulk.body.transactions, [{ reference: 'bulk-ib-0', status: 'APPLIED' }, { reference: 'bulk-ib-1', status: 'APPLIED' }]);
    t.equal(byId(bulk.body.transactions[0].balances)[alice.balance_id]?.balance, aliceNow - 30, 'one write, one seq: the batch\'s result');
    t.ok(byId(bulk.body.transactions[0].balances)[bob.balance_id], 'the first item\'s destination');
    t.equal(bulk.body.transactions[1].balances.length, 2);
    const plain = await server.request('POST', '/transactions/bulk', { atomic: true, skip_queue: true, transactions: [transfer({ precise_amount: 1, destination: '@sink' })] });
    t.notOk('transactions' in plain.body, 'not asked, not given');
    await fund(server, alice.balance_id, 1);
  });

  await t.test('a hold: commit and void answer the hold\'s balances', async (t) => {
    const hold = await server.request('POST', '/transactions', transfer({ inflight: true, precise_amount: 300 }));
    t.equal(hold.body.status, 'INFLIGHT');
    const aliceHeld = (await server.request('GET', `/balances/${alice.balance_id}`)).body as Balance;
    const bobHeld = (await server.request('GET', `/balances/${bob.balance_id}`)).body as Balance;
    const committed = await server.request('PUT', `/transactions/inflight/${hold.body.transaction_id}?include_balances=true`, { status: 'commit', precise_amount: 100, skip_queue: true });
    t.equal(committed.status, 200, committed.text);
    const afterCommit = byId(committed.body.balances);
    t.equal(afterCommit[bob.balance_id]?.balance, bobHeld.balance + 100, 'the destination credited by the commit');
    t.equal(afterCommit[alice.balance_id]?.balance, aliceHeld.balance - 100);
    t.equal(String(afterCommit[alice.balance_id]?.inflight_debit_balance), '200', 'still held');
    const voided = await server.request('PUT', `/transactions/inflight/${hold.body.transaction_id}?include_balances=true`, { status: 'void', skip_queue: true });
    t.equal(voided.status, 200, voided.text);
    t.equal(String(byId(voided.body.balances)[alice.balance_id]?.inflight_debit_balance), '0', 'nothing held after the void');
    t.same(byId(voided.body.balances)[alice.balance_id], (await server.request('GET', `/balances/${alice.balance_id}`)).body);
    expectError(t, await server.request('PUT', `/transactions/inflight/${hold.body.transaction_id}?include_balances=1`, { status: 'void' }), 400, 'GEN_VALIDATION_ERROR', 'a flag that is neither true nor false');
  });
});
