// Decider specs of committing and voiding a hold (engine/decide-inflight-action.ts): given a history,
// when a commit or void (synchronous or queued), then the events it logs or the rejection it gets, with
// the balances checked between the steps of a hold's life and a replay of the log at the end.

import t from 'tap';
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
  txn,
  voidHold,
} from './helpers/engine-rig.js';

const HOUR = 3_600_000;

t.test('a hold reserves, partial commits settle, the commit of the remainder closes it', async (t) => {
  const opened = given(t, (_engine, rig) => { fund(rig, '@alice', 1000n); })
    .when(create({ source: '@alice', destination: '@bob', precise_amount: 300n, inflight: true, skip_queue: true }))
    .then([{ type: 'transaction.inflight', transactions: [{ status: 'INFLIGHT', precise_amount: 300n }] }]);
  const holdId = ok(opened.outcome).transaction.transaction_id;
  t.equal(txn(opened, holdId).status, 'INFLIGHT');
  t.same(amountsOf(balance(opened, '@alice')), { balance: 1000n, inflight_debit: 300n, inflight_credit: 0n, available: 700n });
  t.same(amountsOf(balance(opened, '@bob')), { balance: 0n, inflight_debit: 0n, inflight_credit: 300n, available: 0n });

  const first = opened.when(commit(holdId, 100n)).then([{
    type: 'transaction.committed',
    transactions: [
      { transaction_id: holdId, status: 'INFLIGHT', committed_amount: 100n },
      { parent_transaction: holdId, action: 'commit', status: 'APPLIED', precise_amount: 100n },
    ],
  }]);
  t.equal(ok(first.outcome).queued, false, 'answered as carried out, not queued');
  t.same(amountsOf(balance(first, '@alice')), { balance: 900n, inflight_debit: 200n, inflight_credit: 0n, available: 700n });
  t.same(amountsOf(balance(first, '@bob')), { balance: 100n, inflight_debit: 0n, inflight_credit: 200n, available: 100n });

  const rest = first
    .when(commit(holdId, 50n)).then([{ type: 'transaction.committed', transactions: [{ transaction_id: holdId, status: 'INFLIGHT', committed_amount: 150n }] }])
    .when(commit(holdId, 149n)).then([{ type: 'transaction.committed', transactions: [{ transaction_id: holdId, status: 'INFLIGHT', committed_amount: 299n }] }])
    // Amount 0 commits all that remains (one unit); fully committed, the hold is APPLIED.
    .when(commit(holdId, 0n)).then([{
      type: 'transaction.committed',
      transactions: [{ transaction_id: holdId, status: 'APPLIED', committed_amount: 300n }, { parent_transaction: holdId, status: 'APPLIED', precise_amount: 1n }],
    }]);
  t.equal(txn(rest, holdId).committed_amount, 300n);
  t.same(amountsOf(balance(rest, '@alice')), { balance: 700n, inflight_debit: 0n, inflight_credit: 0n, available: 700n });
  t.same(amountsOf(balance(rest, '@bob')), { balance: 300n, inflight_debit: 0n, inflight_credit: 0n, available: 300n });

  // After the full commit: a void, a commit and a queued void are all refused.
  rest.when(voidHold(holdId)).thenRejected('TXN_ALREADY_COMMITTED');
  rest.when(commit(holdId, 1n)).thenRejected('TXN_ALREADY_COMMITTED');
  rest.when(voidHold(holdId, false)).thenRejected('TXN_ALREADY_COMMITTED');
  checkZeroSum(t, rest);
  checkReplay(t, rest);
});

t.test('a commit of exactly the whole amount closes the hold at once', async (t) => {
  let holdId = '';
  const done = given(t, (_engine, rig) => { fund(rig, '@alice', 500n); holdId = hold(rig, '@alice', '@bob', 500n); })
    .when(commit(holdId, 500n))
    .then([{ type: 'transaction.committed', transactions: [{ transaction_id: holdId, status: 'APPLIED' }, { parent_transaction: holdId, precise_amount: 500n }] }]);
  checkReplay(t, done);
});

t.test('void releases what remains; anything after it is TXN_ALREADY_VOIDED', async (t) => {
  let holdId = '';
  const voided = given(t, (engine, rig) => { fund(rig, '@alice', 1000n); holdId = hold(rig, '@alice', '@bob', 300n); ok(commit(holdId, 100n)(engine)); })
    .when(voidHold(holdId))
    .then([{
      type: 'transaction.voided',
      transactions: [
        // The committed part stays committed.
        { transaction_id: holdId, status: 'VOID', committed_amount: 100n },
        // The void child carries the released amount.
        { parent_transaction: holdId, action: 'void', status: 'VOID', precise_amount: 200n },
      ],
    }]);
  t.same(amountsOf(balance(voided, '@alice')), { balance: 900n, inflight_debit: 0n, inflight_credit: 0n, available: 900n });
  t.same(amountsOf(balance(voided, '@bob')), { balance: 100n, inflight_debit: 0n, inflight_credit: 0n, available: 100n });
  voided.when(commit(holdId, 10n)).thenRejected('TXN_ALREADY_VOIDED');
  voided.when(commit(holdId, 0n, false)).thenRejected('TXN_ALREADY_VOIDED');
  voided.when(voidHold(holdId)).thenRejected('TXN_ALREADY_VOIDED');
  voided.when(voidHold(holdId, false)).thenRejected('TXN_ALREADY_VOIDED');
  checkZeroSum(t, voided);
  checkReplay(t, voided);
});

