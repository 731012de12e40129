// Integration tests for the transaction routes of issue 2 against the real server: the synchronous and
// queued paths (201 QUEUED, then APPLIED or REJECTED on the same id), reads by id and reference, the
// TXN_* and BAL_* errors, idempotent retries and TXN_DUPLICATE_REFERENCE on both paths, exact amounts of
// any size digit for digit, and newest-first paging of the transaction list.

import { createHash } from 'node:crypto';
import t from 'tap';
import {
  checkZeroSum,
  createBalance,
  expectError,
  fund,
  openServer,
  waitForEmptyQueue,
  waitUntilDecided,
} from './helpers/http-fixture.js';

const TRANSACTION_FIELDS = [
  'allow_overdraft', 'amount', 'amount_string', 'created_at', 'currency', 'description', 'destination', 'effective_date', 'hash', 'inflight',
  'inflight_commit_date', 'inflight_expiry_date', 'meta_data', 'overdraft_limit', 'parent_transaction', 'precise_amount', 'precision', 'reference',
  'scheduled_for', 'skip_queue', 'source', 'status', 'transaction_id',
];

t.test('the synchronous path', async (t) => {
  const server = await openServer(t);
  const source = await createBalance(server);
  const destination = await createBalance(server);
  await fund(server, source.balance_id, 10_000);

  const response = await server.request('POST', '/transactions', {
    amount: 12.5, precision: 100, currency: 'USD', source: source.balance_id, destination: destination.balance_id,
    reference: 'sync-1', description: 'coffee', meta_data: { table: 4 }, skip_queue: true,
  });
  t.equal(response.status, 201);
  const record = response.body;
  t.same(Object.keys(record).sort(), TRANSACTION_FIELDS, 'the documented fields and nothing internal');
  t.match(record, {
    status: 'APPLIED', source: source.balance_id, destination: destination.balance_id, reference: 'sync-1', currency: 'USD',
    amount: 12.5, amount_string: '12.5', precise_amount: 1250, precision: 100, description: 'coffee', meta_data: { table: 4 },
    allow_overdraft: false, inflight: false, skip_queue: true, parent_transaction: '',
    scheduled_for: '0001-01-01T00:00:00Z', inflight_expiry_date: '0001-01-01T00:00:00Z', inflight_commit_date: '0001-01-01T00:00:00Z',
  });
  t.match(record.transaction_id, /^txn_/);
  const hashed = JSON.stringify(['1250', 'sync-1', 'USD', source.balance_id, destination.balance_id]);
  t.equal(record.hash, createHash('sha256').update(hashed).digest('hex'), 'hash is SHA-256 of the core details');

  t.same((await server.request('GET', `/transactions/${record.transaction_id}`)).body, record, 'GET by id');
  t.same((await server.request('GET', '/transactions/reference/sync-1')).body, record, 'GET by reference');
  t.equal((await server.request('GET', `/balances/${source.balance_id}`)).body.balance, 10_000 - 1250);
  t.equal((await server.request('GET', `/balances/${destination.balance_id}`)).body.balance, 1250);

  await t.test('a reference is generated when none is given', async (t) => {
    const generated = await server.request('POST', '/transactions', { description: 'test', precise_amount: 1, currency: 'USD', source: source.balance_id, destination: destination.balance_id, skip_queue: true });
    t.equal(generated.status, 201);
    t.type(generated.body.reference, 'string');
    t.not(generated.body.reference, '');
    t.equal((await server.request('GET', `/transactions/reference/${encodeURIComponent(generated.body.reference)}`)).body.transaction_id, generated.body.transaction_id);
  });

  await t.test('a reference with a slash is found through its encoded form', async (t) => {
    const slashed = await server.request('POST', '/transactions', { description: 'test', precise_amount: 1, currency: 'USD', source: source.balance_id, destination: destination.balance_id, skip_queue: true, reference: 'inv/2024/7' });
    t.equal(slashed.status, 201);
    t.equal((await server.request('GET', '/transactions/reference/inv%2F2024%2F7')).body.transaction_id, slashed.body.transaction_id);
  });

  await t.test('synchronous errors', async (t) => {
    const poor = await createBalance(server);
    const euros = await createBalance(server, { currency: 'EUR' });
    const base = { description: 'test', precise_amount: 10, currency: 'USD', skip_queue: true };
    const short = await server.request('POST', '/transactions', { ...base, source: poor.balance_id, destination: destination.balance_id });
    expectError(t, short, 400, 'TXN_INSUFFICIENT_FUNDS', 'insufficient funds');
    t.equal(short.body.error_detail.details?.reason, 'insufficient_funds', 'with its reason');
    expectError(t, await server.request('POST', '/transactions', { ...base, source: euros.balance_id, destination: destination.balance_id }), 400, 'TXN_CURRENCY_MISMATCH', 'currency mismatch');
    // The same id on both sides is a validation error, as Blnk has it; the same balance reached through
    // its @name is found only once resolved, and has a code of its own.
    const same = await server.request('POST', '/transactions', { ...base, source: source.balance_id, destination: source.balance_id });
    expectError(t, same, 400, 'TXN_VALIDATION_ERROR', 'same balance');
    t.ok(same.body.error_detail.details.destination, 'naming the destination');
    const named = await server.request('POST', '/transactions', { ...base, source: '@same-by-name', destination: destination.balance_id, allow_overdraft: true });
    expectError(t, await server.request('POST', '/transactions', { ...base, source: '@same-by-name', destination: named.body.source }), 400, 'TXN_SAME_SOURCE_DESTINATION', 'same balance by name');
    expectError(t, await server.request('POST', '/transactions', { ...base, source: 'bln_missing', destination: destination.balance_id }), 404, 'BAL_NOT_FOUND', 'unknown source');
    expectError(t, await server.request('POST', '/transactions', { ...base, source: source.balance_id, destination: 'bln_missing' }), 404, 'BAL_NOT_FOUND', 'unknown destination');
    t.equal((await server.request('GET', `/balances/${poor.balance_id}`)).body.version, 0, 'refused transfers moved nothing');
    const overdraft = await server.request('POST', '/transactions', { ...base, source: poor.balance_id, destination: destination.balance_id, allow_overdraft: true });
    t.equal(overdraft.status, 201, 'allow_overdraft lets it through');
    t.equal((await server.request('GET', `/balances/${poor.balance_id}`)).body.balance, -10);
  });

  await t.test('unknown transactions: 404 TXN_NOT_FOUND', async (t) => {
    expectError(t, await server.request('GET', '/transactions/txn_missing'), 404, 'TXN_NOT_FOUND', 'by id');
    expectError(t, await server.request('GET', '/transactions/reference/no-such-reference'), 404, 'TXN_NOT_FOUND', 'by reference');
  });
  checkZeroSum(t, server, 'after synchronous transfers');
});

