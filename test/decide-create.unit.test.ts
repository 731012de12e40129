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

t.test('BAL_NOT_FOUND, on either path; the @name of a refused transfer is not created', async (t) => {
  let known = '';
  const rig = given(t, (_engine, rig) => { known = fundedBalance(rig, 1000n); });
  for (const { skip_queue, path } of paths) {
    rig.when(create({ source: 'bln_missing', destination: known, skip_queue })).thenRejected('BAL_NOT_FOUND');
    rig.when(create({ source: known, destination: 'bln_missing', skip_queue })).thenRejected('BAL_NOT_FOUND');
    // An unknown destination after a new @name.
    rig.when(create({ source: '@new', destination: 'bln_missing', skip_queue, allow_overdraft: true })).thenRejected('BAL_NOT_FOUND');
    t.notOk(rig.engine.state.balanceByIndicator('@new', 'USD'), `${path}: the @name of a rejected transfer is not created`);
  }
});

t.test('TXN_CURRENCY_MISMATCH, on either path', async (t) => {
  let dollars = '';
  let euros = '';
  const rig = given(t, (_engine, rig) => { dollars = fundedBalance(rig, 1000n, 'USD'); euros = fundedBalance(rig, 1000n, 'EUR'); });
  for (const { skip_queue } of paths) {
    // Source in another currency; destination in another currency; an @name source, destination in another currency.
    rig.when(create({ source: euros, destination: dollars, currency: 'USD', skip_queue })).thenRejected('TXN_CURRENCY_MISMATCH');
    rig.when(create({ source: dollars, destination: euros, currency: 'USD', skip_queue })).thenRejected('TXN_CURRENCY_MISMATCH');
    rig.when(create({ source: '@world', destination: euros, currency: 'USD', skip_queue, allow_overdraft: true })).thenRejected('TXN_CURRENCY_MISMATCH');
  }
  t.equal(rig.engine.view.queuedCount(), 0, 'nothing was queued');
});

t.test('TXN_SAME_SOURCE_DESTINATION, on either path', async (t) => {
  let one = '';
  const rig = given(t, (_engine, rig) => { one = fundedBalance(rig, 1000n); });
  for (const { skip_queue } of paths) {
    // The same id; the same existing @name; the same new @name; an @name and its own id.
    rig.when(create({ source: one, destination: one, skip_queue })).thenRejected('TXN_SAME_SOURCE_DESTINATION');
    rig.when(create({ source: '@world', destination: '@world', skip_queue, allow_overdraft: true })).thenRejected('TXN_SAME_SOURCE_DESTINATION');
    rig.when(create({ source: '@fresh', destination: '@fresh', skip_queue, allow_overdraft: true })).thenRejected('TXN_SAME_SOURCE_DESTINATION');
    const world = rig.engine.state.balanceByIndicator('@world', 'USD');
    rig.when(create({ source: '@world', destination: world?.balance_id ?? '', skip_queue, allow_overdraft: true })).thenRejected('TXN_SAME_SOURCE_DESTINATION');
  }
  t.notOk(rig.engine.state.balanceByIndicator('@fresh', 'USD'), 'the @name of a rejected transfer is not created');
});

