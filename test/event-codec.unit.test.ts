// The log's binary event format: every event of seeded random histories (ledgers, balances, identities,
// transfers, holds and their actions, refunds, bulk, metadata, API keys) comes back from a log record
// with the same content (canonical JSON: a field set to undefined and an absent one are the same, as
// they are to every reader), as do records with every optional field and amounts of any size; records
// written by the earlier msgpack format still read; and a freshly recorded transaction keeps its key
// order through the log, so replayed records render like live ones. An opened record decodes its
// events one at a time, as they are read, with the same result and the same refusals.

import { Packr } from 'msgpackr';
import t from 'tap';
import { canonicalJson } from '../engine/exact-json.js';
import type { LedgerEvent } from '../engine/events.js';
import type { TransactionRecord } from '../engine/records.js';
import { CorruptRecordError, decodeLogRecord, encodeLogRecord, GENESIS_CHECKSUM, openLogRecord } from '../wal/log-record-codec.js';
import { randomHistory } from './helpers/random-history.js';

function roundTrip(events: LedgerEvent[]): LedgerEvent[] {
  return decodeLogRecord(7, encodeLogRecord({ first_seq: 7, prev_checksum: GENESIS_CHECKSUM, events })).events;
}

const text = (value: unknown): string => JSON.stringify(value, (_key, item) => (typeof item === 'bigint' ? `${item}n` : item));

t.test('every event of random histories survives a log record', async (t) => {
  for (const seed of [1, 2, 3, 4]) {
    const events = randomHistory(seed, 400).log.events;
    const types = new Set(events.map((event) => event.type));
    const decoded = roundTrip(events);
    t.equal(decoded.length, events.length);
    const mismatches = events.filter((event, index) => canonicalJson(decoded[index]) !== canonicalJson(event));
    t.same(mismatches, [], `seed ${seed}: ${events.length} events of ${types.size} types, equal`);
    const single = events.map((event) => roundTrip([event])[0]);
    t.equal(canonicalJson(single), canonicalJson(events), `seed ${seed}: one event per record too`);
    // Plain records: split, batched and back-dated ones get optional fields at creation that a hold's
    // committed_amount follows later, so their key order depends on their history (values still equal).
    const fresh = events.flatMap((event) => event.transactions ?? [])
      .filter((record) => record.action === undefined && record.batch_id === undefined && !record.sources && !record.destinations && record.effective_date === undefined && record.overdraft_limit === undefined);
    const freshDecoded = roundTrip([{ type: 'transaction.applied', at: 1, transactions: fresh }])[0]?.transactions ?? [];
    t.equal(text(freshDecoded), text(fresh), `seed ${seed}: ${fresh.length} plain transactions keep their keys in order`);
  }
});

const FULL: TransactionRecord = {
  parent_transaction: 'txn_parent', description: 'héllo \u{1F600} "quoted"', status: 'INFLIGHT', allow_overdraft: true, inflight: true,
  skip_queue: false, created_at: 1_700_000_000_123, inflight_expiry_date: 1_700_000_100_000, inflight_commit_date: 0,
  scheduled_for: 1_700_000_000_000, meta_data: { z: 1, a: { nested: [1, 'two', null] }, big: 123456789012345678901234567890n },
  transaction_id: 'txn_1', source: '', destination: 'bln_dst', reference: 'INV-2024-17', currency: 'USD',
  precise_amount: 10n ** 30n, precision: 100n, hash: 'ab'.repeat(32),
  rejection: { code: 'TXN_INSUFFICIENT_FUNDS', reason: 'insufficient_funds', message: 'no' },
  sources: [{ identifier: '@a', balance_id: 'bln_a', distribution: '50%', precise_amount: 5n * 10n ** 29n }, { identifier: '@b', balance_id: 'bln_b', distribution: 'left', precise_amount: 5n * 10n ** 29n }],
  atomic: false, legs: ['txn_2', 'txn_3'], action: 'commit', committed_amount: (1n << 64n) + 5n, batch_id: 'bulk_1',
  effective_date: 1_600_000_000_000, overdraft_limit: 10n ** 25n,
  preconditions: [
    { balance_id: 'bln_a', version: 7 },
    { balance_id: '@b', field: 'available_balance', operator: '>=', precise_value: -(10n ** 30n) },
    { balance_id: 'bln_c', version: 0, field: 'inflight_debit_balance', operator: '==', precise_value: 0n },
  ],
};

