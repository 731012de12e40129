// Unit tests for the engine's decisions, driven through LedgerEngine with the in-memory log and store, a
// hand-moved clock and counting ids. Every rejection code the engine can return is reached, and each
// rejection is checked to leave no trace (no event, no balance change). The ledger's invariants
// (zero-sum per currency, queued work applied in order per source, replay to the same state) are checked
// after the commands that could break them, and over a seeded random history at the end.

import t, { type Test } from 'tap';
import type { CreateTransactionCommand } from '../engine/commands.js';
import { LedgerEngine, type Outcome } from '../engine/ledger-engine.js';
import { MemoryTransactionStore } from '../lookups/memory-transaction-store.js';
import { GENERAL_LEDGER_ID, type TransactionRecord } from '../engine/records.js';
import { REJECTION_REASONS, type RejectionCode } from '../engine/rejections.js';
import { transactionHash } from '../engine/transaction-hash.js';
import { MemoryLog } from '../wal/memory-log.js';
import { balanceAmounts, CountingIds, engineRig, FakeClock, transfer, zeroSumViolations, type EngineRig } from './helpers/engine-rig.js';
import { seededRandom } from './helpers/seeded-random.js';

/** Asserts a rejection with the code, its stable reason, and no event or balance change. */
function expectRejection<T>(t: Test, fixture: EngineRig, run: () => Outcome<T>, code: RejectionCode, label: string): void {
  const seqBefore = fixture.log.appendedSeq;
  const balancesBefore = balanceAmounts(fixture.engine.state);
  const outcome = run();
  if (outcome.ok) {
    t.fail(`${label}: expected ${code}, was accepted`);
    return;
  }
  t.equal(outcome.rejection.code, code, `${label}: ${code}`);
  t.equal(outcome.rejection.reason, REJECTION_REASONS[code], `${label}: reason ${REJECTION_REASONS[code]}`);
  t.type(outcome.rejection.message, 'string', `${label}: has a message`);
  t.equal(fixture.log.appendedSeq, seqBefore, `${label}: nothing logged`);
  t.same(balanceAmounts(fixture.engine.state), balancesBefore, `${label}: no balance created or changed`);
}

function accept<T>(t: Test, outcome: Outcome<T>, label: string): T {
  if (!outcome.ok) throw new Error(`${label}: rejected with ${outcome.rejection.code}: ${outcome.rejection.message}`);
  t.pass(label);
  return outcome.value;
}

function checkZeroSum(t: Test, engine: LedgerEngine, label: string): void {
  t.same(zeroSumViolations(engine.state), [], `zero-sum after ${label}`);
}

/** Creates a USD balance in the general ledger and credits it from @world (which may overdraw). */
function fundedBalance(t: Test, fixture: EngineRig, amount: bigint, currency = 'USD'): string {
  const balance = accept(t, fixture.engine.run({ op: 'balance.create', ledger_id: GENERAL_LEDGER_ID, currency, identity_id: '', indicator: '', meta_data: {} }), 'balance created');
  if (amount > 0n) {
    accept(t, fixture.engine.run({ op: 'transaction.create', ...transfer({
      source: '@world', destination: balance.balance_id, precise_amount: amount, currency, allow_overdraft: true, skip_queue: true,
    }) }), `funded with ${amount}`);
  }
  return balance.balance_id;
}

function balanceOf(engine: LedgerEngine, balanceId: string): bigint {
  const balance = engine.state.balances.get(balanceId);
  if (!balance) throw new Error(`no balance ${balanceId}`);
  return balance.credit_balance - balance.debit_balance;
}

function statusOf(engine: LedgerEngine, transactionId: string): TransactionRecord['status'] | undefined {
  return engine.state.transaction(transactionId)?.status;
}

t.test('the general ledger exists from genesis, once', async (t) => {
  const fixture = engineRig();
  t.ok(fixture.engine.state.ledgers.has(GENERAL_LEDGER_ID));
  const seq = fixture.log.appendedSeq;
  fixture.engine.run({ op: 'genesis.ensure' });
  t.equal(fixture.log.appendedSeq, seq, 'a second genesis logs nothing');
});

