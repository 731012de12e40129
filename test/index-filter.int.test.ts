// The filter API on a small, hand-made ledger: every operator on every kind of field, the errors a
// client can cause, paging without overlap or gap, exact amounts beyond 2^64, read-your-writes, and
// hostile field names and values that must never reach SQL.

import fs from 'node:fs';
import path from 'node:path';
import sqlite3 from 'sqlite3';
import t, { type Test } from 'tap';
import { startScopedServer } from './helpers/scoped-server.js';
import type { TestServer } from './helpers/test-server.js';

interface Fixture {
  server: TestServer;
  ledger: string;
  alice: string;
  bob: string;
  aliceIdentity: string;
  transactions: string[];
}

async function post(server: TestServer, route: string, body: unknown): Promise<any> {
  const response = await server.request('POST', route, body);
  if (response.status >= 300) throw new Error(`POST ${route}: ${response.status} ${response.text}`);
  return response.body;
}

async function fixture(t: Test): Promise<Fixture> {
  const server = await startScopedServer(t);
  const ledger = (await post(server, '/ledgers', { name: 'Operations', meta_data: { region: 'eu' } })).ledger_id;
  const aliceIdentity = (await post(server, '/identities', { identity_type: 'individual', first_name: 'Alice', last_name: 'Adams', email_address: 'alice@example.com', dob: '1990-05-01T00:00:00Z' })).identity_id;
  await post(server, '/identities', { identity_type: 'organization', organization_name: 'Acme Ltd', meta_data: { tier: 'gold', employees: 40 } });
  const alice = (await post(server, '/balances', { ledger_id: ledger, currency: 'USD', identity_id: aliceIdentity, meta_data: { tier: 'gold' } })).balance_id;
  const bob = (await post(server, '/balances', { ledger_id: ledger, currency: 'USD', meta_data: { tier: 'silver', score: 7 } })).balance_id;
  const transactions: string[] = [];
  const send = async (body: Record<string, unknown>): Promise<void> => {
    transactions.push((await post(server, '/transactions', { currency: 'USD', allow_overdraft: true, skip_queue: true, ...body })).transaction_id);
  };
  await send({ precise_amount: 100, source: '@world', destination: alice, description: 'Salary May', reference: 'pay-100%', meta_data: { channel: 'web', score: 3 } });
  await send({ precise_amount: 250, source: alice, destination: bob, description: 'rent share', reference: 'rent_1', meta_data: { channel: 'mobile', score: 10 } });
  await send({ precise_amount: '123456789012345678901234567890', source: '@world', destination: bob, description: 'very large', reference: 'big-1' });
  await send({ precise_amount: 75, source: bob, destination: alice, description: 'coffee', reference: 'COFFEE-2', inflight: true, meta_data: { channel: 'web', vip: true } });
  return { server, ledger, alice, bob, aliceIdentity, transactions };
}

async function filterIds(server: TestServer, collection: string, body: Record<string, unknown>): Promise<string[]> {
  const response = await server.request('POST', `/${collection}/filter`, { limit: 100, ...body });
  if (response.status !== 200) throw new Error(`filter ${JSON.stringify(body)}: ${response.status} ${response.text}`);
  const key = collection === 'transactions' ? 'reference' : collection === 'balances' ? 'balance_id' : collection === 'ledgers' ? 'name' : 'identity_id';
  return response.body.data.map((record: Record<string, string>) => record[key]).sort();
}

const where = (field: string, operator: string, value?: unknown, values?: unknown[]) => ({
  filters: [{ field, operator, ...(value === undefined ? {} : { value }), ...(values === undefined ? {} : { values }) }],
});

