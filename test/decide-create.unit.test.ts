// Decider specs of creating a transaction (engine/decide-create.ts, with its admission and the carrying
// out of carry-out.ts): given a history, when a transaction.create (synchronous or queued, plain or
// split), then the events it logs or the rejection it gets. Every rejection is checked to leave no event
// and no balance change (the harness does); balances are checked after the steps that move money, and
// zero-sum after the histories that could break it.

import t, { type Test } from 'tap';
import type { LedgerEngine } from '../engine/ledger-engine.js';
import { PARENT_META_KEY } from '../engine/carry-out.js';
import { GENERAL_LEDGER_ID } from '../engine/records.js';
import { transactionHash } from '../engine/transaction-hash.js';
import { given, specOn } from './helpers/engine-spec.js';
import {
  amountsOf,
  balance,
  checkReplay,
  checkZeroSum,
  commit,
  create,
  fund,
  ok,
  processQueue,
  share,
  transfer,
  txn,
  voidHold,
  zeroSumViolations,
  type EngineRig,
} from './helpers/engine-rig.js';

/** Creates a balance (no indicator) in the general ledger and credits it from @world; returns its id. */
function fundedBalance(rig: EngineRig, amount: bigint, currency = 'USD'): string {
  const created = ok(rig.engine.run({ op: 'balance.create', ledger_id: GENERAL_LEDGER_ID, currency, identity_id: '', indicator: '', meta_data: {} }));
  if (amount > 0n) ok(create({ source: '@world', destination: created.balance_id, precise_amount: amount, currency, allow_overdraft: true, skip_queue: true })(rig.engine));
  return created.balance_id;
}

/** Settled amount (credit - debit) of a balance by id. */
function balanceOf(rig: EngineRig, balanceId: string): bigint {
  return amountsOf(balance(rig, balanceId)).balance;
}

function checkZeroSumOf(t: Test, rig: EngineRig, label: string): void {
  t.same(zeroSumViolations(rig.engine.state), [], `zero-sum after ${label}`);
}

const paths = [false, true].map((skip_queue) => ({ skip_queue, path: skip_queue ? 'synchronous' : 'queued' }));