t.test('ledgers: LGR_NOT_FOUND and updates', async (t) => {
  const fixture = engineRig();
  const { engine } = fixture;
  expectRejection(t, fixture, () => engine.run({ op: 'ledger.update', ledger_id: 'ldg_missing', name: 'x' }), 'LGR_NOT_FOUND', 'update of an unknown ledger');
  expectRejection(t, fixture, () => engine.run({ op: 'balance.create', ledger_id: 'ldg_missing', currency: 'USD', identity_id: '', indicator: '', meta_data: {} }), 'LGR_NOT_FOUND', 'balance in an unknown ledger');
  const ledger = accept(t, engine.run({ op: 'ledger.create', name: 'Operations', meta_data: { team: 'a', region: 'eu' } }), 'ledger created');
  const updated = accept(t, engine.run({ op: 'ledger.update', ledger_id: ledger.ledger_id, meta_data: { team: 'b' } }), 'ledger updated');
  t.same(updated, { ...ledger, meta_data: { team: 'b', region: 'eu' } }, 'metadata merged, name kept');
  t.same(ledger.meta_data, { team: 'a', region: 'eu' }, 'the earlier record is not mutated');
  const renamed = accept(t, engine.run({ op: 'ledger.update', ledger_id: ledger.ledger_id, name: 'Ops' }), 'ledger renamed');
  t.equal(renamed.name, 'Ops');
  t.same(engine.state.ledgers.get(ledger.ledger_id), renamed, 'state holds the latest record');
});

t.test('balances: BAL_DUPLICATE_INDICATOR per (indicator, currency)', async (t) => {
  const fixture = engineRig();
  const { engine } = fixture;
  const command = { ledger_id: GENERAL_LEDGER_ID, currency: 'USD', identity_id: '', indicator: 'treasury', meta_data: {} };
  accept(t, engine.run({ op: 'balance.create', ...command }), 'first treasury USD');
  expectRejection(t, fixture, () => engine.run({ op: 'balance.create', ...command }), 'BAL_DUPLICATE_INDICATOR', 'second treasury USD');
  const other = accept(t, engine.run({ op: 'ledger.create', name: 'other', meta_data: {} }), 'another ledger');
  expectRejection(t, fixture, () => engine.run({ op: 'balance.create', ...command, ledger_id: other.ledger_id }), 'BAL_DUPLICATE_INDICATOR', 'treasury USD in another ledger');
  accept(t, engine.run({ op: 'balance.create', ...command, currency: 'EUR' }), 'treasury EUR is a different balance');
  accept(t, engine.run({ op: 'balance.create', ...command, indicator: '' }), 'no indicator');
  accept(t, engine.run({ op: 'balance.create', ...command, indicator: '' }), 'no indicator again: only names must be unique');
  accept(t, engine.run({ op: 'transaction.create', ...transfer({ source: '@world', destination: '@ops', allow_overdraft: true, skip_queue: true }) }), '@ops created by a transfer');
  expectRejection(t, fixture, () => engine.run({ op: 'balance.create', ...command, indicator: '@ops' }), 'BAL_DUPLICATE_INDICATOR', 'explicit balance named like an existing @name');
});

t.test('transactions: BAL_NOT_FOUND', async (t) => {
  const fixture = engineRig();
  const { engine } = fixture;
  const known = fundedBalance(t, fixture, 1000n);
  for (const skip_queue of [false, true]) {
    const path = skip_queue ? 'synchronous' : 'queued';
    expectRejection(t, fixture, () => engine.run({ op: 'transaction.create', ...transfer({ source: 'bln_missing', destination: known, skip_queue }) }), 'BAL_NOT_FOUND', `${path}: unknown source`);
    expectRejection(t, fixture, () => engine.run({ op: 'transaction.create', ...transfer({ source: known, destination: 'bln_missing', skip_queue }) }), 'BAL_NOT_FOUND', `${path}: unknown destination`);
    expectRejection(t, fixture, () => engine.run({ op: 'transaction.create', ...transfer({ source: '@new', destination: 'bln_missing', skip_queue, allow_overdraft: true }) }), 'BAL_NOT_FOUND', `${path}: unknown destination after a new @name`);
    t.notOk(engine.state.balanceByIndicator('@new', 'USD'), `${path}: the @name of a rejected transfer is not created`);
  }
});

