// The snapshot's balance table on its own: records of every shape (fund lineage settings included)
// survive the binary form exactly,
// both indexes find every balance (ids and indicators in any script, including characters outside the
// Basic Multilingual Plane, whose UTF-16 order differs from their UTF-8 order), a table written from a
// table that was itself loaded keeps working, and a damaged trailer is refused rather than trusted.

import t from 'tap';
import { BalanceTable } from '../engine/balance-table.js';
import { indicatorKey } from '../engine/balance-table.js';
import type { BalanceRecord } from '../engine/records.js';
import { BalanceTableError, ColdBalanceTable, sortedByUtf8, writeBalanceTable } from '../snapshots/cold-balances.js';

function balance(index: number, fields: Partial<BalanceRecord> = {}): BalanceRecord {
  return {
    balance_id: `bln_${String(index).padStart(6, '0')}`,
    ledger_id: 'general_ledger_id',
    identity_id: '',
    indicator: '',
    currency: 'USD',
    credit_balance: 0n,
    debit_balance: 0n,
    inflight_credit_balance: 0n,
    inflight_debit_balance: 0n,
    version: 0,
    created_at: 1_700_000_000_000 + index,
    meta_data: {},
    ...fields,
  };
}

function tableOf(records: BalanceRecord[]): ColdBalanceTable {
  const table = new BalanceTable();
  for (const record of records) table.add({ ...record });
  const pieces: Buffer[] = [];
  writeBalanceTable(table, (bytes) => pieces.push(bytes));
  return new ColdBalanceTable(Buffer.concat(pieces));
}

const text = (value: unknown): string => JSON.stringify(value, (_key, item) => (typeof item === 'bigint' ? `${item}n` : item));

const SHAPES: BalanceRecord[] = [
  balance(5, { indicator: '@world', credit_balance: 1n, debit_balance: (1n << 64n) - 1n }),
  balance(3, { indicator: '@zürich', currency: 'CHF', inflight_debit_balance: 1n << 64n, inflight_credit_balance: 10n ** 40n }),
  balance(9, { indicator: '@\u{1F600}smile', credit_balance: 0n, debit_balance: 7n, version: 12 }),
  balance(1, { indicator: '@\uFFFDreplacement', identity_id: 'idt_1', meta_data: { note: 'hello', nested: { big: 123456789012345678901234567890n, list: [1, 'two'] } } }),
  balance(7, { ledger_id: 'ldg_other', meta_data: { z: 1, a: 2 } }),
  // Fund lineage settings: a byte after the metadata, present only when not the defaults.
  balance(11, { identity_id: 'idt_2', track_fund_lineage: true }),
  balance(12, { identity_id: 'idt_3', meta_data: { x: 1 }, track_fund_lineage: true, allocation_strategy: 'PROPORTIONAL' }),
  balance(13, { allocation_strategy: 'LIFO', meta_data: { big: 1n << 80n } }),
  balance(2, { indicator: '@world', currency: 'EUR', credit_balance: -5n }),
];

t.test('records round-trip exactly, found by id and by indicator', async (t) => {
  const table = tableOf(SHAPES);
  t.equal(table.count, SHAPES.length);
  t.equal(table.indicatorCount, SHAPES.filter((record) => record.indicator !== '').length);
  for (const [position, record] of SHAPES.entries()) {
    t.equal(text(table.read(position)), text(record), `${record.balance_id} reads back as written`);
    t.same(Object.keys(table.read(position).meta_data), Object.keys(record.meta_data), `${record.balance_id}: metadata keys keep their order`);
    t.equal(table.idAt(position), record.balance_id);
    t.equal(table.positionOf(record.balance_id), position, `${record.balance_id} found by id`);
    if (record.indicator !== '') {
      t.equal(table.positionOfIndicator(indicatorKey(record.indicator, record.currency)), position, `${record.indicator} ${record.currency} found`);
    }
  }
  t.equal(table.positionOf('bln_000004'), -1, 'an id between two others is not found');
  t.equal(table.positionOf('bln_999999'), -1, 'an id after all others is not found');
  t.equal(table.positionOf(''), -1, 'the empty id is not found');
  t.equal(table.positionOfIndicator(indicatorKey('@world', 'GBP')), -1, 'an indicator in another currency is not found');
});

t.test('keys sort in UTF-8 byte order, which differs from UTF-16 order past the surrogates', async (t) => {
  const keys = ['@\uFFFD', '@\u{1F600}', '@a', '@\u00E9'];
  const sorted = sortedByUtf8(keys).map((index) => keys[index]);
  t.same(sorted, ['@a', '@\u00E9', '@\uFFFD', '@\u{1F600}'], 'code point order');
  t.not([...keys].sort()[3], '@\u{1F600}', 'plain string sorting would put the emoji elsewhere');
});

t.test('a table written from a loaded table: cold records copied, hot ones encoded, new ones merged in', async (t) => {
  const first = tableOf(SHAPES);
  const state = new BalanceTable();
  state.attachCold(first);
  const touched = state.get('bln_000009') as BalanceRecord;
  touched.credit_balance += 1000n;
  touched.version += 1;
  state.add(balance(4, { indicator: '@new', credit_balance: 3n }));
  state.add(balance(0, { indicator: '@\u{1F680}rocket' }));
  const pieces: Buffer[] = [];
  writeBalanceTable(state, (bytes) => pieces.push(bytes));
  const second = new ColdBalanceTable(Buffer.concat(pieces));
  t.equal(second.count, SHAPES.length + 2);
  const expected = [...state.values()].map(text);
  t.same(Array.from({ length: second.count }, (_, position) => text(second.read(position))), expected, 'every record, in creation order');
  for (let position = 0; position < second.count; position += 1) {
    const record = second.read(position);
    t.equal(second.positionOf(record.balance_id), position, `${record.balance_id} found by id`);
    if (record.indicator !== '') t.equal(second.positionOfIndicator(indicatorKey(record.indicator, record.currency)), position, `${record.indicator} found`);
  }
  t.equal(second.read(second.positionOf('bln_000009')).credit_balance, 1000n, 'the change to a touched balance was written');
  t.equal(state.newestFirst(0, 2).map((record) => record.balance_id).join(), 'bln_000000,bln_000004', 'newest first without walking the rest');
  t.equal(state.newestFirst(2, 1)[0]?.balance_id, 'bln_000002', 'paging reaches into the cold balances');
});

t.test('a table without balances', async (t) => {
  const empty = tableOf([]);
  t.equal(empty.count, 0);
  t.equal(empty.positionOf('bln_000001'), -1);
  t.equal(empty.positionOfIndicator('@world\u0000USD'), -1);
});

t.test('a damaged trailer is refused', async (t) => {
  const pieces: Buffer[] = [];
  const table = new BalanceTable();
  table.add(balance(1));
  writeBalanceTable(table, (bytes) => pieces.push(bytes));
  const bytes = Buffer.concat(pieces);
  t.throws(() => new ColdBalanceTable(bytes.subarray(0, bytes.length - 1)), BalanceTableError, 'cut short');
  const lying = Buffer.from(bytes);
  const trailerText = lying.toString('latin1');
  const at = trailerText.lastIndexOf('"count":1');
  lying.write('"count":9', at, 'latin1');
  t.throws(() => new ColdBalanceTable(lying), BalanceTableError, 'a trailer promising more than the table holds');
});
