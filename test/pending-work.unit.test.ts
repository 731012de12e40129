// Decider specs of the engine's own work (engine/pending-work.ts): given a history, when the queue runner
// or the timers take a turn (the clock moved by hand), then the events each step logs, one per item: the
// queue in order per source and round-robin across sources; holds that expire or commit themselves;
// scheduled transactions falling due, with funds checked then. Balances are checked after, and the log
// replayed at the end; the last test rebuilds the timers in a fresh engine from the log alone.

import t from 'tap';
import type { LedgerEngine } from '../engine/ledger-engine.js';
import { GENERAL_LEDGER_ID } from '../engine/records.js';
import { given } from './helpers/engine-spec.js';
import {
  amountsOf,
  balance,
  checkReplay,
  checkZeroSum,
  commit,
  create,
  engineRig,
  fund,
  hold,
  ok,
  processQueue,
  replayedRig,
  share,
  transfer,
  txn,
  voidHold,
  type EngineRig,
} from './helpers/engine-rig.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** The clock moves on by `ms`, then the timers take a turn. */
const fireAfter = (ms: number) => (engine: LedgerEngine, rig: EngineRig) => {
  rig.clock.advance(ms);
  return engine.run({ op: 'timers.fire' });
};

t.test('queue: balances are visited round-robin, one transaction each per turn', async (t) => {
  let hotIds: string[] = [];
  let coldId = '';
  const rig = given(t, (engine) => {
    const funded = (): string => {
      const id = ok(engine.run({ op: 'balance.create', ledger_id: GENERAL_LEDGER_ID, currency: 'USD', identity_id: '', indicator: '', meta_data: {} })).balance_id;
      ok(create({ source: '@world', destination: id, precise_amount: 1000n, allow_overdraft: true, skip_queue: true })(engine));
      return id;
    };
    const hot = funded();
    const cold = funded();
    const destination = ok(engine.run({ op: 'balance.create', ledger_id: GENERAL_LEDGER_ID, currency: 'USD', identity_id: '', indicator: '', meta_data: {} })).balance_id;
    hotIds = Array.from({ length: 5 }, (_, index) => ok(create({ source: hot, destination, precise_amount: 1n, reference: `hot-${index}` })(engine)).transaction.transaction_id);
    coldId = ok(create({ source: cold, destination, precise_amount: 1n })(engine)).transaction.transaction_id;
  });
  // A slice of two: the hot balance has one turn, and the cold one is not starved.
  const slice = rig.when(processQueue(2)).then([
    { type: 'transaction.applied', transactions: [{ transaction_id: hotIds[0] }] },
    { type: 'transaction.applied', transactions: [{ transaction_id: coldId }] },
  ]);
  t.equal(slice.outcome.value, 2, 'a slice of two');
  t.same(hotIds.slice(1).map((id) => txn(rig, id).status), ['QUEUED', 'QUEUED', 'QUEUED', 'QUEUED']);
  // The hot balance continues in order.
  t.equal(rig.when(processQueue(2)).then([{ transactions: [{ transaction_id: hotIds[1] }] }, { transactions: [{ transaction_id: hotIds[2] }] }]).outcome.value, 2);
  t.same(hotIds.map((id) => txn(rig, id).status), ['APPLIED', 'APPLIED', 'APPLIED', 'QUEUED', 'QUEUED'], 'hot continues in order');
  t.equal(rig.when(processQueue(100)).then([{ transactions: [{ transaction_id: hotIds[3] }] }, { transactions: [{ transaction_id: hotIds[4] }] }]).outcome.value, 2, 'the rest');
  t.equal(rig.when(processQueue(100)).then([]).outcome.value, 0, 'nothing left');
});