t.test('the queued path: 201 QUEUED, then APPLIED or REJECTED on the same id', async (t) => {
  const server = await openServer(t);
  const source = await createBalance(server);
  const destination = await createBalance(server);
  await fund(server, source.balance_id, 100);

  const queued = await server.request('POST', '/transactions', { description: 'test', precise_amount: 30, currency: 'USD', source: source.balance_id, destination: destination.balance_id, reference: 'queued-1' });
  t.equal(queued.status, 201);
  t.equal(queued.body.status, 'QUEUED');
  t.equal(queued.body.skip_queue, false);
  const decided = await waitUntilDecided(server, queued.body.transaction_id);
  t.equal(decided.body.status, 'APPLIED');
  t.same({ ...decided.body, status: 'QUEUED' }, queued.body, 'the same record apart from its status');
  t.equal((await server.request('GET', '/transactions/reference/queued-1')).body.status, 'APPLIED', 'by reference too');
  t.equal((await server.request('GET', `/balances/${destination.balance_id}`)).body.balance, 30);

  await t.test('queued insufficient funds end REJECTED with the rejection recorded', async (t) => {
    const tooMuch = await server.request('POST', '/transactions', { description: 'test', precise_amount: 1000, currency: 'USD', source: source.balance_id, destination: destination.balance_id });
    t.equal(tooMuch.status, 201, 'accepted into the queue');
    const rejected = await waitUntilDecided(server, tooMuch.body.transaction_id);
    t.equal(rejected.body.status, 'REJECTED');
    t.match(rejected.body.rejection, { code: 'TXN_INSUFFICIENT_FUNDS', reason: 'insufficient_funds', message: String });
    t.equal((await server.request('GET', `/balances/${source.balance_id}`)).body.balance, 70, 'nothing moved');
  });

  await t.test('queued work is applied in arrival order per source', async (t) => {
    const from = await createBalance(server);
    await fund(server, from.balance_id, 100);
    const ids: string[] = [];
    for (const amount of [60, 50, 40]) {
      const response = await server.request('POST', '/transactions', { description: 'test', precise_amount: amount, currency: 'USD', source: from.balance_id, destination: '@sink' });
      t.equal(response.status, 201);
      ids.push(response.body.transaction_id);
    }
    const statuses = [];
    for (const id of ids) statuses.push((await waitUntilDecided(server, id)).body.status);
    t.same(statuses, ['APPLIED', 'REJECTED', 'APPLIED'], '60 fits, 50 no longer does, 40 does');
  });

  await t.test('a skip_queue transfer is decided after what its source already queued', async (t) => {
    const from = await createBalance(server);
    await fund(server, from.balance_id, 100);
    const first = await server.request('POST', '/transactions', { description: 'test', precise_amount: 80, currency: 'USD', source: from.balance_id, destination: '@sink' });
    t.equal(first.status, 201);
    const sync = await server.request('POST', '/transactions', { description: 'test', precise_amount: 30, currency: 'USD', source: from.balance_id, destination: '@sink', skip_queue: true });
    expectError(t, sync, 400, 'TXN_INSUFFICIENT_FUNDS', 'the queued 80 went first');
    t.equal((await server.request('GET', `/transactions/${first.body.transaction_id}`)).body.status, 'APPLIED', 'and is applied by the time the synchronous answer came');
  });

  await t.test('queued errors decided on arrival', async (t) => {
    const euros = await createBalance(server, { currency: 'EUR' });
    const base = { description: 'test', precise_amount: 10, currency: 'USD' };
    expectError(t, await server.request('POST', '/transactions', { ...base, source: euros.balance_id, destination: destination.balance_id }), 400, 'TXN_CURRENCY_MISMATCH', 'currency mismatch');
    expectError(t, await server.request('POST', '/transactions', { ...base, source: source.balance_id, destination: source.balance_id }), 400, 'TXN_VALIDATION_ERROR', 'same balance');
    expectError(t, await server.request('POST', '/transactions', { ...base, source: 'bln_missing', destination: destination.balance_id }), 404, 'BAL_NOT_FOUND', 'unknown source');
  });
  await waitForEmptyQueue(server);
  checkZeroSum(t, server, 'after queued transfers');
});

