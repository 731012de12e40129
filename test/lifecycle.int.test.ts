// The transaction lifecycle over HTTP against the real server (LMDB in a temp dir): every row of the
// state table in ../shared/spec/interface.md section 3, every lifecycle error code with its status, dry runs of every
// operation (checked against what the real operation then does, and checked to write nothing), bulk and
// bulk inflight, and one test with real expiry, auto-commit and schedule dates a second or two ahead.
// Actions that must find another one still queued are sent pipelined on one connection (see
// helpers/pipelined.ts); everything else waits for queue work by polling.

import fs from 'node:fs';
import t, { type Test } from 'tap';
import { checkError, checkZeroSumOverHttp, LedgerClient } from './helpers/ledger-client.js';
import { pipelined } from './helpers/pipelined.js';
import { startTestServer, type TestServer } from './helpers/test-server.js';

let server: TestServer;
let api: LedgerClient;
let counter = 0;
/** A fresh internal balance name, so tests sharing the server never share a balance. */
const fresh = (label: string): string => `@${label}_${(counter += 1)}`;

t.before(async () => {
  server = await startTestServer();
  api = new LedgerClient(server.url);
});
t.teardown(async () => {
  await server?.stop();
  if (server) fs.rmSync(server.dataDir, { recursive: true, force: true });
});

const SIX = ['balance', 'available', 'credit_balance', 'debit_balance', 'inflight_debit_balance', 'inflight_credit_balance'] as const;

/** A hold of `amount` from a funded new balance to a new one; returns their ids and the hold. */
async function openHold(amount: number, funds = 1000, extra: Record<string, unknown> = {}): Promise<{ source: string; destination: string; hold: any }> {
  const sourceName = fresh('payer');
  const source = await api.fund(sourceName, funds);
  const created = await api.post('/transactions', {
    description: 'test', precise_amount: amount, currency: 'USD', source: sourceName, destination: fresh('payee'), inflight: true, skip_queue: true, ...extra,
  });
  if (created.status !== 201) throw new Error(`hold: ${created.text}`);
  return { source, destination: created.body.destination, hold: created.body };
}

async function transferNow(source: string, destination: string, amount: number, extra: Record<string, unknown> = {}): Promise<any> {
  const created = await api.post('/transactions', { description: 'test', precise_amount: amount, currency: 'USD', source, destination, skip_queue: true, ...extra });
  if (created.status !== 201) throw new Error(`transfer: ${created.text}`);
  return created.body;
}

/** Runs `body` and checks it wrote nothing: the log did not grow and no balance appeared. */
async function writesNothing(t: Test, label: string, body: () => Promise<void>): Promise<void> {
  const seq = server.runtime.log.appendedSeq;
  const balances = server.runtime.engine.state.balances.size;
  await body();
  t.equal(server.runtime.log.appendedSeq, seq, `${label}: nothing appended to the log`);
  t.equal(server.runtime.engine.state.balances.size, balances, `${label}: no balance created`);
}

/** The shape every projection has: flags, operation, and twelve string integers per balance. */
function checkProjection(t: Test, body: any, operation: string): void {
  t.equal(body.dry_run, true, 'dry_run is true');
  t.type(body.would_apply, 'boolean');
  t.equal(body.operation, operation);
  t.ok(Array.isArray(body.balances) && body.balances.length > 0, 'lists the balances involved');
  for (const entry of body.balances ?? []) {
    t.type(entry.balance_id, 'string');
    t.ok(entry.role === 'source' || entry.role === 'destination', `role ${entry.role}`);
    t.equal(entry.currency, 'USD');
    for (const field of SIX) {
      for (const prefix of ['current', 'resulting']) {
        const value = entry[`${prefix}_${field}`];
        t.ok(typeof value === 'string' && /^-?\d+$/.test(value), `${prefix}_${field} is a string integer (${value})`);
      }
    }
  }
  if (body.would_apply) {
    t.type(body.status, 'string', 'a projection that would apply has a status');
    t.notOk('rejection' in body);
  } else {
    t.notOk('status' in body, 'a rejected projection has no status');
    t.type(body.rejection?.code, 'string');
    t.type(body.rejection?.reason, 'string');
    t.type(body.rejection?.message, 'string');
  }
}

function projected(body: any, balanceId: string): any {
  return (body.balances as any[]).find((entry) => entry.balance_id === balanceId);
}

/** The projection's current_* must match the balance now; returns its resulting_* to compare later. */
async function checkCurrent(t: Test, body: any, balanceId: string): Promise<Record<string, string>> {
  const entry = projected(body, balanceId);
  t.ok(entry, `projection lists ${balanceId}`);
  const live = await api.balance(balanceId);
  const liveAmounts: Record<string, string> = {
    balance: String(live.balance),
    available: String(live.available_balance),
    credit_balance: String(live.credit_balance),
    debit_balance: String(live.debit_balance),
    inflight_debit_balance: String(live.inflight_debit_balance),
    inflight_credit_balance: String(live.inflight_credit_balance),
  };
  for (const field of SIX) t.equal(entry?.[`current_${field}`], liveAmounts[field], `current_${field} of ${balanceId}`);
  return Object.fromEntries(SIX.map((field) => [field, entry?.[`resulting_${field}`]]));
}

/** After the real operation, the balance must be what the projection said it would be. */
async function checkResulting(t: Test, resulting: Record<string, string>, balanceId: string): Promise<void> {
  const live = await api.balance(balanceId);
  t.same(resulting, {
    balance: String(live.balance),
    available: String(live.available_balance),
    credit_balance: String(live.credit_balance),
    debit_balance: String(live.debit_balance),
    inflight_debit_balance: String(live.inflight_debit_balance),
    inflight_credit_balance: String(live.inflight_credit_balance),
  }, `the real operation left ${balanceId} as projected`);
}