t.test('timers: a hold expires at its inflight_expiry_date and is voided', async (t) => {
  let holdId = '';
  const rig = given(t, (_engine, rig) => { fund(rig, '@alice', 1000n); holdId = hold(rig, '@alice', '@bob', 300n, { inflight_expiry_date: rig.clock.ms + HOUR }); });
  // Nothing is due a millisecond early.
  t.equal(rig.when(fireAfter(HOUR - 1)).then([]).outcome.value, 0, 'nothing is due a millisecond early');
  t.equal(txn(rig, holdId).status, 'INFLIGHT');
  const fired = rig.when(fireAfter(1)).then([{
    type: 'transaction.voided',
    transactions: [{ transaction_id: holdId, status: 'VOID' }, { parent_transaction: holdId, action: 'void', status: 'VOID', precise_amount: 300n }],
  }]);
  t.equal(fired.outcome.value, 1);
  const children = [...rig.store.byId.values()].filter((record) => record.parent_transaction === holdId);
  t.equal(children.length, 1, 'one child: the void');
  t.same(amountsOf(balance(rig, '@alice')), { balance: 1000n, inflight_debit: 0n, inflight_credit: 0n, available: 1000n });
  t.same(amountsOf(balance(rig, '@bob')), { balance: 0n, inflight_debit: 0n, inflight_credit: 0n, available: 0n });
  t.equal(rig.when(fireAfter(HOUR)).then([]).outcome.value, 0, 'it fires once');
  checkZeroSum(t, rig);
  checkReplay(t, rig);
});

t.test('timers: a hold commits itself at its inflight_commit_date, whatever is left of it', async (t) => {
  let holdId = '';
  const rig = given(t, (engine, rig) => {
    fund(rig, '@alice', 1000n);
    holdId = hold(rig, '@alice', '@bob', 300n, { inflight_commit_date: rig.clock.ms + HOUR });
    ok(commit(holdId, 100n)(engine));
  });
  const fired = rig.when(fireAfter(HOUR)).then([{
    type: 'transaction.committed',
    transactions: [{ transaction_id: holdId, status: 'APPLIED', committed_amount: 300n }, { parent_transaction: holdId, action: 'commit', status: 'APPLIED', precise_amount: 200n }],
  }]);
  t.equal(fired.outcome.value, 1);
  const children = [...rig.store.byId.values()].filter((record) => record.parent_transaction === holdId);
  t.same(children.map((child) => [child.status, child.precise_amount]), [['APPLIED', 100n], ['APPLIED', 200n]]);
  t.same(amountsOf(balance(rig, '@bob')), { balance: 300n, inflight_debit: 0n, inflight_credit: 0n, available: 300n });
  checkZeroSum(t, rig);
  checkReplay(t, rig);
});

t.test('timers: with both dates the earlier wins and the later finds nothing to do', async (t) => {
  let expiresFirst = '';
  let commitsFirst = '';
  const rig = given(t, (_engine, rig) => {
    fund(rig, '@alice', 1000n);
    expiresFirst = hold(rig, '@alice', '@bob', 100n, { inflight_expiry_date: rig.clock.ms + MINUTE, inflight_commit_date: rig.clock.ms + HOUR });
    commitsFirst = hold(rig, '@alice', '@bob', 200n, { inflight_expiry_date: rig.clock.ms + HOUR, inflight_commit_date: rig.clock.ms + MINUTE });
  });
  t.equal(rig.when(fireAfter(MINUTE)).then([
    { type: 'transaction.voided', transactions: [{ transaction_id: expiresFirst, status: 'VOID' }] },
    { type: 'transaction.committed', transactions: [{ transaction_id: commitsFirst, status: 'APPLIED' }] },
  ]).outcome.value, 2);
  // The later timers do nothing and log nothing.
  t.equal(rig.when(fireAfter(HOUR)).then([]).outcome.value, 0, 'the later timers do nothing');
  t.same(amountsOf(balance(rig, '@bob')), { balance: 200n, inflight_debit: 0n, inflight_credit: 0n, available: 200n });
  checkReplay(t, rig);
});