t.test('every operator on text, amount, time, flag and metadata fields', async (t) => {
  const { server, alice, bob } = await fixture(t);
  const refs = (body: Record<string, unknown>) => filterIds(server, 'transactions', body);
  t.same(await refs(where('reference', 'eq', 'rent_1')), ['rent_1']);
  t.same(await refs(where('reference', 'ne', 'rent_1')), ['COFFEE-2', 'big-1', 'pay-100%']);
  t.same(await refs(where('reference', 'in', undefined, ['rent_1', 'big-1', 'nope'])), ['big-1', 'rent_1']);
  t.same(await refs(where('reference', 'gt', 'pay')), ['pay-100%', 'rent_1']);
  t.same(await refs(where('reference', 'between', undefined, ['a', 'q'])), ['big-1', 'pay-100%']);
  t.same(await refs(where('description', 'like', '%ent%')), ['rent_1'], 'like is case-sensitive');
  t.same(await refs(where('description', 'like', 'Salary%')), ['pay-100%']);
  t.same(await refs(where('description', 'like', 'salary%')), []);
  t.same(await refs(where('description', 'ilike', 'SALARY%')), ['pay-100%'], 'ilike ignores case');
  t.same(await refs(where('reference', 'like', 'pay-100\\%')), ['pay-100%'], 'a backslash escapes %');
  t.same(await refs(where('reference', 'like', 'rent\\_%')), ['rent_1'], 'a backslash escapes _');
  t.same(await refs(where('reference', 'like', '____')), [], '_ matches exactly one character');
  t.same(await refs(where('reference', 'like', 'big-_')), ['big-1']);
  t.same(await refs(where('parent_transaction', 'isnull')), ['COFFEE-2', 'big-1', 'pay-100%', 'rent_1'], "'' is unset");
  t.same(await refs(where('parent_transaction', 'isnotnull')), []);

  t.same(await refs(where('precise_amount', 'gt', 100)), ['big-1', 'rent_1'], 'gt on amounts');
  t.same(await refs(where('precise_amount', 'gte', '100')), ['big-1', 'pay-100%', 'rent_1']);
  t.same(await refs(where('precise_amount', 'lt', 100)), ['COFFEE-2']);
  t.same(await refs(where('precise_amount', 'lte', 250)), ['COFFEE-2', 'pay-100%', 'rent_1']);
  t.same(await refs(where('precise_amount', 'eq', '123456789012345678901234567890')), ['big-1'], 'exact beyond 2^64');
  t.same(await refs(where('precise_amount', 'gt', '123456789012345678901234567889')), ['big-1']);
  t.same(await refs(where('precise_amount', 'gt', '123456789012345678901234567890')), []);
  t.same(await refs(where('precise_amount', 'between', undefined, [75, 100])), ['COFFEE-2', 'pay-100%']);
  t.same(await refs(where('precise_amount', 'in', undefined, [75, '250'])), ['COFFEE-2', 'rent_1']);
  t.same(await refs(where('precise_amount', 'ne', 75)), ['big-1', 'pay-100%', 'rent_1']);

  t.same(await refs(where('inflight', 'eq', true)), ['COFFEE-2']);
  t.same(await refs(where('inflight', 'ne', true)), ['big-1', 'pay-100%', 'rent_1']);
  t.same(await refs(where('inflight', 'in', undefined, [false])), ['big-1', 'pay-100%', 'rent_1']);
  t.same(await refs(where('status', 'eq', 'INFLIGHT')), ['COFFEE-2']);

  t.same(await refs(where('created_at', 'gt', '2000-01-01')), ['COFFEE-2', 'big-1', 'pay-100%', 'rent_1'], 'a bare date is midnight UTC');
  t.same(await refs(where('created_at', 'lt', '2000-01-01T00:00:00Z')), []);
  t.same(await refs(where('scheduled_for', 'isnull')), ['COFFEE-2', 'big-1', 'pay-100%', 'rent_1'], 'the zero time is unset');
  t.same(await refs(where('scheduled_for', 'eq', '0001-01-01T00:00:00Z')), ['COFFEE-2', 'big-1', 'pay-100%', 'rent_1']);

  t.same(await refs(where('balance_id', 'eq', alice)), ['COFFEE-2', 'pay-100%', 'rent_1'], 'either side');
  t.same(await refs(where('balance_id', 'ne', alice)), ['big-1'], 'ne holds for both sides');
  t.same(await refs(where('balance_id', 'in', undefined, [bob])), ['COFFEE-2', 'big-1', 'rent_1']);

  t.same(await refs(where('meta_data.channel', 'eq', 'web')), ['COFFEE-2', 'pay-100%']);
  t.same(await refs(where('meta_data.channel', 'ne', 'web')), ['rent_1'], 'a missing key is neither equal nor unequal');
  t.same(await refs(where('meta_data.score', 'gt', 5)), ['rent_1'], 'numbers compare as numbers');
  t.same(await refs(where('meta_data.score', 'eq', '10')), [], 'a number never equals a string');
  t.same(await refs(where('meta_data.vip', 'eq', true)), ['COFFEE-2']);
  t.same(await refs(where('meta_data.channel', 'isnull')), ['big-1']);
  t.same(await refs(where('meta_data.channel', 'isnotnull')), ['COFFEE-2', 'pay-100%', 'rent_1']);
  t.same(await refs(where('meta_data.channel', 'ilike', 'MOB%')), ['rent_1']);
  t.same(await refs(where('meta_data.score', 'between', undefined, [3, 9])), ['pay-100%']);
  t.same(await refs(where('meta_data.channel', 'in', undefined, ['mobile', 'fax'])), ['rent_1']);

  t.same(await refs({ filters: [{ field: 'meta_data.channel', operator: 'eq', value: 'web' }, { field: 'precise_amount', operator: 'gt', value: 80 }] }), ['pay-100%'], 'and by default');
  t.same(await refs({ logical_operator: 'or', filters: [{ field: 'reference', operator: 'eq', value: 'rent_1' }, { field: 'inflight', operator: 'eq', value: true }] }), ['COFFEE-2', 'rent_1']);
  t.same(await refs({ filters: [] }), ['COFFEE-2', 'big-1', 'pay-100%', 'rent_1'], 'no conditions: everything');
});