t.test('references: identical retry 200 with the original, different body 409, on both paths', async (t) => {
  const server = await openServer(t);
  const source = await createBalance(server);
  await fund(server, source.balance_id, 10_000);
  const request = { precise_amount: 25, currency: 'USD', source: source.balance_id, destination: '@merchant', description: 'order', meta_data: { order: 7 } };

  for (const skipQueue of [true, false]) {
    const path = skipQueue ? 'synchronous' : 'queued';
    await t.test(path, async (t) => {
      const body = { ...request, reference: `ref-${path}`, skip_queue: skipQueue };
      const original = await server.request('POST', '/transactions', body);
      t.equal(original.status, 201);
      const retry = await server.request('POST', '/transactions', body);
      t.equal(retry.status, 200, 'identical retry: 200');
      t.equal(retry.body.transaction_id, original.body.transaction_id, 'the original transaction');
      t.same({ ...retry.body, status: original.body.status }, original.body, 'the original record');
      const different = await server.request('POST', '/transactions', { ...body, precise_amount: 26 });
      expectError(t, different, 409, 'TXN_DUPLICATE_REFERENCE', 'different amount');
      t.equal(different.body.error_detail.details.field, 'precise_amount', 'the conflict names the field that differs');
      const otherDescription = await server.request('POST', '/transactions', { ...body, description: 'other' });
      expectError(t, otherDescription, 409, 'TXN_DUPLICATE_REFERENCE', 'different description');
      t.equal(otherDescription.body.error_detail.details.field, 'description');
      const otherMeta = await server.request('POST', '/transactions', { ...body, meta_data: { changed: true } });
      t.equal(otherMeta.body.error_detail.details.field, 'meta_data');
      expectError(t, await server.request('POST', '/transactions', { ...body, skip_queue: !skipQueue, precise_amount: 26 }), 409, 'TXN_DUPLICATE_REFERENCE', 'different amount on the other path');
      const sameThroughOtherPath = await server.request('POST', '/transactions', { ...body, skip_queue: !skipQueue });
      t.equal(sameThroughOtherPath.status, 200, 'the same request through the other path is still a retry');
      const decided = await waitUntilDecided(server, original.body.transaction_id);
      t.equal(decided.body.status, 'APPLIED');
      const late = await server.request('POST', '/transactions', body);
      t.equal(late.status, 200, 'a retry after it was applied');
      t.equal(late.body.status, 'APPLIED', 'shows the current status');
    });
  }
  await t.test('the same amount written as amount or precise_amount is the same request', async (t) => {
    const body = { description: 'test', amount: 0.25, precision: 100, currency: 'USD', source: source.balance_id, destination: '@merchant', reference: 'ref-forms', skip_queue: true };
    const original = await server.request('POST', '/transactions', body);
    t.equal(original.status, 201);
    const retry = await server.request('POST', '/transactions', { ...body, amount: undefined, precise_amount: '25' });
    t.equal(retry.status, 200);
    t.equal(retry.body.transaction_id, original.body.transaction_id);
  });
  await t.test('a rejected synchronous request does not take its reference', async (t) => {
    const poor = await createBalance(server);
    const body = { description: 'test', precise_amount: 50, currency: 'USD', source: poor.balance_id, destination: '@merchant', reference: 'ref-after-topup', skip_queue: true };
    expectError(t, await server.request('POST', '/transactions', body), 400, 'TXN_INSUFFICIENT_FUNDS', 'first try');
    await fund(server, poor.balance_id, 50);
    t.equal((await server.request('POST', '/transactions', body)).status, 201, 'the retry after a top-up is a new transaction');
  });
  const applied = (await server.request('GET', `/balances/indicator/@merchant/currency/USD`)).body.balance;
  t.equal(applied, 25 + 25 + 25 + 50, 'each original applied exactly once');
  await waitForEmptyQueue(server);
  checkZeroSum(t, server, 'after retries');
});

