// Integration tests for the ledger and balance routes of issue 2 against the real server: create, read,
// update and list ledgers; create, read, list and find balances; rebuild a balance from the log with
// ?from_source=true; and list paging (default 20, max 100, offset, newest first, no overlap or gaps).

import t from 'tap';
import { createBalance, expectError, fund, openServer, waitForEmptyQueue } from './helpers/http-fixture.js';
import type { TestServer } from './helpers/test-server.js';

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

t.test('ledgers', async (t) => {
  const server = await openServer(t);

  await t.test('the general ledger exists from the start', async (t) => {
    const response = await server.request('GET', '/ledgers/general_ledger_id');
    t.equal(response.status, 200);
    t.equal(response.body.ledger_id, 'general_ledger_id');
  });

  await t.test('POST /ledgers creates, GET /ledgers/:id reads', async (t) => {
    const created = await server.request('POST', '/ledgers', { name: 'Customer wallets', meta_data: { region: 'eu', tier: 2 } });
    t.equal(created.status, 201);
    t.match(created.body, { name: 'Customer wallets', meta_data: { region: 'eu', tier: 2 } });
    t.match(created.body.ledger_id, /^ldg_/);
    t.match(created.body.created_at, ISO_TIME);
    t.same(Object.keys(created.body).sort(), ['created_at', 'ledger_id', 'meta_data', 'name']);
    const read = await server.request('GET', `/ledgers/${created.body.ledger_id}`);
    t.equal(read.status, 200);
    t.same(read.body, created.body, 'reads back what was created');
    const bare = await server.request('POST', '/ledgers', { name: 'No metadata' });
    t.equal(bare.status, 201);
    t.same(bare.body.meta_data, {}, 'metadata defaults to an empty object');
    const nullMeta = await server.request('POST', '/ledgers', { name: 'Null metadata', meta_data: null });
    t.equal(nullMeta.status, 201);
    t.same(nullMeta.body.meta_data, {});
  });

  await t.test('PUT /ledgers/:id renames and merges metadata', async (t) => {
    const created = await server.request('POST', '/ledgers', { name: 'Before', meta_data: { keep: 1, change: 'old' } });
    const id = created.body.ledger_id as string;
    const renamed = await server.request('PUT', `/ledgers/${id}`, { name: 'After' });
    t.equal(renamed.status, 200);
    t.same(renamed.body, { ...created.body, name: 'After' });
    const merged = await server.request('PUT', `/ledgers/${id}`, { meta_data: { change: 'new', added: true } });
    t.equal(merged.status, 200);
    t.same(merged.body.meta_data, { keep: 1, change: 'new', added: true });
    t.equal(merged.body.name, 'After');
    t.equal(merged.body.created_at, created.body.created_at, 'creation time unchanged');
    const empty = await server.request('PUT', `/ledgers/${id}`, {});
    t.equal(empty.status, 200, 'an empty update is a no-op');
    t.same(empty.body, merged.body);
    t.same((await server.request('GET', `/ledgers/${id}`)).body, merged.body, 'the update is what a read returns');
  });

  await t.test('unknown ledgers: 404 LGR_NOT_FOUND', async (t) => {
    expectError(t, await server.request('GET', '/ledgers/ldg_missing'), 404, 'LGR_NOT_FOUND', 'GET');
    expectError(t, await server.request('PUT', '/ledgers/ldg_missing', { name: 'x' }), 404, 'LGR_NOT_FOUND', 'PUT');
  });

  await t.test('validation', async (t) => {
    const noName = await server.request('POST', '/ledgers', {});
    expectError(t, noName, 400, 'GEN_VALIDATION_ERROR', 'missing name');
    t.ok(noName.body.error_detail.details?.name, 'details name the field');
    expectError(t, await server.request('POST', '/ledgers', { name: '' }), 400, 'GEN_VALIDATION_ERROR', 'empty name');
    expectError(t, await server.request('POST', '/ledgers', { name: 'x', meta_data: [1] }), 400, 'GEN_VALIDATION_ERROR', 'metadata array');
    expectError(t, await server.request('PUT', '/ledgers/general_ledger_id', { name: 5 }), 400, 'GEN_VALIDATION_ERROR', 'update with a number name');
  });
});

