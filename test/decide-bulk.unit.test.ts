// Decider specs of bulk requests (engine/decide-bulk.ts): given a funded balance, when a batch (atomic
// or not, queued or not, holds or transfers), then the one event it logs or the rejection it gets, with
// the batch's items read back from the store and the balances checked after.

import t from 'tap';
import type { LedgerEngine } from '../engine/ledger-engine.js';
import { given } from './helpers/engine-spec.js';
import { amountsOf, balance, checkReplay, checkZeroSum, commit, fund, ok, processQueue, refusal, transfer, type EngineRig } from './helpers/engine-rig.js';

const items = (amounts: bigint[], from = '@alice') => amounts.map((amount, index) => transfer({ source: from, destination: `@to${index}`, precise_amount: amount }));

const bulk = (transactions: ReturnType<typeof items>, flags: { atomic: boolean; inflight: boolean; skip_queue: boolean }) => (engine: LedgerEngine) =>
  engine.run({ op: 'transaction.bulk', transactions, ...flags });

const fundedAlice = (amount: bigint) => (_engine: LedgerEngine, rig: EngineRig): void => { fund(rig, '@alice', amount); };

function recordsOf(rig: EngineRig, batchId: string) {
  return [...rig.store.byId.values()].filter((record) => record.batch_id === batchId);
}

t.test('atomic: every item in one event, or none', async (t) => {
  const rig = given(t, fundedAlice(100n));
  const batch = rig.when(bulk(items([10n, 20n, 30n]), { atomic: true, inflight: false, skip_queue: false }))
    .then([{ type: 'transaction.bulk', transactions: [{ status: 'APPLIED', precise_amount: 10n }, { status: 'APPLIED', precise_amount: 20n }, { status: 'APPLIED', precise_amount: 30n }] }]);
  const summary = ok(batch.outcome);
  t.equal(summary.status, 'APPLIED');
  t.equal(summary.transaction_count, 3);
  t.same(recordsOf(rig, summary.batch_id).map((record) => record.status), ['APPLIED', 'APPLIED', 'APPLIED']);
  // An atomic batch with an item that cannot go.
  const failed = rig.when(bulk(items([10n, 20n, 30n]), { atomic: true, inflight: false, skip_queue: false })).thenRejected('TXN_INSUFFICIENT_FUNDS');
  t.match(refusal(failed.outcome).message, /^transaction 2:/, 'names the failing item');
  checkZeroSum(t, rig);
  checkReplay(t, rig);
});

t.test('not atomic: stops at the first failure and keeps what came before it', async (t) => {
  const rig = given(t, fundedAlice(100n));
  const partial = ok(rig.when(bulk(items([10n, 20n, 500n, 5n]), { atomic: false, inflight: false, skip_queue: true }))
    // The item after the failure is not recorded.
    .then([{ type: 'transaction.bulk', transactions: [{ status: 'APPLIED', precise_amount: 10n }, { status: 'APPLIED', precise_amount: 20n }] }]).outcome);
  t.equal(partial.status, 'PARTIAL');
  t.equal(partial.transaction_count, 2);
  t.equal(partial.failure?.index, 2);
  t.equal(partial.failure?.rejection.code, 'TXN_INSUFFICIENT_FUNDS');
  t.same(recordsOf(rig, partial.batch_id).map((record) => record.precise_amount), [10n, 20n], 'only the items before the failure are recorded');
  t.same(amountsOf(balance(rig, '@alice')).balance, 70n);
  // A failure of the first item is the error itself.
  rig.when(bulk(items([500n, 5n]), { atomic: false, inflight: false, skip_queue: true })).thenRejected('TXN_INSUFFICIENT_FUNDS');
  // A reference used twice in one atomic batch.
  rig.when(bulk([transfer({ source: '@alice', destination: '@x', precise_amount: 1n, reference: 'dup' }), transfer({ source: '@alice', destination: '@y', precise_amount: 1n, reference: 'dup' })],
    { atomic: true, inflight: false, skip_queue: false })).thenRejected('TXN_DUPLICATE_REFERENCE');

  // Queued items are only checked for funds when their turn comes.
  const queued = ok(rig.when(bulk(items([30n, 500n, 40n]), { atomic: false, inflight: false, skip_queue: false }))
    .then([{ type: 'transaction.bulk', transactions: [{ status: 'QUEUED' }, { status: 'QUEUED' }, { status: 'QUEUED' }] }]).outcome);
  t.equal(queued.status, 'QUEUED');
  t.equal(queued.transaction_count, 3);
  rig.when(processQueue()).then([
    { type: 'transaction.applied', transactions: [{ precise_amount: 30n, status: 'APPLIED' }] },
    { type: 'transaction.rejected', transactions: [{ precise_amount: 500n, status: 'REJECTED' }] },
    { type: 'transaction.applied', transactions: [{ precise_amount: 40n, status: 'APPLIED' }] },
  ]);
  t.same(recordsOf(rig, queued.batch_id).map((record) => record.status), ['APPLIED', 'REJECTED', 'APPLIED']);
  t.same(amountsOf(balance(rig, '@alice')).balance, 0n);
  checkZeroSum(t, rig);
  checkReplay(t, rig);
});

t.test('inflight: every item becomes a hold', async (t) => {
  const rig = given(t, fundedAlice(100n));
  const batch = ok(rig.when(bulk(items([10n, 20n]), { atomic: true, inflight: true, skip_queue: false }))
    .then([{ type: 'transaction.bulk', transactions: [{ status: 'INFLIGHT', inflight: true }, { status: 'INFLIGHT', inflight: true }] }]).outcome);
  t.equal(batch.status, 'INFLIGHT');
  const holds = recordsOf(rig, batch.batch_id);
  t.same(holds.map((record) => record.status), ['INFLIGHT', 'INFLIGHT']);
  t.same(amountsOf(balance(rig, '@alice')), { balance: 100n, inflight_debit: 30n, inflight_credit: 0n, available: 70n });
  for (const record of holds) rig.when(commit(record.transaction_id)).then([{ type: 'transaction.committed' }]);
  t.same(amountsOf(balance(rig, '@alice')).balance, 70n);
  checkZeroSum(t, rig);
  checkReplay(t, rig);
});