t.test('state table, ../shared/spec/interface.md section 3', async (t) => {
  t.test('(new) -> QUEUED: a create, a refund and a commit/void without skip_queue are queued', async (t) => {
    const alice = fresh('alice');
    await api.fund(alice, 1000);
    const created = await api.post('/transactions', { description: 'test', precise_amount: 300, currency: 'USD', source: alice, destination: fresh('bob') });
    t.equal(created.status, 201);
    t.equal(created.body.status, 'QUEUED', 'create answers QUEUED');
    t.equal((await api.settled(created.body.transaction_id)).status, 'APPLIED', 'and is applied by the queue, keeping its id');

    const refund = await api.post(`/refund-transaction/${created.body.transaction_id}`);
    t.equal(refund.status, 201, 'a refund without a body');
    t.equal(refund.body.status, 'QUEUED', 'is queued');
    t.equal(refund.body.parent_transaction, created.body.transaction_id);
    t.equal(refund.body.reference, `${created.body.transaction_id}_refund`);
    t.equal((await api.settled(refund.body.transaction_id)).status, 'APPLIED');

    const { hold } = await openHold(100);
    const queuedCommit = await api.put(`/transactions/inflight/${hold.transaction_id}`, { status: 'commit' });
    t.equal(queuedCommit.status, 200);
    t.match(queuedCommit.body, { transaction_id: hold.transaction_id, status: 'INFLIGHT', queued: true, precise_amount: 100 }, 'a queued commit answers with the hold, queued (as Blnk)');
    t.equal(queuedCommit.body.reference, hold.reference, 'the whole hold');
    t.equal((await api.waitForTransaction(hold.transaction_id, (record) => record.status !== 'INFLIGHT')).status, 'APPLIED');

    const second = await openHold(100);
    const queuedVoid = await api.put(`/transactions/inflight/${second.hold.transaction_id}`, { status: 'void', skip_queue: false });
    t.match(queuedVoid.body, { transaction_id: second.hold.transaction_id, status: 'INFLIGHT', queued: true }, 'a queued void likewise');
    t.equal((await api.waitForTransaction(second.hold.transaction_id, (record) => record.status !== 'INFLIGHT')).status, 'VOID');
    t.same(await api.amounts(second.source), { balance: 1000n, inflight_debit: 0n, inflight_credit: 0n, available: 1000n });
  });

  t.test('(new) -> APPLIED: a refund with skip_queue is carried out at once', async (t) => {
    const alice = fresh('alice');
    const aliceId = await api.fund(alice, 1000);
    const original = await transferNow(alice, fresh('bob'), 400, { description: 'rent', meta_data: { month: 'may', unit: 4 } });
    const refund = await api.post(`/refund-transaction/${original.transaction_id}`, { skip_queue: true, meta_data: { unit: 5, note: 'moved out' } });
    t.equal(refund.status, 201);
    t.equal(refund.body.status, 'APPLIED');
    t.equal(refund.body.parent_transaction, original.transaction_id);
    t.equal(refund.body.reference, `${original.transaction_id}_refund`);
    t.equal(refund.body.description, 'rent', 'description copied when not given');
    t.same(refund.body.meta_data, { month: 'may', unit: 5, note: 'moved out' }, 'metadata merged');
    t.equal(refund.body.amount_string, '400');
    t.equal(refund.body.source, original.destination);
    t.equal(refund.body.destination, original.source);
    t.same((await api.amounts(aliceId)).balance, 1000n);
    t.same((await api.transaction(original.transaction_id)).meta_data, { month: 'may', unit: 4 }, 'original not modified');
    const described = await api.post(`/refund-transaction/${(await transferNow(alice, fresh('bob'), 1, { description: 'x' })).transaction_id}`, { skip_queue: true, description: 'changed my mind' });
    t.equal(described.body.description, 'changed my mind');
  });

  t.test('INFLIGHT -> commit with skip_queue: an APPLIED child whose parent is the hold', async (t) => {
    const { source, destination, hold } = await openHold(300);
    t.equal(hold.status, 'INFLIGHT');
    t.same(await api.amounts(source), { balance: 1000n, inflight_debit: 300n, inflight_credit: 0n, available: 700n });
    t.same(await api.amounts(destination), { balance: 0n, inflight_debit: 0n, inflight_credit: 300n, available: 0n });

    const partial = await api.put(`/transactions/inflight/${hold.transaction_id}`, { status: 'commit', precise_amount: 100, skip_queue: true });
    t.equal(partial.status, 200);
    t.equal(partial.body.status, 'APPLIED');
    t.equal(partial.body.parent_transaction, hold.transaction_id);
    t.equal(partial.body.precise_amount, 100);
    t.equal((await api.transaction(hold.transaction_id)).status, 'INFLIGHT', 'partly committed: still INFLIGHT');
    t.equal((await api.transaction(partial.body.transaction_id)).status, 'APPLIED', 'the child can be read back');

    const byAmount = await api.put(`/transactions/inflight/${hold.transaction_id}`, { status: 'COMMIT', amount: 50, skip_queue: true });
    t.equal(byAmount.body.precise_amount, 50, '`amount` is converted with the hold\'s precision (1); status is case-insensitive');

    const rest = await api.put(`/transactions/inflight/${hold.transaction_id}`, { status: 'commit', skip_queue: true });
    t.equal(rest.body.precise_amount, 150, 'no amount: all that remains');
    const closed = await api.transaction(hold.transaction_id);
    t.equal(closed.status, 'APPLIED', 'fully committed: the hold is APPLIED');
    t.equal(closed.precise_committed_amount, 300);
    t.same(await api.amounts(source), { balance: 700n, inflight_debit: 0n, inflight_credit: 0n, available: 700n });
    t.same(await api.amounts(destination), { balance: 300n, inflight_debit: 0n, inflight_credit: 0n, available: 300n });

    // With a precision, `amount` is a decimal in the hold's units and precise_amount wins over it.
    const cents = await openHold(1000, 5000, { precision: 100 });
    const decimal = await api.put(`/transactions/inflight/${cents.hold.transaction_id}`, { status: 'commit', amount: 2.5, skip_queue: true });
    t.equal(decimal.body.precise_amount, 250);
    const both = await api.put(`/transactions/inflight/${cents.hold.transaction_id}`, { status: 'commit', amount: 9, precise_amount: 1, skip_queue: true });
    t.equal(both.body.precise_amount, 1, 'precise_amount takes precedence');
    // A sent amount must be more than zero: 0 once committed the whole hold (issue 13). Blnk's code for it.
    await writesNothing(t, 'zero and negative commit amounts', async () => {
      for (const amount of [{ precise_amount: 0 }, { precise_amount: -1 }, { amount: 0 }, { amount: -2.5 }, { precise_amount: '0' }]) {
        const refused = await api.put(`/transactions/inflight/${cents.hold.transaction_id}`, { status: 'commit', ...amount, skip_queue: true });
        checkError(t, refused, 400, 'TXN_INVALID_AMOUNT', JSON.stringify(amount));
      }
    });
    t.equal((await api.transaction(cents.hold.transaction_id)).status, 'INFLIGHT', 'the hold is still open');
    const remaining = await api.put(`/transactions/inflight/${cents.hold.transaction_id}`, { status: 'commit', skip_queue: true });
    t.equal(remaining.body.precise_amount, 749, 'no amount: all that remains');
  });

  t.test('INFLIGHT -> void with skip_queue: a VOID child, the held amount rolled back', async (t) => {
    const { source, destination, hold } = await openHold(300);
    await api.put(`/transactions/inflight/${hold.transaction_id}`, { status: 'commit', precise_amount: 120, skip_queue: true });
    const voided = await api.put(`/transactions/inflight/${hold.transaction_id}`, { status: 'void', skip_queue: true });
    t.equal(voided.status, 200);
    t.equal(voided.body.status, 'VOID');
    t.equal(voided.body.parent_transaction, hold.transaction_id);
    t.equal(voided.body.precise_amount, 180, 'the child carries what was released');
    t.equal((await api.transaction(hold.transaction_id)).status, 'VOID');
    t.same(await api.amounts(source), { balance: 880n, inflight_debit: 0n, inflight_credit: 0n, available: 880n });
    t.same(await api.amounts(destination), { balance: 120n, inflight_debit: 0n, inflight_credit: 0n, available: 120n });
  });

  t.test('INFLIGHT -> action without skip_queue while another is queued: GEN_CONFLICT', async (t) => {
    const { hold, source } = await openHold(300);
    const path = `/transactions/inflight/${hold.transaction_id}`;
    const [first, second, third] = await pipelined(server.url, [
      { method: 'PUT', path, body: { status: 'commit', precise_amount: 100 } },
      { method: 'PUT', path, body: { status: 'void' } },
      { method: 'PUT', path, body: { status: 'commit', skip_queue: true } },
    ]);
    t.equal(first?.status, 200);
    t.match(first?.body, { transaction_id: hold.transaction_id, status: 'INFLIGHT', queued: true });
    t.equal(second?.status, 409, 'a second queued action');
    t.equal(second?.body.error_detail.code, 'GEN_CONFLICT');
    t.equal(third?.status, 409, 'a synchronous action too');
    t.equal(third?.body.error_detail.code, 'GEN_CONFLICT');
    const after = await api.waitForTransaction(hold.transaction_id, (record) => record.precise_committed_amount === 100);
    t.equal(after.status, 'INFLIGHT', 'only the first action happened');
    t.same(await api.amounts(source), { balance: 900n, inflight_debit: 200n, inflight_credit: 0n, available: 700n });
  });

  t.test('split, atomic false: the legs that can go are APPLIED, the others REJECTED', async (t) => {
    const rich = fresh('rich');
    const poor = fresh('poor');
    await api.fund(rich, 100);
    await api.fund(poor, 5);
    const payee = fresh('payee');
    const split = await api.post('/transactions', {
      description: 'test', precise_amount: 100, currency: 'USD', destination: payee, atomic: false,
      sources: [{ identifier: rich, distribution: '60%' }, { identifier: poor, distribution: 'left' }],
    });
    t.equal(split.status, 201);
    t.equal(split.body.status, 'QUEUED');
    t.same(split.body.sources.map((share: any) => [share.identifier, share.distribution]), [[rich, '60%'], [poor, 'left']], 'sources echoed');
    const done = await api.settled(split.body.transaction_id);
    t.equal(done.status, 'APPLIED');
    const legs = await Promise.all((done.legs as string[]).map((id) => api.transaction(id)));
    t.same(legs.map((leg) => [leg.status, leg.precise_amount]), [['APPLIED', 60], ['REJECTED', 40]]);
    for (const leg of legs) {
      t.equal(leg.parent_transaction, split.body.transaction_id);
      t.equal(leg.meta_data.QUEUED_PARENT_TRANSACTION, split.body.transaction_id);
    }
    t.equal(legs[1].rejection.code, 'TXN_INSUFFICIENT_FUNDS');
    t.equal((await api.balanceByName(payee)).balance, 60);
  });

  t.test('split, atomic true: when any leg fails nothing is applied and nothing stays held', async (t) => {
    const rich = fresh('rich');
    const poor = fresh('poor');
    const richId = await api.fund(rich, 100);
    const poorId = await api.fund(poor, 5);
    const payee = fresh('payee');
    const body = {
      description: 'test', precise_amount: 100, currency: 'USD', atomic: true,
      sources: [{ identifier: rich, distribution: '60%' }, { identifier: poor, distribution: 'left' }],
      destinations: [{ identifier: payee, distribution: '50%' }, { identifier: fresh('payee'), distribution: '50%' }],
    };
    const queued = await api.post('/transactions', body);
    const done = await api.settled(queued.body.transaction_id);
    t.equal(done.status, 'REJECTED');
    t.equal(done.rejection.code, 'TXN_INSUFFICIENT_FUNDS');
    const legs = await Promise.all((done.legs as string[]).map((id) => api.transaction(id)));
    t.ok(legs.length >= 2);
    t.ok(legs.every((leg) => leg.status === 'REJECTED'), 'every leg REJECTED');
    const held = await api.post('/transactions', { ...body, inflight: true });
    const heldDone = await api.settled(held.body.transaction_id);
    t.equal(heldDone.status, 'REJECTED', 'an atomic split hold likewise');
    t.same(await api.amounts(richId), { balance: 100n, inflight_debit: 0n, inflight_credit: 0n, available: 100n }, 'nothing moved or held');
    t.same(await api.amounts(poorId), { balance: 5n, inflight_debit: 0n, inflight_credit: 0n, available: 5n });
    checkError(t, await api.post('/transactions', { ...body, skip_queue: true }), 400, 'TXN_INSUFFICIENT_FUNDS', 'synchronously');
  });

  t.test('any non-inflight transaction: commit or void is TXN_NOT_INFLIGHT and changes nothing', async (t) => {
    const alice = fresh('alice');
    await api.fund(alice, 100);
    const applied = await transferNow(alice, fresh('bob'), 10);
    const { hold } = await openHold(50);
    const child = (await api.put(`/transactions/inflight/${hold.transaction_id}`, { status: 'commit', precise_amount: 5, skip_queue: true })).body;
    for (const [name, id] of [['an applied transfer', applied.transaction_id], ['a commit child', child.transaction_id]]) {
      for (const status of ['commit', 'void']) {
        for (const skip_queue of [true, false]) {
          checkError(t, await api.put(`/transactions/inflight/${id}`, { status, skip_queue }), 400, 'TXN_NOT_INFLIGHT', `${status} of ${name} (skip_queue ${skip_queue})`);
        }
      }
    }
    t.equal((await api.transaction(applied.transaction_id)).status, 'APPLIED', 'unchanged');
  });

  t.test('APPLIED (fully committed) -> void is TXN_ALREADY_COMMITTED', async (t) => {
    const { hold } = await openHold(50);
    await api.put(`/transactions/inflight/${hold.transaction_id}`, { status: 'commit', skip_queue: true });
    checkError(t, await api.put(`/transactions/inflight/${hold.transaction_id}`, { status: 'void', skip_queue: true }), 409, 'TXN_ALREADY_COMMITTED');
    checkError(t, await api.put(`/transactions/inflight/${hold.transaction_id}`, { status: 'void' }), 409, 'TXN_ALREADY_COMMITTED', 'queued void');
    t.equal((await api.transaction(hold.transaction_id)).status, 'APPLIED', 'unchanged');
  });
});

