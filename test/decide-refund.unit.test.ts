// Decider specs of refunds (engine/decide-refund.ts): given a history, when a refund (synchronous or
// queued), then the events it logs or the rejection it gets: what can be refunded, once only, the lock a
// queued refund holds, and the shape of the refund of a hold, a voided hold and a split. Balances are
// checked after the steps that move money, and the log is replayed at the end.

import t from 'tap';
import { PARENT_META_KEY } from '../engine/carry-out.js';
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
  refund,
  share,
  txn,
  voidHold,
} from './helpers/engine-rig.js';

const HOUR = 3_600_000;

t.test('a refund moves the amount back, names the original and copies or merges its details', async (t) => {
  let originalId = '';
  const rig = given(t, (engine, rig) => {
    fund(rig, '@alice', 1000n);
    originalId = ok(create({ source: '@alice', destination: '@bob', precise_amount: 250n, skip_queue: true, description: 'groceries', meta_data: { order: 'A1', channel: 'web' } })(engine)).transaction.transaction_id;
  });
  const original = txn(rig, originalId);
  const refunded = rig.when(refund(originalId, { meta_data: { channel: 'support', ticket: 7 } })).then([{
    type: 'transaction.applied',
    transactions: [{
      status: 'APPLIED',
      parent_transaction: originalId,
      reference: `${originalId}_refund`,
      // An empty description is copied; metadata is merged, the keys sent win.
      description: 'groceries',
      meta_data: { order: 'A1', channel: 'support', ticket: 7 },
      source: original.destination,
      destination: original.source,
      precise_amount: 250n,
    }],
  }]);
  t.same(ok(refunded.outcome).transaction.meta_data, { order: 'A1', channel: 'support', ticket: 7 }, 'metadata merged exactly');
  t.same(txn(rig, originalId).meta_data, { order: 'A1', channel: 'web' }, 'the original is not modified');
  t.same(amountsOf(balance(rig, '@alice')).balance, 1000n);
  t.same(amountsOf(balance(rig, '@bob')).balance, 0n);
  rig.when(refund(originalId)).thenRejected('GEN_CONFLICT');
  rig.when(refund(originalId, { skip_queue: false })).thenRejected('GEN_CONFLICT');
  const second = ok(rig.when(create({ source: '@alice', destination: '@bob', precise_amount: 5n, skip_queue: true, description: 'x' })).then([{ type: 'transaction.applied' }]).outcome).transaction;
  // A given description is kept.
  rig.when(refund(second.transaction_id, { description: 'goodwill' })).then([{ type: 'transaction.applied', transactions: [{ description: 'goodwill' }] }]);
  checkZeroSum(t, rig);
  checkReplay(t, rig);
});

t.test('a queued refund locks the original until it is processed (GEN_RESOURCE_LOCKED)', async (t) => {
  let originalId = '';
  const rig = given(t, (engine, rig) => {
    fund(rig, '@alice', 1000n);
    originalId = ok(create({ source: '@alice', destination: '@bob', precise_amount: 250n, skip_queue: true })(engine)).transaction.transaction_id;
  });
  const queued = rig.when(refund(originalId, { skip_queue: false })).then([{ type: 'transaction.queued', transactions: [{ status: 'QUEUED', parent_transaction: originalId }] }]);
  const queuedId = ok(queued.outcome).transaction.transaction_id;
  rig.when(refund(originalId)).thenRejected('GEN_RESOURCE_LOCKED');
  rig.when(refund(originalId, { skip_queue: false })).thenRejected('GEN_RESOURCE_LOCKED');
  checkReplay(t, rig);
  rig.when(processQueue(10)).then([{ type: 'transaction.applied', transactions: [{ transaction_id: queuedId, status: 'APPLIED' }] }]);
  // Afterwards: already refunded.
  rig.when(refund(originalId)).thenRejected('GEN_CONFLICT');
  checkZeroSum(t, rig);
});