t.test('TXN_INSUFFICIENT_FUNDS on the synchronous path; allow_overdraft lets the balance go negative', async (t) => {
  let source = '';
  let destination = '';
  const rig = given(t, (_engine, rig) => { source = fundedBalance(rig, 500n); destination = fundedBalance(rig, 0n); });
  // One unit more than available.
  rig.when(create({ source, destination, precise_amount: 501n, skip_queue: true })).thenRejected('TXN_INSUFFICIENT_FUNDS');
  // A new @name has nothing, and is not created by the rejected transfer.
  rig.when(create({ source: '@empty', destination, skip_queue: true })).thenRejected('TXN_INSUFFICIENT_FUNDS');
  t.notOk(rig.engine.state.balanceByIndicator('@empty', 'USD'), 'the @name of a rejected transfer is not created');
  // Exactly what is available.
  rig.when(create({ source, destination, precise_amount: 500n, skip_queue: true })).then([{ type: 'transaction.applied', transactions: [{ status: 'APPLIED', precise_amount: 500n }] }]);
  t.equal(balanceOf(rig, source), 0n);
  // An empty balance.
  rig.when(create({ source, destination, precise_amount: 1n, skip_queue: true })).thenRejected('TXN_INSUFFICIENT_FUNDS');
  rig.when(create({ source, destination, precise_amount: 70n, skip_queue: true, allow_overdraft: true })).then([{ type: 'transaction.applied', transactions: [{ status: 'APPLIED' }] }]);
  t.equal(balanceOf(rig, source), -70n, 'the balance went negative');
  t.equal(balanceOf(rig, destination), 570n);
  checkZeroSumOf(t, rig, 'overdraft');

  await t.test('a reference used by a rejected synchronous request stays free', async (t) => {
    const sub = specOn(t, rig);
    const poor = fundedBalance(rig, 10n);
    sub.when(create({ source: poor, destination, precise_amount: 20n, skip_queue: true, reference: 'retry-me' })).thenRejected('TXN_INSUFFICIENT_FUNDS');
    sub.when(create({ source: '@world', destination: poor, precise_amount: 10n, skip_queue: true, allow_overdraft: true })).then([{ type: 'transaction.applied' }]);
    // The same request now succeeds, as a new transaction.
    const retried = sub.when(create({ source: poor, destination, precise_amount: 20n, skip_queue: true, reference: 'retry-me' }))
      .then([{ type: 'transaction.applied', transactions: [{ status: 'APPLIED', reference: 'retry-me' }] }]);
    t.equal(ok(retried.outcome).created, true);
  });
});

t.test('TXN_DUPLICATE_REFERENCE and idempotent retries', async (t) => {
  let source = '';
  let destination = '';
  const rig = given(t, (_engine, rig) => { source = fundedBalance(rig, 10_000n); destination = fundedBalance(rig, 0n); });
  const original = transfer({ source, destination, precise_amount: 250n, reference: 'order-1', description: 'first', meta_data: { order: 1 }, skip_queue: true });
  const sent = (fields: Partial<typeof original>) => (engine: LedgerEngine) => engine.run({ op: 'transaction.create', ...original, ...fields });
  const first = ok(rig.when(sent({})).then([{ type: 'transaction.applied', transactions: [{ reference: 'order-1' }] }]).outcome);
  t.equal(first.created, true);

  await t.test('an identical retry returns the original and logs nothing', async (t) => {
    const sub = specOn(t, rig);
    const seq = rig.log.appendedSeq;
    const retry = sub.when(sent({ meta_data: { order: 1 } })).then([]).outcome;
    const answer = ok(retry);
    t.equal(answer.created, false, 'not created');
    t.equal(answer.transaction.transaction_id, first.transaction.transaction_id, 'the same transaction');
    t.same(answer.transaction, first.transaction, 'the same record');
    t.equal(retry.ok && retry.seq, seq, 'answers at the current seq');
    t.equal(balanceOf(rig, destination), 250n, 'applied once');
    // A retry through the queue is the same request (skip_queue says how, not what).
    const viaQueue = ok(sub.when(sent({ skip_queue: false })).then([]).outcome);
    t.ok(!viaQueue.created && viaQueue.transaction.transaction_id === first.transaction.transaction_id, 'a retry through the queue is the same request');
  });

  await t.test('a different request with the same reference is refused', async (t) => {
    const sub = specOn(t, rig);
    const variants: Array<[string, Partial<typeof original>]> = [
      ['amount', { precise_amount: 251n }],
      ['precision', { precision: 1000n }],
      ['description', { description: 'second' }],
      ['metadata', { meta_data: { order: 2 } }],
      ['overdraft flag', { allow_overdraft: true }],
      ['destination', { destination: '@elsewhere' }],
      ['source', { source: '@world', allow_overdraft: true }],
    ];
    for (const [field, change] of variants) {
      for (const skip_queue of [true, false]) {
        t.comment(`different ${field}, ${skip_queue ? 'synchronous' : 'queued'}`);
        sub.when(sent({ ...change, skip_queue })).thenRejected('TXN_DUPLICATE_REFERENCE');
      }
    }
  });

  await t.test('on the queued path', async (t) => {
    const sub = specOn(t, rig);
    const queuedCommand = transfer({ source, destination, precise_amount: 40n, reference: 'order-2' });
    const queued = ok(sub.when(create(queuedCommand)).then([{ type: 'transaction.queued', transactions: [{ status: 'QUEUED', reference: 'order-2' }] }]).outcome);
    // A retry while it is queued.
    const retryWhileQueued = ok(sub.when(create(queuedCommand)).then([]).outcome);
    t.equal(retryWhileQueued.created, false);
    t.equal(retryWhileQueued.transaction.transaction_id, queued.transaction.transaction_id);
    t.equal(retryWhileQueued.transaction.status, 'QUEUED');
    sub.when(create({ ...queuedCommand, precise_amount: 41n })).thenRejected('TXN_DUPLICATE_REFERENCE');
    // The synchronous path drains the source's mailbox before deciding, so the original is applied first.
    sub.when(create({ ...queuedCommand, precise_amount: 41n, skip_queue: true }))
      .thenRejected('TXN_DUPLICATE_REFERENCE', [{ type: 'transaction.applied', transactions: [{ transaction_id: queued.transaction.transaction_id, status: 'APPLIED' }] }]);
    sub.when(processQueue()).then([]);
    // A retry after it was applied: the same id, with its current status.
    const retryAfter = ok(sub.when(create(queuedCommand)).then([]).outcome);
    t.equal(retryAfter.created, false);
    t.equal(retryAfter.transaction.transaction_id, queued.transaction.transaction_id, 'the same id');
    t.equal(retryAfter.transaction.status, 'APPLIED', 'with its current status');
    t.equal(balanceOf(rig, destination), 290n, 'applied once');
  });

  await t.test('generated references never collide', async (t) => {
    const sub = specOn(t, rig);
    const a = ok(sub.when(create({ source, destination, precise_amount: 1n, skip_queue: true })).then([{ type: 'transaction.applied' }]).outcome);
    // A second, identical request without a reference: an empty reference never makes a retry.
    const b = ok(sub.when(create({ source, destination, precise_amount: 1n, skip_queue: true })).then([{ type: 'transaction.applied' }]).outcome);
    t.equal(b.created, true, 'an empty reference never makes a retry');
    t.not(a.transaction.reference, b.transaction.reference);
    t.match(a.transaction.reference, /^ref_/, 'generated reference');
  });
  checkZeroSumOf(t, rig, 'duplicate references');
});