t.test('error codes', async (t) => {
  t.test('inflight actions', async (t) => {
    const { hold } = await openHold(100);
    const path = `/transactions/inflight/${hold.transaction_id}`;
    checkError(t, await api.put(path, { status: 'approve' }), 400, 'TXN_INVALID_STATUS_ACTION');
    checkError(t, await api.put(path, { status: '' }), 400, 'TXN_INVALID_STATUS_ACTION', 'empty status');
    checkError(t, await api.put(path, {}), 400, 'GEN_VALIDATION_ERROR', 'missing status');
    checkError(t, await api.put(path, { status: 'commit', precise_amount: 101, skip_queue: true }), 400, 'TXN_COMMIT_AMOUNT_EXCEEDED');
    checkError(t, await api.put(path, { status: 'commit', amount: 101 }), 400, 'TXN_COMMIT_AMOUNT_EXCEEDED', 'queued');
    checkError(t, await api.put(path, { status: 'commit', precise_amount: -1 }), 400, 'TXN_INVALID_AMOUNT', 'negative amount');
    // Blnk checks a sent precise_amount before it looks the hold up, and for a void too.
    checkError(t, await api.put('/transactions/inflight/txn_unknown', { status: 'commit', precise_amount: 0 }), 400, 'TXN_INVALID_AMOUNT', 'zero, unknown hold');
    checkError(t, await api.put('/transactions/inflight/txn_unknown', { status: 'void', precise_amount: -100 }), 400, 'TXN_INVALID_AMOUNT', 'negative void');
    checkError(t, await api.put('/transactions/inflight/txn_unknown', { status: 'commit' }), 404, 'TXN_NOT_FOUND', 'then the hold');
    await api.put(path, { status: 'commit', precise_amount: 60, skip_queue: true });
    checkError(t, await api.put(path, { status: 'commit', precise_amount: 41, skip_queue: true }), 400, 'TXN_COMMIT_AMOUNT_EXCEEDED', 'above the remainder');
    await api.put(path, { status: 'void', skip_queue: true });
    checkError(t, await api.put(path, { status: 'void', skip_queue: true }), 409, 'TXN_ALREADY_VOIDED');
    checkError(t, await api.put(path, { status: 'commit', skip_queue: true }), 409, 'TXN_ALREADY_VOIDED', 'commit after void');
    checkError(t, await api.put(path, { status: 'commit' }), 409, 'TXN_ALREADY_VOIDED', 'queued commit after void');
    checkError(t, await api.put('/transactions/inflight/txn_nope', { status: 'void' }), 404, 'TXN_NOT_FOUND');
    checkError(t, await api.put('/transactions/inflight/txn_nope', { status: 'commit', precise_amount: 5 }), 404, 'TXN_NOT_FOUND', 'commit of unknown');
  });

  t.test('refunds', async (t) => {
    const alice = fresh('alice');
    await api.fund(alice, 1000);
    const bob = fresh('bob');
    const original = await transferNow(alice, bob, 100);
    checkError(t, await api.post('/refund-transaction/txn_nope'), 404, 'TXN_NOT_FOUND');
    checkError(t, await api.request('POST', `/refund-transaction/${original.transaction_id}`, '{"skip_queue": tr'), 400, 'GEN_MALFORMED_REQUEST');

    // A queued refund holds the lock: a second one sent right behind it finds it still waiting.
    const [queued, locked, lockedSync] = await pipelined(server.url, [
      { method: 'POST', path: `/refund-transaction/${original.transaction_id}` },
      { method: 'POST', path: `/refund-transaction/${original.transaction_id}` },
      { method: 'POST', path: `/refund-transaction/${original.transaction_id}`, body: { skip_queue: true } },
    ]);
    t.equal(queued?.status, 201);
    t.equal(queued?.body.status, 'QUEUED');
    t.equal(locked?.status, 423);
    t.equal(locked?.body.error_detail.code, 'GEN_RESOURCE_LOCKED');
    t.equal(lockedSync?.status, 423, 'a synchronous refund too');
    t.equal(lockedSync?.body.error_detail.code, 'GEN_RESOURCE_LOCKED');
    t.equal((await api.settled(queued?.body.transaction_id)).status, 'APPLIED');
    checkError(t, await api.post(`/refund-transaction/${original.transaction_id}`, { skip_queue: true }), 409, 'GEN_CONFLICT', 'already refunded');
    checkError(t, await api.post(`/refund-transaction/${original.transaction_id}`), 409, 'GEN_CONFLICT', 'already refunded (queued)');

    const rejected = await api.post('/transactions', { description: 'test', precise_amount: 5, currency: 'USD', source: fresh('empty'), destination: bob });
    t.equal((await api.settled(rejected.body.transaction_id)).status, 'REJECTED');
    const split = await api.post('/transactions', {
      description: 'test', precise_amount: 10, currency: 'USD', source: alice, skip_queue: true,
      destinations: [{ identifier: fresh('x'), distribution: '50%' }, { identifier: fresh('y'), distribution: '50%' }],
    });
    const { hold } = await openHold(100);
    const child = await api.put(`/transactions/inflight/${hold.transaction_id}`, { status: 'commit', precise_amount: 10, skip_queue: true });
    const open = await openHold(100);
    for (const [name, id] of [
      ['a REJECTED transaction', rejected.body.transaction_id],
      ['a leg of a split', split.body.legs[0]],
      ['the commit child of a hold', child.body.transaction_id],
      ['a hold with nothing committed', open.hold.transaction_id],
    ]) {
      checkError(t, await api.post(`/refund-transaction/${id}`, { skip_queue: true }), 400, 'TXN_NOT_REFUNDABLE', name);
    }
    const refundedHold = await api.post(`/refund-transaction/${hold.transaction_id}`, { skip_queue: true });
    t.equal(refundedHold.status, 201, 'the hold itself refunds its committed part');
    t.equal(refundedHold.body.precise_amount, 10);
    const refundedSplit = await api.post(`/refund-transaction/${split.body.transaction_id}`, { skip_queue: true });
    t.equal(refundedSplit.status, 201, 'the split refunds as a reversed split');
    t.equal(refundedSplit.body.status, 'APPLIED');
    t.equal(refundedSplit.body.precise_amount, 10);

    // A refund that fails for funds may be tried again once the money is there.
    const carol = fresh('carol');
    const second = await transferNow(alice, carol, 100);
    await transferNow(carol, fresh('dave'), 100);
    checkError(t, await api.post(`/refund-transaction/${second.transaction_id}`, { skip_queue: true }), 400, 'TXN_INSUFFICIENT_FUNDS', 'refund without funds');
    const queuedShort = await api.post(`/refund-transaction/${second.transaction_id}`);
    t.equal((await api.settled(queuedShort.body.transaction_id)).status, 'REJECTED', 'a queued refund without funds is REJECTED');
    await api.fund(carol, 100);
    const retried = await api.post(`/refund-transaction/${second.transaction_id}`, { skip_queue: true });
    t.equal(retried.status, 201, 'and may be retried');
    t.equal(retried.body.status, 'APPLIED');
  });

  t.test('invalid distributions', async (t) => {
    const alice = fresh('alice');
    await api.fund(alice, 1000);
    const cases: Array<[string, Array<Record<string, unknown>>]> = [
      ['over 100%', [{ distribution: '60%' }, { distribution: '50%' }]],
      ['fixed over the total', [{ distribution: '101' }, { distribution: 'left' }]],
      ['precise_distribution over the total', [{ precise_distribution: 101 }, { distribution: 'left' }]],
      ['two left', [{ distribution: 'left' }, { distribution: 'left' }]],
      ['shares under the total without left', [{ distribution: '50%' }, { distribution: '10' }]],
    ];
    for (const [name, shares] of cases) {
      const named = shares.map((share) => ({ identifier: fresh('share'), ...share }));
      await writesNothing(t, name, async () => {
        checkError(t, await api.post('/transactions', { description: 'test', precise_amount: 100, currency: 'USD', sources: named, destination: fresh('to') }), 400, 'TXN_INVALID_DISTRIBUTION', `${name} (sources)`);
        checkError(t, await api.post('/transactions', { description: 'test', precise_amount: 100, currency: 'USD', source: alice, destinations: named, skip_queue: true }), 400, 'TXN_INVALID_DISTRIBUTION', `${name} (destinations)`);
      });
    }
    checkError(t, await api.post('/transactions', {
      description: 'test', precise_amount: 100, currency: 'USD', source: alice, destinations: [{ identifier: fresh('x'), distribution: 'lots' }],
    }), 400, 'TXN_VALIDATION_ERROR', 'a distribution that is not one at all');
  });
});

