// Preconditions over HTTP (engine/preconditions.ts; docs/decisions-beyond.md): on a synchronous
// transfer (409 TXN_PRECONDITION_FAILED naming the precondition, the balance and what was found, nothing
// written), a queued one (recorded, then REJECTED with that code), a bulk item, a split, a hold's commit,
// a dry run (every failing one listed); the shape refused with 400 and details (a condition without its
// operator, a field that is none, more than 16); and a scheduled transaction's preconditions kept across
// a restart, judged when it falls due.

import fs from 'node:fs';
import t from 'tap';
import { createBalance, expectError, fund, openServer, waitUntilDecided } from './helpers/http-fixture.js';
import { startTestServer } from './helpers/test-server.js';

t.test('preconditions on every create path, over HTTP', async (t) => {
  const server = await openServer(t);
  const alice = await createBalance(server);
  const bob = await createBalance(server);
  await fund(server, alice.balance_id, 1000);
  const version = (await server.request('GET', `/balances/${alice.balance_id}`)).body.version as number;
  const body = (fields: Record<string, unknown>) => ({ description: 'test', precise_amount: 100, currency: 'USD', source: alice.balance_id, destination: bob.balance_id, skip_queue: true, ...fields });

  await t.test('synchronous: applied while it holds; 409 naming the precondition when it does not, nothing written', async (t) => {
    const applied = await server.request('POST', '/transactions', body({ preconditions: [{ balance_id: alice.balance_id, version }, { balance_id: alice.balance_id, field: 'balance', operator: '>=', precise_value: 900 }] }));
    t.equal(applied.status, 201, applied.text);
    t.same(applied.body.preconditions, [{ balance_id: alice.balance_id, version }, { balance_id: alice.balance_id, field: 'balance', operator: '>=', precise_value: 900 }], 'the transaction shows them');
    const stale = await server.request('POST', '/transactions', body({ reference: 'stale-1', preconditions: [{ balance_id: alice.balance_id, version }] }));
    expectError(t, stale, 409, 'TXN_PRECONDITION_FAILED', 'a stale version');
    t.match(stale.body.error_detail.details, { reason: 'precondition_failed', index: 0, balance_id: alice.balance_id, field: 'version', operator: '==', expected: version, found: version + 1 });
    t.equal(stale.body.error_detail.details.failures.length, 1);
    t.equal((await server.request('GET', '/transactions/reference/stale-1')).status, 404, 'nothing recorded');
    const low = await server.request('POST', '/transactions', body({ preconditions: [{ balance_id: alice.balance_id, field: 'available_balance', operator: '>=', precise_value: 801 }] }));
    expectError(t, low, 409, 'TXN_PRECONDITION_FAILED', 'a field as the transfer would leave it');
    t.match(low.body.error_detail.details, { field: 'available_balance', operator: '>=', expected: 801, found: 800 });
    t.equal((await server.request('GET', `/balances/${alice.balance_id}`)).body.balance, 900, 'the balance did not move');
  });

  await t.test('queued: recorded, then REJECTED with the code', async (t) => {
    const current = (await server.request('GET', `/balances/${alice.balance_id}`)).body.version as number;
    const queued = await server.request('POST', '/transactions', body({ skip_queue: false, preconditions: [{ balance_id: alice.balance_id, version: current + 5 }] }));
    t.equal(queued.status, 201);
    t.equal(queued.body.status, 'QUEUED');
    const decided = await waitUntilDecided(server, queued.body.transaction_id);
    t.equal(decided.body.status, 'REJECTED');
    t.match(decided.body.rejection, { code: 'TXN_PRECONDITION_FAILED', reason: 'precondition_failed', message: /precondition 0 failed/ });
  });

  await t.test('bulk and split: an item judged after the ones before it; a split all or nothing', async (t) => {
    const items = [body({ precise_amount: 500 }), body({ precise_amount: 100, preconditions: [{ balance_id: alice.balance_id, field: 'balance', operator: '>=', precise_value: 301 }] })];
    const bulk = await server.request('POST', '/transactions/bulk', { atomic: true, skip_queue: true, transactions: items });
    expectError(t, bulk, 409, 'TXN_PRECONDITION_FAILED', 'the second item of an atomic batch');
    t.match(bulk.body.error_detail.message, /^transaction 1: precondition 0 failed/);
    const preview = await server.request('POST', '/transactions/bulk', { atomic: true, skip_queue: true, dry_run: true, transactions: items });
    t.match(preview.body, { would_apply: false, failed_index: 1, rejection: { code: 'TXN_PRECONDITION_FAILED', preconditions: [{ index: 0, field: 'balance', expected: '301', found: '300' }] } }, 'its dry run names the item and the precondition');
    const partial = await server.request('POST', '/transactions/bulk', { atomic: false, skip_queue: true, transactions: [body({ precise_amount: 1, destination: '@partial-sink' }), body({ precise_amount: 100, preconditions: [{ balance_id: alice.balance_id, field: 'balance', operator: '>=', precise_value: 800 }] })] });
    t.equal(partial.status, 201, partial.text);
    t.match(partial.body.failed, { index: 1, error: { code: 'TXN_PRECONDITION_FAILED', preconditions: [{ index: 0, balance_id: alice.balance_id, field: 'balance', operator: '>=', expected: '800', found: '799' }] } }, 'a batch that is not atomic stops at that item, naming the precondition');
    await fund(server, alice.balance_id, 1);
    const split = await server.request('POST', '/transactions', {
      description: 'split', precise_amount: 100, currency: 'USD', source: alice.balance_id, skip_queue: true,
      destinations: [{ identifier: bob.balance_id, distribution: '50%' }, { identifier: '@split-rest', distribution: 'left' }],
      preconditions: [{ balance_id: '@split-rest', field: 'balance', operator: '==', precise_value: 49 }],
    });
    expectError(t, split, 409, 'TXN_PRECONDITION_FAILED', 'a split');
    t.equal((await server.request('GET', `/balances/${alice.balance_id}`)).body.balance, 900, 'nothing of either moved');
  });

  await t.test('a hold commit takes preconditions', async (t) => {
    const hold = await server.request('POST', '/transactions', body({ inflight: true, precise_amount: 300 }));
    t.equal(hold.body.status, 'INFLIGHT');
    const refused = await server.request('PUT', `/transactions/inflight/${hold.body.transaction_id}`, {
      status: 'commit', precise_amount: 100, skip_queue: true, preconditions: [{ balance_id: bob.balance_id, field: 'balance', operator: '>=', precise_value: 201 }],
    });
    expectError(t, refused, 409, 'TXN_PRECONDITION_FAILED', 'a commit whose condition fails');
    t.match(refused.body.error_detail.details, { balance_id: bob.balance_id, field: 'balance', expected: 201, found: 200 });
    t.equal((await server.request('GET', `/transactions/${hold.body.transaction_id}`)).body.status, 'INFLIGHT', 'the hold is still open');
    const committed = await server.request('PUT', `/transactions/inflight/${hold.body.transaction_id}`, {
      status: 'commit', precise_amount: 100, skip_queue: true, preconditions: [{ balance_id: bob.balance_id, field: 'balance', operator: '>=', precise_value: 200 }],
    });
    t.equal(committed.status, 200, committed.text);
  });

  await t.test('a dry run lists every precondition that would fail', async (t) => {
    const dry = await server.request('POST', '/transactions', body({
      dry_run: true,
      preconditions: [{ balance_id: alice.balance_id, version: 1 }, { balance_id: '@nobody', field: 'balance', operator: '>=', precise_value: -5 }],
    }));
    t.equal(dry.status, 200);
    t.match(dry.body, { dry_run: true, would_apply: false, rejection: { code: 'TXN_PRECONDITION_FAILED' } });
    t.match(dry.body.rejection.preconditions, [{ index: 0, field: 'version', expected: '1' }, { index: 1, balance_id: '@nobody', expected: '-5', found: null }]);
  });

  await t.test('the shape: 400 with details naming each precondition at fault', async (t) => {
    const cases: Array<[string, unknown, string]> = [
      ['a condition without its operator', [{ balance_id: alice.balance_id, field: 'balance', precise_value: 1 }], 'preconditions.0.operator'],
      ['nothing to check', [{ balance_id: alice.balance_id }], 'preconditions.0.version'],
      ['a field that is none', [{ balance_id: alice.balance_id, field: 'queued_balance', operator: '>=', precise_value: 1 }], 'preconditions.0.field'],
      ['an operator that is none', [{ balance_id: alice.balance_id, field: 'balance', operator: '>', precise_value: 1 }], 'preconditions.0.operator'],
      ['a value that is not whole', [{ balance_id: alice.balance_id, field: 'balance', operator: '>=', precise_value: '1.5' }], 'preconditions.0.precise_value'],
      ['a negative version', [{ balance_id: alice.balance_id, version: -1 }], 'preconditions.0.version'],
      ['seventeen of them', Array.from({ length: 17 }, () => ({ balance_id: alice.balance_id, version: 1 })), 'preconditions'],
    ];
    for (const [label, preconditions, field] of cases) {
      const refused = await server.request('POST', '/transactions', body({ preconditions }));
      expectError(t, refused, 400, 'TXN_VALIDATION_ERROR', label);
      t.ok(field in (refused.body.error_detail.details ?? {}), `${label}: details name ${field} (${JSON.stringify(refused.body.error_detail.details)})`);
    }
    const commit = await server.request('PUT', '/transactions/inflight/txn_missing', { status: 'commit', preconditions: [{ balance_id: 'x', field: 'balance' }] });
    expectError(t, commit, 400, 'GEN_VALIDATION_ERROR', 'a hold action with a half condition');
    t.ok('preconditions.0.operator' in commit.body.error_detail.details);
    const negative = await server.request('POST', '/transactions', body({ preconditions: [{ balance_id: alice.balance_id, field: 'balance', operator: '>=', precise_value: '-100000000000000000000000000000' }] }));
    t.equal(negative.status, 201, 'a negative threshold of any size');
  });
});