t.test('splits', async (t) => {
  t.test('several sources into one destination: one leg per source, each naming the parent', async (t) => {
    const rig = given(t, (_engine, rig) => { fund(rig, '@alice', 100n); fund(rig, '@bob', 100n); });
    const parent = ok(rig.when(create({ sources: [share('@alice', '60'), share('@bob', 'left')], destination: '@carol', precise_amount: 100n, skip_queue: true }))
      .then([{ type: 'transaction.applied' }]).outcome).transaction;
    t.equal(parent.status, 'APPLIED');
    t.equal(parent.legs?.length, 2);
    const legs = (parent.legs ?? []).map((id) => txn(rig, id));
    for (const leg of legs) {
      t.equal(leg.parent_transaction, parent.transaction_id, 'leg parent_transaction');
      t.equal(leg.meta_data[PARENT_META_KEY], parent.transaction_id, 'leg meta_data names the parent');
      t.equal(leg.status, 'APPLIED');
      t.equal(leg.destination, balance(rig, '@carol').balance_id);
    }
    t.same(legs.map((leg) => leg.precise_amount), [60n, 40n]);
    t.same(amountsOf(balance(rig, '@alice')).balance, 40n);
    t.same(amountsOf(balance(rig, '@bob')).balance, 60n);
    t.same(amountsOf(balance(rig, '@carol')).balance, 100n);
    checkZeroSum(t, rig);
    checkReplay(t, rig);
  });

  t.test('one source to several destinations, and many to many', async (t) => {
    const rig = given(t, (_engine, rig) => { fund(rig, '@a', 100n); fund(rig, '@b', 100n); });
    const fanOut = ok(rig.when(create({ source: '@a', destinations: [share('@c', '33.33%'), share('@d', '33.33%'), share('@e', '33.34%')], precise_amount: 100n, skip_queue: true }))
      .then([{ type: 'transaction.applied' }]).outcome).transaction;
    t.same((fanOut.legs ?? []).map((id) => txn(rig, id).precise_amount), [33n, 33n, 34n]);
    const manyToMany = ok(rig.when(create({ sources: [share('@a', '30'), share('@b', '70')], destinations: [share('@f', '50%'), share('@g', '50%')], precise_amount: 100n, skip_queue: true }))
      .then([{ type: 'transaction.applied' }]).outcome).transaction;
    const legs = (manyToMany.legs ?? []).map((id) => txn(rig, id));
    const name = (id: string) => rig.engine.state.balances.get(id)?.indicator;
    t.same(legs.map((leg) => [name(leg.source), name(leg.destination), leg.precise_amount]), [
      ['@a', '@f', 30n], ['@b', '@f', 20n], ['@b', '@g', 50n],
    ]);
    checkZeroSum(t, rig);
    checkReplay(t, rig);
  });

  t.test('atomic: one failing leg and nothing moves; every leg is REJECTED, in one event', async (t) => {
    const rig = given(t, (_engine, rig) => { fund(rig, '@alice', 100n); fund(rig, '@bob', 10n); });
    const parent = ok(rig.when(create({ sources: [share('@alice', '60'), share('@bob', 'left')], destination: '@carol', precise_amount: 100n, atomic: true }))
      .then([{ type: 'transaction.queued' }]).outcome).transaction;
    // Processing the split is one log record.
    rig.when(processQueue(10)).then([{ type: 'transaction.rejected' }]);
    const done = txn(rig, parent.transaction_id);
    t.equal(done.status, 'REJECTED');
    t.equal(done.rejection?.code, 'TXN_INSUFFICIENT_FUNDS');
    const legs = (done.legs ?? []).map((id) => txn(rig, id));
    t.equal(legs.length, 2);
    t.same(legs.map((leg) => leg.status), ['REJECTED', 'REJECTED'], 'the leg that could have gone is rejected too');
    t.same(amountsOf(balance(rig, '@alice')).balance, 100n);
    t.same(amountsOf(balance(rig, '@bob')).balance, 10n);
    t.same(amountsOf(balance(rig, '@carol')).balance, 0n);
    // Synchronously it is refused outright.
    rig.when(create({ sources: [share('@alice', '60'), share('@bob', 'left')], destination: '@carol', precise_amount: 100n, atomic: true, skip_queue: true }))
      .thenRejected('TXN_INSUFFICIENT_FUNDS');
    const inflight = ok(rig.when(create({ sources: [share('@alice', '60'), share('@bob', 'left')], destination: '@carol', precise_amount: 100n, atomic: true, inflight: true }))
      .then([{ type: 'transaction.queued' }]).outcome).transaction;
    rig.when(processQueue(10)).then([{ type: 'transaction.rejected' }]);
    t.equal(txn(rig, inflight.transaction_id).status, 'REJECTED');
    t.same(amountsOf(balance(rig, '@alice')).inflight_debit, 0n, 'no leg is left holding money');
    checkZeroSum(t, rig);
    checkReplay(t, rig);
  });

  t.test('not atomic: the legs that can go are APPLIED, the others REJECTED', async (t) => {
    const rig = given(t, (_engine, rig) => { fund(rig, '@alice', 100n); fund(rig, '@bob', 10n); });
    const parent = ok(rig.when(create({ sources: [share('@alice', '60'), share('@bob', 'left')], destination: '@carol', precise_amount: 100n }))
      .then([{ type: 'transaction.queued' }]).outcome).transaction;
    rig.when(processQueue(10)).then([{ type: 'transaction.applied' }]);
    const done = txn(rig, parent.transaction_id);
    t.equal(done.status, 'APPLIED');
    t.same((done.legs ?? []).map((id) => txn(rig, id).status), ['APPLIED', 'REJECTED']);
    t.equal(txn(rig, (done.legs ?? [])[1] as string).rejection?.code, 'TXN_INSUFFICIENT_FUNDS');
    t.same(amountsOf(balance(rig, '@alice')).balance, 40n);
    t.same(amountsOf(balance(rig, '@bob')).balance, 10n);
    t.same(amountsOf(balance(rig, '@carol')).balance, 60n);

    const hopeless = ok(rig.when(create({ sources: [share('@nobody', '50%'), share('@nobody2', '50%')], destination: '@carol', precise_amount: 100n }))
      .then([{ type: 'transaction.queued' }]).outcome).transaction;
    rig.when(processQueue(10)).then([{ type: 'transaction.rejected' }]);
    t.equal(txn(rig, hopeless.transaction_id).status, 'REJECTED', 'no leg could go: the parent is REJECTED');
    t.equal(txn(rig, hopeless.transaction_id).rejection?.code, 'TXN_INSUFFICIENT_FUNDS');
    checkZeroSum(t, rig);
    checkReplay(t, rig);
  });

  t.test('invalid distributions are TXN_INVALID_DISTRIBUTION and record nothing', async (t) => {
    const rig = given(t, (_engine, rig) => { fund(rig, '@alice', 100n); });
    const cases: Array<[string, ReturnType<typeof share>[]]> = [
      ['over 100%', [share('@alice', '60%'), share('@bob', '50%')]],
      ['fixed over the total', [share('@alice', '101'), share('@bob', 'left')]],
      ['two left', [share('@alice', 'left'), share('@bob', 'left')]],
      ['not covering the total', [share('@alice', '50%'), share('@bob', '20')]],
    ];
    for (const [name, shares] of cases) {
      for (const skip_queue of [true, false]) {
        t.comment(`${name}, skip_queue ${skip_queue}: as sources, then as destinations`);
        rig.when(create({ sources: shares, destination: '@carol', precise_amount: 100n, skip_queue })).thenRejected('TXN_INVALID_DISTRIBUTION');
        rig.when(create({ source: '@carol', destinations: shares, precise_amount: 100n, skip_queue })).thenRejected('TXN_INVALID_DISTRIBUTION');
      }
    }
  });

  t.test('a split hold opens a hold per leg; it is committed or voided whole', async (t) => {
    const rig = given(t, (_engine, rig) => { fund(rig, '@alice', 100n); fund(rig, '@bob', 100n); });
    const parent = ok(rig.when(create({ sources: [share('@alice', '50%'), share('@bob', '50%')], destination: '@carol', precise_amount: 80n, inflight: true, skip_queue: true }))
      .then([{ type: 'transaction.inflight' }]).outcome).transaction;
    t.equal(parent.status, 'INFLIGHT');
    t.same(amountsOf(balance(rig, '@alice')).inflight_debit, 40n);
    // No partial commit of a split.
    rig.when(commit(parent.transaction_id, 10n)).thenRejected('TXN_PARTIAL_NOT_ALLOWED');
    const done = rig.when(commit(parent.transaction_id)).then([{ type: 'transaction.committed' }]);
    t.equal(ok(done.outcome).hold.status, 'APPLIED');
    t.same((parent.legs ?? []).map((id) => txn(rig, id).status), ['APPLIED', 'APPLIED']);
    t.same(amountsOf(balance(rig, '@carol')), { balance: 80n, inflight_debit: 0n, inflight_credit: 0n, available: 80n });
    rig.when(voidHold(parent.transaction_id)).thenRejected('TXN_ALREADY_COMMITTED');
    checkZeroSum(t, rig);
    checkReplay(t, rig);
  });

  t.test('a split hold parent reports what its legs really committed', async (t) => {
    const rig = given(t, (_engine, rig) => { fund(rig, '@alice', 100n); fund(rig, '@bob', 10n); });
    const parent = ok(rig.when(create({ sources: [share('@alice', '50%'), share('@bob', '50%')], destination: '@carol', precise_amount: 80n, inflight: true, skip_queue: true }))
      .then([{ type: 'transaction.inflight' }]).outcome).transaction;
    t.same((parent.legs ?? []).map((id) => txn(rig, id).status), ['INFLIGHT', 'REJECTED'], '@bob could not hold its share');
    const done = ok(rig.when(commit(parent.transaction_id)).then([{ type: 'transaction.committed' }]).outcome);
    t.equal(done.transaction.precise_amount, 40n, 'the commit moved 40');
    t.same(amountsOf(balance(rig, '@carol')).balance, 40n);
    t.equal(done.hold.committed_amount, 40n, 'and the parent should say 40 were committed');

    const second = ok(rig.when(create({ sources: [share('@alice', '50%'), share('@carol', '50%')], destination: '@dave', precise_amount: 20n, inflight: true, skip_queue: true }))
      .then([{ type: 'transaction.inflight' }]).outcome).transaction;
    rig.when(commit((second.legs ?? [])[0] as string)).then([{ type: 'transaction.committed' }]);
    const voided = ok(rig.when(voidHold(second.transaction_id)).then([{ type: 'transaction.voided' }]).outcome);
    t.same(amountsOf(balance(rig, '@dave')).balance, 10n, 'one leg was committed on its own before the void');
    t.equal(voided.hold.committed_amount, 10n, 'the voided parent should say 10 were committed');
  });
});
