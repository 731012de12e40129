// Which deliveries each kind of logged event calls for, over events made by the real engine (in-memory
// log and store): queued, synchronous, scheduled, holds and their commit/void, splits, refunds, bulk,
// metadata edits. Also: event ids are stable functions of (seq, record, hook, type).

import t from 'tap';
import type { LedgerEvent } from '../engine/events.js';
import { LedgerEngine } from '../engine/ledger-engine.js';
import { MemoryTransactionStore } from '../lookups/memory-transaction-store.js';
import type { IdPrefix } from '../engine/ports.js';
import { deliveryEventId, hookEventName, transactionChanges } from '../hooks/hook-deliveries.js';
import { hookBody, hookHeaders, hookSignature } from '../hooks/hook-payload.js';
import { validateTransaction } from '../http/transaction-commands.js';
import { MemoryLog } from '../wal/memory-log.js';

function engineForTest(): { engine: LedgerEngine; log: MemoryLog; clock: { ms: number } } {
  const clock = { ms: Date.UTC(2030, 0, 1) };
  let counter = 0;
  const ids = { next: (prefix: IdPrefix) => `${prefix}_${String((counter += 1)).padStart(8, '0')}` };
  const log = new MemoryLog();
  const engine = new LedgerEngine({ clock: { now: () => clock.ms }, ids, log, transactions: new MemoryTransactionStore() });
  engine.run({ op: 'genesis.ensure' });
  return { engine, log, clock };
}

function transfer(body: Record<string, unknown>) {
  const parsed = validateTransaction({
    description: 'test', precise_amount: 100, currency: 'USD', source: '@a', destination: '@b', allow_overdraft: true, ...body,
  });
  return parsed.command;
}

/** `status:TYPES` per record of every event logged since `from`, e.g. `QUEUED:PRE`, `APPLIED:PRE+POST`. */
function summary(log: MemoryLog, from: number): string[][] {
  return log.events.slice(from).map((event: LedgerEvent) => transactionChanges(event).map((change) =>
    `${change.record.status}:${change.types.map((type) => type.slice(0, type.indexOf('_'))).join('+')}`));
}

t.test('queued: PRE when queued, POST when applied', async (t) => {
  const { engine, log } = engineForTest();
  const from = log.events.length;
  t.ok(engine.run({ op: 'transaction.create', ...transfer({}) }).ok);
  engine.run({ op: 'queue.process', items_max: 10 }).value;
  t.same(summary(log, from), [['QUEUED:PRE'], ['APPLIED:POST']]);
});

t.test('synchronous: PRE and POST from the one event', async (t) => {
  const { engine, log } = engineForTest();
  const from = log.events.length;
  t.ok(engine.run({ op: 'transaction.create', ...transfer({ skip_queue: true }) }).ok);
  t.same(summary(log, from), [['APPLIED:PRE+POST']]);
  const rejected = engine.run({ op: 'transaction.create', ...transfer({ skip_queue: true, allow_overdraft: false, source: '@empty', precise_amount: 5 }) });
  t.notOk(rejected.ok, 'a refused synchronous transaction is not logged, so it calls no hook');
  t.equal(log.events.length, from + 1);
});

t.test('a queued transaction rejected when its turn comes gets a POST transaction.rejected', async (t) => {
  const { engine, log } = engineForTest();
  engine.run({ op: 'transaction.create', ...transfer({ skip_queue: true, source: '@poor', precise_amount: 1 }) });
  const from = log.events.length;
  engine.run({ op: 'transaction.create', ...transfer({ source: '@poor', allow_overdraft: false, precise_amount: 50 }) });
  engine.run({ op: 'queue.process', items_max: 10 }).value;
  t.same(summary(log, from), [['QUEUED:PRE'], ['REJECTED:POST']]);
  const event = log.events.at(-1) as LedgerEvent;
  t.equal(hookEventName((event.transactions as NonNullable<LedgerEvent['transactions']>)[0]!.status), 'transaction.rejected');
});

t.test('holds: the hold once; commit and void children; the re-written hold is POST only', async (t) => {
  const { engine, log } = engineForTest();
  const from = log.events.length;
  const hold = engine.run({ op: 'transaction.create', ...transfer({ skip_queue: true, inflight: true }) });
  t.ok(hold.ok);
  const holdId = hold.ok ? hold.value.transaction.transaction_id : '';
  engine.run({ op: 'hold.act', transaction_id: holdId, action: 'commit', precise_amount: 40n, skip_queue: true });
  engine.run({ op: 'hold.act', transaction_id: holdId, action: 'void', precise_amount: 0n, skip_queue: false });
  engine.run({ op: 'queue.process', items_max: 10 }).value;
  t.same(summary(log, from), [
    ['INFLIGHT:PRE+POST'],
    ['INFLIGHT:POST', 'APPLIED:PRE+POST'],
    ['QUEUED:PRE'],
    ['VOID:POST', 'VOID:POST'],
  ]);
});