t.test('balances', async (t) => {
  const server = await openServer(t);
  const ledger = (await server.request('POST', '/ledgers', { name: 'Wallets' })).body;

  await t.test('POST /balances creates a balance with every field at zero', async (t) => {
    // Balances may only name an identity that exists.
    const missing = await server.request('POST', '/balances', { ledger_id: ledger.ledger_id, currency: 'USD', identity_id: 'idt_unknown' });
    expectError(t, missing, 404, 'IDT_NOT_FOUND', 'unknown identity');
    const identity = server.runtime.engine.run({ op: 'identity.create', fields: identityFields() });
    if (!identity.ok) throw new Error('identity not created');
    const identityId = identity.value.identity_id;
    const created = await server.request('POST', '/balances', { ledger_id: ledger.ledger_id, currency: 'USD', identity_id: identityId, meta_data: { owner: 'ada' } });
    t.equal(created.status, 201);
    t.match(created.body.balance_id, /^bln_/);
    t.same(Object.keys(created.body).sort(), [
      'available_balance', 'balance', 'balance_id', 'created_at', 'credit_balance', 'currency', 'debit_balance', 'identity_id',
      'allocation_strategy', 'indicator', 'inflight_balance', 'inflight_credit_balance', 'inflight_debit_balance', 'ledger_id', 'meta_data',
      'track_fund_lineage', 'version',
    ].sort());
    t.match(created.body, {
      ledger_id: ledger.ledger_id, currency: 'USD', identity_id: identityId, indicator: '', meta_data: { owner: 'ada' },
      balance: 0, credit_balance: 0, debit_balance: 0, inflight_balance: 0, inflight_credit_balance: 0, inflight_debit_balance: 0,
      track_fund_lineage: false, allocation_strategy: 'FIFO',
    });
    t.match(created.body.created_at, ISO_TIME);
    const read = await server.request('GET', `/balances/${created.body.balance_id}`);
    t.equal(read.status, 200);
    t.same(read.body, created.body);
  });

  await t.test('unknown ledger: 404 LGR_NOT_FOUND; unknown balance: 404 BAL_NOT_FOUND', async (t) => {
    expectError(t, await server.request('POST', '/balances', { ledger_id: 'ldg_missing', currency: 'USD' }), 404, 'LGR_NOT_FOUND', 'create in unknown ledger');
    expectError(t, await server.request('GET', '/balances/bln_missing'), 404, 'BAL_NOT_FOUND', 'GET unknown');
    expectError(t, await server.request('GET', '/balances/bln_missing?from_source=true'), 404, 'BAL_NOT_FOUND', 'GET unknown from source');
  });

  await t.test('an indicator is unique per currency: 409 BAL_DUPLICATE_INDICATOR', async (t) => {
    await createBalance(server, { indicator: '@fees' });
    expectError(t, await server.request('POST', '/balances', { ledger_id: 'general_ledger_id', currency: 'USD', indicator: '@fees' }), 409, 'BAL_DUPLICATE_INDICATOR', 'same name and currency');
    const euro = await server.request('POST', '/balances', { ledger_id: 'general_ledger_id', currency: 'EUR', indicator: '@fees' });
    t.equal(euro.status, 201, 'another currency is another balance');
  });

  await t.test('GET /balances/indicator/:indicator/currency/:currency', async (t) => {
    const transfer = await fund(server, '@savings', 700);
    const found = await server.request('GET', '/balances/indicator/@savings/currency/USD');
    t.equal(found.status, 200);
    t.equal(found.body.balance_id, transfer.destination, 'the balance the transfer created');
    t.equal(found.body.indicator, '@savings');
    t.equal(found.body.ledger_id, 'general_ledger_id');
    t.equal(found.body.balance, 700);
    const encoded = await server.request('GET', '/balances/indicator/%40savings/currency/USD');
    t.equal(encoded.body.balance_id, transfer.destination, 'a percent-encoded @ finds it too');
    const named = await createBalance(server, { indicator: '@operating', currency: 'GBP' });
    t.equal((await server.request('GET', '/balances/indicator/@operating/currency/GBP')).body.balance_id, named.balance_id, 'explicitly named balances too');
    expectError(t, await server.request('GET', '/balances/indicator/@savings/currency/EUR'), 404, 'BAL_NOT_FOUND', 'other currency');
    expectError(t, await server.request('GET', '/balances/indicator/@nobody/currency/USD'), 404, 'BAL_NOT_FOUND', 'unknown name');
  });

  await t.test('?from_source=true rebuilds the balance from the log and agrees with the live one', async (t) => {
    const account = await createBalance(server);
    const id = account.balance_id as string;
    await fund(server, id, 1000);
    for (const amount of [100, 250]) {
      const response = await server.request('POST', '/transactions', { description: 'test', precise_amount: amount, currency: 'USD', source: id, destination: '@shop' });
      t.equal(response.status, 201);
    }
    await server.request('POST', '/transactions', { description: 'test', precise_amount: 5000, currency: 'USD', source: id, destination: '@shop' });
    await waitForEmptyQueue(server);
    const live = await server.request('GET', `/balances/${id}`);
    const rebuilt = await server.request('GET', `/balances/${id}?from_source=true`);
    t.equal(rebuilt.status, 200);
    t.ok(rebuilt.body.balance, 'wrapped as {balance: {...}}');
    t.same(rebuilt.body.balance, live.body, 'identical to the running balance');
    t.match(live.body, { balance: 650, credit_balance: 1000, debit_balance: 350 }, 'the rejected 5000 moved nothing');
    const plain = await server.request('GET', `/balances/${id}?from_source=false`);
    t.same(plain.body, live.body, 'from_source=false is the live read');
    expectError(t, await server.request('GET', `/balances/${id}?from_source=yes`), 400, 'GEN_VALIDATION_ERROR', 'from_source must be true or false');
  });

  await t.test('validation', async (t) => {
    const response = await server.request('POST', '/balances', { currency: 'not a currency!' });
    expectError(t, response, 400, 'GEN_VALIDATION_ERROR', 'missing ledger, bad currency');
    t.ok(response.body.error_detail.details?.ledger_id, 'details name ledger_id');
    t.ok(response.body.error_detail.details?.currency, 'details name currency');
  });
});