t.test('a commit above what remains is TXN_COMMIT_AMOUNT_EXCEEDED', async (t) => {
  let holdId = '';
  const rig = given(t, (_engine, rig) => { fund(rig, '@alice', 1000n); holdId = hold(rig, '@alice', '@bob', 300n); });
  rig.when(commit(holdId, 301n)).thenRejected('TXN_COMMIT_AMOUNT_EXCEEDED');
  // Queued, it is checked up front.
  rig.when(commit(holdId, 301n, false)).thenRejected('TXN_COMMIT_AMOUNT_EXCEEDED');
  const partly = rig.when(commit(holdId, 250n)).then([{ type: 'transaction.committed', transactions: [{ transaction_id: holdId, committed_amount: 250n }] }]);
  // Above what remains after a partial commit.
  partly.when(commit(holdId, 51n)).thenRejected('TXN_COMMIT_AMOUNT_EXCEEDED');
  // Exactly the remainder is fine.
  const done = partly.when(commit(holdId, 50n)).then([{ type: 'transaction.committed', transactions: [{ transaction_id: holdId, status: 'APPLIED' }] }]);
  checkReplay(t, done);
});

t.test('commit or void of anything that is not a hold is TXN_NOT_INFLIGHT; an unknown id TXN_NOT_FOUND', async (t) => {
  const ids: Record<string, string> = {};
  const rig = given(t, (engine, rig) => {
    fund(rig, '@alice', 1000n);
    ids['an applied transfer'] = ok(create({ source: '@alice', destination: '@bob', precise_amount: 10n, skip_queue: true })(engine)).transaction.transaction_id;
    ids['a transfer that was queued'] = ok(create({ source: '@alice', destination: '@bob', precise_amount: 10n })(engine)).transaction.transaction_id;
    ids['a scheduled hold'] = ok(create({ source: '@alice', destination: '@bob', precise_amount: 10n, inflight: true, scheduled_for: rig.clock.ms + HOUR })(engine)).transaction.transaction_id;
    const holdId = hold(rig, '@alice', '@bob', 100n);
    ids['the commit child of a hold'] = ok(commit(holdId, 10n)(engine)).transaction.transaction_id;
    // A queued hold that fails its funds check is a REJECTED hold, never opened.
    ids['a rejected hold'] = ok(create({ source: '@carol', destination: '@bob', precise_amount: 10n, inflight: true })(engine)).transaction.transaction_id;
    processQueue()(engine);
  });
  t.equal(txn(rig, ids['a rejected hold']!).status, 'REJECTED');
  t.equal(txn(rig, ids['a transfer that was queued']!).status, 'APPLIED');
  for (const id of Object.values(ids)) {
    rig.when(commit(id)).thenRejected('TXN_NOT_INFLIGHT');
    rig.when(voidHold(id)).thenRejected('TXN_NOT_INFLIGHT');
    rig.when(voidHold(id, false)).thenRejected('TXN_NOT_INFLIGHT');
  }
  rig.when(commit('txn_unknown')).thenRejected('TXN_NOT_FOUND');
  rig.when(voidHold('txn_unknown', false)).thenRejected('TXN_NOT_FOUND');
  checkReplay(t, rig);
});

t.test('a queued action answers at once and blocks a second action until it is applied (GEN_CONFLICT)', async (t) => {
  let holdId = '';
  const queued = given(t, (_engine, rig) => { fund(rig, '@alice', 1000n); holdId = hold(rig, '@alice', '@bob', 300n); })
    .when(commit(holdId, 100n, false))
    // The commit child waits in the queue; the hold is not rewritten.
    .then([{ type: 'transaction.committed', transactions: [{ parent_transaction: holdId, action: 'commit', status: 'QUEUED', precise_amount: 100n }] }]);
  const answer = ok(queued.outcome);
  t.equal(answer.queued, true);
  t.equal(answer.hold.transaction_id, holdId);
  t.equal(answer.hold.status, 'INFLIGHT', 'the hold is still INFLIGHT');
  t.same(amountsOf(balance(queued, '@alice')).inflight_debit, 300n, 'nothing moved yet');
  queued.when(commit(holdId, 10n, false)).thenRejected('GEN_CONFLICT');
  queued.when(voidHold(holdId, false)).thenRejected('GEN_CONFLICT');
  queued.when(voidHold(holdId, true)).thenRejected('GEN_CONFLICT');
  queued.when(commit(holdId, 0n, true)).thenRejected('GEN_CONFLICT');
  checkReplay(t, queued);
  // Its turn: carried out like any queued transaction, and logged as the applied commit it is.
  const applied = queued.when(processQueue(10)).then([{
    type: 'transaction.applied',
    transactions: [{ transaction_id: holdId, status: 'INFLIGHT', committed_amount: 100n }, { transaction_id: answer.transaction.transaction_id, status: 'APPLIED' }],
  }]);
  t.equal(applied.outcome.value, 1);
  // Once applied, the next action is accepted.
  const voided = applied.when(voidHold(holdId, false)).then([{ transactions: [{ parent_transaction: holdId, action: 'void', status: 'QUEUED' }] }]);
  t.equal(ok(voided.outcome).queued, true);
  voided.when(processQueue(10)).then([{ type: 'transaction.voided', transactions: [{ transaction_id: holdId, status: 'VOID' }] }]);
  t.same(amountsOf(balance(voided, '@alice')), { balance: 900n, inflight_debit: 0n, inflight_credit: 0n, available: 900n });
  checkZeroSum(t, voided);
  checkReplay(t, voided);
});

