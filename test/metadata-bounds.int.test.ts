// Metadata bounds (issue 13): prototype keys are refused at any depth on every route that takes
// meta_data; merged metadata stays within 64 KiB (META_TOO_LARGE); the log records each change as its
// patch, so it grows with what was sent, not with the square of the changes; and the merged object is
// the same after a restart, through the transaction lookups rebuilt from the log, and in the index.

import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { startTestServer, tempDataDir, type TestServer } from './helpers/test-server.js';

async function created(server: TestServer, method: string, route: string, body: unknown): Promise<any> {
  const response = await server.request(method, route, body);
  if (response.status >= 300) throw new Error(`${method} ${route}: ${response.status} ${response.text}`);
  return response.body;
}

/** Every route that takes meta_data: method, path, the body around a meta_data text, and the route's own validation code. */
async function metaDataRoutes(server: TestServer): Promise<Array<[string, string, (meta: string) => string, string]>> {
  const ledger = await created(server, 'POST', '/ledgers', { name: 'l' });
  const funded = await created(server, 'POST', '/transactions', {
    description: 'test', precise_amount: 10, currency: 'USD', source: '@meta-routes-world', destination: '@meta-routes-a', allow_overdraft: true, skip_queue: true,
  });
  // Each route's own validation code (Blnk's, where it has one for the route's bodies).
  return [
    ['POST', '/ledgers', (meta) => `{"name":"x","meta_data":${meta}}`, 'GEN_VALIDATION_ERROR'],
    ['PUT', `/ledgers/${ledger.ledger_id}`, (meta) => `{"name":"x","meta_data":${meta}}`, 'GEN_VALIDATION_ERROR'],
    ['POST', '/balances', (meta) => `{"ledger_id":"general_ledger_id","currency":"USD","meta_data":${meta}}`, 'GEN_VALIDATION_ERROR'],
    ['POST', '/identities', (meta) => `{"identity_type":"individual","meta_data":${meta}}`, 'IDT_VALIDATION_ERROR'],
    ['POST', '/transactions', (meta) => `{"precise_amount":1,"description":"test","currency":"USD","source":"@p","destination":"@q","allow_overdraft":true,"meta_data":${meta}}`, 'TXN_VALIDATION_ERROR'],
    ['POST', '/transactions/bulk', (meta) => `{"transactions":[{"precise_amount":1,"currency":"USD","source":"@p","destination":"@q","allow_overdraft":true,"meta_data":${meta}}]}`, 'TXN_VALIDATION_ERROR'],
    ['POST', `/refund-transaction/${funded.transaction_id}`, (meta) => `{"skip_queue":true,"meta_data":${meta}}`, 'GEN_MALFORMED_REQUEST'],
    ['POST', `/${funded.transaction_id}/metadata`, (meta) => `{"meta_data":${meta}}`, 'GEN_VALIDATION_ERROR'],
  ];
}

t.test('prototype keys in meta_data are refused on every route, at any depth, writing nothing', async (t) => {
  const server = await startTestServer();
  t.teardown(() => server.stop());
  const routes = await metaDataRoutes(server);
  const badMetas = ['{"__proto__":{"x":1}}', '{"constructor":{"prototype":{"x":1}}}', '{"a":{"b":[{"prototype":1}]}}', '{"ok":1,"__proto__":null}'];
  const seq = server.runtime.log.appendedSeq;
  for (const [method, route, body, code] of routes) {
    for (const meta of badMetas) {
      const response = await server.request(method, route, body(meta));
      t.equal(response.status, 400, `${method} ${route} ${meta}`);
      t.equal(response.body.error_detail.code, code);
    }
  }
  t.equal(server.runtime.log.appendedSeq, seq, 'nothing was written');
  t.equal(({} as Record<string, unknown>).x, undefined, 'no prototype was touched');
});

// The route answers test (test/route-answers.int.test.ts) found ledgers created with a number for
// meta_data: a decimal of more than 15 digits reaches the schemas as a DecimalLiteral, an object, and
// passed for a JSON object, then became a plain number, stored and answered against the reference.
t.test('meta_data that is not a JSON object is refused on every route, long decimals and big integers included', async (t) => {
  const server = await startTestServer();
  t.teardown(() => server.stop());
  const routes = await metaDataRoutes(server);
  const notObjects = ['1026728547.986321', '-7.694155580129424e-129', '12345678901234567890', '1.5', '"text"', '[{"a":1}]', 'true'];
  const seq = server.runtime.log.appendedSeq;
  for (const [method, route, body, code] of routes) {
    for (const meta of notObjects) {
      const response = await server.request(method, route, body(meta));
      t.equal(response.status, 400, `${method} ${route} meta_data ${meta}`);
      t.equal(response.body.error_detail?.code, code, `${method} ${route} meta_data ${meta}: ${code}`);
    }
  }
  t.equal(server.runtime.log.appendedSeq, seq, 'nothing was written');
});