t.test('QUEUE_BACKPRESSURE from small limits', async (t) => {
  let busy = '';
  let other = '';
  let destination = '';
  const rig = given(t, (_engine, rig) => {
    busy = fundedBalance(rig, 1000n);
    other = fundedBalance(rig, 1000n);
    destination = fundedBalance(rig, 0n);
  }, {}, { mailbox_depth_max: 2, queued_total_max: 3 });
  rig.when(create({ source: busy, destination })).then([{ type: 'transaction.queued' }]);
  rig.when(create({ source: busy, destination })).then([{ type: 'transaction.queued' }]);
  // A third from busy: its mailbox is full.
  rig.when(create({ source: busy, destination })).thenRejected('QUEUE_BACKPRESSURE');
  // Another balance still has room.
  rig.when(create({ source: other, destination })).then([{ type: 'transaction.queued' }]);
  // The total across balances is reached.
  rig.when(create({ source: '@world', destination, allow_overdraft: true })).thenRejected('QUEUE_BACKPRESSURE');
  t.equal(rig.engine.view.queuedCount(), 3);
  // A synchronous transfer is not refused: it drains the mailbox of its source first.
  rig.when(create({ source: busy, destination, skip_queue: true })).then([
    { type: 'transaction.applied', transactions: [{ source: busy, status: 'APPLIED' }] },
    { type: 'transaction.applied', transactions: [{ source: busy, status: 'APPLIED' }] },
    { type: 'transaction.applied', transactions: [{ source: busy, status: 'APPLIED', skip_queue: true }] },
  ]);
  t.equal(rig.engine.state.mailboxes.depth(busy), 0, 'it drained the mailbox of its source first');
  rig.when(processQueue()).then([{ type: 'transaction.applied', transactions: [{ source: other, status: 'APPLIED' }] }]);
  t.equal(rig.engine.view.queuedCount(), 0);
  // Room again once the queue moved.
  rig.when(create({ source: busy, destination })).then([{ type: 'transaction.queued' }]);
  checkZeroSumOf(t, rig, 'backpressure');

  await t.test('an identical retry is not refused for backpressure: it queues nothing', async (t) => {
    let from = '';
    const retryRig = given(t, (_engine, rig) => { from = fundedBalance(rig, 100n); }, {}, { mailbox_depth_max: 1 });
    const command = transfer({ source: from, destination: '@sink', reference: 'retry-under-load' });
    const first = ok(retryRig.when(create(command)).then([{ type: 'transaction.queued' }]).outcome);
    // The retry is answered with the original.
    const retry = ok(retryRig.when(create(command)).then([]).outcome);
    t.equal(retry.transaction.transaction_id, first.transaction.transaction_id);
  });
});

