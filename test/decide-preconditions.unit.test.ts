// Decider specs of preconditions (engine/preconditions.ts) on every path that creates or settles money:
// a synchronous transfer refused with TXN_PRECONDITION_FAILED and nothing written, a queued or scheduled
// one recorded REJECTED when its turn comes, an item of a bulk judged after the items before it, a split
// whose legs all go back, a hold's commit refused while the hold stays open, and a dry run naming every
// precondition that would fail. The version is the balance's before the transaction; a field is judged
// on the balance as the transaction leaves it. Records with preconditions replay exactly.

import t from 'tap';
import type { Precondition } from '../engine/precondition.js';
import { given } from './helpers/engine-spec.js';
import {
  amountsOf,
  balance,
  checkReplay,
  checkZeroSum,
  commit,
  create,
  fund,
  hold,
  ok,
  processQueue,
  refusal,
  share,
  transfer,
  txn,
  type EngineRig,
} from './helpers/engine-rig.js';

/** @alice with 1000, @bob with nothing yet. */
function funded(rig: EngineRig): { alice: string } {
  return { alice: fund(rig, '@alice', 1000n) };
}

const atLeast = (balanceId: string, field: Precondition['field'], value: bigint): Precondition => ({ balance_id: balanceId, field, operator: '>=', precise_value: value });

t.test('a version that still holds lets the transfer apply; a stale one refuses it and writes nothing', async (t) => {
  const rig = given(t, (_engine, rig) => { funded(rig); });
  const version = balance(rig, '@alice').version;
  rig.when(create({ source: '@alice', destination: '@bob', skip_queue: true, preconditions: [{ balance_id: '@alice', version }] }))
    .then([{ type: 'transaction.applied', transactions: [{ status: 'APPLIED', preconditions: [{ balance_id: '@alice', version }] }] }]);
  const stale = rig.when(create({ source: '@alice', destination: '@bob', skip_queue: true, preconditions: [{ balance_id: '@alice', version }] }))
    .thenRejected('TXN_PRECONDITION_FAILED');
  const rejection = refusal(stale.outcome);
  t.same(rejection.preconditions, [{ index: 0, balance_id: '@alice', field: 'version', operator: '==', expected: version, found: version + 1 }], 'names the precondition, the balance and what was found');
  t.match(rejection.message, /precondition 0 failed: balance @alice has version 2, not == 1/);
});

t.test('a field is judged on the balance as the transaction leaves it', async (t) => {
  const rig = given(t, (_engine, rig) => { funded(rig); });
  // Sending 300 of 1000 leaves 700: ">= 700" holds, ">= 701" does not, "== 300" holds for the destination.
  rig.when(create({ source: '@alice', destination: '@bob', precise_amount: 300n, skip_queue: true, preconditions: [atLeast('@alice', 'balance', 700n), { balance_id: '@bob', field: 'credit_balance', operator: '==', precise_value: 300n }] }))
    .then([{ type: 'transaction.applied', transactions: [{ status: 'APPLIED' }] }]);
  const refused = rig.when(create({ source: '@alice', destination: '@bob', precise_amount: 300n, skip_queue: true, preconditions: [atLeast('@alice', 'available_balance', 401n), { balance_id: '@bob', field: 'balance', operator: '<=', precise_value: 500n }] }))
    .thenRejected('TXN_PRECONDITION_FAILED');
  t.same(refusal(refused.outcome).preconditions, [
    { index: 0, balance_id: '@alice', field: 'available_balance', operator: '>=', expected: 401n, found: 400n },
    { index: 1, balance_id: '@bob', field: 'balance', operator: '<=', expected: 500n, found: 600n },
  ], 'every failure, in order');
  // Inflight fields: a hold of 100 leaves @alice with 100 held out.
  rig.when(create({ source: '@alice', destination: '@bob', precise_amount: 100n, inflight: true, skip_queue: true, preconditions: [{ balance_id: '@alice', field: 'inflight_debit_balance', operator: '==', precise_value: 100n }, { balance_id: '@bob', field: 'inflight_balance', operator: '==', precise_value: 100n }] }))
    .then([{ type: 'transaction.inflight' }]);
  t.same(amountsOf(balance(rig, '@alice')), { balance: 700n, inflight_debit: 100n, inflight_credit: 0n, available: 600n });
  checkZeroSum(t, rig);
});