t.test('list paging: default 20, max 100, offset, newest first, no overlap or gaps', async (t) => {
  const server = await openServer(t);
  const ledgerIds: string[] = ['general_ledger_id'];
  for (let index = 0; index < 45; index += 1) {
    ledgerIds.push((await server.request('POST', '/ledgers', { name: `ledger ${index}` })).body.ledger_id);
  }
  const balanceIds: string[] = [];
  for (let index = 0; index < 45; index += 1) balanceIds.push((await createBalance(server)).balance_id);
  const newestLedgers = [...ledgerIds].reverse();
  const newestBalances = [...balanceIds].reverse();

  for (const [route, idField, newest] of [['/ledgers', 'ledger_id', newestLedgers], ['/balances', 'balance_id', newestBalances]] as const) {
    await t.test(route, async (t) => {
      const first = await server.request('GET', route);
      t.equal(first.status, 200);
      t.ok(Array.isArray(first.body), 'a JSON array');
      t.same(ids(first.body, idField), newest.slice(0, 20), 'default page: the 20 newest, newest first');
      t.same(ids((await server.request('GET', `${route}?offset=20`)).body, idField), newest.slice(20, 40), 'offset 20');
      t.same(ids((await server.request('GET', `${route}?limit=7&offset=3`)).body, idField), newest.slice(3, 10), 'limit 7 offset 3');
      const all = await collect(server, route, idField, 13);
      t.same(all, newest, 'pages of 13 cover everything once, in order');
      t.same((await server.request('GET', `${route}?offset=100000`)).body, [], 'an offset past the end is an empty page');
      const hundred = await server.request('GET', `${route}?limit=100`);
      t.equal(hundred.status, 200);
      t.ok(hundred.body.length <= 100);
      // A limit over the maximum means the default page; one that is not a whole number of at least 1
      // is refused, as Blnk refuses it here (api/api_coverage_test.go "Invalid limit" on /balances,
      // api/ledger.go GetAllLedgers), and so is a bad offset (its "Invalid offset").
      for (const query of ['limit=101', 'limit=%2B3000']) {
        const page = await server.request('GET', `${route}?${query}`);
        t.equal(page.status, 200, `${query}: the default page`);
        t.same(ids(page.body, idField), newest.slice(0, 20), `${query}: the 20 newest`);
      }
      t.same(ids((await server.request('GET', `${route}?limit=007`)).body, idField), newest.slice(0, 7), 'limit=007 is 7');
      for (const query of ['limit=0', 'limit=-1', 'limit=abc', 'limit=1.5', 'limit=', 'limit=1&limit=2', 'offset=-1', 'offset=1.5', 'offset=abc']) {
        expectError(t, await server.request('GET', `${route}?${query}`), 400, 'GEN_VALIDATION_ERROR', query);
      }
    });
  }
  await t.test('balances created by transfers appear in the list too', async (t) => {
    const transfer = await fund(server, '@newcomer', 1);
    const page = await server.request('GET', '/balances?limit=2');
    t.same(ids(page.body, 'balance_id').sort(), [transfer.source, transfer.destination].sort());
  });
});

function ids(records: Array<Record<string, unknown>>, field: string): unknown[] {
  return records.map((record) => record[field]);
}

async function collect(server: TestServer, route: string, field: string, limit: number): Promise<unknown[]> {
  const seen: unknown[] = [];
  for (let offset = 0; ; offset += limit) {
    const page = (await server.request('GET', `${route}?limit=${limit}&offset=${offset}`)).body as Array<Record<string, unknown>>;
    seen.push(...ids(page, field));
    if (page.length < limit) return seen;
  }
}

function identityFields(): import('../engine/records.js').IdentityFields {
  return {
    identity_type: 'individual', organization_name: '', first_name: 'Ada', last_name: 'Lovelace', other_names: '',
    gender: '', dob: 0, email_address: '', phone_number: '', nationality: '', category: '', street: '', city: '',
    state: '', country: '', post_code: '', meta_data: {},
  };
}