t.test('transactions: TXN_CURRENCY_MISMATCH', async (t) => {
  const fixture = engineRig();
  const { engine } = fixture;
  const dollars = fundedBalance(t, fixture, 1000n, 'USD');
  const euros = fundedBalance(t, fixture, 1000n, 'EUR');
  for (const skip_queue of [false, true]) {
    const path = skip_queue ? 'synchronous' : 'queued';
    expectRejection(t, fixture, () => engine.run({ op: 'transaction.create', ...transfer({ source: euros, destination: dollars, currency: 'USD', skip_queue }) }), 'TXN_CURRENCY_MISMATCH', `${path}: source in another currency`);
    expectRejection(t, fixture, () => engine.run({ op: 'transaction.create', ...transfer({ source: dollars, destination: euros, currency: 'USD', skip_queue }) }), 'TXN_CURRENCY_MISMATCH', `${path}: destination in another currency`);
    expectRejection(t, fixture, () => engine.run({ op: 'transaction.create', ...transfer({ source: '@world', destination: euros, currency: 'USD', skip_queue, allow_overdraft: true }) }), 'TXN_CURRENCY_MISMATCH', `${path}: @name source, destination in another currency`);
  }
  t.equal(engine.view.queuedCount(), 0, 'nothing was queued');
});

t.test('transactions: TXN_SAME_SOURCE_DESTINATION', async (t) => {
  const fixture = engineRig();
  const { engine } = fixture;
  const balance = fundedBalance(t, fixture, 1000n);
  for (const skip_queue of [false, true]) {
    const path = skip_queue ? 'synchronous' : 'queued';
    expectRejection(t, fixture, () => engine.run({ op: 'transaction.create', ...transfer({ source: balance, destination: balance, skip_queue }) }), 'TXN_SAME_SOURCE_DESTINATION', `${path}: same id`);
    expectRejection(t, fixture, () => engine.run({ op: 'transaction.create', ...transfer({ source: '@world', destination: '@world', skip_queue, allow_overdraft: true }) }), 'TXN_SAME_SOURCE_DESTINATION', `${path}: same existing @name`);
    expectRejection(t, fixture, () => engine.run({ op: 'transaction.create', ...transfer({ source: '@fresh', destination: '@fresh', skip_queue, allow_overdraft: true }) }), 'TXN_SAME_SOURCE_DESTINATION', `${path}: same new @name`);
    const world = engine.state.balanceByIndicator('@world', 'USD');
    expectRejection(t, fixture, () => engine.run({ op: 'transaction.create', ...transfer({ source: '@world', destination: world?.balance_id ?? '', skip_queue, allow_overdraft: true }) }), 'TXN_SAME_SOURCE_DESTINATION', `${path}: @name and its own id`);
  }
  t.notOk(engine.state.balanceByIndicator('@fresh', 'USD'), 'the @name of a rejected transfer is not created');
});

t.test('transactions: TXN_INSUFFICIENT_FUNDS on the synchronous path', async (t) => {
  const fixture = engineRig();
  const { engine } = fixture;
  const source = fundedBalance(t, fixture, 500n);
  const destination = fundedBalance(t, fixture, 0n);
  expectRejection(t, fixture, () => engine.run({ op: 'transaction.create', ...transfer({ source, destination, precise_amount: 501n, skip_queue: true }) }), 'TXN_INSUFFICIENT_FUNDS', 'one unit more than available');
  expectRejection(t, fixture, () => engine.run({ op: 'transaction.create', ...transfer({ source: '@empty', destination, skip_queue: true }) }), 'TXN_INSUFFICIENT_FUNDS', 'a new @name has nothing');
  t.notOk(engine.state.balanceByIndicator('@empty', 'USD'), 'and is not created by the rejected transfer');
  const exact = accept(t, engine.run({ op: 'transaction.create', ...transfer({ source, destination, precise_amount: 500n, skip_queue: true }) }), 'exactly what is available');
  t.equal(exact.transaction.status, 'APPLIED');
  t.equal(balanceOf(engine, source), 0n);
  expectRejection(t, fixture, () => engine.run({ op: 'transaction.create', ...transfer({ source, destination, precise_amount: 1n, skip_queue: true }) }), 'TXN_INSUFFICIENT_FUNDS', 'an empty balance');
  const overdraft = accept(t, engine.run({ op: 'transaction.create', ...transfer({ source, destination, precise_amount: 70n, skip_queue: true, allow_overdraft: true }) }), 'with allow_overdraft');
  t.equal(overdraft.transaction.status, 'APPLIED');
  t.equal(balanceOf(engine, source), -70n, 'the balance went negative');
  t.equal(balanceOf(engine, destination), 570n);
  checkZeroSum(t, engine, 'overdraft');
  await t.test('a reference used by a rejected synchronous request stays free', async (t) => {
    const poor = fundedBalance(t, fixture, 10n);
    expectRejection(t, fixture, () => engine.run({ op: 'transaction.create', ...transfer({ source: poor, destination, precise_amount: 20n, skip_queue: true, reference: 'retry-me' }) }), 'TXN_INSUFFICIENT_FUNDS', 'short');
    accept(t, engine.run({ op: 'transaction.create', ...transfer({ source: '@world', destination: poor, precise_amount: 10n, skip_queue: true, allow_overdraft: true }) }), 'topped up');
    const retried = accept(t, engine.run({ op: 'transaction.create', ...transfer({ source: poor, destination, precise_amount: 20n, skip_queue: true, reference: 'retry-me' }) }), 'the same request now succeeds');
    t.equal(retried.created, true);
    t.equal(retried.transaction.status, 'APPLIED');
  });
});