t.test('a balance no name finds fails its precondition (found: null); an id names any balance', async (t) => {
  const rig = given(t, (_engine, rig) => { funded(rig); });
  const refused = rig.when(create({ source: '@alice', destination: '@bob', skip_queue: true, preconditions: [{ balance_id: '@nobody', field: 'balance', operator: '>=', precise_value: 0n }, { balance_id: 'bln_missing', version: 0 }] }))
    .thenRejected('TXN_PRECONDITION_FAILED');
  t.same(refusal(refused.outcome).preconditions, [
    { index: 0, balance_id: '@nobody', field: 'balance', operator: '>=', expected: 0n, found: null },
    { index: 1, balance_id: 'bln_missing', field: 'version', operator: '==', expected: 0, found: null },
  ]);
  t.notOk(rig.engine.state.balanceByIndicator('@bob', 'USD'), 'the @name of the refused transfer was not created');
  // A balance the transaction does not touch: judged as it stands. @world is at -1000.
  const world = balance(rig, '@world').balance_id;
  rig.when(create({ source: '@alice', destination: '@bob', skip_queue: true, preconditions: [{ balance_id: world, field: 'balance', operator: '==', precise_value: -1000n }] }))
    .then([{ type: 'transaction.applied' }]);
  // A balance the transaction creates: version 0 before it.
  rig.when(create({ source: '@alice', destination: '@carol', skip_queue: true, preconditions: [{ balance_id: '@carol', version: 0, field: 'balance', operator: '==', precise_value: 100n }] }))
    .then([{ type: 'transaction.applied', balances: [{ indicator: '@carol' }] }]);
});