t.test('a rejected refund does not count: it may be tried again', async (t) => {
  let originalId = '';
  const rig = given(t, (engine, rig) => {
    fund(rig, '@alice', 1000n);
    originalId = ok(create({ source: '@alice', destination: '@bob', precise_amount: 250n, skip_queue: true })(engine)).transaction.transaction_id;
    ok(create({ source: '@bob', destination: '@carol', precise_amount: 200n, skip_queue: true })(engine));
  });
  // Synchronously, a refund @bob cannot pay is refused and nothing is recorded.
  rig.when(refund(originalId)).thenRejected('TXN_INSUFFICIENT_FUNDS');
  const queuedId = ok(rig.when(refund(originalId, { skip_queue: false })).then([{ type: 'transaction.queued' }]).outcome).transaction.transaction_id;
  // Queued, it is recorded as REJECTED when its turn comes, and the lock is released.
  rig.when(processQueue(10)).then([{ type: 'transaction.rejected', transactions: [{ transaction_id: queuedId, status: 'REJECTED' }] }]);
  t.equal(rig.engine.state.refundLocks.size, 0, 'the lock is released');
  fund(rig, '@bob', 200n);
  const retried = rig.when(refund(originalId)).then([{ type: 'transaction.applied', transactions: [{ status: 'APPLIED', reference: `${originalId}_refund` }] }]);
  t.not(ok(retried.outcome).transaction.transaction_id, queuedId, 'a new transaction');
  rig.when(refund(originalId)).thenRejected('GEN_CONFLICT');
  t.same(amountsOf(balance(rig, '@alice')).balance, 1000n);
  checkZeroSum(t, rig);
  checkReplay(t, rig);
});

t.test('a hold voided whole is refunded as a hold the other way (Blnk issue 42)', async (t) => {
  let voided = '';
  const rig = given(t, (engine, rig) => {
    fund(rig, '@alice', 1000n);
    voided = hold(rig, '@alice', '@carol', 100n);
    ok(voidHold(voided)(engine));
  });
  // @carol never received anything, so the hold back needs her overdraft (Blnk's refunds always allow one).
  rig.when(refund(voided)).thenRejected('TXN_INSUFFICIENT_FUNDS');
  const restored = rig.when(refund(voided, { allow_overdraft: true })).then([{
    type: 'transaction.inflight',
    transactions: [{
      status: 'INFLIGHT', inflight: true, action: 'refund', parent_transaction: voided, precise_amount: 100n,
      // From the hold's destination to its source.
      source: balance(rig, '@carol').balance_id, destination: balance(rig, '@alice').balance_id,
    }],
  }]);
  t.same(amountsOf(balance(rig, '@alice')), { balance: 1000n, inflight_debit: 0n, inflight_credit: 100n, available: 1000n });
  // Once only.
  rig.when(refund(voided, { allow_overdraft: true })).thenRejected('GEN_CONFLICT');
  // The restored hold commits like any other.
  rig.when(commit(ok(restored.outcome).transaction.transaction_id)).then([{ type: 'transaction.committed' }]);
  t.same(amountsOf(balance(rig, '@alice')).balance, 1100n);
  checkZeroSum(t, rig);
  checkReplay(t, rig);
});

t.test('what cannot be refunded: TXN_NOT_FOUND and TXN_NOT_REFUNDABLE', async (t) => {
  const ids: Record<string, string> = {};
  const rig = given(t, (engine, rig) => {
    fund(rig, '@alice', 1000n);
    fund(rig, '@bob', 1000n);
    ids['a REJECTED transaction'] = ok(create({ source: '@nobody', destination: '@bob', precise_amount: 5n })(engine)).transaction.transaction_id;
    processQueue(10)(engine);
    const split = ok(create({ sources: [share('@alice', '50%'), share('@bob', '50%')], destination: '@carol', precise_amount: 10n, skip_queue: true })(engine)).transaction;
    ids['a leg of a split'] = (split.legs ?? [])[0] as string;
    ids['the commit child of a hold'] = ok(commit(hold(rig, '@alice', '@carol', 100n), 10n)(engine)).transaction.transaction_id;
    ids['a hold with nothing committed'] = hold(rig, '@alice', '@carol', 100n);
    ids['a transaction still QUEUED'] = ok(create({ source: '@alice', destination: '@bob', precise_amount: 5n })(engine)).transaction.transaction_id;
    ids['a SCHEDULED transaction'] = ok(create({ source: '@alice', destination: '@bob', precise_amount: 5n, scheduled_for: rig.clock.ms + HOUR })(engine)).transaction.transaction_id;
  });
  t.equal(txn(rig, ids['a REJECTED transaction']!).status, 'REJECTED');
  rig.when(refund('txn_unknown')).thenRejected('TXN_NOT_FOUND');
  rig.when(refund('txn_unknown', { skip_queue: false })).thenRejected('TXN_NOT_FOUND');
  for (const id of Object.values(ids)) {
    rig.when(refund(id)).thenRejected('TXN_NOT_REFUNDABLE');
    rig.when(refund(id, { skip_queue: false })).thenRejected('TXN_NOT_REFUNDABLE');
  }
});