t.test('merged metadata is bounded, and the log keeps patches', async (t) => {
  const server = await startTestServer();
  t.teardown(() => server.stop());
  const ledger = await created(server, 'POST', '/ledgers', { name: 'bounded' });
  const identity = await created(server, 'POST', '/identities', { identity_type: 'individual' });
  const transaction = await created(server, 'POST', '/transactions', {
    description: 'test', precise_amount: 7, currency: 'USD', source: '@meta-world', destination: '@meta-a', allow_overdraft: true, skip_queue: true,
  });
  const balanceId = transaction.destination as string;
  const chunk = 'm'.repeat(30 * 1024);
  for (const id of [ledger.ledger_id, identity.identity_id, transaction.transaction_id, balanceId]) {
    t.equal((await server.request('POST', `/${id}/metadata`, { meta_data: { a: chunk } })).status, 201, `${id}: 30 KiB`);
    const second = await server.request('POST', `/${id}/metadata`, { meta_data: { b: chunk } });
    t.equal(second.status, 201, `${id}: 60 KiB merged`);
    const seq = server.runtime.log.appendedSeq;
    const third = await server.request('POST', `/${id}/metadata`, { meta_data: { c: chunk } });
    t.equal(third.status, 400, `${id}: 90 KiB merged is refused`);
    t.equal(third.body.error_detail.code, 'META_TOO_LARGE');
    t.equal(server.runtime.log.appendedSeq, seq, 'and nothing is written');
    t.equal((await server.request('POST', `/${id}/metadata`, { meta_data: { a: 'small' } })).status, 201, 'replacing a key shrinks it again');
  }
  const overGrown = await server.request('PUT', `/ledgers/${ledger.ledger_id}`, { meta_data: { z: chunk, y: chunk } });
  t.equal(overGrown.body.error_detail?.code, 'META_TOO_LARGE', 'ledger updates merge within the bound too');
  const refund = await server.request('POST', `/refund-transaction/${transaction.transaction_id}`, { skip_queue: true, meta_data: { c: 'm'.repeat(40 * 1024) } });
  t.equal(refund.body.error_detail?.code, 'META_TOO_LARGE', 'so do refunds over the original\'s metadata');

  const last = [...server.runtime.log.read(server.runtime.log.appendedSeq)][0]?.event;
  t.same(last?.metadata_patches, [{ entity_id: balanceId, meta_data: { a: 'small' } }], 'the log holds the patch alone');
  t.equal(last?.transactions, undefined, 'not the whole record');
});

t.test('patched metadata is the same after a restart, after the lookups are rebuilt, and in the index', async (t) => {
  const dataDir = tempDataDir();
  let server = await startTestServer({ dataDir });
  const ledger = await created(server, 'POST', '/ledgers', { name: 'kept', meta_data: { base: 1 } });
  const identity = await created(server, 'POST', '/identities', { identity_type: 'individual', meta_data: { base: 1 } });
  const transaction = await created(server, 'POST', '/transactions', {
    description: 'test', precise_amount: 7, currency: 'USD', source: '@keep-world', destination: '@keep-a', allow_overdraft: true, skip_queue: true,
    reference: 'kept-ref', meta_data: { base: 1 },
  });
  const balanceId = transaction.destination as string;
  const ids = [ledger.ledger_id, identity.identity_id, transaction.transaction_id, balanceId];
  for (const id of ids) {
    await created(server, 'POST', `/${id}/metadata`, { meta_data: { step: 1, nested: { a: 1 } } });
    await created(server, 'POST', `/${id}/metadata`, { meta_data: { step: 2, big: 12345678901234567890n } });
  }
  const expected = { base: 1, step: 2, nested: { a: 1 }, big: 12345678901234567890n };
  const readAll = async (label: string): Promise<void> => {
    t.same((await server.request('GET', `/ledgers/${ledger.ledger_id}`)).body.meta_data, expected, `${label}: ledger`);
    t.same((await server.request('GET', `/identities/${identity.identity_id}`)).body.meta_data, expected, `${label}: identity`);
    t.same((await server.request('GET', `/transactions/${transaction.transaction_id}`)).body.meta_data, expected, `${label}: transaction by id`);
    t.same((await server.request('GET', '/transactions/reference/kept-ref')).body.meta_data, expected, `${label}: transaction by reference`);
    // The balance was made on first use, with no metadata of its own.
    const { base: _base, ...balanceExpected } = expected;
    t.same((await server.request('GET', `/balances/${balanceId}`)).body.meta_data, balanceExpected, `${label}: balance`);
    for (const [collection, field, id] of [['transactions', 'transaction_id', transaction.transaction_id], ['balances', 'balance_id', balanceId], ['ledgers', 'ledger_id', ledger.ledger_id], ['identities', 'identity_id', identity.identity_id]]) {
      const found = await server.request('POST', `/${collection}/filter`, { filters: [{ field: 'meta_data.step', operator: 'eq', value: 2 }, { field, operator: 'eq', value: id }] });
      t.equal(found.body.data?.length, 1, `${label}: ${collection} found by patched metadata in the index`);
      t.same(found.body.data?.[0]?.meta_data, collection === 'balances' ? balanceExpected : expected, `${label}: ${collection} index row`);
    }
  };
  await readAll('live');
  await server.stop();
  server = await startTestServer({ dataDir });
  await readAll('after a restart');
  await server.stop();
  fs.rmSync(path.join(dataDir, 'lookup'), { recursive: true, force: true });
  fs.rmSync(path.join(dataDir, 'index.sqlite'), { force: true });
  server = await startTestServer({ dataDir });
  t.teardown(() => server.stop());
  await readAll('lookups and index rebuilt from the log');
});