t.test('transactions: TXN_DUPLICATE_REFERENCE and idempotent retries', async (t) => {
  const fixture = engineRig();
  const { engine, log } = fixture;
  const source = fundedBalance(t, fixture, 10_000n);
  const destination = fundedBalance(t, fixture, 0n);
  const original = transfer({ source, destination, precise_amount: 250n, reference: 'order-1', description: 'first', meta_data: { order: 1 }, skip_queue: true });
  const first = accept(t, engine.run({ op: 'transaction.create', ...original }), 'original');
  t.equal(first.created, true);

  await t.test('an identical retry returns the original and logs nothing', async (t) => {
    const seq = log.appendedSeq;
    const outcome = engine.run({ op: 'transaction.create', ...original, meta_data: { order: 1 } });
    t.ok(outcome.ok);
    if (!outcome.ok) return;
    t.equal(outcome.value.created, false, 'not created');
    t.equal(outcome.value.transaction.transaction_id, first.transaction.transaction_id, 'the same transaction');
    t.same(outcome.value.transaction, first.transaction, 'the same record');
    t.equal(outcome.seq, seq, 'answers at the current seq');
    t.equal(log.appendedSeq, seq, 'no event');
    t.equal(balanceOf(engine, destination), 250n, 'applied once');
    const viaQueue = engine.run({ op: 'transaction.create', ...original, skip_queue: false });
    t.ok(viaQueue.ok && !viaQueue.value.created && viaQueue.value.transaction.transaction_id === first.transaction.transaction_id,
      'a retry through the queue is the same request (skip_queue says how, not what)');
  });

  await t.test('a different request with the same reference is refused', async (t) => {
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
        expectRejection(t, fixture, () => engine.run({ op: 'transaction.create', ...original, ...change, skip_queue }), 'TXN_DUPLICATE_REFERENCE',
          `different ${field}, ${skip_queue ? 'synchronous' : 'queued'}`);
      }
    }
  });

  await t.test('on the queued path', async (t) => {
    const queuedCommand = transfer({ source, destination, precise_amount: 40n, reference: 'order-2' });
    const queued = accept(t, engine.run({ op: 'transaction.create', ...queuedCommand }), 'queued original');
    t.equal(queued.transaction.status, 'QUEUED');
    const retryWhileQueued = accept(t, engine.run({ op: 'transaction.create', ...queuedCommand }), 'retry while queued');
    t.equal(retryWhileQueued.created, false);
    t.equal(retryWhileQueued.transaction.transaction_id, queued.transaction.transaction_id);
    t.equal(retryWhileQueued.transaction.status, 'QUEUED');
    expectRejection(t, fixture, () => engine.run({ op: 'transaction.create', ...queuedCommand, precise_amount: 41n }), 'TXN_DUPLICATE_REFERENCE', 'queued, different amount');
    // The synchronous path drains the source's mailbox before deciding, so the original is applied first.
    const sync = engine.run({ op: 'transaction.create', ...queuedCommand, precise_amount: 41n, skip_queue: true });
    t.same(sync.ok ? 'accepted' : sync.rejection.code, 'TXN_DUPLICATE_REFERENCE', 'synchronous against a queued original');
    engine.run({ op: 'queue.process', items_max: 100 }).value;
    const retryAfter = accept(t, engine.run({ op: 'transaction.create', ...queuedCommand }), 'retry after it was applied');
    t.equal(retryAfter.created, false);
    t.equal(retryAfter.transaction.transaction_id, queued.transaction.transaction_id, 'the same id');
    t.equal(retryAfter.transaction.status, 'APPLIED', 'with its current status');
    t.equal(balanceOf(engine, destination), 290n, 'applied once');
  });

  await t.test('generated references never collide', async (t) => {
    const a = accept(t, engine.run({ op: 'transaction.create', ...transfer({ source, destination, precise_amount: 1n, skip_queue: true }) }), 'first without reference');
    const b = accept(t, engine.run({ op: 'transaction.create', ...transfer({ source, destination, precise_amount: 1n, skip_queue: true }) }), 'second, identical, without reference');
    t.equal(b.created, true, 'an empty reference never makes a retry');
    t.not(a.transaction.reference, b.transaction.reference);
    t.match(a.transaction.reference, /^ref_/, 'generated reference');
  });
  checkZeroSum(t, engine, 'duplicate references');
});