t.test('a hold refunds what was committed of it', async (t) => {
  let open = '';
  const rig = given(t, (engine, rig) => {
    fund(rig, '@alice', 1000n);
    open = hold(rig, '@alice', '@bob', 300n);
    ok(commit(open, 120n)(engine));
  });
  // A partly committed, still open hold.
  rig.when(refund(open)).then([{ type: 'transaction.applied', transactions: [{ parent_transaction: open, precise_amount: 120n }] }]);
  t.same(amountsOf(balance(rig, '@alice')), { balance: 1000n, inflight_debit: 180n, inflight_credit: 0n, available: 820n });
  // A voided hold with a committed part.
  const voided = hold(rig, '@alice', '@bob', 300n);
  ok(commit(voided, 70n)(rig.engine));
  ok(voidHold(voided)(rig.engine));
  rig.when(refund(voided)).then([{ type: 'transaction.applied', transactions: [{ parent_transaction: voided, precise_amount: 70n }] }]);
  checkZeroSum(t, rig);
  checkReplay(t, rig);
});

t.test('a split is refunded as the reverse split of the legs that moved money', async (t) => {
  let splitId = '';
  const rig = given(t, (engine, rig) => {
    fund(rig, '@a', 100n);
    fund(rig, '@b', 10n);
    splitId = ok(create({ sources: [share('@a', '30'), share('@b', '70')], destinations: [share('@c', '50%'), share('@d', '50%')], precise_amount: 100n })(engine)).transaction.transaction_id;
    processQueue(10)(engine);
  });
  // @b is short: only @a's leg (30 to @c) moved.
  t.same((txn(rig, splitId).legs ?? []).map((id) => txn(rig, id).status), ['APPLIED', 'REJECTED', 'REJECTED']);
  const refunded = ok(rig.when(refund(splitId)).then([{ type: 'transaction.applied' }]).outcome).transaction;
  t.equal(refunded.precise_amount, 30n);
  t.equal(refunded.status, 'APPLIED');
  t.same(amountsOf(balance(rig, '@a')).balance, 100n);
  t.same(amountsOf(balance(rig, '@c')).balance, 0n);

  fund(rig, '@b', 100n);
  const full = ok(rig.when(create({ sources: [share('@a', '30'), share('@b', '70')], destinations: [share('@c', '50%'), share('@d', '50%')], precise_amount: 100n, skip_queue: true }))
    .then([{ type: 'transaction.applied' }]).outcome).transaction;
  const reversed = ok(rig.when(refund(full.transaction_id)).then([{ type: 'transaction.applied' }]).outcome).transaction;
  t.equal(reversed.precise_amount, 100n);
  t.ok((reversed.legs ?? []).length >= 2, 'the refund has legs of its own');
  // A leg of the refund is not refundable on its own.
  for (const legId of reversed.legs ?? []) rig.when(refund(legId)).thenRejected('TXN_NOT_REFUNDABLE');
  t.same(['@a', '@b', '@c', '@d'].map((name) => amountsOf(balance(rig, name)).balance), [100n, 110n, 0n, 0n], 'every balance back where it was');
  checkZeroSum(t, rig);
  checkReplay(t, rig);
});

t.test('a transaction carrying QUEUED_PARENT_TRANSACTION in its own metadata is still refundable', async (t) => {
  let originalId = '';
  given(t, (engine, rig) => {
    fund(rig, '@alice', 100n);
    originalId = ok(create({ source: '@alice', destination: '@bob', precise_amount: 10n, skip_queue: true, meta_data: { [PARENT_META_KEY]: '' } })(engine)).transaction.transaction_id;
  })
    .when(refund(originalId))
    .then([{ type: 'transaction.applied', transactions: [{ parent_transaction: originalId, precise_amount: 10n }] }]);
});