t.test('timers: a timer whose hold was closed by hand does nothing', async (t) => {
  let committed = '';
  let voided = '';
  const rig = given(t, (engine, rig) => {
    fund(rig, '@alice', 1000n);
    committed = hold(rig, '@alice', '@bob', 100n, { inflight_expiry_date: rig.clock.ms + HOUR });
    voided = hold(rig, '@alice', '@bob', 100n, { inflight_commit_date: rig.clock.ms + HOUR });
    ok(commit(committed)(engine));
    ok(voidHold(voided)(engine));
  });
  t.equal(rig.when(fireAfter(2 * HOUR)).then([]).outcome.value, 0, 'nothing fires, nothing is logged');
  t.equal(txn(rig, committed).status, 'APPLIED', 'the committed hold stays committed');
  t.equal(txn(rig, voided).status, 'VOID', 'the voided hold stays voided');
  t.same(amountsOf(balance(rig, '@bob')).balance, 100n);
  checkReplay(t, rig);
});

t.test('timers: a timer that comes due while an action is queued applies the action first', async (t) => {
  let holdId = '';
  const rig = given(t, (engine, rig) => {
    fund(rig, '@alice', 1000n);
    holdId = hold(rig, '@alice', '@bob', 300n, { inflight_expiry_date: rig.clock.ms + HOUR });
    ok(commit(holdId, 100n, false)(engine));
  });
  t.equal(rig.when(fireAfter(HOUR)).then([
    // The queued commit goes first, then the expiry voids the rest.
    { type: 'transaction.applied', transactions: [{ transaction_id: holdId, status: 'INFLIGHT', committed_amount: 100n }, { parent_transaction: holdId, action: 'commit', status: 'APPLIED' }] },
    { type: 'transaction.voided', transactions: [{ transaction_id: holdId, status: 'VOID', committed_amount: 100n }] },
  ]).outcome.value, 1);
  t.same(amountsOf(balance(rig, '@bob')), { balance: 100n, inflight_debit: 0n, inflight_credit: 0n, available: 100n });
  t.equal(rig.engine.view.queuedCount(), 0);
  checkZeroSum(t, rig);
  checkReplay(t, rig);
});

t.test('timers: a scheduled transaction waits, then is applied with funds checked when it is due', async (t) => {
  const rig = given(t, []);
  const due = rig.clock.ms + HOUR;
  // Accepted although @alice has nothing yet; nothing moves when it is scheduled.
  const scheduled = ok(rig.when(create({ source: '@alice', destination: '@bob', precise_amount: 100n, scheduled_for: due }))
    .then([{ type: 'transaction.scheduled', transactions: [{ status: 'SCHEDULED', scheduled_for: due }] }]).outcome).transaction;
  t.same(amountsOf(balance(rig, '@alice')).balance, 0n, 'nothing moves when it is scheduled');
  // The queue does not touch it.
  rig.when(processQueue(10)).then([]);
  t.equal(txn(rig, scheduled.transaction_id).status, 'SCHEDULED', 'the queue does not touch it');
  fund(rig, '@alice', 100n);
  t.equal(rig.when(fireAfter(HOUR - 1)).then([]).outcome.value, 0);
  t.equal(rig.when(fireAfter(1)).then([{ type: 'transaction.applied', transactions: [{ transaction_id: scheduled.transaction_id, status: 'APPLIED' }] }]).outcome.value, 1);
  t.same(amountsOf(balance(rig, '@alice')).balance, 0n);
  t.same(amountsOf(balance(rig, '@bob')).balance, 100n);
  checkReplay(t, rig);
});

t.test('timers: a scheduled transaction whose source is short when it falls due is rejected', async (t) => {
  let scheduledId = '';
  const rig = given(t, (engine, rig) => {
    fund(rig, '@alice', 100n);
    scheduledId = ok(create({ source: '@alice', destination: '@bob', precise_amount: 100n, scheduled_for: rig.clock.ms + HOUR })(engine)).transaction.transaction_id;
    ok(create({ source: '@alice', destination: '@carol', precise_amount: 60n, skip_queue: true })(engine));
  });
  t.equal(rig.when(fireAfter(HOUR)).then([{
    type: 'transaction.rejected',
    transactions: [{ transaction_id: scheduledId, status: 'REJECTED', rejection: { code: 'TXN_INSUFFICIENT_FUNDS' } }],
  }]).outcome.value, 1);
  t.same(amountsOf(balance(rig, '@alice')).balance, 40n, 'nothing moved');
  t.same(amountsOf(balance(rig, '@bob')).balance, 0n);
  checkZeroSum(t, rig);
  checkReplay(t, rig);
});