t.test('amounts: exact digits in and out, whatever their size', async (t) => {
  const server = await openServer(t);
  const post = (text: string) => server.request('POST', '/transactions', text);
  const transfer = (amountFields: string, destination: string) =>
    `{${amountFields},"description":"test","currency":"USD","source":"@world","destination":"${destination}","allow_overdraft":true,"skip_queue":true}`;

  await t.test('precise_amount beyond 2^53 as a JSON number', async (t) => {
    const response = await post(transfer('"precise_amount":9007199254740993', '@big-number'));
    t.equal(response.status, 201);
    t.match(response.text, /"precise_amount":9007199254740993[,}]/, 'digit for digit in the response');
    t.match(response.text, /"amount_string":"9007199254740993"/);
    const balance = await server.request('GET', '/balances/indicator/@big-number/currency/USD');
    t.match(balance.text, /"balance":9007199254740993[,}]/, 'and in the balance');
    t.match(balance.text, /"credit_balance":9007199254740993[,}]/);
    const read = await server.request('GET', `/transactions/${response.body.transaction_id}`);
    t.match(read.text, /"precise_amount":9007199254740993[,}]/, 'and on a later read');
  });

  await t.test('precise_amount as a string of 39 digits', async (t) => {
    const digits = '123456789012345678901234567890123456789';
    const response = await post(transfer(`"precise_amount":"${digits}"`, '@big-string'));
    t.equal(response.status, 201);
    t.match(response.text, new RegExp(`"precise_amount":${digits}[,}]`));
    const balance = await server.request('GET', '/balances/indicator/@big-string/currency/USD');
    t.match(balance.text, new RegExp(`"balance":${digits}[,}]`));
    const rebuilt = await server.request('GET', `/balances/${balance.body.balance_id}?from_source=true`);
    t.match(rebuilt.text, new RegExp(`"balance":${digits}[,}]`), 'rebuilt from the log exactly');
    const world = await server.request('GET', '/balances/indicator/@world/currency/USD');
    t.match(world.text, /"balance":-\d{39}/, 'the other side is negative by as many digits');
  });

  await t.test('the largest amount, twice: balances may exceed the per-amount limit', async (t) => {
    const nines = '9'.repeat(40);
    for (let round = 0; round < 2; round += 1) t.equal((await post(transfer(`"precise_amount":${nines}`, '@huge'))).status, 201);
    const balance = await server.request('GET', '/balances/indicator/@huge/currency/USD');
    t.match(balance.text, new RegExp(`"balance":${(BigInt(nines) * 2n).toString()}[,}]`));
  });

  await t.test('too many digits: 400 on precise_amount', async (t) => {
    for (const form of [`"precise_amount":1${'0'.repeat(40)}`, `"precise_amount":"1${'0'.repeat(40)}"`]) {
      const response = await post(transfer(form, '@never'));
      expectError(t, response, 400, 'TXN_VALIDATION_ERROR', form.slice(0, 30));
      t.ok(response.body.error_detail.details?.precise_amount, 'details name precise_amount');
    }
  });

  await t.test('amount with precision converts exactly or is refused', async (t) => {
    const cases: Array<[string, string | null]> = [
      ['"amount":0.1,"precision":100', '10'],
      ['"amount":10.05,"precision":100', '1005'],
      ['"amount":"12.34","precision":100', '1234'],
      ['"amount":1234567890123456789.12,"precision":100', '123456789012345678912'],
      ['"amount":1e-7,"precision":10000000', '1'],
      ['"amount":1.5e3', '1500'],
      ['"amount":12345678901234567890123', '12345678901234567890123'],
      ['"amount":10.005,"precision":100', null],
      ['"amount":0.30000000000000004,"precision":100', null],
      ['"amount":1e-7,"precision":1000000', null],
      ['"amount":-5', null],
      ['"amount":0', null],
      ['"amount":0.5', null],
    ];
    for (const [fields, expected] of cases) {
      const response = await post(transfer(fields, '@converted'));
      if (expected === null) {
        expectError(t, response, 400, 'TXN_VALIDATION_ERROR', fields);
        t.ok(response.body.error_detail.details?.amount, `${fields}: details name amount`);
      } else {
        t.equal(response.status, 201, fields);
        t.match(response.text, new RegExp(`"precise_amount":${expected}[,}]`), `${fields} -> ${expected}`);
      }
    }
  });

  await t.test('precision limits and agreement between amount and precise_amount', async (t) => {
    t.equal((await post(transfer('"precise_amount":1,"precision":1000000000000000000', '@fine'))).status, 201, 'precision 10^18');
    const tooFine = await post(transfer('"precise_amount":1,"precision":10000000000000000000', '@fine'));
    expectError(t, tooFine, 400, 'TXN_VALIDATION_ERROR', 'precision 10^19');
    t.ok(tooFine.body.error_detail.details?.precision, 'details name precision');
    // One of the two, as Blnk and ../shared/spec/interface.md have it: both are refused even when they agree.
    const both = await post(transfer('"amount":2.5,"precise_amount":250,"precision":100', '@both'));
    expectError(t, both, 400, 'TXN_VALIDATION_ERROR', 'both given and equal');
    t.match(both.body.error_detail.details?.amount, /not both/, 'details name amount');
    expectError(t, await post(transfer('"amount":2.5,"precise_amount":251,"precision":100', '@both')), 400, 'TXN_VALIDATION_ERROR', 'both given and different');
    expectError(t, await post(transfer('"precision":100', '@none')), 400, 'TXN_VALIDATION_ERROR', 'no amount at all');
    expectError(t, await post(transfer('"precise_amount":1.5', '@none')), 400, 'TXN_VALIDATION_ERROR', 'fractional precise_amount');
    expectError(t, await post(transfer('"precise_amount":-1', '@none')), 400, 'TXN_VALIDATION_ERROR', 'negative precise_amount');
    expectError(t, await post(transfer('"precise_amount":0', '@none')), 400, 'TXN_INVALID_AMOUNT', 'zero precise_amount');
  });
  checkZeroSum(t, server, 'after large amounts');
});