t.test('dry runs', async (t) => {
  t.test('create: a single transfer, as projected and then for real', async (t) => {
    const alice = fresh('alice');
    const aliceId = await api.fund(alice, 1000);
    const bob = fresh('bob');
    const bobId = await api.fund(bob, 1);
    const body = { description: 'test', precise_amount: 250, currency: 'USD', source: alice, destination: bob, reference: `dry-${counter}` };
    let projection: any;
    await writesNothing(t, 'create dry run', async () => {
      projection = await api.post('/transactions', { ...body, dry_run: true });
    });
    t.equal(projection.status, 200);
    checkProjection(t, projection.body, 'create');
    t.equal(projection.body.would_apply, true);
    t.equal(projection.body.status, 'APPLIED');
    t.equal(projection.body.precise_amount, '250');
    t.equal(projection.body.amount, 250);
    t.equal(projection.body.reference, body.reference);
    t.equal(projected(projection.body, aliceId)?.role, 'source');
    t.equal(projected(projection.body, bobId)?.role, 'destination');
    const aliceAfter = await checkCurrent(t, projection.body, aliceId);
    const bobAfter = await checkCurrent(t, projection.body, bobId);
    t.equal(aliceAfter.balance, '750');
    t.equal(bobAfter.balance, '251');
    t.equal((await api.get(`/transactions/reference/${body.reference}`)).status, 404, 'the reference is still free');
    await transferNow(alice, bob, 250, { reference: body.reference });
    await checkResulting(t, aliceAfter, aliceId);
    await checkResulting(t, bobAfter, bobId);

    await writesNothing(t, 'rejected create dry run', async () => {
      const short = await api.post('/transactions', { ...body, reference: '', precise_amount: 751, dry_run: true });
      t.equal(short.status, 200, 'a dry run that would be rejected still answers 200');
      checkProjection(t, short.body, 'create');
      t.equal(short.body.would_apply, false);
      t.same(short.body.rejection.code, 'TXN_INSUFFICIENT_FUNDS');
      t.same(short.body.rejection.reason, 'insufficient_funds');
      const newName = fresh('new');
      const toNew = await api.post('/transactions', { ...body, reference: '', destination: newName, dry_run: true });
      t.equal(toNew.body.would_apply, true, 'a transfer to a balance that does not exist yet');
      t.ok(toNew.body.balances.some((entry: any) => entry.balance_id === newName), 'shows it by name');
      const hold = await api.post('/transactions', { ...body, reference: '', inflight: true, dry_run: true });
      t.equal(hold.body.status, 'INFLIGHT');
      t.equal(projected(hold.body, aliceId)?.resulting_inflight_debit_balance, '250');
      const scheduled = await api.post('/transactions', { ...body, reference: '', scheduled_for: '2099-01-01 00:00:00', dry_run: true });
      t.equal(scheduled.status, 200, 'a scheduled dry run');
      t.equal(scheduled.body.dry_run, true);
    });
  });

  t.test('create: a split, with legs', async (t) => {
    const a = fresh('a');
    const b = fresh('b');
    const aId = await api.fund(a, 1000);
    const bId = await api.fund(b, 1000);
    const c = fresh('c');
    const body = {
      description: 'test', precise_amount: 1001, precision: 100, currency: 'USD', destination: c,
      sources: [{ identifier: a, distribution: '33.33%' }, { identifier: b, distribution: 'left' }],
    };
    let projection: any;
    await writesNothing(t, 'split dry run', async () => {
      projection = await api.post('/transactions', { ...body, dry_run: true });
    });
    checkProjection(t, projection.body, 'create');
    t.equal(projection.body.would_apply, true);
    t.same(projection.body.legs, [
      { identifier: a, role: 'source', precise_amount: '333', amount: 3.33 },
      { identifier: b, role: 'source', precise_amount: '668', amount: 6.68 },
    ]);
    const aAfter = await checkCurrent(t, projection.body, aId);
    const bAfter = await checkCurrent(t, projection.body, bId);
    const real = await api.post('/transactions', { ...body, skip_queue: true });
    t.equal(real.status, 201);
    await checkResulting(t, aAfter, aId);
    await checkResulting(t, bAfter, bId);

    await writesNothing(t, 'rejected split dry run', async () => {
      const atomic = await api.post('/transactions', { ...body, precise_amount: 20000, atomic: true, dry_run: true });
      t.equal(atomic.status, 200);
      t.equal(atomic.body.would_apply, false);
      t.equal(atomic.body.rejection.code, 'TXN_INSUFFICIENT_FUNDS');
      const invalid = await api.post('/transactions', { ...body, sources: [{ identifier: a, distribution: 'left' }, { identifier: b, distribution: 'left' }], dry_run: true });
      t.equal(invalid.status, 200);
      t.equal(invalid.body.would_apply, false);
      t.equal(invalid.body.rejection.code, 'TXN_INVALID_DISTRIBUTION');
    });
  });

  t.test('bulk', async (t) => {
    const alice = fresh('alice');
    const aliceId = await api.fund(alice, 100);
    const items = [60, 30].map((amount) => ({ description: 'test', precise_amount: amount, currency: 'USD', source: alice, destination: fresh('to') }));
    await writesNothing(t, 'bulk dry runs', async () => {
      const fits = await api.post('/transactions/bulk', { transactions: items, atomic: true, dry_run: true });
      t.equal(fits.status, 200);
      checkProjection(t, fits.body, 'bulk');
      t.equal(fits.body.would_apply, true);
      t.equal(fits.body.transaction_count, 2);
      t.equal(projected(fits.body, aliceId)?.resulting_balance, '10');
      const tooMuch = await api.post('/transactions/bulk', { transactions: [...items, { ...items[0] }], atomic: true, dry_run: true });
      t.equal(tooMuch.status, 200);
      t.equal(tooMuch.body.would_apply, false);
      t.equal(tooMuch.body.rejection.code, 'TXN_INSUFFICIENT_FUNDS');
      t.equal(tooMuch.body.failed_index, 2);
      // Blnk's shape beside the summary: a projection per item, and whether they were projected together.
      t.match(tooMuch.body, { cumulative: true, atomic: true });
      t.same(tooMuch.body.results.map((item: { would_apply: boolean }) => item.would_apply), [true, true, false], 'the third item is the one that fails');
      t.equal(tooMuch.body.results[2].rejection.code, 'TXN_INSUFFICIENT_FUNDS');
      t.equal(tooMuch.body.results[2].status, undefined, 'a rejected item has no status (Blnk\'s Finalize)');
      const queued = await api.post('/transactions/bulk', { transactions: [...items, { ...items[0] }], dry_run: true });
      t.match(queued.body, { cumulative: false, atomic: false, would_apply: true }, 'queued: each item on its own against the balances now');
      t.equal(queued.body.balances, undefined, 'no combined effect without an order');
      t.ok(queued.body.notes.length > 0, 'a note says how it was projected');
      // A repeated reference is named in a note, queued or decided at once.
      const twice = [{ ...items[0], reference: 'dry-twice' }, { ...items[1], reference: 'dry-twice' }];
      for (const skip_queue of [false, true]) {
        const repeated = await api.post('/transactions/bulk', { transactions: twice, skip_queue, dry_run: true });
        t.equal(repeated.status, 200);
        t.match(repeated.body, { cumulative: skip_queue, would_apply: false });
        t.ok(repeated.body.notes.some((note: string) => note.includes('reference dry-twice of item 1 repeats item 0')), `skip_queue ${skip_queue}: a note names the repeated reference`);
      }
    });
  });

  t.test('inflight commit and void', async (t) => {
    const { source, destination, hold } = await openHold(300);
    const path = `/transactions/inflight/${hold.transaction_id}`;
    let commit: any;
    let voided: any;
    await writesNothing(t, 'inflight dry runs', async () => {
      commit = await api.put(path, { status: 'commit', precise_amount: 100, dry_run: true });
      voided = await api.put(path, { status: 'void', dry_run: true });
      const exceeded = await api.put(path, { status: 'commit', precise_amount: 301, dry_run: true });
      t.equal(exceeded.status, 200);
      checkProjection(t, exceeded.body, 'commit');
      t.equal(exceeded.body.would_apply, false);
      t.same([exceeded.body.rejection.code, exceeded.body.rejection.reason], ['TXN_COMMIT_AMOUNT_EXCEEDED', 'commit_amount_exceeded']);
    });
    t.equal(commit.status, 200);
    checkProjection(t, commit.body, 'commit');
    t.equal(commit.body.would_apply, true);
    t.equal(commit.body.status, 'APPLIED');
    t.equal(commit.body.precise_amount, '100');
    checkProjection(t, voided.body, 'void');
    t.equal(voided.body.status, 'VOID');
    t.equal((await api.transaction(hold.transaction_id)).status, 'INFLIGHT', 'the hold stays');
    const sourceAfter = await checkCurrent(t, commit.body, source);
    const destinationAfter = await checkCurrent(t, commit.body, destination);
    t.same([sourceAfter.balance, sourceAfter.inflight_debit_balance, sourceAfter.available], ['900', '200', '700']);
    await api.put(path, { status: 'commit', precise_amount: 100, skip_queue: true });
    await checkResulting(t, sourceAfter, source);
    await checkResulting(t, destinationAfter, destination);
    const voidNow = await api.put(path, { status: 'void', dry_run: true });
    const sourceVoided = await checkCurrent(t, voidNow.body, source);
    await api.put(path, { status: 'void', skip_queue: true });
    await checkResulting(t, sourceVoided, source);
    await writesNothing(t, 'dry run on a closed hold', async () => {
      const late = await api.put(path, { status: 'void', dry_run: true });
      t.equal(late.status, 200);
      t.equal(late.body.would_apply, false);
      t.equal(late.body.rejection.code, 'TXN_ALREADY_VOIDED');
    });
  });

  t.test('refund', async (t) => {
    const alice = fresh('alice');
    const aliceId = await api.fund(alice, 1000);
    const bob = fresh('bob');
    const original = await transferNow(alice, bob, 400, { description: 'rent' });
    const bobId = original.destination;
    let projection: any;
    await writesNothing(t, 'refund dry run', async () => {
      projection = await api.post(`/refund-transaction/${original.transaction_id}`, { dry_run: true, meta_data: { why: 'dup' } });
    });
    t.equal(projection.status, 200);
    checkProjection(t, projection.body, 'refund');
    t.equal(projection.body.would_apply, true);
    t.equal(projection.body.reference, `${original.transaction_id}_refund`);
    t.ok(Array.isArray(projection.body.notes) && projection.body.notes.length > 0, 'has notes');
    t.ok(projection.body.notes.every((note: unknown) => typeof note === 'string'));
    t.equal(projected(projection.body, bobId)?.role, 'source', 'the original destination is the source');
    t.equal(projected(projection.body, aliceId)?.role, 'destination');
    const bobAfter = await checkCurrent(t, projection.body, bobId);
    const aliceAfter = await checkCurrent(t, projection.body, aliceId);
    t.equal((await api.get(`/transactions/reference/${original.transaction_id}_refund`)).status, 404, 'no refund recorded');
    await api.post(`/refund-transaction/${original.transaction_id}`, { skip_queue: true });
    await checkResulting(t, bobAfter, bobId);
    await checkResulting(t, aliceAfter, aliceId);

    const second = await transferNow(alice, bob, 100);
    await transferNow(bob, fresh('elsewhere'), 100);
    const { hold } = await openHold(10);
    await writesNothing(t, 'rejected refund dry runs', async () => {
      const again = await api.post(`/refund-transaction/${original.transaction_id}`, { dry_run: true });
      t.equal(again.status, 200);
      checkProjection(t, again.body, 'refund');
      t.equal(again.body.would_apply, false);
      t.equal(again.body.rejection.code, 'GEN_CONFLICT', 'already refunded');
      const short = await api.post(`/refund-transaction/${second.transaction_id}`, { dry_run: true });
      t.equal(short.status, 200);
      t.equal(short.body.would_apply, false);
      t.same([short.body.rejection.code, short.body.rejection.reason], ['TXN_INSUFFICIENT_FUNDS', 'insufficient_funds'], 'short of funds');
      const nothingCommitted = await api.post(`/refund-transaction/${hold.transaction_id}`, { dry_run: true });
      t.equal(nothingCommitted.status, 200);
      t.equal(nothingCommitted.body.rejection.code, 'TXN_NOT_REFUNDABLE', 'not refundable');
      // An unknown id is a missing resource, for dry runs as for real ones (commit, void and refund alike).
      const unknown = await api.post('/refund-transaction/txn_nope', { dry_run: true });
      t.equal(unknown.status, 404, 'an unknown id is not found, dry run or not');
      t.equal(unknown.body.error_detail.code, 'TXN_NOT_FOUND');
    });
  });
});