t.test('timers: a scheduled transaction comes after what was queued on its source before it fell due', async (t) => {
  let scheduledId = '';
  let queuedId = '';
  const rig = given(t, (engine, rig) => {
    fund(rig, '@alice', 100n);
    scheduledId = ok(create({ source: '@alice', destination: '@bob', precise_amount: 100n, scheduled_for: rig.clock.ms + MINUTE })(engine)).transaction.transaction_id;
    queuedId = ok(create({ source: '@alice', destination: '@carol', precise_amount: 100n })(engine)).transaction.transaction_id;
  });
  // The queued transfer goes first, so the scheduled one finds the balance empty.
  rig.when(fireAfter(MINUTE)).then([
    { type: 'transaction.applied', transactions: [{ transaction_id: queuedId, status: 'APPLIED' }] },
    { type: 'transaction.rejected', transactions: [{ transaction_id: scheduledId, status: 'REJECTED' }] },
  ]);
  checkReplay(t, rig);
});

t.test('timers: a scheduled hold opens when due, then expires on its own date', async (t) => {
  let scheduledId = '';
  const rig = given(t, (engine, rig) => {
    fund(rig, '@alice', 500n);
    const start = rig.clock.ms;
    scheduledId = ok(create({ source: '@alice', destination: '@bob', precise_amount: 200n, inflight: true, scheduled_for: start + HOUR, inflight_expiry_date: start + 2 * HOUR })(engine)).transaction.transaction_id;
  });
  rig.when(fireAfter(HOUR)).then([{ type: 'transaction.inflight', transactions: [{ transaction_id: scheduledId, status: 'INFLIGHT' }] }]);
  t.same(amountsOf(balance(rig, '@alice')).available, 300n);
  rig.when(fireAfter(HOUR)).then([{ type: 'transaction.voided', transactions: [{ transaction_id: scheduledId, status: 'VOID' }] }]);
  t.same(amountsOf(balance(rig, '@alice')).available, 500n);
  checkReplay(t, rig);
});

t.test('timers: a scheduled split is split when it falls due', async (t) => {
  const rig = given(t, (_engine, rig) => { fund(rig, '@alice', 500n); });
  const scheduledId = ok(rig.when(create({ source: '@alice', destinations: [share('@bob', '30%'), share('@carol', 'left')], precise_amount: 101n, scheduled_for: rig.clock.ms + MINUTE }))
    .then([{ type: 'transaction.scheduled', transactions: [{ status: 'SCHEDULED' }] }]).outcome).transaction.transaction_id;
  rig.when(fireAfter(MINUTE)).then([{ type: 'transaction.applied' }]);
  t.equal(txn(rig, scheduledId).status, 'APPLIED');
  t.same(amountsOf(balance(rig, '@bob')).balance, 30n);
  t.same(amountsOf(balance(rig, '@carol')).balance, 71n);
  checkReplay(t, rig);
});