t.test('@name balances are created once per (name, currency) in the general ledger', async (t) => {
  const rig = given(t, []);
  const before = rig.engine.state.balances.size;
  const first = ok(rig.when(create({ source: '@world', destination: '@alice', allow_overdraft: true, skip_queue: true }))
    .then([{ type: 'transaction.applied', balances: [{ indicator: '@world', ledger_id: GENERAL_LEDGER_ID }, { indicator: '@alice', ledger_id: GENERAL_LEDGER_ID }] }]).outcome);
  t.equal(rig.engine.state.balances.size, before + 2, 'two balances created');
  const world = rig.engine.state.balanceByIndicator('@world', 'USD');
  const alice = rig.engine.state.balanceByIndicator('@alice', 'USD');
  t.ok(world && alice);
  t.equal(first.transaction.source, world?.balance_id, 'the record holds the resolved source id');
  t.equal(first.transaction.destination, alice?.balance_id, 'and destination id');
  t.equal(world?.ledger_id, GENERAL_LEDGER_ID);
  t.equal(world?.indicator, '@world');
  // A second use, and a queued use: no new balances.
  rig.when(create({ source: '@world', destination: '@alice', allow_overdraft: true, skip_queue: true })).then([{ type: 'transaction.applied', balances: undefined }]);
  rig.when(create({ source: '@world', destination: '@alice', allow_overdraft: true })).then([{ type: 'transaction.queued', balances: undefined }]);
  t.equal(rig.engine.state.balances.size, before + 2, 'no new balances');
  // EUR has its own pair.
  rig.when(create({ source: '@world', destination: '@alice', currency: 'EUR', allow_overdraft: true, skip_queue: true }))
    .then([{ type: 'transaction.applied', balances: [{ indicator: '@world', currency: 'EUR' }, { indicator: '@alice', currency: 'EUR' }] }]);
  t.equal(rig.engine.state.balances.size, before + 4, 'EUR has its own pair');
  t.not(rig.engine.state.balanceByIndicator('@world', 'EUR')?.balance_id, world?.balance_id);
  // A queued transfer to a new name creates the balance when decided, before it is applied.
  rig.when(create({ source: '@world', destination: '@bob', allow_overdraft: true })).then([{ type: 'transaction.queued', balances: [{ indicator: '@bob' }] }]);
  t.ok(rig.engine.state.balanceByIndicator('@bob', 'USD'), 'creates the balance when decided, before it is applied');
  rig.when(processQueue()).then([{ type: 'transaction.applied' }, { type: 'transaction.applied' }]);
  t.equal(balanceOf(rig, alice?.balance_id ?? ''), 300n);
  t.equal(balanceOf(rig, world?.balance_id ?? ''), -400n);
  checkZeroSumOf(t, rig, '@name transfers');
});