t.test('GET /transactions: newest first, paged without overlap or gaps across memory and disk', async (t) => {
  const server = await openServer(t);
  const created: string[] = [];
  const record = (response: { status: number; body: any }) => {
    if (response.status !== 201) throw new Error(`unexpected ${response.status}`);
    created.push(response.body.transaction_id);
  };
  for (let index = 0; index < 25; index += 1) record({ status: 201, body: await fund(server, '@early', index + 1) });
  // Let the lookup store write these to LMDB, so the list merges records on disk with fresh ones in memory.
  await new Promise((resolve) => setTimeout(resolve, 300));
  for (let index = 0; index < 10; index += 1) {
    record(await server.request('POST', '/transactions', { description: 'test', precise_amount: 1, currency: 'USD', source: '@early', destination: '@late' }));
    record({ status: 201, body: await fund(server, '@late', 1) });
  }
  record(await server.request('POST', '/transactions', { description: 'test', precise_amount: 10 ** 9, currency: 'USD', source: '@late', destination: '@early' }));
  await waitForEmptyQueue(server);
  const newest = [...created].reverse();

  const first = await server.request('GET', '/transactions');
  t.equal(first.status, 200);
  t.same(first.body.map((item: any) => item.transaction_id), newest.slice(0, 20), 'default page: the 20 newest');
  t.equal(first.body[0].status, 'REJECTED', 'rejected transactions are listed with their status');
  const seen: string[] = [];
  for (let offset = 0; offset < created.length + 10; offset += 9) {
    const page = await server.request('GET', `/transactions?limit=9&offset=${offset}`);
    seen.push(...page.body.map((item: any) => item.transaction_id));
  }
  t.same(seen, newest, 'pages of 9 cover every transaction once, newest first');
  t.equal((await server.request('GET', '/transactions?limit=100')).body.length, created.length);
  const statuses = new Set((await server.request('GET', '/transactions?limit=100')).body.map((item: any) => item.status));
  t.notOk(statuses.has('QUEUED'), 'queued ones are listed with their final status once decided');
  // Nothing in the page is refused here, as in Blnk's GetAllTransactions (api/transactions.go): a limit
  // that is not a whole number from 1 to 100 means the default page of 20, a bad offset the start.
  for (const query of ['limit=101', 'limit=0', 'limit=x', 'offset=-1', 'offset=abc', 'limit=abc&offset=-5', 'offset=99999999999999999999']) {
    const page = await server.request('GET', `/transactions?${query}`);
    t.equal(page.status, 200, `${query}: the default page`);
    t.same(page.body.map((item: any) => item.transaction_id), newest.slice(0, 20), `${query}: the 20 newest`);
  }
});