t.test('QUEUE_BACKPRESSURE from small limits', async (t) => {
  const fixture = engineRig({ mailbox_depth_max: 2, queued_total_max: 3 });
  const { engine } = fixture;
  const busy = fundedBalance(t, fixture, 1000n);
  const other = fundedBalance(t, fixture, 1000n);
  const destination = fundedBalance(t, fixture, 0n);
  accept(t, engine.run({ op: 'transaction.create', ...transfer({ source: busy, destination }) }), 'first queued from busy');
  accept(t, engine.run({ op: 'transaction.create', ...transfer({ source: busy, destination }) }), 'second queued from busy');
  expectRejection(t, fixture, () => engine.run({ op: 'transaction.create', ...transfer({ source: busy, destination }) }), 'QUEUE_BACKPRESSURE', 'third from busy: its mailbox is full');
  accept(t, engine.run({ op: 'transaction.create', ...transfer({ source: other, destination }) }), 'another balance still has room');
  expectRejection(t, fixture, () => engine.run({ op: 'transaction.create', ...transfer({ source: '@world', destination, allow_overdraft: true }) }), 'QUEUE_BACKPRESSURE', 'the total across balances is reached');
  t.equal(engine.view.queuedCount(), 3);
  const sync = accept(t, engine.run({ op: 'transaction.create', ...transfer({ source: busy, destination, skip_queue: true }) }), 'a synchronous transfer is not refused');
  t.equal(sync.transaction.status, 'APPLIED');
  t.equal(engine.state.mailboxes.depth(busy), 0, 'it drained the mailbox of its source first');
  engine.run({ op: 'queue.process', items_max: 100 }).value;
  t.equal(engine.view.queuedCount(), 0);
  accept(t, engine.run({ op: 'transaction.create', ...transfer({ source: busy, destination }) }), 'room again once the queue moved');
  checkZeroSum(t, engine, 'backpressure');

  await t.test('an identical retry is not refused for backpressure: it queues nothing', async (t) => {
    const retryFixture = engineRig({ mailbox_depth_max: 1 });
    const from = fundedBalance(t, retryFixture, 100n);
    const command = transfer({ source: from, destination: '@sink', reference: 'retry-under-load' });
    const first = accept(t, retryFixture.engine.run({ op: 'transaction.create', ...command }), 'queued');
    const retry = retryFixture.engine.run({ op: 'transaction.create', ...command });
    t.ok(retry.ok, 'the retry is answered with the original');
    if (retry.ok) t.equal(retry.value.transaction.transaction_id, first.transaction.transaction_id);
  });
});

t.test('@name balances are created once per (name, currency) in the general ledger', async (t) => {
  const fixture = engineRig();
  const { engine } = fixture;
  const before = engine.state.balances.size;
  const first = accept(t, engine.run({ op: 'transaction.create', ...transfer({ source: '@world', destination: '@alice', allow_overdraft: true, skip_queue: true }) }), 'first use');
  t.equal(engine.state.balances.size, before + 2, 'two balances created');
  const world = engine.state.balanceByIndicator('@world', 'USD');
  const alice = engine.state.balanceByIndicator('@alice', 'USD');
  t.ok(world && alice);
  t.equal(first.transaction.source, world?.balance_id, 'the record holds the resolved source id');
  t.equal(first.transaction.destination, alice?.balance_id, 'and destination id');
  t.equal(world?.ledger_id, GENERAL_LEDGER_ID);
  t.equal(world?.indicator, '@world');
  accept(t, engine.run({ op: 'transaction.create', ...transfer({ source: '@world', destination: '@alice', allow_overdraft: true, skip_queue: true }) }), 'second use');
  accept(t, engine.run({ op: 'transaction.create', ...transfer({ source: '@world', destination: '@alice', allow_overdraft: true }) }), 'queued use');
  t.equal(engine.state.balances.size, before + 2, 'no new balances');
  accept(t, engine.run({ op: 'transaction.create', ...transfer({ source: '@world', destination: '@alice', currency: 'EUR', allow_overdraft: true, skip_queue: true }) }), 'in EUR');
  t.equal(engine.state.balances.size, before + 4, 'EUR has its own pair');
  t.not(engine.state.balanceByIndicator('@world', 'EUR')?.balance_id, world?.balance_id);
  accept(t, engine.run({ op: 'transaction.create', ...transfer({ source: '@world', destination: '@bob', allow_overdraft: true }) }), 'a queued transfer to a new name');
  t.ok(engine.state.balanceByIndicator('@bob', 'USD'), 'creates the balance when decided, before it is applied');
  engine.run({ op: 'queue.process', items_max: 100 }).value;
  t.equal(balanceOf(engine, alice?.balance_id ?? ''), 300n);
  t.equal(balanceOf(engine, world?.balance_id ?? ''), -400n);
  checkZeroSum(t, engine, '@name transfers');
});

