// Preconditions and balances in the reply on the bulk hold actions (POST /transactions/inflight/bulk/commit
// and /void; engine/decide-hold-batches.ts, docs/decisions-beyond.md), over HTTP:
//   - each hold may carry its own preconditions, judged in the same decision as its action and after the
//     holds before it: one that fails refuses that hold alone (failed, TXN_PRECONDITION_FAILED, every
//     failed precondition listed), the hold stays open and the others are carried out; a void's item
//     is the id with its preconditions; a queued action keeps them and is judged (REJECTED) in its turn;
//     a dry run reports which would fail; a precondition of the wrong shape is a 400 naming the item;
//   - a bulk request's batch id (PUT /transactions/inflight/:id) takes preconditions too, judged once on the
//     balances as acting on every hold leaves them: one failing refuses the whole action, 409;
//   - include_balances=true adds to each hold acted on its balances as the whole action (one event, one
//     seq) left them: what GET /balances answers right after; none without it, none on a failed item, and a
//     flag that is neither true nor false is a 400.

import t from 'tap';
import { createBalance, expectError, fund, openServer, waitForEmptyQueue } from './helpers/http-fixture.js';

type Balance = { balance_id: string; balance: number; [field: string]: unknown };

function byId(balances: Balance[] | undefined): Record<string, Balance> {
  return Object.fromEntries((balances ?? []).map((balance) => [balance.balance_id, balance]));
}

