// The transaction lifecycle at the engine level: holds (partial commits, voids, queued actions),
// timers driven by a fake clock (expiry, auto-commit, scheduled), splits, refunds and bulk, with every
// rejection code the engine gives for them. The log is the in-memory one and ids count up, so each test
// is exactly repeatable; most tests end by replaying the log into a fresh engine and comparing.

import t, { type Test } from 'tap';
import type { CreateTransactionCommand, RefundCommand } from '../engine/commands.js';
import { PARENT_META_KEY } from '../engine/carry-out.js';
import {
  amountsOf,
  balance,
  checkReplay,
  checkZeroSum,
  engineRig,
  fund,
  ok,
  refusal,
  replayedRig,
  share,
  transfer,
  txn,
  type EngineRig,
} from './helpers/engine-rig.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** A synchronous hold of `amount` from `from` to `to`; returns the hold's id. */
function hold(rig: EngineRig, from: string, to: string, amount: bigint, extra: Partial<CreateTransactionCommand> = {}): string {
  const value = ok(rig.engine.run({ op: 'transaction.create', ...transfer({ source: from, destination: to, precise_amount: amount, inflight: true, skip_queue: true, ...extra }) }));
  return value.transaction.transaction_id;
}

function commit(rig: EngineRig, holdId: string, amount = 0n, skipQueue = true) {
  return rig.engine.run({ op: 'hold.act', transaction_id: holdId, action: 'commit', precise_amount: amount, skip_queue: skipQueue });
}

function voidHold(rig: EngineRig, holdId: string, skipQueue = true) {
  return rig.engine.run({ op: 'hold.act', transaction_id: holdId, action: 'void', precise_amount: 0n, skip_queue: skipQueue });
}

function refund(rig: EngineRig, transactionId: string, fields: Partial<Omit<RefundCommand, 'transaction_id'>> = {}) {
  return rig.engine.run({ op: 'transaction.refund', transaction_id: transactionId, skip_queue: true, description: '', meta_data: {}, ...fields });
}