t.test('records with every optional field and amounts beyond 64 bits', async (t) => {
  const event: LedgerEvent = {
    type: 'transaction.inflight',
    at: 1_700_000_000_123,
    balances: [{
      balance_id: 'bln_x', ledger_id: 'general_ledger_id', identity_id: 'idt_1', indicator: '@zürich', currency: 'CHF',
      credit_balance: 1n << 70n, debit_balance: (1n << 64n) - 1n, inflight_credit_balance: 0n, inflight_debit_balance: 3n,
      version: 4, created_at: 5, meta_data: { k: 'v' },
    }],
    transactions: [FULL, { ...FULL, destinations: FULL.sources, sources: undefined, atomic: true, batch_id: undefined }],
    postings: [
      { balance_id: 'bln_a', field: 'inflight_debit', amount: -(1n << 65n) },
      { balance_id: 'bln_b', field: 'inflight_credit', amount: 0n },
      { balance_id: 'bln_b', field: 'credit', amount: 7n, effective_at: 1_600_000_000_000 },
    ],
    ledgers: [{ ledger_id: 'ldg_1', name: 'L', created_at: 1, meta_data: {} }],
    balance_meta: [{ balance_id: 'bln_x', meta_data: { a: 1 } }],
    deleted_identities: ['idt_2'],
    deleted_hooks: ['hook_1'],
    monitors: [{
      monitor_id: 'mon_1', balance_id: 'bln_x', description: 'd', call_back_url: '', created_at: 9,
      condition: { field: 'balance', operator: '>=', precise_value: -(1n << 70n), precision: 100n },
    }],
    deleted_monitors: ['mon_2'],
    batch: { batch_id: 'bulk_1', status: 'failed', transaction_count: 1, error: 'transaction 1: no. Previous transactions were not rolled back.' },
    system_errors: [{ message: 'hook hook_1: given up' }],
  };
  event.monitor_alerts = [{ monitor: event.monitors![0]!, balance: event.balances![0]! }];
  const [decoded] = roundTrip([event]);
  t.equal(canonicalJson(decoded), canonicalJson(event));
  t.equal(decoded?.transactions?.[0]?.committed_amount, (1n << 64n) + 5n, 'amounts stay bigint');
  t.equal(decoded?.postings?.[0]?.amount, -(1n << 65n));
  t.equal(decoded?.transactions?.[1]?.sources, undefined, 'an absent field stays absent');
  t.equal(decoded?.transactions?.[1]?.batch_id, undefined);
  t.equal(decoded?.postings?.[2]?.effective_at, 1_600_000_000_000, 'a back-dated posting keeps its time');
  t.equal(decoded?.postings?.[1]?.effective_at, undefined, 'and the others have none');
  t.equal(decoded?.transactions?.[0]?.effective_date, 1_600_000_000_000);
  t.equal(decoded?.transactions?.[0]?.overdraft_limit, 10n ** 25n, 'an overdraft limit stays exact');
  t.equal(decoded?.monitor_alerts?.[0]?.monitor.condition.precise_value, -(1n << 70n), 'monitors keep exact thresholds');
});

t.test('an event read without its transaction records is the whole event without them', async (t) => {
  const withoutTransactions = (event: LedgerEvent): LedgerEvent => {
    const { transactions: _dropped, ...rest } = event;
    return rest;
  };
  const big: LedgerEvent = {
    type: 'transaction.applied', at: 3,
    // Every optional part of a transaction record, amounts beyond 64 bits, text beyond one byte a character.
    transactions: [FULL, { ...FULL, destinations: FULL.sources, sources: undefined, committed_amount: undefined, batch_id: undefined }, { ...FULL, meta_data: {} }],
    postings: [{ balance_id: 'bln_a', field: 'debit', amount: -(1n << 70n), effective_at: 2 }, { balance_id: 'bln_b', field: 'credit', amount: 1n << 70n }],
    balance_meta: [{ balance_id: 'bln_a', meta_data: { k: 'v' } }],
  };
  for (const seed of [1, 2, 3, 4]) {
    const events = [...randomHistory(seed, 400).log.events, big];
    const record = encodeLogRecord({ first_seq: 7, prev_checksum: GENESIS_CHECKSUM, events });
    const skipped = decodeLogRecord(7, record, { transactions: false }).events;
    const mismatches = events.filter((event, index) => canonicalJson(skipped[index]) !== canonicalJson(withoutTransactions(event)));
    t.same(mismatches, [], `seed ${seed}: ${events.length} events, the same but for their transaction records`);
  }
});

t.test('new event types are numbered after the old ones', async (t) => {
  // Every type has its code by position; a log written before monitors existed reads the same.
  const old = roundTrip([{ type: 'hook.deleted', at: 1, deleted_hooks: ['hook_1'] }]);
  t.equal(old[0]?.type, 'hook.deleted');
  for (const type of ['balance_monitor.created', 'balance_monitor.updated', 'balance_monitor.deleted', 'system.error'] as const) {
    t.equal(roundTrip([{ type, at: 1 }])[0]?.type, type);
  }
});