t.test('bulk', async (t) => {
  t.test('atomic: all recorded in one go', async (t) => {
    const alice = fresh('alice');
    const aliceId = await api.fund(alice, 100);
    const tag = `bulk-${counter}`;
    const items = [10, 20, 30].map((amount, index) => ({ description: 'test', precise_amount: amount, currency: 'USD', source: alice, destination: fresh('to'), reference: `${tag}-${index}` }));
    const seq = server.runtime.log.appendedSeq;
    const batch = await api.post('/transactions/bulk', { transactions: items, atomic: true });
    t.equal(batch.status, 201);
    t.match(batch.body, { status: 'applied', transaction_count: 3 }, 'batch statuses in lower case, as Blnk writes them');
    t.match(batch.body.batch_id, /^bulk_/);
    t.equal(server.runtime.log.appendedSeq, seq + 1, 'one log record');
    for (const index of [0, 1, 2]) {
      const record = (await api.get(`/transactions/reference/${tag}-${index}`)).body;
      t.equal(record.status, 'APPLIED');
      t.equal(record.batch_id, batch.body.batch_id);
    }
    t.same((await api.amounts(aliceId)).balance, 40n);
    await writesNothing(t, 'atomic batch that cannot go', async () => {
      const failed = await api.post('/transactions/bulk', { transactions: items.map((item) => ({ ...item, reference: '' })), atomic: true });
      checkError(t, failed, 400, 'TXN_INSUFFICIENT_FUNDS');
      t.match(failed.body.error_detail.message, /^transaction 2:/, 'names the item (40 left: 10 and 20 go, 30 does not)');
    });
  });

  t.test('not atomic: stops at the first failure and reports it', async (t) => {
    const alice = fresh('alice');
    const aliceId = await api.fund(alice, 100);
    const item = (amount: number) => ({ description: 'test', precise_amount: amount, currency: 'USD', source: alice, destination: fresh('to') });
    const partial = await api.post('/transactions/bulk', { transactions: [item(30), item(500), item(10)], skip_queue: true });
    t.equal(partial.status, 201);
    t.equal(partial.body.status, 'partial');
    t.equal(partial.body.transaction_count, 1);
    t.equal(partial.body.failed.index, 1);
    t.equal(partial.body.failed.error.code, 'TXN_INSUFFICIENT_FUNDS');
    t.same((await api.amounts(aliceId)).balance, 70n, 'only the first item moved');
    await writesNothing(t, 'a batch whose first item fails', async () => {
      checkError(t, await api.post('/transactions/bulk', { transactions: [item(500), item(1)], skip_queue: true }), 400, 'TXN_INSUFFICIENT_FUNDS');
    });
    const reused = `dup-${counter}`;
    const duplicate = await api.post('/transactions/bulk', {
      transactions: [{ ...item(1), reference: reused }, { ...item(1), reference: reused }],
    });
    t.equal(duplicate.body.status, 'partial', 'a queued batch stops at a reused reference');
    t.equal(duplicate.body.failed.error.code, 'TXN_DUPLICATE_REFERENCE');

    const tag = `queued-${counter}`;
    const queued = await api.post('/transactions/bulk', { transactions: [5, 500, 5].map((amount, index) => ({ ...item(amount), reference: `${tag}-${index}` })) });
    t.equal(queued.status, 201);
    t.equal(queued.body.status, 'queued');
    const statuses = [];
    for (const index of [0, 1, 2]) {
      const id = (await api.get(`/transactions/reference/${tag}-${index}`)).body.transaction_id;
      statuses.push((await api.settled(id)).status);
    }
    t.same(statuses, ['APPLIED', 'REJECTED', 'APPLIED'], 'queued items are checked one by one when applied');
  });

  t.test('inflight: every item is a hold', async (t) => {
    const alice = fresh('alice');
    const aliceId = await api.fund(alice, 100);
    const tag = `holds-${counter}`;
    const batch = await api.post('/transactions/bulk', {
      transactions: [10, 20].map((amount, index) => ({ description: 'test', precise_amount: amount, currency: 'USD', source: alice, destination: fresh('to'), reference: `${tag}-${index}` })),
      inflight: true, atomic: true,
    });
    t.equal(batch.body.status, 'inflight');
    t.same(await api.amounts(aliceId), { balance: 100n, inflight_debit: 30n, inflight_credit: 0n, available: 70n });
    t.equal((await api.get(`/transactions/reference/${tag}-0`)).body.status, 'INFLIGHT');
    // The batch id stands for all its holds, as in Blnk: amounts are refused, the holds commit whole.
    const batchPath = `/transactions/inflight/${batch.body.batch_id}`;
    checkError(t, await api.put(batchPath, { status: 'commit', precise_amount: 5, skip_queue: true }), 400, 'TXN_PARTIAL_NOT_ALLOWED');
    const committed = await api.put(batchPath, { status: 'commit', skip_queue: true });
    t.equal(committed.status, 200);
    t.equal(committed.body.status, 'APPLIED', 'the first hold\'s commit');
    t.same(await api.amounts(aliceId), { balance: 70n, inflight_debit: 0n, inflight_credit: 0n, available: 70n }, 'every hold of the batch committed');
    checkError(t, await api.put(batchPath, { status: 'void', skip_queue: true }), 404, 'TXN_NOT_FOUND', 'no open hold left in the batch');
    const again = await api.post('/transactions/bulk', {
      transactions: [7, 8].map((amount) => ({ description: 'test', precise_amount: amount, currency: 'USD', source: alice, destination: fresh('to') })),
      inflight: true, skip_queue: true, run_async: true,
    });
    t.equal(again.status, 202, 'run_async answers 202, as Blnk');
    t.match(again.body, { message: 'Bulk transaction processing started', status: 'inflight', transaction_count: 2 });
    const queuedVoid = await api.put(`/transactions/inflight/${again.body.batch_id}`, { status: 'void' });
    t.match(queuedVoid.body, { transaction_id: again.body.batch_id, queued: true, transaction_count: 2 });
    let released = await api.amounts(aliceId);
    for (let tries = 0; released.inflight_debit !== 0n && tries < 200; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      released = await api.amounts(aliceId);
    }
    t.same(released, { balance: 70n, inflight_debit: 0n, inflight_credit: 0n, available: 70n }, 'the queued voids released both holds');
  });

  t.test('limits: 10,000 items are accepted, 10,001 refused', async (t) => {
    const sink = fresh('sink');
    const many = Array.from({ length: 10_000 }, () => ({ description: 'test', precise_amount: 1, currency: 'USD', source: '@world', destination: sink, allow_overdraft: true }));
    const accepted = await api.post('/transactions/bulk', { transactions: many, atomic: true });
    t.equal(accepted.status, 201);
    t.equal(accepted.body.transaction_count, 10_000);
    t.equal((await api.balanceByName(sink)).balance, 10_000);
    await writesNothing(t, 'an oversized batch', async () => {
      checkError(t, await api.post('/transactions/bulk', { transactions: [...many, many[0]], atomic: true }), 400, 'TXN_BULK_LIMIT_EXCEEDED');
    });
    checkError(t, await api.post('/transactions/bulk', { transactions: [] }), 400, 'TXN_BULK_EMPTY', 'an empty batch');
    checkError(t, await api.post('/transactions/bulk', {}), 400, 'TXN_BULK_EMPTY', 'no list at all');
    const badItem = await api.post('/transactions/bulk', { transactions: [{ description: 'test', precise_amount: 1, currency: 'USD', source: '@a', destination: '@b', precision: 10.5 }] });
    checkError(t, badItem, 400, 'TXN_PRECISION_NOT_INTEGER', 'a fractional precision in an item');
    t.ok(badItem.body.error_detail.details['transactions.0.precision'], 'naming the item and field');
  });

  t.test('limits: at most 10,000 legs in one request, splits counting sources + destinations - 1', async (t) => {
    const tag = fresh('legs');
    const shares = (side: string) => Array.from({ length: 100 }, (_, index) => ({ identifier: `${tag}-${side}-${index}`, distribution: '1%' }));
    const split = (index: number) => ({
      description: 'test', precise_amount: 10_000, currency: 'USD', reference: `${tag}-${index}`, allow_overdraft: true, sources: shares('s'), destinations: shares('d'),
    });
    await writesNothing(t, 'a batch over the leg limit', async () => {
      const over = await api.post('/transactions/bulk', { transactions: Array.from({ length: 51 }, (_, index) => split(index)), atomic: true });
      checkError(t, over, 400, 'TXN_BULK_LIMIT_EXCEEDED', '51 splits of 199 legs');
      t.match(over.body.error_detail.details.transactions, /10149 legs/);
    });
    const within = await api.post('/transactions/bulk', { transactions: Array.from({ length: 50 }, (_, index) => split(index)), atomic: true });
    t.equal(within.status, 201, '50 splits of 199 legs (9,950) are accepted');
    t.equal((await api.get(`/transactions/reference/${tag}-49`)).body.status, 'APPLIED');
  });
});

