// Unit tests of the index's building blocks: sortable amount keys keep numeric order at any size, rows
// round-trip records exactly, LIKE patterns become the equivalent GLOB, and compiled SQL never contains
// client text (field names come from the catalogue, values and metadata paths are parameters).

import t from 'tap';
import type { TransactionRecord } from '../engine/records.js';
import { compileFilter } from '../index/filter-compiler.js';
import { likeToGlob } from '../index/predicates.js';
import { toJsonText as metaText } from '../engine/exact-json.js';
import { balanceFromRow, balanceRow, transactionFromRow, transactionRow } from '../index/record-rows.js';
import { LAYOUTS } from '../index/index-schema.js';
import { compileSearch } from '../index/search-compiler.js';
import { countFacets, FACET_RECORDS_MAX } from '../index/search-facets.js';
import { groupHits, GROUP_RECORDS_MAX } from '../index/search-groups.js';
import { SearchRefusal } from '../index/search-refusal.js';
import type { SqliteConnection } from '../index/sqlite-connection.js';
import { amountFromKey, amountKey } from '../index/sortable-amount.js';
import { seededRandom } from './helpers/query-dataset.js';

const SEED = Number(process.env.FOLIO_SEED ?? Date.now() % 1_000_000);

t.test(`amount keys sort as the numbers do (seed ${SEED})`, async (t) => {
  const next = seededRandom(SEED);
  const values: bigint[] = [0n, 1n, -1n, 9n, 10n, -9n, -10n, 10n ** 40n - 1n, -(10n ** 40n) + 1n, 10n ** 98n];
  for (let index = 0; index < 2_000; index += 1) {
    const digits = 1 + Math.floor(next() * 45);
    let text = '';
    for (let digit = 0; digit < digits; digit += 1) text += Math.floor(next() * 10);
    values.push((next() < 0.4 ? -1n : 1n) * BigInt(text));
  }
  const byNumber = [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const byKey = [...values].sort((a, b) => Buffer.compare(Buffer.from(amountKey(a)), Buffer.from(amountKey(b))));
  t.same(byKey, byNumber, `key order is numeric order (seed ${SEED})`);
  for (const value of values) if (amountFromKey(amountKey(value)) !== value) t.fail(`round trip of ${value}`);
  t.throws(() => amountKey(10n ** 100n), RangeError);
});

t.test('rows round-trip records exactly', async (t) => {
  const record: TransactionRecord = {
    transaction_id: 'txn_1', parent_transaction: 'txn_0', source: 'bln_a', destination: '', reference: 'r', currency: 'USD',
    precise_amount: 123456789012345678901234567890n, precision: 1000000000000000000n, description: 'd', status: 'INFLIGHT', hash: 'h',
    allow_overdraft: true, inflight: true, skip_queue: false, created_at: 1700000000123, inflight_expiry_date: 0, inflight_commit_date: 5,
    scheduled_for: 0, meta_data: { big: 99999999999999999999n, list: [1, 'a', null, { x: true }], '__proto__': 'own key' },
    rejection: { code: 'TXN_INSUFFICIENT_FUNDS', reason: 'insufficient_funds', message: 'm' }, committed_amount: 7n, batch_id: 'bulk_1', atomic: true, legs: ['txn_2'],
    destinations: [{ identifier: '@x', balance_id: 'bln_x', distribution: '50%', precise_amount: 5n }], action: 'commit',
  };
  const row = Object.fromEntries(LAYOUTS.transactions.columns.map((column, index) => [column, transactionRow(record)[index] ?? null]));
  t.same(transactionFromRow(row), record);
  t.equal(typeof row.meta_data, 'string');
  t.match(row.meta_data as string, /"big":99999999999999999999/, 'json_extract sees the digits');
  const balance = {
    balance_id: 'bln_1', ledger_id: 'l', identity_id: '', indicator: '@x', currency: 'USD', credit_balance: 5n, debit_balance: 10n ** 30n,
    inflight_credit_balance: 0n, inflight_debit_balance: 3n, version: 9, created_at: 1, meta_data: {},
  };
  const balanceColumns = Object.fromEntries(LAYOUTS.balances.columns.map((column, index) => [column, balanceRow(balance)[index] ?? null]));
  t.same(balanceFromRow(balanceColumns), balance);
  t.equal(amountFromKey(balanceColumns.balance as string), 5n - 10n ** 30n, 'the derived balance column');
  t.equal(amountFromKey(balanceColumns.available_balance as string), 5n - 10n ** 30n - 3n);
});

t.test('metadata text is what JSON.stringify writes whenever there is no bigint', async (t) => {
  const samples: unknown[] = [
    {}, { a: 1, b: 'x', c: null, d: [1, { e: false }], f: 1.5e-7, g: -0, h: 1e21 }, { '__proto__': 1, '10': 'n', 'a"b': '\u0001\ud800' },
    { nested: { deeper: { list: [[], {}, '', 'ünï'] } } }, { infinite: Number.POSITIVE_INFINITY, gap: [undefined, 2] },
  ];
  for (const sample of samples) t.equal(metaText(sample), JSON.stringify(sample), JSON.stringify(sample));
  t.equal(metaText({ big: 12345678901234567890n }), '{"big":12345678901234567890}', 'bigints as plain digits');
});

t.test('LIKE patterns become equivalent GLOB patterns', async (t) => {
  t.equal(likeToGlob('%abc_'), '*abc?');
  t.equal(likeToGlob('a*b?c[d]'), 'a[*]b[?]c[[]d]');
  t.equal(likeToGlob('100\\%\\_\\\\'), '100%_\\');
  t.equal(likeToGlob('trailing\\'), 'trailing\\');
});

t.test('client text never reaches SQL text', async (t) => {
  const hostile = `x'); DROP TABLE transactions; --`;
  const compiled = compileFilter('transactions', {
    filters: [
      { field: `meta_data.${hostile}`, operator: 'eq', value: hostile },
      { field: 'description', operator: 'like', value: hostile },
      { field: 'reference', operator: 'in', values: [hostile, hostile] },
    ],
    logical_operator: 'or', sort_by: 'reference', sort_order: 'ASC', include_count: true, limit: 5, offset: 0,
  });
  t.ok(compiled.ok);
  if (!compiled.ok) return;
  for (const fragment of [compiled.value.select, compiled.value.count]) {
    t.notMatch(fragment?.sql, /DROP|x'/, 'no client text in the SQL');
    t.ok(fragment?.params.some((param) => typeof param === 'string' && param.includes('DROP')), 'it travels as a parameter');
  }
  const search = compileSearch('transactions', { q: `"${hostile}" OR *`, filter_by: `reference:=\`${hostile.replaceAll('`', '')}\``, sort_by: '', page: 1, per_page: 5 });
  t.ok(search.ok);
  if (search.ok) {
    t.notMatch(search.value.where.sql + search.value.order, /DROP/);
    // Transactions' words are confined to the searched columns (their full-text table also holds terms).
    t.match(search.value.match, /^\{reference description meta_data\} : \(("(?:[^"]|"")*" AND )*"(?:[^"]|"")*"\*\)$/, 'every word is a quoted FTS5 phrase');
    t.match(search.value.match, /^\{[a-z_ ]+\} : \("""x'\);" AND "DROP"/, 'quotes inside a word are doubled');
  }
  // A filter on a balance joins the words as a term: the value only ever appears hex-coded.
  const balance = compileSearch('transactions', { q: 'rent', filter_by: `source:=\`${hostile.replaceAll('`', '')}\` && status:=APPLIED`, sort_by: '', page: 1, per_page: 5 });
  t.ok(balance.ok);
  if (balance.ok) {
    t.match(balance.value.terms?.match, /^\(source_term : "[0-9a-f]+"\)$/, 'the source clause is a hex term');
    t.match(balance.value.terms?.where.sql, /status/, 'the other clause stays a filter');
    t.notMatch(balance.value.terms?.where.sql, /source/, 'the term is not also a filter');
    t.match(balance.value.where.sql, /source/, 'the whole request is still in where');
  }
  // query_by with ids, facets and groups on metadata: ids and paths travel as parameters too.
  const wide = compileSearch('transactions', {
    q: `bln_x ${hostile}`, query_by: 'description,source', filter_by: `reference:=a || reference:=\`${hostile.replaceAll('`', '')}\``,
    sort_by: '', page: 1, per_page: 5, facet_by: 'meta_data.kind', group_by: 'meta_data.kind',
  });
  t.ok(wide.ok);
  if (wide.ok) {
    t.notMatch(wide.value.where.sql, /DROP|bln_x/, 'words compared with ids are parameters');
    t.ok(wide.value.where.params.includes('bln_x'));
    t.same(wide.value.facets?.fields[0]?.value, { sql: 'json_extract(t.meta_data, ?)', params: ['$."kind"'] });
  }
  t.notOk(compileSearch('transactions', { q: '*', filter_by: '', sort_by: '', page: 1, per_page: 5, group_by: hostile }).ok, 'group_by names a field');
  const oddKey = compileSearch('transactions', { q: '*', filter_by: '', sort_by: '', page: 1, per_page: 5, group_by: `meta_data.${hostile}` });
  t.ok(oddKey.ok && !oddKey.value.group?.fields[0]?.value.sql.includes('DROP'), 'a metadata key is a bound path');
  for (const field of [hostile, 'row_id', 'extra', 'meta_data']) {
    const refused = compileFilter('transactions', { filters: [{ field, operator: 'eq', value: 1 }], limit: 1, offset: 0 });
    t.notOk(refused.ok, `${field} is not a field`);
  }
});

// Facets and groups read every record found: past their bounds the search is refused before any read.
t.test('facets and groups refuse searches past their bounds', async (t) => {
  const reader = {} as SqliteConnection;
  const plan = compileSearch('transactions', { q: '*', filter_by: '', sort_by: '', page: 1, per_page: 5, facet_by: 'status,currency', group_by: 'status' });
  if (!plan.ok) throw new Error(plan.message);
  const records = { sql: 'FROM transactions t', params: [] };
  await t.rejects(countFacets(reader, plan.value.facets!, records, FACET_RECORDS_MAX / 2 + 1), SearchRefusal);
  await t.rejects(countFacets(reader, plan.value.facets!, records, FACET_RECORDS_MAX / 2 + 1), /facet_by counts at most 1,000,000 values/);
  await t.rejects(groupHits(reader, 'transactions', { plan: plan.value, group: plan.value.group!, records, words: undefined, ranked: undefined }, GROUP_RECORDS_MAX + 1), /group_by groups at most 250,000 records/);
});