t.test('balances, ledgers and identities filter on their own fields', async (t) => {
  const { server, alice, bob, aliceIdentity } = await fixture(t);
  t.same(await filterIds(server, 'balances', where('identity_id', 'eq', aliceIdentity)), [alice]);
  t.same(await filterIds(server, 'balances', where('meta_data.tier', 'eq', 'silver')), [bob]);
  const big = await server.request('POST', '/balances/filter', where('balance', 'gt', '123456789012345678901234567000'));
  t.equal(big.status, 200);
  t.same(big.body.data.map((balance: { balance_id: string }) => balance.balance_id), [bob]);
  t.match(big.text, /"balance":123456789012345678901234568140,/, 'big balances come back digit for digit');
  const negative = await server.request('POST', '/balances/filter', { ...where('balance', 'lt', 0), sort_by: 'balance', sort_order: 'asc' });
  t.same(negative.body.data.map((balance: { indicator: string; balance_id: string }) => balance.indicator || balance.balance_id), ['@world', alice],
    'negative amounts compare and sort exactly (@world is furthest below zero, alice at -150)');
  t.same(await filterIds(server, 'balances', where('inflight_debit_balance', 'eq', 75)), [bob]);
  t.same(await filterIds(server, 'balances', where('available_balance', 'eq', '123456789012345678901234568065')), [bob], 'available = balance - inflight debit');
  t.same(await filterIds(server, 'ledgers', where('meta_data.region', 'eq', 'eu')), ['Operations']);
  t.same(await filterIds(server, 'ledgers', where('name', 'ilike', 'general%')), ['General Ledger']);
  t.same(await filterIds(server, 'identities', where('identity_type', 'eq', 'organization')).then((ids) => ids.length), 1);
  t.same(await filterIds(server, 'identities', where('dob', 'between', undefined, ['1990-01-01', '1990-12-31'])), [aliceIdentity]);
  t.same(await filterIds(server, 'identities', where('meta_data.employees', 'gte', 40)).then((ids) => ids.length), 1);
});