t.test('the record of a new transaction', async (t) => {
  const fixture = engineRig();
  const { engine, clock } = fixture;
  clock.ms = Date.UTC(2026, 5, 1, 12);
  const outcome = accept(t, engine.run({ op: 'transaction.create', ...transfer({
    source: '@world', destination: '@alice', precise_amount: 12345n, precision: 100n, reference: 'rec-1',
    description: 'lunch', meta_data: { k: 'v' }, allow_overdraft: true, skip_queue: true,
  }) }), 'recorded');
  const record = outcome.transaction;
  t.match(record.transaction_id, /^txn_/);
  t.equal(record.created_at, clock.ms, 'time from the injected clock');
  t.equal(record.hash, transactionHash({ precise_amount: 12345n, reference: 'rec-1', currency: 'USD', source: record.source, destination: record.destination }),
    'hash over the resolved balance ids');
  t.same([record.parent_transaction, record.inflight, record.description, record.meta_data, record.precision], ['', false, 'lunch', { k: 'v' }, 100n]);
  t.same(engine.state.transaction(record.transaction_id), record, 'stored as returned');
  await t.test('decided times never go backwards when the clock does', async (t) => {
    clock.ms -= 60_000;
    const later = accept(t, engine.run({ op: 'transaction.create', ...transfer({ source: '@world', destination: '@alice', allow_overdraft: true, skip_queue: true }) }), 'after a clock step back');
    t.equal(later.transaction.created_at, record.created_at);
  });
});

t.test('queued transactions: QUEUED, then APPLIED or REJECTED on the same id, in order per source', async (t) => {
  const fixture = engineRig();
  const { engine, log } = fixture;
  const source = fundedBalance(t, fixture, 100n);
  const destination = fundedBalance(t, fixture, 0n);
  const amounts = [60n, 50n, 40n];
  const ids = amounts.map((precise_amount) => {
    const outcome = accept(t, engine.run({ op: 'transaction.create', ...transfer({ source, destination, precise_amount }) }), `queued ${precise_amount}`);
    t.equal(outcome.transaction.status, 'QUEUED');
    return outcome.transaction.transaction_id;
  });
  t.equal(balanceOf(engine, source), 100n, 'nothing moves while queued');
  t.equal(engine.state.mailboxes.depth(source), 3);
  t.same(ids.map((id) => statusOf(engine, id)), ['QUEUED', 'QUEUED', 'QUEUED'], 'readable while queued');
  const seqBefore = log.appendedSeq;
  t.equal(engine.run({ op: 'queue.process', items_max: 100 }).value, 3, 'three processed');
  t.equal(log.appendedSeq, seqBefore + 3, 'one event each');
  t.same(ids.map((id) => statusOf(engine, id)), ['APPLIED', 'REJECTED', 'APPLIED'], 'in arrival order: 60 fits, 50 does not, 40 does');
  t.equal(balanceOf(engine, source), 0n);
  t.equal(balanceOf(engine, destination), 100n);
  const rejected = engine.state.transaction(ids[1] as string);
  t.same(rejected?.rejection && { code: rejected.rejection.code, reason: rejected.rejection.reason },
    { code: 'TXN_INSUFFICIENT_FUNDS', reason: 'insufficient_funds' }, 'the rejection is recorded');
  t.type(rejected?.rejection?.message, 'string');
  t.equal(fixture.store.get(ids[1] as string)?.status, 'REJECTED', 'the store holds the final record under the same id');
  t.equal(engine.view.queuedCount(), 0);
  checkZeroSum(t, engine, 'queued transfers');
});