t.test('bulk inflight commit and void', async (t) => {
  const one = await openHold(100);
  const two = await openHold(100);
  const three = await openHold(100);
  const commit = await api.post('/transactions/inflight/bulk/commit', {
    skip_queue: true,
    transactions: [
      { transaction_id: one.hold.transaction_id },
      { transaction_id: two.hold.transaction_id, precise_amount: 40 },
      { transaction_id: 'txn_nope' },
      { transaction_id: three.hold.transaction_id, amount: 101 },
    ],
  });
  t.equal(commit.status, 200);
  t.match(commit.body, { succeeded: 2, failed: 2 }, "Blnk's counts");
  const results = commit.body.results as any[];
  t.same(results.map((result) => [result.transaction_id, result.status, result.code]), [
    [one.hold.transaction_id, 'succeeded', undefined], [two.hold.transaction_id, 'succeeded', undefined],
    ['txn_nope', 'failed', 'NOT_FOUND'], [three.hold.transaction_id, 'failed', 'INVALID_AMOUNT'],
  ], "with Blnk's per-item codes");
  t.equal(results[0].transaction.status, 'APPLIED');
  t.equal(results[0].transaction.parent_transaction, one.hold.transaction_id);
  t.equal(results[1].transaction.precise_amount, 40);
  t.type(results[3].message, 'string');
  t.equal((await api.transaction(one.hold.transaction_id)).status, 'APPLIED', 'carried out before the answer');
  t.equal((await api.transaction(two.hold.transaction_id)).precise_committed_amount, 40);

  const voided = await api.post('/transactions/inflight/bulk/void', {
    skip_queue: true,
    transaction_ids: [two.hold.transaction_id, one.hold.transaction_id, three.hold.transaction_id, three.hold.transaction_id],
  });
  t.equal(voided.status, 200);
  t.same((voided.body.results as any[]).map((result) => [result.status, result.transaction?.status ?? result.code]), [
    ['succeeded', 'VOID'], ['failed', 'ALREADY_COMMITTED'], ['succeeded', 'VOID'], ['failed', 'ALREADY_VOIDED'],
  ]);
  t.same(await api.amounts(two.source), { balance: 960n, inflight_debit: 0n, inflight_credit: 0n, available: 960n });
  t.same(await api.amounts(three.source), { balance: 1000n, inflight_debit: 0n, inflight_credit: 0n, available: 1000n });

  const zero = await api.post('/transactions/inflight/bulk/commit', { skip_queue: true, transactions: [{ transaction_id: three.hold.transaction_id, precise_amount: 0 }] });
  t.same([zero.body.results[0].status, zero.body.results[0].code], ['failed', 'INVALID_AMOUNT'], 'a zero commit amount in a bulk is refused too');

  const tooMany = Array.from({ length: 101 }, () => three.hold.transaction_id);
  checkError(t, await api.post('/transactions/inflight/bulk/void', { transaction_ids: tooMany }), 400, 'TXN_BULK_LIMIT_EXCEEDED', '101 voids');
  checkError(t, await api.post('/transactions/inflight/bulk/commit', { transactions: tooMany.map((id) => ({ transaction_id: id })) }), 400, 'TXN_BULK_LIMIT_EXCEEDED', '101 commits');
  checkError(t, await api.post('/transactions/inflight/bulk/void', { transaction_ids: [] }), 400, 'TXN_BULK_EMPTY', 'no voids');
  checkError(t, await api.post('/transactions/inflight/bulk/commit', { transactions: null }), 400, 'TXN_BULK_EMPTY', 'no commits');
  const hundred = await api.post('/transactions/inflight/bulk/void', { skip_queue: true, transaction_ids: tooMany.slice(1) });
  t.equal(hundred.status, 200, '100 is the limit');
  t.equal(hundred.body.results.length, 100);
});