t.test('refusals name what is allowed', async (t) => {
  const { server } = await fixture(t);
  const refused = async (collection: string, body: unknown, code: string, pattern: RegExp): Promise<void> => {
    const response = await server.request('POST', `/${collection}/filter`, body);
    t.equal(response.status, 400, `${JSON.stringify(body)} -> 400`);
    t.equal(response.body.error_detail.code, code);
    t.match(response.body.error_detail.message, pattern);
  };
  await refused('transactions', where('nope', 'eq', 1), 'GEN_BAD_REQUEST', /allowed fields: transaction_id.*balance_id, meta_data\.<key>/);
  await refused('transactions', where('status', 'matches', 'x'), 'GEN_BAD_REQUEST', /allowed operators: eq, ne, gt, gte, lt, lte, in, between, like, ilike, isnull, isnotnull/);
  await refused('transactions', where('precise_amount', 'like', '1%'), 'GEN_BAD_REQUEST', /allowed operators for it: eq, ne/);
  await refused('transactions', where('inflight', 'gt', true), 'GEN_BAD_REQUEST', /allowed operators for it: eq, ne, in, isnull, isnotnull/);
  await refused('transactions', where('precise_amount', 'eq', 1.5), 'GEN_BAD_REQUEST', /whole number/);
  await refused('transactions', where('created_at', 'gt', 'yesterday'), 'GEN_BAD_REQUEST', /RFC 3339/);
  await refused('transactions', where('inflight', 'eq', 'yes'), 'GEN_BAD_REQUEST', /true or false/);
  await refused('transactions', where('status', 'in', undefined, []), 'GEN_BAD_REQUEST', /non-empty array/);
  await refused('transactions', where('status', 'between', undefined, ['A']), 'GEN_BAD_REQUEST', /\[low, high\]/);
  await refused('transactions', where('status', 'eq'), 'GEN_BAD_REQUEST', /single "value"/);
  await refused('transactions', where('meta_data.', 'eq', 1), 'GEN_BAD_REQUEST', /empty key/);
  await refused('transactions', where('meta_data.a"b', 'eq', 1), 'GEN_BAD_REQUEST', /double quotes/);
  await refused('transactions', where('meta_data.tier', 'eq', { nested: true }), 'GEN_BAD_REQUEST', /string, a number/);
  await refused('transactions', { filters: [], sort_by: 'description' }, 'GEN_BAD_REQUEST', /sortable \(indexed\) fields: transaction_id/);
  await refused('transactions', { filters: [], sort_order: 'sideways' }, 'GEN_BAD_REQUEST', /asc or desc/);
  await refused('transactions', { filters: [], logical_operator: 'xor' }, 'GEN_VALIDATION_ERROR', /'and' or 'or'/);
  await refused('balances', where('description', 'eq', 'x'), 'GEN_BAD_REQUEST', /for balances; allowed fields/);
  await refused('transactions', { limit: 5 }, 'GEN_VALIDATION_ERROR', /filters/);
  await refused('transactions', { filters: [], limit: 2.5 }, 'GEN_VALIDATION_ERROR', /limit/);
  // As in Blnk: a limit out of range is the default (20), a negative offset 0.
  for (const [body, label] of [[{ filters: [], limit: 101 }, 'limit 101'], [{ filters: [], limit: 0 }, 'limit 0'], [{ filters: [], offset: -1 }, 'offset -1']] as const) {
    const answer = await server.request('POST', '/transactions/filter', body);
    t.equal(answer.status, 200, label);
    t.ok(answer.body.data.length <= 20, `${label}: at most the default page`);
  }
  const malformed = await server.request('POST', '/transactions/filter', '{"filters": [');
  t.equal(malformed.body.error_detail.code, 'GEN_MALFORMED_REQUEST');
});

t.test('paging with limit and offset neither repeats nor skips a row', async (t) => {
  const { server, alice } = await fixture(t);
  for (let index = 0; index < 37; index += 1) {
    await post(server, '/transactions', { description: 'test', currency: 'USD', precise_amount: 5 + (index % 4), source: '@world', destination: alice, allow_overdraft: true, skip_queue: true, reference: `page-${index}` });
  }
  for (const sort of [{ sort_by: 'created_at', sort_order: 'desc' }, { sort_by: 'precise_amount', sort_order: 'asc' }, { sort_by: 'status', sort_order: 'desc' }]) {
    const seen: string[] = [];
    for (let offset = 0; ; offset += 7) {
      const page = await server.request('POST', '/transactions/filter', { filters: [{ field: 'reference', operator: 'like', value: 'page-%' }], ...sort, limit: 7, offset, include_count: true });
      t.equal(page.body.total_count, 37);
      if (page.body.data.length === 0) break;
      seen.push(...page.body.data.map((record: { reference: string }) => record.reference));
    }
    t.equal(seen.length, 37, `${sort.sort_by}: 37 rows over the pages`);
    t.equal(new Set(seen).size, 37, `${sort.sort_by}: no row twice`);
  }
});

