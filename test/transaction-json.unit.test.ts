// The direct transaction writer must produce exactly what the generic view and writer produce, for
// every kind of record: plain, rejected, split (with shares, legs, atomic), hold (with committed
// amount), bulk, big amounts, odd strings and metadata.

import t from 'tap';
import type { TransactionRecord } from '../engine/records.js';
import { toJsonText } from '../wire/json-text.js';
import { transactionJsonText, transactionListJson } from '../wire/transaction-json.js';
import { transactionView } from '../wire/views.js';
import { seededRandom } from './helpers/seeded-random.js';

function baseRecord(): TransactionRecord {
  return {
    transaction_id: 'txn_1', parent_transaction: '', source: 'bln_a', destination: 'bln_b', reference: 'ref_1',
    currency: 'USD', precise_amount: 1250n, precision: 100n, description: '', status: 'APPLIED', hash: 'h',
    allow_overdraft: false, inflight: false, skip_queue: true, created_at: 1_763_784_000_000, inflight_expiry_date: 0,
    inflight_commit_date: 0, scheduled_for: 0, meta_data: {},
  };
}

t.test('fixed cases match the generic writer', async (t) => {
  const cases: TransactionRecord[] = [
    baseRecord(),
    { ...baseRecord(), status: 'REJECTED', rejection: { code: 'TXN_INSUFFICIENT_FUNDS', reason: 'insufficient_funds', message: 'short' } },
    { ...baseRecord(), source: '', sources: [{ identifier: '@a', balance_id: 'bln_a', distribution: '50%', precise_amount: 625n }, { identifier: '@c', balance_id: 'bln_c', distribution: 'left', precise_amount: 625n }], atomic: true, legs: ['txn_2', 'txn_3'] },
    { ...baseRecord(), inflight: true, status: 'INFLIGHT', committed_amount: 300n, inflight_expiry_date: 1_763_785_000_000 },
    { ...baseRecord(), batch_id: 'bulk_1', precise_amount: 10n ** 39n, precision: 3n },
    { ...baseRecord(), description: 'quote " backslash \\ newline \n é 😀', reference: 'r\u0001', meta_data: { big: 2n ** 80n, nested: { list: [1, 'two', null] } } },
  ];
  for (const record of cases) t.equal(transactionJsonText(record), toJsonText(transactionView(record)));
  t.equal(transactionListJson(cases).text, toJsonText(cases.map(transactionView)), 'lists too');
});

t.test('seeded random records match the generic writer', async (t) => {
  const random = seededRandom(t, 'TRANSACTION_JSON_SEED');
  const texts = ['', 'x', 'é', '"', '\\', '\n', '😀', '\u2028', 'ref-42'];
  const pickText = (): string => random.pick(texts) + random.pick(texts);
  for (let round = 0; round < 2000; round += 1) {
    const record: TransactionRecord = {
      ...baseRecord(),
      description: pickText(),
      reference: pickText() || 'r',
      precise_amount: BigInt(random.int(1_000_000)) * (random.int(2) === 0 ? 1n : 10n ** 30n),
      precision: random.pick([1n, 100n, 7n, 10n ** 18n]),
      status: random.pick(['QUEUED', 'APPLIED', 'INFLIGHT', 'VOID', 'REJECTED', 'SCHEDULED'] as const),
      inflight: random.int(2) === 0,
      created_at: random.int(2) === 0 ? 0 : 1_700_000_000_000 + random.int(1_000_000),
    };
    if (random.int(3) === 0) record.committed_amount = BigInt(random.int(100));
    if (random.int(4) === 0) record.batch_id = 'bulk_x';
    if (random.int(4) === 0) record.legs = ['txn_a'];
    if (random.int(5) === 0) record.meta_data = { k: pickText(), n: random.int(10) };
    const fast = transactionJsonText(record);
    const generic = toJsonText(transactionView(record));
    if (fast !== generic) {
      t.equal(fast, generic, `round ${round}`);
      return;
    }
  }
  t.pass('2000 records agree');
});