t.test('bulk inflight commit and void are queued by default, as in Blnk', async (t) => {
  const one = await openHold(100);
  const two = await openHold(100);
  const queued = await api.post('/transactions/inflight/bulk/commit', {
    transactions: [{ transaction_id: one.hold.transaction_id }, { transaction_id: one.hold.transaction_id }, { transaction_id: 'txn_nope' }],
  });
  t.equal(queued.status, 200);
  t.same(queued.body, {
    succeeded: 2,
    failed: 1,
    results: [
      { transaction_id: one.hold.transaction_id, status: 'queued', code: 'QUEUED' },
      { transaction_id: one.hold.transaction_id, status: 'queued', code: 'ALREADY_QUEUED', message: 'a commit or void is already queued for this transaction' },
      { transaction_id: 'txn_nope', status: 'failed', code: 'NOT_FOUND', message: 'transaction txn_nope not found' },
    ],
  });
  const voided = await api.post('/transactions/inflight/bulk/void', { transaction_ids: [two.hold.transaction_id] });
  t.same(voided.body.results, [{ transaction_id: two.hold.transaction_id, status: 'queued', code: 'QUEUED' }]);
  t.equal((await api.waitForTransaction(one.hold.transaction_id, (record) => record.status !== 'INFLIGHT')).status, 'APPLIED', 'applied in its turn');
  t.equal((await api.waitForTransaction(two.hold.transaction_id, (record) => record.status !== 'INFLIGHT')).status, 'VOID');
});