t.test('a filter sees every write acknowledged before it was sent', async (t) => {
  const { server, alice } = await fixture(t);
  for (let round = 0; round < 40; round += 1) {
    const reference = `ryw-${round}`;
    await post(server, '/transactions', { description: 'test', currency: 'USD', precise_amount: 1, source: '@world', destination: alice, allow_overdraft: true, skip_queue: true, reference });
    const found = await server.request('POST', '/transactions/filter', where('reference', 'eq', reference));
    t.equal(found.body.data.length, 1, `round ${round} finds its own write`);
    const balance = await server.request('POST', '/balances/filter', where('balance_id', 'eq', alice));
    const live = await server.request('GET', `/balances/${alice}`);
    t.equal(balance.body.data[0].version, live.body.version, `round ${round}: the balance row is as current as the balance`);
  }
});

t.test('hostile field names and values never reach SQL', async (t) => {
  const { server } = await fixture(t);
  const hostile = [
    `'; DROP TABLE transactions; --`, `" OR 1=1 --`, `status) OR (1=1`, `created_at; DELETE FROM balances`,
    `meta_data.x') OR 1=1 --`, `meta_data.a]`, `meta_data.$`, `meta_data.x') UNION SELECT * FROM index_state --`,
    `meta_data.a b`, `meta_data.*`, `\u0000`, `reference/**/OR/**/1`, `row_id`, `extra`, `transactions_fts`,
  ];
  for (const field of hostile) {
    const response = await server.request('POST', '/transactions/filter', where(field, 'eq', `x' OR '1'='1`));
    t.ok(response.status === 400 || (response.status === 200 && response.body.data.length === 0), `${JSON.stringify(field)} is refused or matches nothing`);
    if (response.status === 400) t.equal(response.body.error_detail.code, 'GEN_BAD_REQUEST');
    const sorted = await server.request('POST', '/transactions/filter', { filters: [], sort_by: field });
    t.equal(sorted.status, 400, `sort_by ${JSON.stringify(field)} refused`);
    const operator = await server.request('POST', '/transactions/filter', { filters: [{ field: 'status', operator: field, value: 1 }] });
    t.equal(operator.status, 400, `operator ${JSON.stringify(field)} refused`);
  }
  const values = [`' OR '1'='1`, `%' --`, `"); DROP TABLE ledgers; --`, `*`, `[`, `\\`, '\u0000', 'ø'.repeat(500)];
  for (const value of values) {
    for (const operator of ['eq', 'like', 'ilike', 'gt']) {
      const response = await server.request('POST', '/transactions/filter', where('description', operator, value));
      t.equal(response.status, 200, `${operator} ${JSON.stringify(value).slice(0, 20)} answered`);
    }
    const meta = await server.request('POST', '/transactions/filter', where('meta_data.channel', 'in', undefined, [value, 'web']));
    t.equal(meta.body.data.length, 2, 'a hostile value in a list changes nothing else');
  }
  const everything = await server.request('POST', '/transactions/filter', { filters: [], include_count: true });
  t.equal(everything.body.total_count, 4, 'every transaction row is still there');
  // The index file itself is intact: its tables and rows are all present.
  await new Promise<void>((resolve, reject) => {
    const db = new sqlite3.Database(path.join(server.dataDir, 'index.sqlite'), sqlite3.OPEN_READONLY, (error) => {
      if (error) return reject(error);
      db.all(`SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('ledgers', 'balances', 'transactions', 'identities', 'index_state')`, (queryError, rows) => {
        db.close();
        if (queryError) return reject(queryError);
        t.equal(rows.length, 5, 'all tables still exist');
        resolve();
      });
    });
  });
  t.ok(fs.existsSync(path.join(server.dataDir, 'index.sqlite')));
});