t.test('a scheduled transaction keeps its preconditions across a restart, and is judged when due', async (t) => {
  let server = await startTestServer();
  const { dataDir } = server;
  t.teardown(async () => {
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  const alice = await createBalance(server);
  await fund(server, alice.balance_id, 500);
  const due = new Date(Date.now() + 3_000).toISOString();
  const preconditions = [{ balance_id: alice.balance_id, field: 'balance', operator: '>=', precise_value: 400 }];
  const scheduled = await server.request('POST', '/transactions', {
    description: 'later', precise_amount: 200, currency: 'USD', source: alice.balance_id, destination: '@later', scheduled_for: due, preconditions,
  });
  t.equal(scheduled.body.status, 'SCHEDULED', scheduled.text);
  await server.stop();
  server = await startTestServer({ dataDir });
  const read = await server.request('GET', `/transactions/${scheduled.body.transaction_id}`);
  t.same(read.body.preconditions, preconditions, 'read back from the log with its preconditions');
  // The bound only keeps a stuck timer from hanging the test.
  let now = read;
  for (let tries = 0; tries < 600 && now.body.status === 'SCHEDULED'; tries += 1) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    now = await server.request('GET', `/transactions/${scheduled.body.transaction_id}`);
  }
  t.equal(now.body.status, 'REJECTED', 'sending 200 of 500 would leave 300, below 400');
  t.equal(now.body.rejection?.code, 'TXN_PRECONDITION_FAILED');
  expectError(t, await server.request('POST', '/transactions', {}), 400, 'TXN_VALIDATION_ERROR', 'still answering');
});