t.test('the record of a new transaction', async (t) => {
  const rig = given(t, []);
  rig.clock.ms = Date.UTC(2026, 5, 1, 12);
  const recorded = rig.when(create({
    source: '@world', destination: '@alice', precise_amount: 12345n, precision: 100n, reference: 'rec-1',
    description: 'lunch', meta_data: { k: 'v' }, allow_overdraft: true, skip_queue: true,
  })).then([{ type: 'transaction.applied', at: rig.clock.ms, transactions: [{ status: 'APPLIED', reference: 'rec-1', created_at: rig.clock.ms }] }]);
  const record = ok(recorded.outcome).transaction;
  t.match(record.transaction_id, /^txn_/);
  t.equal(record.created_at, rig.clock.ms, 'time from the injected clock');
  t.equal(record.hash, transactionHash({ precise_amount: 12345n, reference: 'rec-1', currency: 'USD', source: record.source, destination: record.destination }),
    'hash over the resolved balance ids');
  t.same([record.parent_transaction, record.inflight, record.description, record.meta_data, record.precision], ['', false, 'lunch', { k: 'v' }, 100n]);
  t.same(rig.engine.state.transaction(record.transaction_id), record, 'stored as returned');
  t.same(rig.log.events.at(-1)?.transactions?.[0], record, 'logged as returned');
  await t.test('decided times never go backwards when the clock does', async (t) => {
    rig.clock.ms -= 60_000;
    specOn(t, rig).when(create({ source: '@world', destination: '@alice', allow_overdraft: true, skip_queue: true }))
      .then([{ type: 'transaction.applied', transactions: [{ created_at: record.created_at }] }]);
  });
});

t.test('queued transactions: QUEUED, then APPLIED or REJECTED on the same id, in order per source', async (t) => {
  let source = '';
  let destination = '';
  const rig = given(t, (_engine, rig) => { source = fundedBalance(rig, 100n); destination = fundedBalance(rig, 0n); });
  const ids = [60n, 50n, 40n].map((precise_amount) => ok(rig.when(create({ source, destination, precise_amount }))
    .then([{ type: 'transaction.queued', transactions: [{ status: 'QUEUED', precise_amount }] }]).outcome).transaction.transaction_id);
  t.equal(balanceOf(rig, source), 100n, 'nothing moves while queued');
  t.equal(rig.engine.state.mailboxes.depth(source), 3);
  t.same(ids.map((id) => txn(rig, id).status), ['QUEUED', 'QUEUED', 'QUEUED'], 'readable while queued');
  // One event each, in arrival order: 60 fits, 50 does not, 40 does.
  const processed = rig.when(processQueue()).then([
    { type: 'transaction.applied', transactions: [{ transaction_id: ids[0], status: 'APPLIED' }] },
    { type: 'transaction.rejected', transactions: [{ transaction_id: ids[1], status: 'REJECTED', rejection: { code: 'TXN_INSUFFICIENT_FUNDS', reason: 'insufficient_funds', message: String } }] },
    { type: 'transaction.applied', transactions: [{ transaction_id: ids[2], status: 'APPLIED' }] },
  ]);
  t.equal(processed.outcome.value, 3, 'three processed');
  t.equal(balanceOf(rig, source), 0n);
  t.equal(balanceOf(rig, destination), 100n);
  t.equal(rig.store.get(ids[1] as string)?.status, 'REJECTED', 'the store holds the final record under the same id');
  t.equal(rig.engine.view.queuedCount(), 0);
  checkZeroSumOf(t, rig, 'queued transfers');
});

t.test('a skip_queue transaction drains its source mailbox first', async (t) => {
  let source = '';
  let elsewhere = '';
  let destination = '';
  let queued = '';
  let unrelated = '';
  const rig = given(t, (engine, rig) => {
    source = fundedBalance(rig, 100n);
    elsewhere = fundedBalance(rig, 100n);
    destination = fundedBalance(rig, 0n);
    queued = ok(create({ source, destination, precise_amount: 80n })(engine)).transaction.transaction_id;
    unrelated = ok(create({ source: elsewhere, destination, precise_amount: 10n })(engine)).transaction.transaction_id;
  });
  // The synchronous 30 is decided after the queued 80, which goes first; one event, the drained transaction.
  rig.when(create({ source, destination, precise_amount: 30n, skip_queue: true }))
    .thenRejected('TXN_INSUFFICIENT_FUNDS', [{ type: 'transaction.applied', transactions: [{ transaction_id: queued, status: 'APPLIED' }] }]);
  t.equal(txn(rig, unrelated).status, 'QUEUED', 'other mailboxes wait for the runner');
  t.equal(balanceOf(rig, source), 20n);
  // What is left fits.
  rig.when(create({ source, destination, precise_amount: 20n, skip_queue: true })).then([{ type: 'transaction.applied', transactions: [{ status: 'APPLIED' }] }]);
  checkZeroSumOf(t, rig, 'drain');
});

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