/** Checks the command left no trace: nothing appended, no balance changed. */
function unchanged(t: Test, rig: EngineRig, run: () => void, message: string): void {
  const seq = rig.log.appendedSeq;
  const before = JSON.stringify([...rig.engine.state.balances.values()], (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
  run();
  t.equal(rig.log.appendedSeq, seq, `${message}: nothing logged`);
  t.equal(JSON.stringify([...rig.engine.state.balances.values()], (_k, v) => (typeof v === 'bigint' ? v.toString() : v)), before, `${message}: balances unchanged`);
}

t.test('holds', async (t) => {
  t.test('a hold reserves, partial commits settle, the commit of the remainder closes it', async (t) => {
    const rig = engineRig();
    fund(rig, '@alice', 1000n);
    const holdId = hold(rig, '@alice', '@bob', 300n);
    t.equal(txn(rig, holdId).status, 'INFLIGHT');
    t.same(amountsOf(balance(rig, '@alice')), { balance: 1000n, inflight_debit: 300n, inflight_credit: 0n, available: 700n });
    t.same(amountsOf(balance(rig, '@bob')), { balance: 0n, inflight_debit: 0n, inflight_credit: 300n, available: 0n });

    const first = ok(commit(rig, holdId, 100n));
    t.equal(first.queued, false);
    t.equal(first.transaction.status, 'APPLIED', 'the commit child is APPLIED');
    t.equal(first.transaction.parent_transaction, holdId, 'and points at the hold');
    t.equal(first.transaction.precise_amount, 100n);
    t.equal(first.hold.status, 'INFLIGHT', 'a partial commit keeps the hold INFLIGHT');
    t.equal(first.hold.committed_amount, 100n);
    t.same(amountsOf(balance(rig, '@alice')), { balance: 900n, inflight_debit: 200n, inflight_credit: 0n, available: 700n });
    t.same(amountsOf(balance(rig, '@bob')), { balance: 100n, inflight_debit: 0n, inflight_credit: 200n, available: 100n });

    const second = ok(commit(rig, holdId, 50n));
    t.equal(second.hold.status, 'INFLIGHT');
    t.equal(second.hold.committed_amount, 150n);

    const allButOne = ok(commit(rig, holdId, 149n));
    t.equal(allButOne.hold.status, 'INFLIGHT', 'one unit still held: still INFLIGHT');
    t.equal(allButOne.hold.committed_amount, 299n);

    const rest = ok(commit(rig, holdId, 0n));
    t.equal(rest.transaction.precise_amount, 1n, 'amount 0 commits all that remains');
    t.equal(rest.hold.status, 'APPLIED', 'fully committed: the hold is APPLIED');
    t.equal(txn(rig, holdId).committed_amount, 300n);
    t.same(amountsOf(balance(rig, '@alice')), { balance: 700n, inflight_debit: 0n, inflight_credit: 0n, available: 700n });
    t.same(amountsOf(balance(rig, '@bob')), { balance: 300n, inflight_debit: 0n, inflight_credit: 0n, available: 300n });

    t.equal(refusal(voidHold(rig, holdId)).code, 'TXN_ALREADY_COMMITTED', 'void after the full commit');
    t.equal(refusal(commit(rig, holdId, 1n)).code, 'TXN_ALREADY_COMMITTED', 'commit after the full commit');
    t.equal(refusal(voidHold(rig, holdId, false)).code, 'TXN_ALREADY_COMMITTED', 'queued void after the full commit');
    checkZeroSum(t, rig);
    checkReplay(t, rig);
  });

  t.test('a commit of exactly the whole amount closes the hold at once', async (t) => {
    const rig = engineRig();
    fund(rig, '@alice', 500n);
    const holdId = hold(rig, '@alice', '@bob', 500n);
    const done = ok(commit(rig, holdId, 500n));
    t.equal(done.hold.status, 'APPLIED');
    t.equal(done.transaction.precise_amount, 500n);
    checkReplay(t, rig);
  });

  t.test('void releases what remains; anything after it is TXN_ALREADY_VOIDED', async (t) => {
    const rig = engineRig();
    fund(rig, '@alice', 1000n);
    const holdId = hold(rig, '@alice', '@bob', 300n);
    ok(commit(rig, holdId, 100n));
    const voided = ok(voidHold(rig, holdId));
    t.equal(voided.transaction.status, 'VOID', 'the void child is VOID');
    t.equal(voided.transaction.parent_transaction, holdId);
    t.equal(voided.transaction.precise_amount, 200n, 'it carries the released amount');
    t.equal(voided.hold.status, 'VOID');
    t.equal(voided.hold.committed_amount, 100n, 'the committed part stays committed');
    t.same(amountsOf(balance(rig, '@alice')), { balance: 900n, inflight_debit: 0n, inflight_credit: 0n, available: 900n });
    t.same(amountsOf(balance(rig, '@bob')), { balance: 100n, inflight_debit: 0n, inflight_credit: 0n, available: 100n });
    unchanged(t, rig, () => {
      t.equal(refusal(commit(rig, holdId, 10n)).code, 'TXN_ALREADY_VOIDED');
      t.equal(refusal(commit(rig, holdId, 0n, false)).code, 'TXN_ALREADY_VOIDED', 'queued commit');
      t.equal(refusal(voidHold(rig, holdId)).code, 'TXN_ALREADY_VOIDED');
      t.equal(refusal(voidHold(rig, holdId, false)).code, 'TXN_ALREADY_VOIDED', 'queued void');
    }, 'actions on a voided hold');
    checkZeroSum(t, rig);
    checkReplay(t, rig);
  });

  t.test('a commit above what remains is TXN_COMMIT_AMOUNT_EXCEEDED', async (t) => {
    const rig = engineRig();
    fund(rig, '@alice', 1000n);
    const holdId = hold(rig, '@alice', '@bob', 300n);
    unchanged(t, rig, () => {
      t.equal(refusal(commit(rig, holdId, 301n)).code, 'TXN_COMMIT_AMOUNT_EXCEEDED');
      t.equal(refusal(commit(rig, holdId, 301n, false)).code, 'TXN_COMMIT_AMOUNT_EXCEEDED', 'queued, checked up front');
    }, 'commit above the hold');
    ok(commit(rig, holdId, 250n));
    unchanged(t, rig, () => {
      t.equal(refusal(commit(rig, holdId, 51n)).code, 'TXN_COMMIT_AMOUNT_EXCEEDED', 'above what remains after a partial commit');
    }, 'commit above the remainder');
    t.equal(ok(commit(rig, holdId, 50n)).hold.status, 'APPLIED', 'exactly the remainder is fine');
    checkReplay(t, rig);
  });

  t.test('commit or void of anything that is not a hold is TXN_NOT_INFLIGHT; an unknown id TXN_NOT_FOUND', async (t) => {
    const rig = engineRig();
    fund(rig, '@alice', 1000n);
    const applied = ok(rig.engine.run({ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@bob', precise_amount: 10n, skip_queue: true }) })).transaction;
    const queued = ok(rig.engine.run({ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@bob', precise_amount: 10n }) })).transaction;
    const scheduledHold = ok(rig.engine.run({ op: 'transaction.create', ...transfer({
      source: '@alice', destination: '@bob', precise_amount: 10n, inflight: true, scheduled_for: rig.clock.ms + HOUR,
    }) })).transaction;
    const holdId = hold(rig, '@alice', '@bob', 100n);
    const child = ok(commit(rig, holdId, 10n)).transaction;
    // A queued hold that fails its funds check is a REJECTED hold, never opened.
    const rejectedHold = ok(rig.engine.run({ op: 'transaction.create', ...transfer({ source: '@carol', destination: '@bob', precise_amount: 10n, inflight: true }) })).transaction;
    rig.engine.run({ op: 'queue.process', items_max: 100 }).value;
    t.equal(txn(rig, rejectedHold.transaction_id).status, 'REJECTED');
    t.equal(txn(rig, queued.transaction_id).status, 'APPLIED');
    unchanged(t, rig, () => {
      for (const [name, id] of [
        ['an applied transfer', applied.transaction_id],
        ['a transfer that was queued', queued.transaction_id],
        ['a scheduled hold', scheduledHold.transaction_id],
        ['the commit child of a hold', child.transaction_id],
        ['a rejected hold', rejectedHold.transaction_id],
      ] as const) {
        t.equal(refusal(commit(rig, id)).code, 'TXN_NOT_INFLIGHT', `commit of ${name}`);
        t.equal(refusal(voidHold(rig, id)).code, 'TXN_NOT_INFLIGHT', `void of ${name}`);
        t.equal(refusal(voidHold(rig, id, false)).code, 'TXN_NOT_INFLIGHT', `queued void of ${name}`);
      }
      t.equal(refusal(commit(rig, 'txn_unknown')).code, 'TXN_NOT_FOUND');
      t.equal(refusal(voidHold(rig, 'txn_unknown', false)).code, 'TXN_NOT_FOUND');
    }, 'actions on non-holds');
    checkReplay(t, rig);
  });

  t.test('a queued action answers at once and blocks a second action until it is applied (GEN_CONFLICT)', async (t) => {
    const rig = engineRig();
    fund(rig, '@alice', 1000n);
    const holdId = hold(rig, '@alice', '@bob', 300n);
    const queued = ok(commit(rig, holdId, 100n, false));
    t.equal(queued.queued, true);
    t.equal(queued.hold.transaction_id, holdId);
    t.equal(queued.hold.status, 'INFLIGHT', 'the hold is still INFLIGHT');
    t.equal(queued.transaction.status, 'QUEUED', 'the commit child waits in the queue');
    t.equal(queued.transaction.parent_transaction, holdId);
    t.same(amountsOf(balance(rig, '@alice')).inflight_debit, 300n, 'nothing moved yet');
    unchanged(t, rig, () => {
      t.equal(refusal(commit(rig, holdId, 10n, false)).code, 'GEN_CONFLICT', 'a second queued commit');
      t.equal(refusal(voidHold(rig, holdId, false)).code, 'GEN_CONFLICT', 'a queued void');
      t.equal(refusal(voidHold(rig, holdId, true)).code, 'GEN_CONFLICT', 'a synchronous void');
      t.equal(refusal(commit(rig, holdId, 0n, true)).code, 'GEN_CONFLICT', 'a synchronous commit');
    }, 'actions while one is queued');
    checkReplay(t, rig);
    t.equal(rig.engine.run({ op: 'queue.process', items_max: 10 }).value, 1);
    t.equal(txn(rig, queued.transaction.transaction_id).status, 'APPLIED');
    t.equal(txn(rig, holdId).committed_amount, 100n);
    t.equal(txn(rig, holdId).status, 'INFLIGHT');
    const voided = ok(voidHold(rig, holdId, false));
    t.equal(voided.queued, true, 'once applied, the next action is accepted');
    rig.engine.run({ op: 'queue.process', items_max: 10 }).value;
    t.equal(txn(rig, holdId).status, 'VOID');
    t.same(amountsOf(balance(rig, '@alice')), { balance: 900n, inflight_debit: 0n, inflight_credit: 0n, available: 900n });
    checkZeroSum(t, rig);
    checkReplay(t, rig);
  });

  t.test('an action may be queued behind a hold that is itself still queued', async (t) => {
    const rig = engineRig();
    fund(rig, '@alice', 1000n);
    const queuedHold = ok(rig.engine.run({ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@bob', precise_amount: 300n, inflight: true }) })).transaction;
    t.equal(queuedHold.status, 'QUEUED');
    const action = ok(commit(rig, queuedHold.transaction_id, 120n, false));
    t.equal(action.queued, true);
    t.equal(refusal(voidHold(rig, queuedHold.transaction_id, false)).code, 'GEN_CONFLICT');
    rig.engine.run({ op: 'queue.process', items_max: 10 }).value;
    t.equal(txn(rig, queuedHold.transaction_id).status, 'INFLIGHT', 'the hold opened first');
    t.equal(txn(rig, queuedHold.transaction_id).committed_amount, 120n, 'then the commit behind it applied');
    t.equal(txn(rig, action.transaction.transaction_id).status, 'APPLIED');

    // A queued commit that turns out too big when its turn comes is rejected, and frees the hold again.
    const second = ok(rig.engine.run({ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@bob', precise_amount: 50n, inflight: true }) })).transaction;
    const tooBig = ok(commit(rig, second.transaction_id, 51n, false)).transaction;
    rig.engine.run({ op: 'queue.process', items_max: 10 }).value;
    const rejected = txn(rig, tooBig.transaction_id);
    t.equal(rejected.status, 'REJECTED');
    t.equal(rejected.rejection?.code, 'TXN_COMMIT_AMOUNT_EXCEEDED');
    t.equal(txn(rig, second.transaction_id).status, 'INFLIGHT', 'the hold is untouched');
    t.equal(ok(commit(rig, second.transaction_id, 50n)).hold.status, 'APPLIED', 'and takes a new action');

    // A queued void behind a queued hold that fails its funds check finds nothing to void.
    const doomed = ok(rig.engine.run({ op: 'transaction.create', ...transfer({ source: '@nobody', destination: '@bob', precise_amount: 50n, inflight: true }) })).transaction;
    const orphan = ok(voidHold(rig, doomed.transaction_id, false)).transaction;
    rig.engine.run({ op: 'queue.process', items_max: 10 }).value;
    t.equal(txn(rig, doomed.transaction_id).status, 'REJECTED');
    t.equal(txn(rig, orphan.transaction_id).status, 'REJECTED');
    t.equal(txn(rig, orphan.transaction_id).rejection?.code, 'TXN_NOT_INFLIGHT');
    t.equal(rig.engine.state.pendingHoldActions.size, 0, 'no lock is left behind');
    checkZeroSum(t, rig);
    checkReplay(t, rig);
  });

  t.test('a synchronous action first applies what is queued on the hold\'s source', async (t) => {
    const rig = engineRig();
    fund(rig, '@alice', 1000n);
    const queuedHold = ok(rig.engine.run({ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@bob', precise_amount: 300n, inflight: true }) })).transaction;
    const done = ok(commit(rig, queuedHold.transaction_id, 300n, true));
    t.equal(done.hold.status, 'APPLIED', 'the queued hold opened and was committed in one call');
    checkReplay(t, rig);
  });
});

t.test('timers', async (t) => {
  t.test('a hold expires at its inflight_expiry_date and is voided', async (t) => {
    const rig = engineRig();
    fund(rig, '@alice', 1000n);
    const holdId = hold(rig, '@alice', '@bob', 300n, { inflight_expiry_date: rig.clock.ms + HOUR });
    rig.clock.advance(HOUR - 1);
    const seq = rig.log.appendedSeq;
    t.equal(rig.engine.run({ op: 'timers.fire' }).value, 0, 'nothing is due a millisecond early');
    t.equal(rig.log.appendedSeq, seq);
    t.equal(txn(rig, holdId).status, 'INFLIGHT');
    rig.clock.advance(1);
    t.equal(rig.engine.run({ op: 'timers.fire' }).value, 1);
    t.equal(txn(rig, holdId).status, 'VOID');
    const children = [...rig.store.byId.values()].filter((record) => record.parent_transaction === holdId);
    t.equal(children.length, 1);
    t.equal(children[0]?.status, 'VOID');
    t.equal(children[0]?.precise_amount, 300n);
    t.same(amountsOf(balance(rig, '@alice')), { balance: 1000n, inflight_debit: 0n, inflight_credit: 0n, available: 1000n });
    t.same(amountsOf(balance(rig, '@bob')), { balance: 0n, inflight_debit: 0n, inflight_credit: 0n, available: 0n });
    rig.clock.advance(HOUR);
    t.equal(rig.engine.run({ op: 'timers.fire' }).value, 0, 'it fires once');
    checkZeroSum(t, rig);
    checkReplay(t, rig);
  });

  t.test('a hold commits itself at its inflight_commit_date, whatever is left of it', async (t) => {
    const rig = engineRig();
    fund(rig, '@alice', 1000n);
    const holdId = hold(rig, '@alice', '@bob', 300n, { inflight_commit_date: rig.clock.ms + HOUR });
    ok(commit(rig, holdId, 100n));
    rig.clock.advance(HOUR);
    t.equal(rig.engine.run({ op: 'timers.fire' }).value, 1);
    const closed = txn(rig, holdId);
    t.equal(closed.status, 'APPLIED');
    t.equal(closed.committed_amount, 300n);
    const children = [...rig.store.byId.values()].filter((record) => record.parent_transaction === holdId);
    t.same(children.map((child) => [child.status, child.precise_amount]), [['APPLIED', 100n], ['APPLIED', 200n]]);
    t.same(amountsOf(balance(rig, '@bob')), { balance: 300n, inflight_debit: 0n, inflight_credit: 0n, available: 300n });
    checkZeroSum(t, rig);
    checkReplay(t, rig);
  });

  t.test('with both dates the earlier wins and the later finds nothing to do', async (t) => {
    const rig = engineRig();
    fund(rig, '@alice', 1000n);
    const expiresFirst = hold(rig, '@alice', '@bob', 100n, { inflight_expiry_date: rig.clock.ms + MINUTE, inflight_commit_date: rig.clock.ms + HOUR });
    const commitsFirst = hold(rig, '@alice', '@bob', 200n, { inflight_expiry_date: rig.clock.ms + HOUR, inflight_commit_date: rig.clock.ms + MINUTE });
    rig.clock.advance(MINUTE);
    t.equal(rig.engine.run({ op: 'timers.fire' }).value, 2);
    t.equal(txn(rig, expiresFirst).status, 'VOID');
    t.equal(txn(rig, commitsFirst).status, 'APPLIED');
    rig.clock.advance(HOUR);
    const seq = rig.log.appendedSeq;
    t.equal(rig.engine.run({ op: 'timers.fire' }).value, 0, 'the later timers do nothing');
    t.equal(rig.log.appendedSeq, seq, 'and log nothing');
    t.same(amountsOf(balance(rig, '@bob')), { balance: 200n, inflight_debit: 0n, inflight_credit: 0n, available: 200n });
    checkReplay(t, rig);
  });

  t.test('a timer whose hold was closed by hand does nothing', async (t) => {
    const rig = engineRig();
    fund(rig, '@alice', 1000n);
    const committed = hold(rig, '@alice', '@bob', 100n, { inflight_expiry_date: rig.clock.ms + HOUR });
    const voided = hold(rig, '@alice', '@bob', 100n, { inflight_commit_date: rig.clock.ms + HOUR });
    ok(commit(rig, committed));
    ok(voidHold(rig, voided));
    rig.clock.advance(2 * HOUR);
    const seq = rig.log.appendedSeq;
    t.equal(rig.engine.run({ op: 'timers.fire' }).value, 0);
    t.equal(rig.log.appendedSeq, seq, 'nothing logged');
    t.equal(txn(rig, committed).status, 'APPLIED', 'the committed hold stays committed');
    t.equal(txn(rig, voided).status, 'VOID', 'the voided hold stays voided');
    t.same(amountsOf(balance(rig, '@bob')).balance, 100n);
    checkReplay(t, rig);
  });

  t.test('a timer that comes due while an action is queued applies the action first', async (t) => {
    const rig = engineRig();
    fund(rig, '@alice', 1000n);
    const holdId = hold(rig, '@alice', '@bob', 300n, { inflight_expiry_date: rig.clock.ms + HOUR });
    ok(commit(rig, holdId, 100n, false));
    rig.clock.advance(HOUR);
    t.equal(rig.engine.run({ op: 'timers.fire' }).value, 1);
    const closed = txn(rig, holdId);
    t.equal(closed.status, 'VOID');
    t.equal(closed.committed_amount, 100n, 'the queued commit went first');
    t.same(amountsOf(balance(rig, '@bob')), { balance: 100n, inflight_debit: 0n, inflight_credit: 0n, available: 100n });
    t.equal(rig.engine.view.queuedCount(), 0);
    checkZeroSum(t, rig);
    checkReplay(t, rig);
  });

  t.test('a scheduled transaction waits, then is applied with funds checked when it is due', async (t) => {
    const rig = engineRig();
    const due = rig.clock.ms + HOUR;
    const scheduled = ok(rig.engine.run({ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@bob', precise_amount: 100n, scheduled_for: due }) })).transaction;
    t.equal(scheduled.status, 'SCHEDULED', 'accepted although @alice has nothing yet');
    t.same(amountsOf(balance(rig, '@alice')).balance, 0n, 'nothing moves when it is scheduled');
    rig.engine.run({ op: 'queue.process', items_max: 10 }).value;
    t.equal(txn(rig, scheduled.transaction_id).status, 'SCHEDULED', 'the queue does not touch it');
    fund(rig, '@alice', 100n);
    rig.clock.advance(HOUR - 1);
    t.equal(rig.engine.run({ op: 'timers.fire' }).value, 0);
    rig.clock.advance(1);
    t.equal(rig.engine.run({ op: 'timers.fire' }).value, 1);
    t.equal(txn(rig, scheduled.transaction_id).status, 'APPLIED');
    t.same(amountsOf(balance(rig, '@alice')).balance, 0n);
    t.same(amountsOf(balance(rig, '@bob')).balance, 100n);
    checkReplay(t, rig);
  });

  t.test('a scheduled transaction whose source is short when it falls due is rejected', async (t) => {
    const rig = engineRig();
    fund(rig, '@alice', 100n);
    const scheduled = ok(rig.engine.run({ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@bob', precise_amount: 100n, scheduled_for: rig.clock.ms + HOUR }) })).transaction;
    ok(rig.engine.run({ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@carol', precise_amount: 60n, skip_queue: true }) }));
    rig.clock.advance(HOUR);
    t.equal(rig.engine.run({ op: 'timers.fire' }).value, 1);
    const rejected = txn(rig, scheduled.transaction_id);
    t.equal(rejected.status, 'REJECTED');
    t.equal(rejected.rejection?.code, 'TXN_INSUFFICIENT_FUNDS');
    t.same(amountsOf(balance(rig, '@alice')).balance, 40n, 'nothing moved');
    t.same(amountsOf(balance(rig, '@bob')).balance, 0n);
    checkZeroSum(t, rig);
    checkReplay(t, rig);
  });

  t.test('a scheduled transaction comes after what was queued on its source before it fell due', async (t) => {
    const rig = engineRig();
    fund(rig, '@alice', 100n);
    const scheduled = ok(rig.engine.run({ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@bob', precise_amount: 100n, scheduled_for: rig.clock.ms + MINUTE }) })).transaction;
    const queued = ok(rig.engine.run({ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@carol', precise_amount: 100n }) })).transaction;
    rig.clock.advance(MINUTE);
    rig.engine.run({ op: 'timers.fire' }).value;
    t.equal(txn(rig, queued.transaction_id).status, 'APPLIED', 'the queued transfer went first');
    t.equal(txn(rig, scheduled.transaction_id).status, 'REJECTED', 'so the scheduled one found the balance empty');
    checkReplay(t, rig);
  });

  t.test('a scheduled hold opens when due, then expires on its own date', async (t) => {
    const rig = engineRig();
    fund(rig, '@alice', 500n);
    const start = rig.clock.ms;
    const scheduled = ok(rig.engine.run({ op: 'transaction.create', ...transfer({
      source: '@alice', destination: '@bob', precise_amount: 200n, inflight: true, scheduled_for: start + HOUR, inflight_expiry_date: start + 2 * HOUR,
    }) })).transaction;
    rig.clock.advance(HOUR);
    rig.engine.run({ op: 'timers.fire' }).value;
    t.equal(txn(rig, scheduled.transaction_id).status, 'INFLIGHT');
    t.same(amountsOf(balance(rig, '@alice')).available, 300n);
    rig.clock.advance(HOUR);
    rig.engine.run({ op: 'timers.fire' }).value;
    t.equal(txn(rig, scheduled.transaction_id).status, 'VOID');
    t.same(amountsOf(balance(rig, '@alice')).available, 500n);
    checkReplay(t, rig);
  });

  t.test('a scheduled split is split when it falls due', async (t) => {
    const rig = engineRig();
    fund(rig, '@alice', 500n);
    const scheduled = ok(rig.engine.run({ op: 'transaction.create', ...transfer({
      source: '@alice', destinations: [share('@bob', '30%'), share('@carol', 'left')], precise_amount: 101n, scheduled_for: rig.clock.ms + MINUTE,
    }) })).transaction;
    t.equal(scheduled.status, 'SCHEDULED');
    rig.clock.advance(MINUTE);
    rig.engine.run({ op: 'timers.fire' }).value;
    t.equal(txn(rig, scheduled.transaction_id).status, 'APPLIED');
    t.same(amountsOf(balance(rig, '@bob')).balance, 30n);
    t.same(amountsOf(balance(rig, '@carol')).balance, 71n);
    checkReplay(t, rig);
  });

  t.test('a backlog of due timers is worked off in slices', async (t) => {
    const rig = engineRig({ timers_per_slice_max: 2 });
    fund(rig, '@alice', 1000n);
    const holds = [1, 2, 3].map((index) => hold(rig, '@alice', '@bob', BigInt(index), { inflight_expiry_date: rig.clock.ms + index }));
    rig.clock.advance(HOUR);
    t.equal(rig.engine.run({ op: 'timers.fire' }).value, 2);
    t.same(holds.map((id) => txn(rig, id).status), ['VOID', 'VOID', 'INFLIGHT'], 'earliest first');
    t.equal(rig.engine.run({ op: 'timers.fire' }).value, 1);
    t.same(holds.map((id) => txn(rig, id).status), ['VOID', 'VOID', 'VOID']);
  });

  t.test('timers are rebuilt from the log: those that fell due meanwhile fire in the fresh engine', async (t) => {
    const rig = engineRig();
    fund(rig, '@alice', 1000n);
    const start = rig.clock.ms;
    const expiring = hold(rig, '@alice', '@bob', 100n, { inflight_expiry_date: start + HOUR });
    const committing = hold(rig, '@alice', '@bob', 200n, { inflight_commit_date: start + HOUR });
    const closedEarly = hold(rig, '@alice', '@bob', 50n, { inflight_expiry_date: start + HOUR });
    ok(commit(rig, closedEarly));
    const scheduled = ok(rig.engine.run({ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@carol', precise_amount: 300n, scheduled_for: start + HOUR }) })).transaction;
    const queuedVoid = hold(rig, '@alice', '@bob', 25n, { inflight_commit_date: start + 3 * HOUR });
    ok(voidHold(rig, queuedVoid, false));

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
});

t.test('splits', async (t) => {
  t.test('several sources into one destination: one leg per source, each naming the parent', async (t) => {
    const rig = engineRig();
    fund(rig, '@alice', 100n);
    fund(rig, '@bob', 100n);
    const parent = ok(rig.engine.run({ op: 'transaction.create', ...transfer({
      sources: [share('@alice', '60'), share('@bob', 'left')], destination: '@carol', precise_amount: 100n, skip_queue: true,
    }) })).transaction;
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
    const rig = engineRig();
    fund(rig, '@a', 100n);
    fund(rig, '@b', 100n);
    const fanOut = ok(rig.engine.run({ op: 'transaction.create', ...transfer({
      source: '@a', destinations: [share('@c', '33.33%'), share('@d', '33.33%'), share('@e', '33.34%')], precise_amount: 100n, skip_queue: true,
    }) })).transaction;
    t.same((fanOut.legs ?? []).map((id) => txn(rig, id).precise_amount), [33n, 33n, 34n]);
    const manyToMany = ok(rig.engine.run({ op: 'transaction.create', ...transfer({
      sources: [share('@a', '30'), share('@b', '70')], destinations: [share('@f', '50%'), share('@g', '50%')], precise_amount: 100n, skip_queue: true,
    }) })).transaction;
    const legs = (manyToMany.legs ?? []).map((id) => txn(rig, id));
    const name = (id: string) => rig.engine.state.balances.get(id)?.indicator;
    t.same(legs.map((leg) => [name(leg.source), name(leg.destination), leg.precise_amount]), [
      ['@a', '@f', 30n], ['@b', '@f', 20n], ['@b', '@g', 50n],
    ]);
    checkZeroSum(t, rig);
    checkReplay(t, rig);
  });

  t.test('atomic: one failing leg and nothing moves; every leg is REJECTED, in one event', async (t) => {
    const rig = engineRig();
    fund(rig, '@alice', 100n);
    fund(rig, '@bob', 10n);
    const parent = ok(rig.engine.run({ op: 'transaction.create', ...transfer({
      sources: [share('@alice', '60'), share('@bob', 'left')], destination: '@carol', precise_amount: 100n, atomic: true,
    }) })).transaction;
    const seq = rig.log.appendedSeq;
    rig.engine.run({ op: 'queue.process', items_max: 10 }).value;
    t.equal(rig.log.appendedSeq, seq + 1, 'processing the split is one log record');
    const done = txn(rig, parent.transaction_id);
    t.equal(done.status, 'REJECTED');
    t.equal(done.rejection?.code, 'TXN_INSUFFICIENT_FUNDS');
    const legs = (done.legs ?? []).map((id) => txn(rig, id));
    t.equal(legs.length, 2);
    t.same(legs.map((leg) => leg.status), ['REJECTED', 'REJECTED'], 'the leg that could have gone is rejected too');
    t.same(amountsOf(balance(rig, '@alice')).balance, 100n);
    t.same(amountsOf(balance(rig, '@bob')).balance, 10n);
    t.same(amountsOf(balance(rig, '@carol')).balance, 0n);

    unchanged(t, rig, () => {
      const sync = refusal(rig.engine.run({ op: 'transaction.create', ...transfer({
        sources: [share('@alice', '60'), share('@bob', 'left')], destination: '@carol', precise_amount: 100n, atomic: true, skip_queue: true,
      }) }));
      t.equal(sync.code, 'TXN_INSUFFICIENT_FUNDS', 'synchronously it is refused outright');
    }, 'a synchronous atomic split that cannot go');

    const inflight = ok(rig.engine.run({ op: 'transaction.create', ...transfer({
      sources: [share('@alice', '60'), share('@bob', 'left')], destination: '@carol', precise_amount: 100n, atomic: true, inflight: true,
    }) })).transaction;
    rig.engine.run({ op: 'queue.process', items_max: 10 }).value;
    t.equal(txn(rig, inflight.transaction_id).status, 'REJECTED');
    t.same(amountsOf(balance(rig, '@alice')).inflight_debit, 0n, 'no leg is left holding money');
    checkZeroSum(t, rig);
    checkReplay(t, rig);
  });

  t.test('not atomic: the legs that can go are APPLIED, the others REJECTED', async (t) => {
    const rig = engineRig();
    fund(rig, '@alice', 100n);
    fund(rig, '@bob', 10n);
    const parent = ok(rig.engine.run({ op: 'transaction.create', ...transfer({
      sources: [share('@alice', '60'), share('@bob', 'left')], destination: '@carol', precise_amount: 100n,
    }) })).transaction;
    rig.engine.run({ op: 'queue.process', items_max: 10 }).value;
    const done = txn(rig, parent.transaction_id);
    t.equal(done.status, 'APPLIED');
    t.same((done.legs ?? []).map((id) => txn(rig, id).status), ['APPLIED', 'REJECTED']);
    t.equal(txn(rig, (done.legs ?? [])[1] as string).rejection?.code, 'TXN_INSUFFICIENT_FUNDS');
    t.same(amountsOf(balance(rig, '@alice')).balance, 40n);
    t.same(amountsOf(balance(rig, '@bob')).balance, 10n);
    t.same(amountsOf(balance(rig, '@carol')).balance, 60n);

    const hopeless = ok(rig.engine.run({ op: 'transaction.create', ...transfer({
      sources: [share('@nobody', '50%'), share('@nobody2', '50%')], destination: '@carol', precise_amount: 100n,
    }) })).transaction;
    rig.engine.run({ op: 'queue.process', items_max: 10 }).value;
    t.equal(txn(rig, hopeless.transaction_id).status, 'REJECTED', 'no leg could go: the parent is REJECTED');
    t.equal(txn(rig, hopeless.transaction_id).rejection?.code, 'TXN_INSUFFICIENT_FUNDS');
    checkZeroSum(t, rig);
    checkReplay(t, rig);
  });

  t.test('invalid distributions are TXN_INVALID_DISTRIBUTION and record nothing', async (t) => {
    const rig = engineRig();
    fund(rig, '@alice', 100n);
    const cases: Array<[string, ReturnType<typeof share>[]]> = [
      ['over 100%', [share('@alice', '60%'), share('@bob', '50%')]],
      ['fixed over the total', [share('@alice', '101'), share('@bob', 'left')]],
      ['two left', [share('@alice', 'left'), share('@bob', 'left')]],
      ['not covering the total', [share('@alice', '50%'), share('@bob', '20')]],
    ];
    unchanged(t, rig, () => {
      for (const [name, shares] of cases) {
        for (const skip_queue of [true, false]) {
          const sourcesSide = refusal(rig.engine.run({ op: 'transaction.create', ...transfer({ sources: shares, destination: '@carol', precise_amount: 100n, skip_queue }) }));
          t.equal(sourcesSide.code, 'TXN_INVALID_DISTRIBUTION', `${name} (sources, skip_queue ${skip_queue})`);
          const destinationsSide = refusal(rig.engine.run({ op: 'transaction.create', ...transfer({ source: '@carol', destinations: shares, precise_amount: 100n, skip_queue }) }));
          t.equal(destinationsSide.code, 'TXN_INVALID_DISTRIBUTION', `${name} (destinations, skip_queue ${skip_queue})`);
        }
      }
    }, 'invalid splits');
  });

  t.test('a split hold opens a hold per leg; it is committed or voided whole', async (t) => {
    const rig = engineRig();
    fund(rig, '@alice', 100n);
    fund(rig, '@bob', 100n);
    const parent = ok(rig.engine.run({ op: 'transaction.create', ...transfer({
      sources: [share('@alice', '50%'), share('@bob', '50%')], destination: '@carol', precise_amount: 80n, inflight: true, skip_queue: true,
    }) })).transaction;
    t.equal(parent.status, 'INFLIGHT');
    t.same(amountsOf(balance(rig, '@alice')).inflight_debit, 40n);
    t.equal(refusal(commit(rig, parent.transaction_id, 10n)).code, 'TXN_PARTIAL_NOT_ALLOWED', 'no partial commit of a split');
    const done = ok(commit(rig, parent.transaction_id));
    t.equal(done.hold.status, 'APPLIED');
    t.same((parent.legs ?? []).map((id) => txn(rig, id).status), ['APPLIED', 'APPLIED']);
    t.same(amountsOf(balance(rig, '@carol')), { balance: 80n, inflight_debit: 0n, inflight_credit: 0n, available: 80n });
    t.equal(refusal(voidHold(rig, parent.transaction_id)).code, 'TXN_ALREADY_COMMITTED');
    checkZeroSum(t, rig);
    checkReplay(t, rig);
  });

  t.test('a split hold with an expiry date: when its legs expire the parent is VOID too', async (t) => {
    const rig = engineRig();
    fund(rig, '@alice', 100n);
    fund(rig, '@bob', 100n);
    const parent = ok(rig.engine.run({ op: 'transaction.create', ...transfer({
      sources: [share('@alice', '50%'), share('@bob', '50%')], destination: '@carol', precise_amount: 80n, inflight: true, skip_queue: true,
      inflight_expiry_date: rig.clock.ms + MINUTE,
    }) })).transaction;
    rig.clock.advance(MINUTE);
    rig.engine.run({ op: 'timers.fire' }).value;
    t.same((parent.legs ?? []).map((id) => txn(rig, id).status), ['VOID', 'VOID'], 'the legs expired');
    t.same(amountsOf(balance(rig, '@alice')).inflight_debit, 0n);
    t.equal(txn(rig, parent.transaction_id).status, 'VOID', 'the parent says so');
    const late = commit(rig, parent.transaction_id);
    t.equal(late.ok, false, 'a commit after expiry is refused');
    if (late.ok) t.equal(late.value.transaction.precise_amount, 0n, `instead it "committed" ${late.value.transaction.precise_amount} and the parent is ${late.value.hold.status}`);
  });

  t.test('a split hold parent reports what its legs really committed', async (t) => {
    const rig = engineRig();
    fund(rig, '@alice', 100n);
    fund(rig, '@bob', 10n);
    const parent = ok(rig.engine.run({ op: 'transaction.create', ...transfer({
      sources: [share('@alice', '50%'), share('@bob', '50%')], destination: '@carol', precise_amount: 80n, inflight: true, skip_queue: true,
    }) })).transaction;
    t.same((parent.legs ?? []).map((id) => txn(rig, id).status), ['INFLIGHT', 'REJECTED'], '@bob could not hold its share');
    const done = ok(commit(rig, parent.transaction_id));
    t.equal(done.transaction.precise_amount, 40n, 'the commit moved 40');
    t.same(amountsOf(balance(rig, '@carol')).balance, 40n);
    t.equal(done.hold.committed_amount, 40n, 'and the parent should say 40 were committed');

    const second = ok(rig.engine.run({ op: 'transaction.create', ...transfer({
      sources: [share('@alice', '50%'), share('@carol', '50%')], destination: '@dave', precise_amount: 20n, inflight: true, skip_queue: true,
    }) })).transaction;
    ok(commit(rig, (second.legs ?? [])[0] as string));
    const voided = ok(voidHold(rig, second.transaction_id));
    t.same(amountsOf(balance(rig, '@dave')).balance, 10n, 'one leg was committed on its own before the void');
    t.equal(voided.hold.committed_amount, 10n, 'the voided parent should say 10 were committed');
  });
});

t.test('refunds', async (t) => {
  t.test('a refund moves the amount back, names the original and copies or merges its details', async (t) => {
    const rig = engineRig();
    fund(rig, '@alice', 1000n);
    const original = ok(rig.engine.run({ op: 'transaction.create', ...transfer({
      source: '@alice', destination: '@bob', precise_amount: 250n, skip_queue: true, description: 'groceries', meta_data: { order: 'A1', channel: 'web' },
    }) })).transaction;
    const refunded = ok(refund(rig, original.transaction_id, { meta_data: { channel: 'support', ticket: 7 } })).transaction;
    t.equal(refunded.status, 'APPLIED');
    t.equal(refunded.parent_transaction, original.transaction_id);
    t.equal(refunded.reference, `${original.transaction_id}_refund`);
    t.equal(refunded.description, 'groceries', 'an empty description is copied');
    t.same(refunded.meta_data, { order: 'A1', channel: 'support', ticket: 7 }, 'metadata merged, sent keys win');
    t.same(txn(rig, original.transaction_id).meta_data, { order: 'A1', channel: 'web' }, 'the original is not modified');
    t.equal(refunded.source, original.destination);
    t.equal(refunded.destination, original.source);
    t.equal(refunded.precise_amount, 250n);
    t.same(amountsOf(balance(rig, '@alice')).balance, 1000n);
    t.same(amountsOf(balance(rig, '@bob')).balance, 0n);
    unchanged(t, rig, () => {
      t.equal(refusal(refund(rig, original.transaction_id)).code, 'GEN_CONFLICT', 'a second refund');
      t.equal(refusal(refund(rig, original.transaction_id, { skip_queue: false })).code, 'GEN_CONFLICT', 'a second queued refund');
    }, 'refunding twice');
    const second = ok(rig.engine.run({ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@bob', precise_amount: 5n, skip_queue: true, description: 'x' }) })).transaction;
    t.equal(ok(refund(rig, second.transaction_id, { description: 'goodwill' })).transaction.description, 'goodwill', 'a given description is kept');
    checkZeroSum(t, rig);
    checkReplay(t, rig);
  });

  t.test('a queued refund locks the original until it is processed (GEN_RESOURCE_LOCKED)', async (t) => {
    const rig = engineRig();
    fund(rig, '@alice', 1000n);
    const original = ok(rig.engine.run({ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@bob', precise_amount: 250n, skip_queue: true }) })).transaction;
    const queued = ok(refund(rig, original.transaction_id, { skip_queue: false })).transaction;
    t.equal(queued.status, 'QUEUED');
    unchanged(t, rig, () => {
      t.equal(refusal(refund(rig, original.transaction_id)).code, 'GEN_RESOURCE_LOCKED', 'synchronous');
      t.equal(refusal(refund(rig, original.transaction_id, { skip_queue: false })).code, 'GEN_RESOURCE_LOCKED', 'queued');
    }, 'refunds while one is queued');
    checkReplay(t, rig);
    rig.engine.run({ op: 'queue.process', items_max: 10 }).value;
    t.equal(txn(rig, queued.transaction_id).status, 'APPLIED');
    t.equal(refusal(refund(rig, original.transaction_id)).code, 'GEN_CONFLICT', 'afterwards: already refunded');
    checkZeroSum(t, rig);
  });

  t.test('a rejected refund does not count: it may be tried again', async (t) => {
    const rig = engineRig();
    fund(rig, '@alice', 1000n);
    const original = ok(rig.engine.run({ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@bob', precise_amount: 250n, skip_queue: true }) })).transaction;
    ok(rig.engine.run({ op: 'transaction.create', ...transfer({ source: '@bob', destination: '@carol', precise_amount: 200n, skip_queue: true }) }));
    unchanged(t, rig, () => {
      t.equal(refusal(refund(rig, original.transaction_id)).code, 'TXN_INSUFFICIENT_FUNDS', 'synchronously: refused, nothing recorded');
    }, 'a refund @bob cannot pay');
    const queued = ok(refund(rig, original.transaction_id, { skip_queue: false })).transaction;
    rig.engine.run({ op: 'queue.process', items_max: 10 }).value;
    t.equal(txn(rig, queued.transaction_id).status, 'REJECTED', 'queued: recorded as REJECTED');
    t.equal(rig.engine.state.refundLocks.size, 0, 'the lock is released');
    fund(rig, '@bob', 200n);
    const retried = ok(refund(rig, original.transaction_id)).transaction;
    t.equal(retried.status, 'APPLIED');
    t.not(retried.transaction_id, queued.transaction_id);
    t.equal(retried.reference, `${original.transaction_id}_refund`);
    t.equal(refusal(refund(rig, original.transaction_id)).code, 'GEN_CONFLICT');
    t.same(amountsOf(balance(rig, '@alice')).balance, 1000n);
    checkZeroSum(t, rig);
    checkReplay(t, rig);
  });

  t.test('a hold voided whole is refunded as a hold the other way (Blnk issue 42)', async (t) => {
    const rig = engineRig();
    fund(rig, '@alice', 1000n);
    const voided = hold(rig, '@alice', '@carol', 100n);
    ok(voidHold(rig, voided));
    // @carol never received anything, so the hold back needs her overdraft (Blnk's refunds always allow one).
    t.equal(refusal(refund(rig, voided)).code, 'TXN_INSUFFICIENT_FUNDS', 'the hold back is checked like any hold');
    const restored = ok(refund(rig, voided, { allow_overdraft: true })).transaction;
    t.match(restored, { status: 'INFLIGHT', inflight: true, action: 'refund', parent_transaction: voided, precise_amount: 100n });
    t.equal(restored.source, balance(rig, '@carol').balance_id, 'from the hold\'s destination');
    t.equal(restored.destination, balance(rig, '@alice').balance_id, 'to its source');
    t.same(amountsOf(balance(rig, '@alice')), { balance: 1000n, inflight_debit: 0n, inflight_credit: 100n, available: 1000n });
    t.equal(refusal(refund(rig, voided, { allow_overdraft: true })).code, 'GEN_CONFLICT', 'once only');
    ok(commit(rig, restored.transaction_id));
    t.same(amountsOf(balance(rig, '@alice')).balance, 1100n, 'the restored hold commits like any other');
    checkZeroSum(t, rig);
    checkReplay(t, rig);
  });

  t.test('what cannot be refunded: TXN_NOT_FOUND and TXN_NOT_REFUNDABLE', async (t) => {
    const rig = engineRig();
    fund(rig, '@alice', 1000n);
    fund(rig, '@bob', 1000n);
    const rejected = ok(rig.engine.run({ op: 'transaction.create', ...transfer({ source: '@nobody', destination: '@bob', precise_amount: 5n }) })).transaction;
    rig.engine.run({ op: 'queue.process', items_max: 10 }).value;
    t.equal(txn(rig, rejected.transaction_id).status, 'REJECTED');
    const split = ok(rig.engine.run({ op: 'transaction.create', ...transfer({
      sources: [share('@alice', '50%'), share('@bob', '50%')], destination: '@carol', precise_amount: 10n, skip_queue: true,
    }) })).transaction;
    const leg = (split.legs ?? [])[0] as string;
    const holdId = hold(rig, '@alice', '@carol', 100n);
    const commitChild = ok(commit(rig, holdId, 10n)).transaction;
    const openHold = hold(rig, '@alice', '@carol', 100n);
    const queued = ok(rig.engine.run({ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@bob', precise_amount: 5n }) })).transaction;
    const scheduled = ok(rig.engine.run({ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@bob', precise_amount: 5n, scheduled_for: rig.clock.ms + HOUR }) })).transaction;
    unchanged(t, rig, () => {
      t.equal(refusal(refund(rig, 'txn_unknown')).code, 'TXN_NOT_FOUND');
      t.equal(refusal(refund(rig, 'txn_unknown', { skip_queue: false })).code, 'TXN_NOT_FOUND');
      for (const [name, id] of [
        ['a REJECTED transaction', rejected.transaction_id],
        ['a leg of a split', leg],
        ['the commit child of a hold', commitChild.transaction_id],
        ['a hold with nothing committed', openHold],
        ['a transaction still QUEUED', queued.transaction_id],
        ['a SCHEDULED transaction', scheduled.transaction_id],
      ] as const) {
        t.equal(refusal(refund(rig, id)).code, 'TXN_NOT_REFUNDABLE', name);
        t.equal(refusal(refund(rig, id, { skip_queue: false })).code, 'TXN_NOT_REFUNDABLE', `${name} (queued)`);
      }
    }, 'refunds that cannot be');
  });

  t.test('a hold refunds what was committed of it', async (t) => {
    const rig = engineRig();
    fund(rig, '@alice', 1000n);
    const open = hold(rig, '@alice', '@bob', 300n);
    ok(commit(rig, open, 120n));
    const refunded = ok(refund(rig, open)).transaction;
    t.equal(refunded.precise_amount, 120n, 'a partly committed, still open hold');
    t.same(amountsOf(balance(rig, '@alice')), { balance: 1000n, inflight_debit: 180n, inflight_credit: 0n, available: 820n });
    const voided = hold(rig, '@alice', '@bob', 300n);
    ok(commit(rig, voided, 70n));
    ok(voidHold(rig, voided));
    t.equal(ok(refund(rig, voided)).transaction.precise_amount, 70n, 'a voided hold with a committed part');
    checkZeroSum(t, rig);
    checkReplay(t, rig);
  });

  t.test('a split is refunded as the reverse split of the legs that moved money', async (t) => {
    const rig = engineRig();
    fund(rig, '@a', 100n);
    fund(rig, '@b', 10n);
    const split = ok(rig.engine.run({ op: 'transaction.create', ...transfer({
      sources: [share('@a', '30'), share('@b', '70')], destinations: [share('@c', '50%'), share('@d', '50%')], precise_amount: 100n,
    }) })).transaction;
    rig.engine.run({ op: 'queue.process', items_max: 10 }).value;
    // @b is short: only @a's leg (30 to @c) moved.
    t.same((txn(rig, split.transaction_id).legs ?? []).map((id) => txn(rig, id).status), ['APPLIED', 'REJECTED', 'REJECTED']);
    const refunded = ok(refund(rig, split.transaction_id)).transaction;
    t.equal(refunded.precise_amount, 30n);
    t.equal(refunded.status, 'APPLIED');
    t.same(amountsOf(balance(rig, '@a')).balance, 100n);
    t.same(amountsOf(balance(rig, '@c')).balance, 0n);

    fund(rig, '@b', 100n);
    const full = ok(rig.engine.run({ op: 'transaction.create', ...transfer({
      sources: [share('@a', '30'), share('@b', '70')], destinations: [share('@c', '50%'), share('@d', '50%')], precise_amount: 100n, skip_queue: true,
    }) })).transaction;
    const reversed = ok(refund(rig, full.transaction_id)).transaction;
    t.equal(reversed.precise_amount, 100n);
    t.ok((reversed.legs ?? []).length >= 2, 'the refund has legs of its own');
    for (const legId of reversed.legs ?? []) {
      t.equal(refusal(refund(rig, legId)).code, 'TXN_NOT_REFUNDABLE', 'a leg of the refund is not refundable on its own');
    }
    t.same(['@a', '@b', '@c', '@d'].map((name) => amountsOf(balance(rig, name)).balance), [100n, 110n, 0n, 0n], 'every balance back where it was');
    checkZeroSum(t, rig);
    checkReplay(t, rig);
  });

  t.test('a transaction carrying QUEUED_PARENT_TRANSACTION in its own metadata is still refundable', async (t) => {
    const rig = engineRig();
    fund(rig, '@alice', 100n);
    const original = ok(rig.engine.run({ op: 'transaction.create', ...transfer({
      source: '@alice', destination: '@bob', precise_amount: 10n, skip_queue: true, meta_data: { [PARENT_META_KEY]: '' },
    }) })).transaction;
    const outcome = refund(rig, original.transaction_id);
    t.ok(outcome.ok, outcome.ok ? 'refunded' : `refused: ${outcome.rejection.code} ${outcome.rejection.message}`);
  });
});

t.test('bulk', async (t) => {
  const items = (amounts: bigint[], from = '@alice') => amounts.map((amount, index) => transfer({ source: from, destination: `@to${index}`, precise_amount: amount }));

  t.test('atomic: every item in one event, or none', async (t) => {
    const rig = engineRig();
    fund(rig, '@alice', 100n);
    const seq = rig.log.appendedSeq;
    const batch = ok(rig.engine.run({ op: 'transaction.bulk', transactions: items([10n, 20n, 30n]), atomic: true, inflight: false, skip_queue: false }));
    t.equal(batch.status, 'APPLIED');
    t.equal(batch.transaction_count, 3);
    t.equal(rig.log.appendedSeq, seq + 1, 'one log record');
    const recorded = [...rig.store.byId.values()].filter((record) => record.batch_id === batch.batch_id);
    t.same(recorded.map((record) => record.status), ['APPLIED', 'APPLIED', 'APPLIED']);
    unchanged(t, rig, () => {
      const failed = refusal(rig.engine.run({ op: 'transaction.bulk', transactions: items([10n, 20n, 30n]), atomic: true, inflight: false, skip_queue: false }));
      t.equal(failed.code, 'TXN_INSUFFICIENT_FUNDS');
      t.match(failed.message, /^transaction 2:/, 'names the failing item');
    }, 'an atomic batch with an item that cannot go');
    checkZeroSum(t, rig);
    checkReplay(t, rig);
  });

  t.test('not atomic: stops at the first failure and keeps what came before it', async (t) => {
    const rig = engineRig();
    fund(rig, '@alice', 100n);
    const partial = ok(rig.engine.run({ op: 'transaction.bulk', transactions: items([10n, 20n, 500n, 5n]), atomic: false, inflight: false, skip_queue: true }));
    t.equal(partial.status, 'PARTIAL');
    t.equal(partial.transaction_count, 2);
    t.equal(partial.failure?.index, 2);
    t.equal(partial.failure?.rejection.code, 'TXN_INSUFFICIENT_FUNDS');
    const recorded = [...rig.store.byId.values()].filter((record) => record.batch_id === partial.batch_id);
    t.same(recorded.map((record) => record.precise_amount), [10n, 20n], 'the item after the failure is not recorded');
    t.same(amountsOf(balance(rig, '@alice')).balance, 70n);
    unchanged(t, rig, () => {
      const first = refusal(rig.engine.run({ op: 'transaction.bulk', transactions: items([500n, 5n]), atomic: false, inflight: false, skip_queue: true }));
      t.equal(first.code, 'TXN_INSUFFICIENT_FUNDS', 'a failure of the first item is the error itself');
      const duplicate = refusal(rig.engine.run({ op: 'transaction.bulk', ...{
        transactions: [transfer({ source: '@alice', destination: '@x', precise_amount: 1n, reference: 'dup' }), transfer({ source: '@alice', destination: '@y', precise_amount: 1n, reference: 'dup' })],
        atomic: true, inflight: false, skip_queue: false,
      } }));
      t.equal(duplicate.code, 'TXN_DUPLICATE_REFERENCE', 'a reference used twice in one atomic batch');
    }, 'batches that record nothing');

    const queued = ok(rig.engine.run({ op: 'transaction.bulk', transactions: items([30n, 500n, 40n]), atomic: false, inflight: false, skip_queue: false }));
    t.equal(queued.status, 'QUEUED', 'queued items are only checked for funds when their turn comes');
    t.equal(queued.transaction_count, 3);
    rig.engine.run({ op: 'queue.process', items_max: 100 }).value;
    const processed = [...rig.store.byId.values()].filter((record) => record.batch_id === queued.batch_id);
    t.same(processed.map((record) => record.status), ['APPLIED', 'REJECTED', 'APPLIED']);
    t.same(amountsOf(balance(rig, '@alice')).balance, 0n);
    checkZeroSum(t, rig);
    checkReplay(t, rig);
  });

  t.test('inflight: every item becomes a hold', async (t) => {
    const rig = engineRig();
    fund(rig, '@alice', 100n);
    const batch = ok(rig.engine.run({ op: 'transaction.bulk', transactions: items([10n, 20n]), atomic: true, inflight: true, skip_queue: false }));
    t.equal(batch.status, 'INFLIGHT');
    const holds = [...rig.store.byId.values()].filter((record) => record.batch_id === batch.batch_id);
    t.same(holds.map((record) => record.status), ['INFLIGHT', 'INFLIGHT']);
    t.same(amountsOf(balance(rig, '@alice')), { balance: 100n, inflight_debit: 30n, inflight_credit: 0n, available: 70n });
    for (const record of holds) ok(commit(rig, record.transaction_id));
    t.same(amountsOf(balance(rig, '@alice')).balance, 70n);
    checkZeroSum(t, rig);
    checkReplay(t, rig);
  });
});

t.test('dry runs decide for real but write nothing', async (t) => {
  const rig = engineRig();
  fund(rig, '@alice', 100n);
  const holdId = hold(rig, '@alice', '@bob', 60n);
  const applied = ok(rig.engine.run({ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@bob', precise_amount: 10n, skip_queue: true }) })).transaction;
  unchanged(t, rig, () => {
    const create = rig.engine.dryRun([{ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@new', precise_amount: 30n }) }]).projections[0]!;
    t.equal(create.would_apply, true);
    t.equal(create.status, 'APPLIED');
    const short = rig.engine.dryRun([{ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@bob', precise_amount: 31n }) }]).projections[0]!;
    t.equal(short.would_apply, false);
    t.equal(short.rejection?.code, 'TXN_INSUFFICIENT_FUNDS');
    t.equal(rig.engine.dryRun([{ op: 'hold.act', transaction_id: holdId, action: 'commit', precise_amount: 61n, skip_queue: false }]).projections[0]!.rejection?.code, 'TXN_COMMIT_AMOUNT_EXCEEDED');
    t.equal(rig.engine.dryRun([{ op: 'hold.act', transaction_id: holdId, action: 'void', precise_amount: 0n, skip_queue: false }]).projections[0]!.would_apply, true);
    t.equal(rig.engine.dryRun([{ op: 'transaction.refund', transaction_id: applied.transaction_id, skip_queue: false, description: '', meta_data: {} }]).projections[0]!.would_apply, true);
    t.equal(rig.engine.dryRun([{ op: 'transaction.create', ...transfer({ source: '@alice', destination: '@x', precise_amount: 30n }) }]).projections[0]!.would_apply, true);
  }, 'dry runs');
  t.equal(rig.engine.state.balanceByIndicator('@new', 'USD'), undefined, 'no balance was created');
  t.equal(rig.engine.state.balanceByIndicator('@x', 'USD'), undefined);
  checkReplay(t, rig);
});
