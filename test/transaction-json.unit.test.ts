// The transaction writer (the one way a transaction is rendered) against the wire shape written out
// plainly here as an object for the generic writer: the same text, for every kind of record: plain,
// rejected, split (with shares, legs, atomic), hold (with committed amount), bulk, big amounts, odd
// strings and metadata.

import t from 'tap';
import type { TransactionRecord } from '../engine/records.js';
import { toJsonText } from '../wire/json-text.js';
import { transactionJsonText, transactionListJson } from '../wire/transaction-json.js';
import { preciseToAmount, preciseToDecimalText } from '../wire/amounts.js';
import { timeText } from '../wire/views.js';
import { seededRandom } from './helpers/seeded-random.js';

/** The wire shape of a transaction (../shared/spec/interface.md 2.1 and ../shared/spec/decisions.md), field by field in wire order. */
function transactionView(record: TransactionRecord): Record<string, unknown> {
  const view: Record<string, unknown> = {
    transaction_id: record.transaction_id, parent_transaction: record.parent_transaction, source: record.source,
    destination: record.destination, reference: record.reference, currency: record.currency,
    amount: preciseToAmount(record.precise_amount, record.precision), amount_string: preciseToDecimalText(record.precise_amount, record.precision),
    precise_amount: record.precise_amount, precision: record.precision, description: record.description, status: record.status,
    hash: record.hash, allow_overdraft: record.allow_overdraft,
    overdraft_limit: record.overdraft_limit === undefined ? 0 : preciseToAmount(record.overdraft_limit, record.precision),
    inflight: record.inflight, skip_queue: record.skip_queue,
    created_at: timeText(record.created_at), scheduled_for: timeText(record.scheduled_for),
    inflight_expiry_date: timeText(record.inflight_expiry_date), inflight_commit_date: timeText(record.inflight_commit_date),
    // Blnk's effective_date: the one given, else when it was recorded.
    effective_date: timeText(record.effective_date ?? record.created_at),
    meta_data: record.meta_data,
  };
  const share = (item: NonNullable<TransactionRecord['sources']>[number]) => ({ identifier: item.identifier, distribution: item.distribution, precise_amount: item.precise_amount });
  if (record.rejection) view.rejection = record.rejection;
  if (record.sources) view.sources = record.sources.map(share);
  if (record.destinations) view.destinations = record.destinations.map(share);
  if (record.atomic !== undefined) view.atomic = record.atomic;
  if (record.legs) view.legs = record.legs;
  if (record.batch_id !== undefined) view.batch_id = record.batch_id;
  if (record.inflight && record.committed_amount !== undefined) view.precise_committed_amount = record.committed_amount;
  return view;
}

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
    { ...baseRecord(), effective_date: 1_700_000_000_000 },
    { ...baseRecord(), allow_overdraft: true, overdraft_limit: 60_000n },
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
    if (random.int(4) === 0) record.effective_date = 1_600_000_000_000 + random.int(1_000_000);
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