t.test('bulk inflight commit and void as dry runs write nothing and project each item in order', async (t) => {
  const one = await openHold(100);
  const two = await openHold(100);
  const before = [await api.amounts(one.source), await api.amounts(two.source), await api.amounts(one.destination)];
  let commit: any;
  let voided: any;
  await writesNothing(t, 'bulk dry runs', async () => {
    commit = await api.post('/transactions/inflight/bulk/commit', {
      dry_run: true,
      transactions: [
        { transaction_id: one.hold.transaction_id, precise_amount: 30 },
        { transaction_id: one.hold.transaction_id },
        { transaction_id: one.hold.transaction_id, precise_amount: 1 },
        { transaction_id: 'txn_nope' },
        { transaction_id: two.hold.transaction_id, precise_amount: 0 },
      ],
    });
    voided = await api.post('/transactions/inflight/bulk/void', { dry_run: true, transaction_ids: [two.hold.transaction_id, two.hold.transaction_id] });
  });
  t.equal(commit.status, 200);
  t.equal(commit.body.dry_run, true);
  const [partial, rest, more, unknown, zero] = commit.body.results as any[];
  checkProjection(t, partial, 'commit');
  t.equal(partial.transaction_id, one.hold.transaction_id);
  t.equal(partial.would_apply, true);
  t.equal(partial.precise_amount, '30');
  const sourceOf = (projection: any) => projection.balances.find((entry: any) => entry.role === 'source');
  t.equal(sourceOf(partial).current_inflight_debit_balance, '100');
  t.equal(sourceOf(partial).resulting_inflight_debit_balance, '70');
  t.equal(rest.would_apply, true, 'the second item commits what the first left');
  t.equal(rest.precise_amount, '70');
  t.equal(sourceOf(rest).current_inflight_debit_balance, '70', 'current is after the items before it');
  t.equal(sourceOf(rest).resulting_inflight_debit_balance, '0');
  t.equal(more.would_apply, false, 'nothing is left for the third');
  t.equal(more.rejection.code, 'TXN_ALREADY_COMMITTED');
  t.same([unknown.would_apply, unknown.rejection.code], [false, 'TXN_NOT_FOUND']);
  t.same([zero.would_apply, zero.rejection.code], [false, 'TXN_INVALID_AMOUNT']);
  t.equal(commit.body.would_apply, false, 'the batch would not apply whole');
  t.same((voided.body.results as any[]).map((result) => [result.would_apply, result.rejection?.code]), [[true, undefined], [false, 'TXN_ALREADY_VOIDED']]);
  t.same([await api.amounts(one.source), await api.amounts(two.source), await api.amounts(one.destination)], before, 'no balance moved');
  t.equal((await api.transaction(one.hold.transaction_id)).status, 'INFLIGHT', 'the holds are still open');
  t.equal((await api.transaction(two.hold.transaction_id)).status, 'INFLIGHT');
});

t.test('real timers: expiry, auto-commit and schedules a second or two ahead', async (t) => {
  const payer = fresh('payer');
  const payerId = await api.fund(payer, 1000);
  const inAbout = (ms: number): string => new Date(Date.now() + ms).toISOString();
  const expiring = await api.post('/transactions', {
    description: 'test', precise_amount: 100, currency: 'USD', source: payer, destination: fresh('a'), inflight: true, skip_queue: true, inflight_expiry_date: inAbout(1500),
  });
  const committing = await api.post('/transactions', {
    description: 'test', precise_amount: 200, currency: 'USD', source: payer, destination: fresh('b'), inflight: true, skip_queue: true, inflight_commit_date: inAbout(1500),
  });
  await api.put(`/transactions/inflight/${committing.body.transaction_id}`, { status: 'commit', precise_amount: 50, skip_queue: true });
  const scheduledRfc = await api.post('/transactions', {
    description: 'test', precise_amount: 300, currency: 'USD', source: payer, destination: fresh('c'), scheduled_for: inAbout(1500),
  });
  // The plain form has whole seconds: the next whole second at least 1.5 s away, in UTC.
  const due = new Date(Math.ceil((Date.now() + 1500) / 1000) * 1000);
  const plain = due.toISOString().slice(0, 19).replace('T', ' ');
  const scheduledPlain = await api.post('/transactions', {
    description: 'test', precise_amount: 400, currency: 'USD', source: payer, destination: fresh('d'), scheduled_for: plain,
  });
  const scheduledShort = await api.post('/transactions', {
    description: 'test', precise_amount: 1000, currency: 'USD', source: payer, destination: fresh('e'), scheduled_for: inAbout(1800),
  });
  t.equal(expiring.body.status, 'INFLIGHT');
  t.equal(committing.body.status, 'INFLIGHT');
  t.equal(scheduledRfc.status, 201);
  t.equal(scheduledRfc.body.status, 'SCHEDULED');
  t.equal(scheduledPlain.body.status, 'SCHEDULED');
  t.equal(scheduledPlain.body.scheduled_for, `${plain.replace(' ', 'T')}Z`, '`YYYY-MM-DD hh:mm:ss` is read as UTC, and a whole second is written without a fraction, as Go writes it');
  t.same((await api.amounts(payerId)).balance, 950n, 'only the partial commit moved; scheduled transactions move nothing yet');

  const expired = await api.waitForTransaction(expiring.body.transaction_id, (record) => record.status !== 'INFLIGHT');
  t.equal(expired.status, 'VOID', 'the expiry date voided the hold');
  const committed = await api.waitForTransaction(committing.body.transaction_id, (record) => record.status !== 'INFLIGHT');
  t.equal(committed.status, 'APPLIED', 'the commit date committed the rest of the hold');
  t.equal(committed.precise_committed_amount, 200);
  t.equal((await api.settled(scheduledRfc.body.transaction_id)).status, 'APPLIED');
  t.equal((await api.settled(scheduledPlain.body.transaction_id)).status, 'APPLIED');
  const short = await api.settled(scheduledShort.body.transaction_id);
  t.equal(short.status, 'REJECTED', 'funds are checked when due: only 100 were left by then');
  t.equal(short.rejection.code, 'TXN_INSUFFICIENT_FUNDS');
  const children = (await api.recentTransactions(100)).filter((record) => record.parent_transaction === expiring.body.transaction_id);
  t.same(children.map((child) => [child.status, child.precise_amount]), [['VOID', 100]], 'the expiry left a VOID child');
  t.same(await api.amounts(payerId), { balance: 100n, inflight_debit: 0n, inflight_credit: 0n, available: 100n });
  checkError(t, await api.post('/transactions', {
    description: 'test', precise_amount: 1, currency: 'USD', source: payer, destination: fresh('f'), scheduled_for: 'next tuesday',
  }), 400, 'TXN_VALIDATION_ERROR', 'an unreadable date');
});

t.test('every balance still nets to zero, and matches its rebuild from the log', async (t) => {
  await checkZeroSumOverHttp(t, api);
  const balances = await api.allBalances();
  let mismatches = 0;
  for (const record of balances) {
    const rebuilt = (await api.get(`/balances/${record.balance_id}?from_source=true`)).body.balance;
    if (rebuilt.balance !== record.balance || rebuilt.credit_balance !== record.credit_balance || rebuilt.debit_balance !== record.debit_balance
      || rebuilt.inflight_debit_balance !== record.inflight_debit_balance || rebuilt.inflight_credit_balance !== record.inflight_credit_balance) {
      mismatches += 1;
      t.fail(`${record.balance_id} live ${record.balance} rebuilt ${rebuilt.balance}`);
    }
  }
  t.equal(mismatches, 0, `${balances.length} balances match their rebuild`);
});