t.test('timers: a split hold with an expiry date: its expiry voids the parent and every leg, in one event', async (t) => {
  let parentId = '';
  let legs: string[] = [];
  const rig = given(t, (engine, rig) => {
    fund(rig, '@alice', 100n);
    fund(rig, '@bob', 100n);
    const parent = ok(create({
      sources: [share('@alice', '50%'), share('@bob', '50%')], destination: '@carol', precise_amount: 80n, inflight: true, skip_queue: true,
      inflight_expiry_date: rig.clock.ms + MINUTE,
    })(engine)).transaction;
    parentId = parent.transaction_id;
    legs = parent.legs ?? [];
  });
  rig.when(fireAfter(MINUTE)).then([{ type: 'transaction.voided', transactions: [{ status: 'VOID' }, { status: 'VOID' }, { status: 'VOID' }] }]);
  t.same(legs.map((id) => txn(rig, id).status), ['VOID', 'VOID'], 'the legs expired');
  t.same(amountsOf(balance(rig, '@alice')).inflight_debit, 0n);
  t.equal(txn(rig, parentId).status, 'VOID', 'the parent says so');
  // A commit after expiry is refused (rather than "committing" nothing).
  rig.when(commit(parentId)).thenRejected('TXN_ALREADY_VOIDED');
});

t.test('timers: a backlog of due timers is worked off in slices, earliest first', async (t) => {
  let holds: string[] = [];
  const rig = given(t, (_engine, rig) => {
    fund(rig, '@alice', 1000n);
    holds = [1, 2, 3].map((index) => hold(rig, '@alice', '@bob', BigInt(index), { inflight_expiry_date: rig.clock.ms + index }));
  }, {}, { timers_per_slice_max: 2 });
  t.equal(rig.when(fireAfter(HOUR)).then([
    { type: 'transaction.voided', transactions: [{ transaction_id: holds[0] }] },
    { type: 'transaction.voided', transactions: [{ transaction_id: holds[1] }] },
  ]).outcome.value, 2);
  t.same(holds.map((id) => txn(rig, id).status), ['VOID', 'VOID', 'INFLIGHT'], 'earliest first');
  t.equal(rig.when(fireAfter(0)).then([{ type: 'transaction.voided', transactions: [{ transaction_id: holds[2] }] }]).outcome.value, 1);
});

// Not a decision but a replay: the timers a fresh engine rebuilds from the log alone.
t.test('timers: timers are rebuilt from the log: those that fell due meanwhile fire in the fresh engine', async (t) => {
  const rig = engineRig();
  fund(rig, '@alice', 1000n);
  const start = rig.clock.ms;
  const expiring = hold(rig, '@alice', '@bob', 100n, { inflight_expiry_date: start + HOUR });
  const committing = hold(rig, '@alice', '@bob', 200n, { inflight_commit_date: start + HOUR });
  const closedEarly = hold(rig, '@alice', '@bob', 50n, { inflight_expiry_date: start + HOUR });
  ok(commit(closedEarly)(rig.engine));
  const scheduled = ok(rig.engine.run({ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@carol', precise_amount: 300n, scheduled_for: start + HOUR }) })).transaction;
  const queuedVoid = hold(rig, '@alice', '@bob', 25n, { inflight_commit_date: start + 3 * HOUR });
  ok(voidHold(queuedVoid, false)(rig.engine));

  // The "restart": a fresh engine from the log alone, two hours later.
  const restarted = replayedRig(rig);
  restarted.clock.advance(2 * HOUR);
  restarted.engine.run({ op: 'queue.process', items_max: 100 }).value;
  t.equal(restarted.engine.run({ op: 'timers.fire' }).value, 3, 'expiry, auto-commit and schedule fire; the closed hold\'s timer does not');
  t.equal(txn(restarted, expiring).status, 'VOID');
  t.equal(txn(restarted, committing).status, 'APPLIED');
  t.equal(txn(restarted, closedEarly).status, 'APPLIED');
  t.equal(txn(restarted, scheduled.transaction_id).status, 'APPLIED');
  t.equal(txn(restarted, queuedVoid).status, 'VOID', 'the queued void was applied by the queue');
  t.same(amountsOf(balance(restarted, '@alice')), { balance: 450n, inflight_debit: 0n, inflight_credit: 0n, available: 450n });
  restarted.clock.advance(2 * HOUR);
  t.equal(restarted.engine.run({ op: 'timers.fire' }).value, 0, 'the voided hold\'s auto-commit does nothing');
  checkZeroSum(t, restarted);
  checkReplay(t, restarted);
});