t.test('records written in the earlier msgpack format still read', async (t) => {
  const events = randomHistory(9, 120).log.events;
  const payload = new Packr({ useRecords: true, useBigIntExtension: true }).pack({ first_seq: 3, prev_checksum: GENESIS_CHECKSUM, events });
  const { createHash } = await import('node:crypto');
  const record = Buffer.concat([createHash('sha256').update(payload).digest(), payload]);
  const logRecord = decodeLogRecord(3, record);
  t.equal(canonicalJson(logRecord.events), canonicalJson(events));
  t.equal(logRecord.last_seq, 3 + events.length - 1);
});

t.test('a record cut short or with bytes past its events is refused', async (t) => {
  const events = randomHistory(5, 60).log.events;
  const record = encodeLogRecord({ first_seq: 1, prev_checksum: GENESIS_CHECKSUM, events });
  const { createHash } = await import('node:crypto');
  const reseal = (payload: Buffer): Buffer => Buffer.concat([createHash('sha256').update(payload).digest(), payload]);
  t.throws(() => decodeLogRecord(1, reseal(record.subarray(32, record.length - 3))), /corrupt/, 'cut short (checksum resealed)');
  t.throws(() => decodeLogRecord(1, reseal(Buffer.concat([record.subarray(32), Buffer.from([0])]))), /corrupt/, 'trailing bytes (checksum resealed)');
});

t.test('an opened record gives the same events one at a time, and refuses the same damage', async (t) => {
  const events = randomHistory(6, 200).log.events;
  const record = encodeLogRecord({ first_seq: 11, prev_checksum: GENESIS_CHECKSUM, events });
  const opened = openLogRecord(11, record);
  t.equal(opened.last_seq, 11 + events.length - 1, 'the header is read without decoding the events');
  t.ok(opened.checksum.equals(decodeLogRecord(11, record).checksum));
  const iterator = opened.events();
  const first = iterator.next();
  t.equal(canonicalJson(first.value), canonicalJson(events[0]), 'the first event comes before the rest are decoded');
  t.equal(canonicalJson([first.value, ...iterator]), canonicalJson(events), 'all of them, in order');
  t.equal(canonicalJson([...opened.events()]), canonicalJson(events), 'and again from the start');

  const { createHash } = await import('node:crypto');
  const reseal = (payload: Buffer): Buffer => Buffer.concat([createHash('sha256').update(payload).digest(), payload]);
  const cut = openLogRecord(11, reseal(record.subarray(32, record.length - 3)));
  const read: unknown[] = [];
  t.throws(() => {
    for (const event of cut.events()) read.push(event);
  }, CorruptRecordError, 'a record cut short fails when its broken event is reached');
  t.equal(read.length, events.length - 1, 'the events before it were whole');
  t.throws(() => openLogRecord(11, Buffer.concat([record.subarray(0, 40), Buffer.from([1])])), /checksum mismatch/, 'damage is still caught before any event');
  t.throws(() => openLogRecord(12, record), /header does not match/, 'a record under another key');
});

t.test('transactions sharing one metadata object (a split\'s legs) write the bytes of their own copies', async (t) => {
  const shared = { QUEUED_PARENT_TRANSACTION: 'txn_parent', note: 'séance', big: 10n ** 25n };
  const leg = (id: string, meta: TransactionRecord['meta_data']): TransactionRecord => ({ ...FULL, transaction_id: id, meta_data: meta });
  const other = { kind: 'other' };
  // Shared, then another object, then the shared one again, then empty: each record gets its own metadata.
  const withShared = [leg('txn_a', shared), leg('txn_b', shared), leg('txn_c', other), leg('txn_d', shared), leg('txn_e', {})];
  const withCopies = withShared.map((record) => ({ ...record, meta_data: { ...record.meta_data } }));
  const event = (transactions: TransactionRecord[]): LedgerEvent => ({ type: 'transaction.applied', at: 1, transactions });
  const sharedBytes = encodeLogRecord({ first_seq: 1, prev_checksum: GENESIS_CHECKSUM, events: [event(withShared)] });
  const copiedBytes = encodeLogRecord({ first_seq: 1, prev_checksum: GENESIS_CHECKSUM, events: [event(withCopies)] });
  t.ok(sharedBytes.equals(copiedBytes), 'the same bytes');
  const decoded = roundTrip([event(withShared)])[0]?.transactions ?? [];
  t.same(decoded.map((record) => record.meta_data), [shared, shared, other, shared, {}], 'each record reads back its own metadata');
});