t.test('a skip_queue transaction drains its source mailbox first', async (t) => {
  const fixture = engineRig();
  const { engine, log } = fixture;
  const source = fundedBalance(t, fixture, 100n);
  const elsewhere = fundedBalance(t, fixture, 100n);
  const destination = fundedBalance(t, fixture, 0n);
  const queued = accept(t, engine.run({ op: 'transaction.create', ...transfer({ source, destination, precise_amount: 80n }) }), 'queued 80');
  const unrelated = accept(t, engine.run({ op: 'transaction.create', ...transfer({ source: elsewhere, destination, precise_amount: 10n }) }), 'queued from another source');
  const seqBefore = log.appendedSeq;
  const outcome = engine.run({ op: 'transaction.create', ...transfer({ source, destination, precise_amount: 30n, skip_queue: true }) });
  t.same(outcome.ok ? 'accepted' : outcome.rejection.code, 'TXN_INSUFFICIENT_FUNDS', 'the synchronous 30 is decided after the queued 80');
  t.equal(statusOf(engine, queued.transaction.transaction_id), 'APPLIED', 'the queued 80 went first');
  t.equal(statusOf(engine, unrelated.transaction.transaction_id), 'QUEUED', 'other mailboxes wait for the runner');
  t.equal(log.appendedSeq, seqBefore + 1, 'one event: the drained transaction');
  t.equal(balanceOf(engine, source), 20n);
  const fits = accept(t, engine.run({ op: 'transaction.create', ...transfer({ source, destination, precise_amount: 20n, skip_queue: true }) }), 'what is left fits');
  t.equal(fits.transaction.status, 'APPLIED');
  checkZeroSum(t, engine, 'drain');
});

t.test('processQueued visits balances round-robin, one transaction each per turn', async (t) => {
  const fixture = engineRig();
  const { engine } = fixture;
  const hot = fundedBalance(t, fixture, 1000n);
  const cold = fundedBalance(t, fixture, 1000n);
  const destination = fundedBalance(t, fixture, 0n);
  const hotIds = Array.from({ length: 5 }, (_, index) => accept(t, engine.run({ op: 'transaction.create', ...transfer({ source: hot, destination, precise_amount: 1n, reference: `hot-${index}` }) }), `hot ${index}`).transaction.transaction_id);
  const coldId = accept(t, engine.run({ op: 'transaction.create', ...transfer({ source: cold, destination, precise_amount: 1n }) }), 'cold').transaction.transaction_id;
  t.equal(engine.run({ op: 'queue.process', items_max: 2 }).value, 2, 'a slice of two');
  t.equal(statusOf(engine, hotIds[0] as string), 'APPLIED', 'the hot balance had one turn');
  t.equal(statusOf(engine, coldId), 'APPLIED', 'the cold balance was not starved');
  t.same(hotIds.slice(1).map((id) => statusOf(engine, id)), ['QUEUED', 'QUEUED', 'QUEUED', 'QUEUED']);
  t.equal(engine.run({ op: 'queue.process', items_max: 2 }).value, 2);
  t.same(hotIds.map((id) => statusOf(engine, id)), ['APPLIED', 'APPLIED', 'APPLIED', 'QUEUED', 'QUEUED'], 'hot continues in order');
  t.equal(engine.run({ op: 'queue.process', items_max: 100 }).value, 2, 'the rest');
  t.equal(engine.run({ op: 'queue.process', items_max: 100 }).value, 0, 'nothing left');
});