t.test('queued: recorded QUEUED, then REJECTED with TXN_PRECONDITION_FAILED when its turn comes', async (t) => {
  const rig = given(t, (_engine, rig) => { funded(rig); });
  const version = balance(rig, '@alice').version;
  const queued = rig.when(create({ source: '@alice', destination: '@bob', precise_amount: 100n, preconditions: [{ balance_id: '@alice', version }] }))
    .then([{ type: 'transaction.queued', transactions: [{ status: 'QUEUED', preconditions: [{ balance_id: '@alice', version }] }] }]);
  const queuedId = ok(queued.outcome).transaction.transaction_id;
  // Something else moves @alice first (synchronously, so it drains the queue before it: queue another).
  const second = ok(rig.engine.run({ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@bob', precise_amount: 50n, preconditions: [{ balance_id: '@alice', version }] }) }));
  rig.when(processQueue()).then([
    { type: 'transaction.applied', transactions: [{ transaction_id: queuedId, status: 'APPLIED' }] },
    { type: 'transaction.rejected', transactions: [{ transaction_id: second.transaction.transaction_id, status: 'REJECTED', rejection: { code: 'TXN_PRECONDITION_FAILED', reason: 'precondition_failed' } }] },
  ]);
  t.same(amountsOf(balance(rig, '@alice')).balance, 900n, 'only the first moved money');
  t.equal(rig.engine.view.queuedCount(), 0, 'the mailbox is empty');
  checkReplay(t, rig);
});

t.test('scheduled: judged when it falls due', async (t) => {
  const rig = given(t, (_engine, rig) => { funded(rig); });
  const due = rig.clock.ms + 1000;
  const scheduled = ok(create({ source: '@alice', destination: '@bob', scheduled_for: due, preconditions: [atLeast('@alice', 'balance', 950n)] })(rig.engine));
  t.equal(scheduled.transaction.status, 'SCHEDULED');
  rig.clock.advance(2000);
  rig.when((engine) => engine.run({ op: 'timers.fire' }))
    .then([{ type: 'transaction.rejected', transactions: [{ transaction_id: scheduled.transaction.transaction_id, status: 'REJECTED', rejection: { code: 'TXN_PRECONDITION_FAILED' } }] }]);
  checkReplay(t, rig);
});

t.test('bulk: an item is judged after the items before it; atomic refuses the whole batch naming the item', async (t) => {
  const rig = given(t, (_engine, rig) => { funded(rig); });
  const item = (amount: bigint, preconditions?: Precondition[]) => transfer({ source: '@alice', destination: '@bob', precise_amount: amount, preconditions });
  const refused = rig.when((engine) => engine.run({ op: 'transaction.bulk', transactions: [item(600n), item(100n, [atLeast('@alice', 'balance', 350n)])], atomic: true, inflight: false, skip_queue: true }))
    .thenRejected('TXN_PRECONDITION_FAILED');
  t.match(refusal(refused.outcome), { item: 1, preconditions: [{ index: 0, found: 300n }] });
  rig.when((engine) => engine.run({ op: 'transaction.bulk', transactions: [item(600n), item(100n, [atLeast('@alice', 'balance', 300n)])], atomic: true, inflight: false, skip_queue: true }))
    .then([{ type: 'transaction.bulk', transactions: [{ status: 'APPLIED' }, { status: 'APPLIED' }] }]);
  // Not atomic: the batch stops at the failing item, the ones before it stand.
  const partial = rig.when((engine) => engine.run({ op: 'transaction.bulk', transactions: [item(100n), item(100n, [atLeast('@alice', 'balance', 101n)]), item(1n)], atomic: false, inflight: false, skip_queue: true }))
    .then([{ type: 'transaction.bulk', transactions: [{ status: 'APPLIED' }] }]);
  t.match(ok(partial.outcome), { status: 'PARTIAL', transaction_count: 1, failure: { index: 1, rejection: { code: 'TXN_PRECONDITION_FAILED' } } });
  checkZeroSum(t, rig);
});

t.test('split: a failed precondition takes back every leg', async (t) => {
  const rig = given(t, (_engine, rig) => { funded(rig); });
  const split = (skip_queue: boolean) => create({
    source: '@alice', destinations: [share('@bob', '50%'), share('@carol', 'left')], destination: '', precise_amount: 200n, skip_queue,
    preconditions: [{ balance_id: '@carol', field: 'balance', operator: '>=', precise_value: 101n }],
  });
  rig.when(split(true)).thenRejected('TXN_PRECONDITION_FAILED');
  const queued = ok(split(false)(rig.engine));
  rig.when(processQueue()).then([{ type: 'transaction.rejected', transactions: [{ transaction_id: queued.transaction.transaction_id, status: 'REJECTED', rejection: { code: 'TXN_PRECONDITION_FAILED' } }] }]);
  t.equal(amountsOf(balance(rig, '@alice')).balance, 1000n, 'nothing moved');
  checkZeroSum(t, rig);
});

t.test('a hold commit with preconditions: refused while the hold stays open; a queued one is REJECTED and frees the hold', async (t) => {
  const rig = given(t, (_engine, rig) => { funded(rig); });
  const holdId = hold(rig, '@alice', '@bob', 400n);
  const withCondition = (value: bigint, skipQueue: boolean) => (engine: EngineRig['engine']) => engine.run({
    op: 'hold.act', transaction_id: holdId, action: 'commit', precise_amount: 100n, skip_queue: skipQueue,
    preconditions: [{ balance_id: '@bob', field: 'balance', operator: '>=', precise_value: value }],
  });
  rig.when(withCondition(101n, true)).thenRejected('TXN_PRECONDITION_FAILED');
  t.equal(txn(rig, holdId).status, 'INFLIGHT', 'the hold is still open');
  rig.when(withCondition(100n, true)).then([{ type: 'transaction.committed', transactions: [{ precise_amount: 400n, committed_amount: 100n }, { action: 'commit', status: 'APPLIED', precise_amount: 100n }] }]);
  const queued = ok(withCondition(1000n, false)(rig.engine));
  t.ok(rig.engine.state.pendingHoldActions.has(holdId), 'the queued commit holds the lock');
  rig.when(processQueue()).then([{ type: 'transaction.rejected', transactions: [{ transaction_id: queued.transaction.transaction_id, status: 'REJECTED', rejection: { code: 'TXN_PRECONDITION_FAILED' } }] }]);
  t.notOk(rig.engine.state.pendingHoldActions.has(holdId), 'and frees it when rejected');
  rig.when(commit(holdId)).then([{ type: 'transaction.committed' }]);
  checkZeroSum(t, rig);
  checkReplay(t, rig);
});

t.test('a dry run reports every precondition that would fail, and writes nothing', async (t) => {
  const rig = given(t, (_engine, rig) => { funded(rig); });
  const before = rig.log.appendedSeq;
  const { projections } = rig.engine.dryRun([{ op: 'transaction.create', ...transfer({
    source: '@alice', destination: '@bob', precise_amount: 100n,
    preconditions: [{ balance_id: '@alice', version: 99 }, atLeast('@alice', 'balance', 900n), atLeast('@alice', 'balance', 901n)],
  }) }]);
  t.match(projections[0], { would_apply: false, rejection: { code: 'TXN_PRECONDITION_FAILED', preconditions: [{ index: 0, field: 'version' }, { index: 2, found: 900n }] } });
  t.equal(projections[0]?.rejection?.preconditions?.length, 2);
  t.equal(rig.log.appendedSeq, before, 'nothing logged');
});

t.test('a retry with the same reference and other preconditions is a conflict naming them', async (t) => {
  const rig = given(t, (_engine, rig) => { funded(rig); });
  ok(create({ source: '@alice', destination: '@bob', reference: 'r-1', skip_queue: true, preconditions: [{ balance_id: '@alice', version: 1 }] })(rig.engine));
  const again = ok(create({ source: '@alice', destination: '@bob', reference: 'r-1', skip_queue: true, preconditions: [{ balance_id: '@alice', version: 1 }] })(rig.engine));
  t.equal(again.created, false, 'the same request answers the original');
  const changed = rig.when(create({ source: '@alice', destination: '@bob', reference: 'r-1', skip_queue: true, preconditions: [{ balance_id: '@alice', version: 2 }] }))
    .thenRejected('TXN_DUPLICATE_REFERENCE');
  t.equal(refusal(changed.outcome).field, 'preconditions');
});