t.test('scheduled: PRE when scheduled, POST when it runs, even with skip_queue', async (t) => {
  const { engine, log, clock } = engineForTest();
  const from = log.events.length;
  const scheduledFor = new Date(clock.ms + 60_000).toISOString();
  t.ok(engine.run({ op: 'transaction.create', ...transfer({ skip_queue: true, scheduled_for: scheduledFor }) }).ok);
  clock.ms += 61_000;
  engine.run({ op: 'timers.fire' }).value;
  t.same(summary(log, from), [['SCHEDULED:PRE'], ['APPLIED:POST']]);
});

t.test('splits: the parent once before, every leg and the parent after', async (t) => {
  const { engine, log } = engineForTest();
  const from = log.events.length;
  const sources = [{ identifier: '@s1', distribution: '50%' }, { identifier: '@s2', distribution: 'left' }];
  t.ok(engine.run({ op: 'transaction.create', ...transfer({ source: undefined, sources, skip_queue: true }) }).ok);
  t.ok(engine.run({ op: 'transaction.create', ...transfer({ source: undefined, sources }) }).ok);
  engine.run({ op: 'queue.process', items_max: 10 }).value;
  t.same(summary(log, from), [
    ['APPLIED:POST', 'APPLIED:POST', 'APPLIED:PRE+POST'],
    ['QUEUED:PRE'],
    ['APPLIED:POST', 'APPLIED:POST', 'APPLIED:POST'],
  ]);
});

t.test('refunds and bulk follow the same rules; metadata edits call no hook', async (t) => {
  const { engine, log } = engineForTest();
  const original = engine.run({ op: 'transaction.create', ...transfer({ skip_queue: true }) });
  const originalId = original.ok ? original.value.transaction.transaction_id : '';
  const from = log.events.length;
  engine.run({ op: 'transaction.refund', transaction_id: originalId, skip_queue: true, description: '', meta_data: {} });
  engine.run({ op: 'transaction.bulk', transactions: [transfer({}), transfer({})], atomic: false, inflight: false, skip_queue: false });
  engine.run({ op: 'transaction.bulk', transactions: [transfer({ source: '@c' }), transfer({ source: '@c' })], atomic: true, inflight: false, skip_queue: false });
  engine.run({ op: 'metadata.update', entity_id: originalId, meta_data: { note: 'x' } });
  t.same(summary(log, from).slice(0, 4), [
    ['APPLIED:PRE+POST'],
    ['QUEUED:PRE', 'QUEUED:PRE'],
    ['APPLIED:PRE+POST', 'APPLIED:PRE+POST'],
    [],
  ]);
  t.equal(log.events[from + 3]?.type, 'metadata.updated');
});

t.test('event ids are stable and distinct', async (t) => {
  const { engine, log } = engineForTest();
  engine.run({ op: 'transaction.create', ...transfer({ skip_queue: true }) });
  const [change] = transactionChanges(log.events.at(-1) as LedgerEvent);
  if (!change) throw new Error('no change');
  const id = deliveryEventId(7, change, 'hook_a', 'POST_TRANSACTION');
  t.match(id, /^evt_[0-9a-f]{32}$/);
  t.equal(deliveryEventId(7, change, 'hook_a', 'POST_TRANSACTION'), id, 'the same inputs give the same id');
  t.not(deliveryEventId(8, change, 'hook_a', 'POST_TRANSACTION'), id, 'another seq');
  t.not(deliveryEventId(7, change, 'hook_b', 'POST_TRANSACTION'), id, 'another hook');
  t.not(deliveryEventId(7, change, 'hook_a', 'PRE_TRANSACTION'), id, 'another type');
});

t.test('payload and signature', async (t) => {
  const { engine, log } = engineForTest();
  engine.run({ op: 'transaction.create', ...transfer({ skip_queue: true, precise_amount: '123456789012345678901234567890' }) });
  const [change] = transactionChanges(log.events.at(-1) as LedgerEvent);
  if (!change) throw new Error('no change');
  const body = hookBody(change.record, 'POST_TRANSACTION');
  t.match(body, /^\{"event":"transaction\.applied","hook_type":"POST_TRANSACTION","data":\{/);
  t.match(body, /"precise_amount":123456789012345678901234567890,/, 'amounts exact, as digits');
  t.match(body, /"skip_queue":true/);
  const headers = hookHeaders('secret', 'hook_1', 'evt_1', body, 1_700_000_000_123);
  t.equal(headers['x-folio-timestamp'], '1700000000');
  t.equal(headers['x-folio-signature'], hookSignature('secret', '1700000000', body));
  t.equal(headers['x-hook-id'], 'hook_1');
  t.equal(headers['x-event-id'], 'evt_1');
  t.notOk('x-folio-signature' in hookHeaders('', 'hook_1', 'evt_1', body, 0), 'unsigned without a secret key');
});
