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
import { validateTransaction } from '../http/schemas/transaction-commands.js';
import { MemoryLog } from '../wal/memory-log.js';
import { loadConfig, notificationTarget } from '../server/config.js';

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
  const headers = hookHeaders('secret', { hookId: 'hook_1', hookType: 'POST_TRANSACTION' }, 'evt_1', body, 1_700_000_000_123);
  t.equal(headers['x-folio-timestamp'], '1700000000');
  t.equal(headers['x-folio-signature'], hookSignature('secret', '1700000000', body));
  t.equal(headers['x-hook-id'], 'hook_1');
  t.equal(headers['x-event-id'], 'evt_1');
  t.equal(headers['x-hook-type'], 'POST_TRANSACTION', "Blnk's hook type header");
  t.same([headers['x-blnk-signature'], headers['x-blnk-timestamp']], [headers['x-folio-signature'], '1700000000'], "Blnk's signature headers, the same signature");
  const unsigned = hookHeaders('', { hookId: 'hook_1' }, 'evt_1', body, 0);
  t.notOk('x-folio-signature' in unsigned || 'x-blnk-signature' in unsigned, 'unsigned without a secret key');
  const configured = hookHeaders('secret', { headers: { authorization: 'Bearer t', 'x-blnk-signature': 'forged', 'content-type': 'text/plain' } }, 'evt_1', body, 0);
  t.equal(configured.authorization, 'Bearer t', 'configured headers are sent');
  t.same([configured['x-blnk-signature'], configured['content-type']], [hookSignature('secret', '0', body), 'application/json'], 'but never in place of what Folio sets');
});

// Blnk's webhook headers (BLNK_WEBHOOK_HEADERS, a JSON object) as FOLIO_WEBHOOK_HEADERS: names lower-cased,
// values on one line, none of the headers Folio signs or sets, a bounded number.
t.test('the notification webhook takes headers of its own, checked', async (t) => {
  const env = { FOLIO_WEBHOOK_URL: 'https://hooks.example/blnk' };
  const config = loadConfig(undefined, { ...env, FOLIO_WEBHOOK_HEADERS: '{"Authorization":"Bearer t","Content-Type":"application/json"}' });
  t.same(notificationTarget(config)?.headers, { authorization: 'Bearer t' }, "Blnk's example: content-type is Folio's to set");
  for (const [headers, message] of [
    ['not json', /JSON object/], ['[1]', /JSON object/], ['{"X-Blnk-Signature":"x"}', /set by Folio itself/], ['{"x-folio-timestamp":"1"}', /set by Folio itself/],
    ['{"Host":"evil"}', /set by Folio itself/], ['{"bad name":"x"}', /not a header name/], ['{"x-a":"one\\r\\nx-b: two"}', /on one line/], ['{"x-a":1}', /on one line/],
    [JSON.stringify(Object.fromEntries(Array.from({ length: 17 }, (_, index) => [`x-h${index}`, 'v']))), /at most 16 headers/],
  ] as const) {
    t.throws(() => loadConfig(undefined, { ...env, FOLIO_WEBHOOK_HEADERS: headers }), message, headers);
  }
  t.same(notificationTarget(loadConfig(undefined, env))?.headers, {}, 'none by default');
});