t.test('an action may be queued behind a hold that is itself still queued', async (t) => {
  const rig = given(t, (_engine, rig) => { fund(rig, '@alice', 1000n); });
  const queuedHold = rig.when(create({ source: '@alice', destination: '@bob', precise_amount: 300n, inflight: true }))
    .then([{ type: 'transaction.queued', transactions: [{ status: 'QUEUED', inflight: true }] }]);
  const holdId = ok(queuedHold.outcome).transaction.transaction_id;
  const action = rig.when(commit(holdId, 120n, false)).then([{ transactions: [{ parent_transaction: holdId, status: 'QUEUED', precise_amount: 120n }] }]);
  t.equal(ok(action.outcome).queued, true);
  rig.when(voidHold(holdId, false)).thenRejected('GEN_CONFLICT');
  // The hold opens first, then the commit behind it applies.
  rig.when(processQueue(10)).then([
    { type: 'transaction.inflight', transactions: [{ transaction_id: holdId, status: 'INFLIGHT' }] },
    { type: 'transaction.applied', transactions: [{ transaction_id: holdId, status: 'INFLIGHT', committed_amount: 120n }, { transaction_id: ok(action.outcome).transaction.transaction_id, status: 'APPLIED' }] },
  ]);

  // A queued commit that turns out too big when its turn comes is rejected, and frees the hold again.
  const second = ok(rig.when(create({ source: '@alice', destination: '@bob', precise_amount: 50n, inflight: true })).then([{ type: 'transaction.queued' }]).outcome).transaction;
  const tooBig = ok(rig.when(commit(second.transaction_id, 51n, false)).then([{ transactions: [{ status: 'QUEUED' }] }]).outcome).transaction;
  rig.when(processQueue(10)).then([
    { type: 'transaction.inflight', transactions: [{ transaction_id: second.transaction_id, status: 'INFLIGHT' }] },
    { type: 'transaction.rejected', transactions: [{ transaction_id: tooBig.transaction_id, status: 'REJECTED', rejection: { code: 'TXN_COMMIT_AMOUNT_EXCEEDED' } }] },
  ]);
  t.equal(txn(rig, second.transaction_id).status, 'INFLIGHT', 'the hold is untouched');
  rig.when(commit(second.transaction_id, 50n)).then([{ type: 'transaction.committed', transactions: [{ transaction_id: second.transaction_id, status: 'APPLIED' }] }]);

  // A queued void behind a queued hold that fails its funds check finds nothing to void.
  const doomed = ok(rig.when(create({ source: '@nobody', destination: '@bob', precise_amount: 50n, inflight: true })).then([{ type: 'transaction.queued' }]).outcome).transaction;
  const orphan = ok(rig.when(voidHold(doomed.transaction_id, false)).then([{ transactions: [{ status: 'QUEUED' }] }]).outcome).transaction;
  rig.when(processQueue(10)).then([
    { type: 'transaction.rejected', transactions: [{ transaction_id: doomed.transaction_id, status: 'REJECTED' }] },
    { type: 'transaction.rejected', transactions: [{ transaction_id: orphan.transaction_id, status: 'REJECTED', rejection: { code: 'TXN_NOT_INFLIGHT' } }] },
  ]);
  t.equal(rig.engine.state.pendingHoldActions.size, 0, 'no lock is left behind');
  checkZeroSum(t, rig);
  checkReplay(t, rig);
});

t.test('a synchronous action first applies what is queued on the hold\'s source', async (t) => {
  let holdId = '';
  const done = given(t, (engine, rig) => {
    fund(rig, '@alice', 1000n);
    holdId = ok(create({ source: '@alice', destination: '@bob', precise_amount: 300n, inflight: true })(engine)).transaction.transaction_id;
  })
    .when(commit(holdId, 300n, true))
    // The queued hold opened and was committed in one call.
    .then([
      { type: 'transaction.inflight', transactions: [{ transaction_id: holdId, status: 'INFLIGHT' }] },
      { type: 'transaction.committed', transactions: [{ transaction_id: holdId, status: 'APPLIED' }] },
    ]);
  t.equal(ok(done.outcome).hold.status, 'APPLIED');
  checkReplay(t, done);
});