t.test('seeded random history: zero-sum after every command, queued order, replay to the same state', async (t) => {
  const random = seededRandom(t, 'ENGINE_HISTORY_SEED');
  const fixture = engineRig({ mailbox_depth_max: 4, queued_total_max: 20 });
  const { engine, log, clock } = fixture;
  const names = ['@world', '@a', '@b', '@c'];
  const ids: string[] = [];
  const usedReferences: string[] = [];
  const sentWithReference: CreateTransactionCommand[] = [];
  const outcomes = new Map<string, number>();
  const count = (label: string): void => void outcomes.set(label, (outcomes.get(label) ?? 0) + 1);
  for (let step = 0; step < 3000; step += 1) {
    clock.advance(random.int(3));
    const choice = random.int(12);
    let label: string;
    if (choice === 0) {
      const outcome = engine.run({ op: 'balance.create', ledger_id: GENERAL_LEDGER_ID, currency: random.int(5) === 0 ? 'EUR' : 'USD', identity_id: '', indicator: '', meta_data: {} });
      if (outcome.ok) ids.push(outcome.value.balance_id);
      label = outcome.ok ? 'balance' : outcome.rejection.code;
    } else if (choice === 1) {
      label = `processed ${engine.run({ op: 'queue.process', items_max: random.int(6) }).value}`;
    } else if (choice === 2 && sentWithReference.length > 0) {
      const outcome = engine.run({ op: 'transaction.create', ...random.pick(sentWithReference) });
      label = outcome.ok ? (outcome.value.created ? outcome.value.transaction.status : 'retry') : outcome.rejection.code;
    } else {
      const pickBalance = (): string => (ids.length > 0 && random.int(2) === 0 ? random.pick(ids) : random.pick(names));
      const reference = random.int(5) === 0 && usedReferences.length > 0 ? random.pick(usedReferences) : random.int(3) === 0 ? `r${step}` : '';
      if (reference !== '') usedReferences.push(reference);
      const command = transfer({
        source: pickBalance(), destination: pickBalance(), currency: random.int(5) === 0 ? 'EUR' : 'USD',
        precise_amount: BigInt(1 + random.int(500)), reference, allow_overdraft: random.int(4) === 0, skip_queue: random.int(3) === 0,
      });
      if (reference !== '') sentWithReference.push(command);
      const outcome = engine.run({ op: 'transaction.create', ...command });
      label = outcome.ok ? (outcome.value.created ? outcome.value.transaction.status : 'retry') : outcome.rejection.code;
    }
    count(label);
    const violations = zeroSumViolations(engine.state);
    if (violations.length > 0) {
      t.fail(`step ${step} (${label}) broke zero-sum: ${violations.join('; ')}`);
      return;
    }
  }
  engine.run({ op: 'queue.process', items_max: Number.MAX_SAFE_INTEGER }).value;
  t.equal(engine.view.queuedCount(), 0, 'the queue empties');
  t.comment(`outcomes: ${[...outcomes].map(([label, n]) => `${label}=${n}`).join(', ')}`);
  for (const code of ['APPLIED', 'QUEUED', 'retry', 'TXN_INSUFFICIENT_FUNDS', 'TXN_DUPLICATE_REFERENCE', 'TXN_SAME_SOURCE_DESTINATION', 'TXN_CURRENCY_MISMATCH', 'QUEUE_BACKPRESSURE']) {
    t.ok((outcomes.get(code) ?? 0) > 0, `the history exercised ${code}`);
  }

  await t.test('every balance equals the fold of its applied transactions', async (t) => {
    const folded = new Map<string, bigint>();
    for (const record of fixture.store.byId.values()) {
      if (record.status !== 'APPLIED') continue;
      folded.set(record.source, (folded.get(record.source) ?? 0n) - record.precise_amount);
      folded.set(record.destination, (folded.get(record.destination) ?? 0n) + record.precise_amount);
    }
    const mismatches = [...engine.state.balances.values()].filter((balance) => balanceOf(engine, balance.balance_id) !== (folded.get(balance.balance_id) ?? 0n));
    t.same(mismatches.map((balance) => balance.balance_id), []);
    const overdrawn = new Set<string>();
    for (const record of fixture.store.byId.values()) if (record.status === 'APPLIED' && record.allow_overdraft) overdrawn.add(record.source);
    const negative = [...engine.state.balances.keys()].filter((balanceId) => balanceOf(engine, balanceId) < 0n && !overdrawn.has(balanceId));
    t.same(negative, [], 'only overdrafts make balances negative');
  });

  await t.test('queued transactions were applied in arrival order per source', async (t) => {
    const arrival = new Map<string, string[]>();
    const applied = new Map<string, string[]>();
    for (const event of log.events) {
      for (const record of event.transactions ?? []) {
        if (!record.skip_queue) {
          const list = record.status === 'QUEUED' ? arrival : applied;
          list.set(record.source, [...(list.get(record.source) ?? []), record.transaction_id]);
        }
      }
    }
    const outOfOrder = [...arrival].filter(([source, order]) => (applied.get(source) ?? []).join() !== order.join());
    t.same(outOfOrder.map(([source]) => source), [], 'the order of final records matches the order of arrival');
  });

  await t.test('replaying the log gives the same state', async (t) => {
    const replayed = new LedgerEngine({ clock: new FakeClock(0), ids: new CountingIds(), log: new MemoryLog(), transactions: new MemoryTransactionStore() });
    for (const event of log.events) replayed.replay(event);
    t.same(balanceAmounts(replayed.state), balanceAmounts(engine.state), 'balances');
    t.same([...replayed.state.ledgers.keys()], [...engine.state.ledgers.keys()], 'ledgers');
    t.equal(replayed.view.queuedCount(), engine.view.queuedCount(), 'queue');
  });
});