t.test('bulk hold actions: preconditions per hold, balances per hold', async (t) => {
  const server = await openServer(t);
  const alice = await createBalance(server);
  const bob = await createBalance(server);
  await fund(server, alice.balance_id, 10_000);
  const hold = async (preciseAmount: number): Promise<string> => {
    const answer = await server.request('POST', '/transactions', {
      description: 'hold', precise_amount: preciseAmount, currency: 'USD', source: alice.balance_id, destination: bob.balance_id, skip_queue: true, inflight: true,
    });
    t.equal(answer.status, 201, answer.text);
    return answer.body.transaction_id as string;
  };
  const bobBalance = async (): Promise<number> => (await server.request('GET', `/balances/${bob.balance_id}`)).body.balance as number;
  const statusOf = async (id: string): Promise<string> => (await server.request('GET', `/transactions/${id}`)).body.status as string;

  await t.test('bulk commit: each hold judged on its own preconditions, after the holds before it', async (t) => {
    const [first, second, third] = [await hold(100), await hold(50), await hold(25)];
    const before = await bobBalance();
    const answer = await server.request('POST', '/transactions/inflight/bulk/commit', {
      skip_queue: true,
      transactions: [
        { transaction_id: first, preconditions: [{ balance_id: bob.balance_id, field: 'balance', operator: '==', precise_value: before + 100 }] },
        // Holds only if the first commit counts: judged as the decision so far leaves bob.
        { transaction_id: second, preconditions: [{ balance_id: bob.balance_id, field: 'balance', operator: '==', precise_value: before + 150 }] },
        { transaction_id: third, preconditions: [{ balance_id: bob.balance_id, field: 'balance', operator: '<=', precise_value: before }, { balance_id: bob.balance_id, version: 1 }] },
      ],
    });
    t.equal(answer.status, 200, answer.text);
    t.match(answer.body, { succeeded: 2, failed: 1 });
    const [one, two, three] = answer.body.results;
    t.match(one, { transaction_id: first, status: 'succeeded' });
    t.match(two, { transaction_id: second, status: 'succeeded' }, 'the second sees the first commit in the same decision');
    t.match(three, { transaction_id: third, status: 'failed', code: 'TXN_PRECONDITION_FAILED', message: /precondition 0 failed/ });
    t.match(three.preconditions, [
      { index: 0, balance_id: bob.balance_id, field: 'balance', operator: '<=', expected: String(before), found: String(before + 175) },
      { index: 1, field: 'version', operator: '==', expected: '1' },
    ], 'every failed precondition of the item, as a dry run lists them');
    t.notOk('balances' in one, 'no balances unless asked');
    t.equal(await statusOf(third), 'INFLIGHT', 'the refused hold is still open');
    t.equal(await bobBalance(), before + 150, 'only the two commits moved money');
  });

  await t.test('queued: the action keeps its hold\'s preconditions and is judged when its turn comes', async (t) => {
    const pending = await hold(60);
    const before = await bobBalance();
    const answer = await server.request('POST', '/transactions/inflight/bulk/commit', {
      transactions: [{ transaction_id: pending, preconditions: [{ balance_id: bob.balance_id, field: 'balance', operator: '<=', precise_value: before }] }],
    });
    t.match(answer.body.results, [{ transaction_id: pending, status: 'queued', code: 'QUEUED' }]);
    await waitForEmptyQueue(server);
    t.equal(await bobBalance(), before, 'its turn came and the condition failed: nothing moved');
    t.equal(await statusOf(pending), 'INFLIGHT', 'the hold is still open');
    const children = await server.request('POST', '/transactions/filter', { filters: [{ field: 'parent_transaction', operator: 'eq', value: pending }] });
    t.match(children.body.data, [{ status: 'REJECTED', rejection: { code: 'TXN_PRECONDITION_FAILED' } }], 'the queued commit is recorded REJECTED with the code');
    const freed = await server.request('PUT', `/transactions/inflight/${pending}`, { status: 'void', skip_queue: true });
    t.equal(freed.status, 200, 'and the hold is free for another action');
  });

  await t.test('bulk void: an item is the id with its preconditions; bare ids as before', async (t) => {
    const [kept, voided] = [await hold(10), await hold(20)];
    const version = (await server.request('GET', `/balances/${alice.balance_id}`)).body.version as number;
    const answer = await server.request('POST', '/transactions/inflight/bulk/void', {
      skip_queue: true,
      transaction_ids: [{ transaction_id: kept, preconditions: [{ balance_id: alice.balance_id, version: version + 7 }] }, voided],
    });
    t.equal(answer.status, 200, answer.text);
    t.match(answer.body.results, [
      { transaction_id: kept, status: 'failed', code: 'TXN_PRECONDITION_FAILED', preconditions: [{ field: 'version', expected: String(version + 7), found: String(version) }] },
      { transaction_id: voided, status: 'succeeded' },
    ]);
    t.equal(await statusOf(kept), 'INFLIGHT');
    t.equal(await statusOf(voided), 'VOID');
    const held = Number((await server.request('GET', `/balances/${alice.balance_id}`)).body.inflight_debit_balance);
    const again = await server.request('POST', '/transactions/inflight/bulk/void', {
      skip_queue: true, transaction_ids: [{ transaction_id: kept, preconditions: [{ balance_id: alice.balance_id, field: 'inflight_debit_balance', operator: '==', precise_value: held - 10 }] }],
    });
    t.match(again.body.results, [{ transaction_id: kept, status: 'succeeded' }], 'a condition judged on the balance as the void leaves it');
  });

  await t.test('a batch id: preconditions judged once every hold is acted on, all or none; its balances when asked', async (t) => {
    const batch = await server.request('POST', '/transactions/bulk', {
      inflight: true, skip_queue: true, atomic: true,
      transactions: [20, 30].map((preciseAmount) => ({ description: 'batch hold', precise_amount: preciseAmount, currency: 'USD', source: alice.balance_id, destination: bob.balance_id })),
    });
    t.equal(batch.status, 201, batch.text);
    const batchId = batch.body.batch_id as string;
    const before = await bobBalance();
    const refused = await server.request('PUT', `/transactions/inflight/${batchId}`, {
      status: 'commit', skip_queue: true, preconditions: [{ balance_id: bob.balance_id, field: 'balance', operator: '<=', precise_value: before + 49 }],
    });
    expectError(t, refused, 409, 'TXN_PRECONDITION_FAILED', 'a condition the whole action would break');
    t.match(refused.body.error_detail.details, { balance_id: bob.balance_id, field: 'balance', expected: before + 49, found: before + 50 }, 'judged on the balances as every hold\'s commit leaves them');
    t.equal(await bobBalance(), before, 'no hold of the batch was committed');
    // Holds only on the final balances (after the first hold alone bob has before + 20 or before + 30).
    const committed = await server.request('PUT', `/transactions/inflight/${batchId}?include_balances=true`, {
      status: 'commit', skip_queue: true, preconditions: [{ balance_id: bob.balance_id, field: 'balance', operator: '==', precise_value: before + 50 }],
    });
    t.equal(committed.status, 200, committed.text);
    t.equal(await bobBalance(), before + 50);
    const balances = byId(committed.body.balances);
    t.same(balances[bob.balance_id], (await server.request('GET', `/balances/${bob.balance_id}`)).body, 'the batch\'s balances as the action left them');
    t.same(balances[alice.balance_id], (await server.request('GET', `/balances/${alice.balance_id}`)).body);
  });

  await t.test('a dry run reports which would fail; a wrong shape is a 400 naming the item', async (t) => {
    const pending = await hold(5);
    const dry = await server.request('POST', '/transactions/inflight/bulk/commit', {
      dry_run: true, transactions: [{ transaction_id: pending, preconditions: [{ balance_id: bob.balance_id, field: 'balance', operator: '<=', precise_value: 0 }] }],
    });
    t.equal(dry.status, 200, dry.text);
    t.match(dry.body, { dry_run: true, would_apply: false, results: [{ transaction_id: pending, would_apply: false, rejection: { code: 'TXN_PRECONDITION_FAILED', preconditions: [{ index: 0, expected: '0' }] } }] });
    t.equal(await statusOf(pending), 'INFLIGHT', 'nothing written');
    const commitShape = await server.request('POST', '/transactions/inflight/bulk/commit', {
      skip_queue: true, transactions: [{ transaction_id: pending }, { transaction_id: pending, preconditions: [{ balance_id: bob.balance_id, field: 'balance', precise_value: 1 }] }],
    });
    expectError(t, commitShape, 400, 'GEN_VALIDATION_ERROR', 'a condition without its operator');
    t.ok('transactions.1.preconditions.0.operator' in (commitShape.body.error_detail.details ?? {}), JSON.stringify(commitShape.body.error_detail.details));
    const voidShape = await server.request('POST', '/transactions/inflight/bulk/void', { transaction_ids: [{ transaction_id: pending, preconditions: [{ balance_id: bob.balance_id }] }] });
    expectError(t, voidShape, 400, 'GEN_VALIDATION_ERROR', 'nothing to check');
    t.ok('transaction_ids.0.preconditions.0.version' in (voidShape.body.error_detail.details ?? {}), JSON.stringify(voidShape.body.error_detail.details));
    t.equal(await statusOf(pending), 'INFLIGHT', 'nothing written');
  });

  await t.test('include_balances=true: each hold acted on with its balances as the whole action left them', async (t) => {
    const [first, second, refused] = [await hold(30), await hold(40), await hold(1)];
    const answer = await server.request('POST', '/transactions/inflight/bulk/commit?include_balances=true', {
      skip_queue: true,
      transactions: [{ transaction_id: first }, { transaction_id: second, precise_amount: 15 }, { transaction_id: refused, precise_amount: 2 }],
    });
    t.equal(answer.status, 200, answer.text);
    const [one, two, three] = answer.body.results;
    t.match(three, { status: 'failed', code: 'INVALID_AMOUNT' });
    t.notOk('balances' in three, 'a failed hold has none');
    const aliceNow = (await server.request('GET', `/balances/${alice.balance_id}`)).body;
    const bobNow = (await server.request('GET', `/balances/${bob.balance_id}`)).body;
    for (const [label, item] of [['first', one], ['second', two]] as const) {
      t.equal(item.status, 'succeeded');
      const balances = byId(item.balances);
      t.same(Object.keys(balances).sort(), [alice.balance_id, bob.balance_id].sort(), `${label}: the hold's source and destination`);
      t.same(balances[alice.balance_id], aliceNow, `${label}: the source as the whole action left it (GET /balances right after)`);
      t.same(balances[bob.balance_id], bobNow, `${label}: the destination likewise`);
    }
    const voided = await server.request('POST', '/transactions/inflight/bulk/void?include_balances=true', { skip_queue: true, transaction_ids: [second] });
    t.equal(voided.status, 200, voided.text);
    t.same(byId(voided.body.results[0].balances)[alice.balance_id], (await server.request('GET', `/balances/${alice.balance_id}`)).body, 'a void too');
    const queued = await hold(3);
    const queuedAnswer = await server.request('POST', '/transactions/inflight/bulk/void?include_balances=true', { transaction_ids: [queued] });
    t.match(queuedAnswer.body.results, [{ transaction_id: queued, status: 'queued', code: 'QUEUED' }]);
    t.ok(byId(queuedAnswer.body.results[0].balances)[alice.balance_id], 'a queued action: the balances as they stand at its seq');
    expectError(t, await server.request('POST', '/transactions/inflight/bulk/void?include_balances=yes', { transaction_ids: [refused] }), 400, 'GEN_VALIDATION_ERROR', 'a flag that is neither true nor false');
    expectError(t, await server.request('POST', '/transactions/inflight/bulk/commit?include_balances=1', { transactions: [{ transaction_id: refused }] }), 400, 'GEN_VALIDATION_ERROR', 'on commit too');
  });
});
