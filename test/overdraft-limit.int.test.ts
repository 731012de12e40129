// Blnk's `overdraft_limit` on every path that moves money, against the real server: the rule of Blnk's
// canProcessTransaction (allow_overdraft without a limit has no floor; a limit, with or without
// allow_overdraft, lets the source go down to minus the limit and no further), the limit read in major
// units times the precision exactly, and the same answer synchronously, queued, scheduled, for each
// source of a split, in a bulk, for a hold (whose commit then needs no new check), for a refund (which
// carries the original's terms), in dry runs (with the rejection's own code) and after a restart.

import fs from 'node:fs';
import t from 'tap';
import { checkError, checkZeroSumOverHttp, LedgerClient, sleep } from './helpers/ledger-client.js';
import { startTestServer, type TestServer } from './helpers/test-server.js';

let server: TestServer;
let api: LedgerClient;
let counter = 0;
const fresh = (label: string): string => `@${label}_${(counter += 1)}`;

t.before(async () => {
  server = await startTestServer();
  api = new LedgerClient(server.url);
});
t.teardown(async () => {
  await server?.stop();
  if (server) fs.rmSync(server.dataDir, { recursive: true, force: true });
});

/** A balance holding `funds` (smallest units), by name and id. */
async function funded(funds: number): Promise<{ name: string; id: string }> {
  const name = fresh('payer');
  if (funds > 0) return { name, id: await api.fund(name, funds) };
  const created = await api.post('/balances', { ledger_id: 'general_ledger_id', currency: 'USD', indicator: name });
  if (created.status !== 201) throw new Error(created.text);
  return { name, id: created.body.balance_id };
}

async function available(balanceId: string): Promise<bigint> {
  return (await api.amounts(balanceId)).available;
}

t.test('the issue: allow_overdraft with a limit of 600 stops a balance of 500 at -600', async (t) => {
  const payer = await funded(50_000);
  const body = { description: 'test', amount: 1200, precision: 100, currency: 'USD', source: payer.name, destination: fresh('payee'), allow_overdraft: true, overdraft_limit: 600, skip_queue: true };
  const refused = await api.post('/transactions', body);
  checkError(t, refused, 400, 'TXN_OVERDRAFT_LIMIT_EXCEEDED', 'sending 1,200 from 500 with a limit of 600');
  t.equal(refused.body.error_detail.details?.reason, 'overdraft_limit_exceeded');
  t.equal(await available(payer.id), 50_000n, 'nothing moved');
  const within = await api.post('/transactions', { ...body, amount: 1100 });
  t.equal(within.status, 201, within.text);
  t.equal(within.body.status, 'APPLIED');
  t.equal(within.body.overdraft_limit, 600, 'the limit is echoed in major units');
  t.equal(await available(payer.id), -60_000n, 'exactly at the limit');
  const more = await api.post('/transactions', { ...body, amount: 0.01 });
  checkError(t, more, 400, 'TXN_OVERDRAFT_LIMIT_EXCEEDED', 'one cent past the limit');
});

t.test('a limit without allow_overdraft is a limited overdraft, as in Blnk', async (t) => {
  const payer = await funded(500);
  const body = { description: 'test', precise_amount: 800, currency: 'USD', source: payer.name, destination: fresh('payee'), overdraft_limit: 300, skip_queue: true };
  const applied = await api.post('/transactions', body);
  t.equal(applied.status, 201, applied.text);
  t.equal(applied.body.allow_overdraft, false);
  t.equal(await available(payer.id), -300n);
  const past = await api.post('/transactions', { ...body, precise_amount: 1 });
  checkError(t, past, 400, 'TXN_OVERDRAFT_LIMIT_EXCEEDED', 'past the limit');
});

t.test('without a limit: allow_overdraft has no floor, and without it funds must cover the amount', async (t) => {
  const payer = await funded(100);
  const short = await api.post('/transactions', { description: 'test', precise_amount: 101, currency: 'USD', source: payer.name, destination: fresh('payee'), skip_queue: true });
  checkError(t, short, 400, 'TXN_INSUFFICIENT_FUNDS', 'no overdraft');
  const zero = await api.post('/transactions', { description: 'test', precise_amount: 101, currency: 'USD', source: payer.name, destination: fresh('payee'), skip_queue: true, overdraft_limit: 0 });
  checkError(t, zero, 400, 'TXN_INSUFFICIENT_FUNDS', 'a limit of 0 is no overdraft');
  const unlimited = await api.post('/transactions', { description: 'test', precise_amount: 1_000_000, currency: 'USD', source: payer.name, destination: fresh('payee'), skip_queue: true, allow_overdraft: true });
  t.equal(unlimited.status, 201, unlimited.text);
  t.equal(unlimited.body.overdraft_limit, 0);
  t.equal(await available(payer.id), -999_900n);
});

t.test('the limit is exact decimal arithmetic, and a bad limit is a 400 naming it', async (t) => {
  const payer = await funded(0);
  const body = { description: 'test', amount: 0.29, precision: 100, currency: 'USD', source: payer.name, destination: fresh('payee'), overdraft_limit: 0.29, skip_queue: true };
  const atLimit = await api.post('/transactions', body);
  t.equal(atLimit.status, 201, `0.29 at precision 100 is 29, not 28 (${atLimit.text})`);
  t.equal(await available(payer.id), -29n);
  for (const [limit, why] of [[-1, 'negative'], [0.295, 'needs rounding at precision 100'], ['ten', 'not a number'], [true, 'not a number']] as const) {
    const refused = await api.post('/transactions', { ...body, overdraft_limit: limit });
    checkError(t, refused, 400, 'TXN_VALIDATION_ERROR', `a limit that is ${why}`);
    t.ok(JSON.stringify(refused.body.error_detail).includes('overdraft_limit'), `${why}: the answer names overdraft_limit`);
  }
  const big = await api.post('/transactions', { ...body, amount: 1, overdraft_limit: '123456789012345678901234567890.12' });
  t.equal(big.status, 201, `a limit beyond a double's precision is exact (${big.text})`);
});

t.test('queued and scheduled transactions are checked against their limit when they are carried out', async (t) => {
  const payer = await funded(1000);
  const queued = await api.post('/transactions', { description: 'test', precise_amount: 1600, currency: 'USD', source: payer.name, destination: fresh('payee'), overdraft_limit: 500 });
  t.equal(queued.status, 201, queued.text);
  const rejected = await api.settled(queued.body.transaction_id);
  t.equal(rejected.status, 'REJECTED');
  t.equal(rejected.rejection?.code, 'TXN_OVERDRAFT_LIMIT_EXCEEDED', 'the queued one is rejected for the limit');
  const fits = await api.post('/transactions', { description: 'test', precise_amount: 1500, currency: 'USD', source: payer.name, destination: fresh('payee'), overdraft_limit: 500 });
  t.equal((await api.settled(fits.body.transaction_id)).status, 'APPLIED');
  t.equal(await available(payer.id), -500n);

  const other = await funded(100);
  const inASecond = new Date(Date.now() + 1200).toISOString();
  const scheduled = await api.post('/transactions', { description: 'test', precise_amount: 400, currency: 'USD', source: other.name, destination: fresh('payee'), overdraft_limit: 200, scheduled_for: inASecond });
  t.equal(scheduled.body.status, 'SCHEDULED', scheduled.text);
  const due = await api.waitForTransaction(scheduled.body.transaction_id, (record) => record.status !== 'SCHEDULED' && record.status !== 'QUEUED');
  t.equal(due.status, 'REJECTED', 'the scheduled one fell due and was refused');
  t.equal(due.rejection?.code, 'TXN_OVERDRAFT_LIMIT_EXCEEDED');
  t.equal(await available(other.id), 100n);
});

t.test('a split checks each source against the limit', async (t) => {
  const rich = await funded(10_000);
  const poor = await funded(100);
  const destination = fresh('payee');
  const body = {
    description: 'test', precise_amount: 1000, currency: 'USD', destination, skip_queue: true, overdraft_limit: 300,
    sources: [{ identifier: rich.name, distribution: '50%' }, { identifier: poor.name, distribution: 'left' }],
  };
  const refused = await api.post('/transactions', { ...body, atomic: true });
  checkError(t, refused, 400, 'TXN_OVERDRAFT_LIMIT_EXCEEDED', 'the poor source would go to -400');
  t.equal(await available(rich.id), 10_000n, 'atomic: the rich source kept its money');
  const fits = await api.post('/transactions', { ...body, precise_amount: 800 });
  t.equal(fits.status, 201, fits.text);
  t.equal(await available(poor.id), -300n, 'the poor source stopped exactly at its limit');
  t.equal(await available(rich.id), 9_600n);
});

t.test('bulk items each carry their own limit', async (t) => {
  const payer = await funded(100);
  const item = { description: 'test', precise_amount: 150, currency: 'USD', source: payer.name, destination: fresh('payee') };
  const atomic = await api.post('/transactions/bulk', {
    atomic: true, skip_queue: true,
    transactions: [{ ...item, overdraft_limit: 100 }, { ...item, overdraft_limit: 100 }],
  });
  t.not(atomic.status, 201, 'the second item would go to -200: the atomic batch fails');
  t.match(atomic.text, /TXN_OVERDRAFT_LIMIT_EXCEEDED/);
  t.equal(await available(payer.id), 100n, 'nothing of the atomic batch moved');
  const batch = await api.post('/transactions/bulk', {
    skip_queue: true,
    transactions: [{ ...item, overdraft_limit: 100 }, { ...item, overdraft_limit: 200 }],
  });
  t.equal(batch.status, 201, batch.text);
  t.equal(await available(payer.id), -200n);
});

t.test('a hold is checked against the limit; its commit needs no new check', async (t) => {
  const payer = await funded(100);
  const body = { description: 'test', precise_amount: 400, currency: 'USD', source: payer.name, destination: fresh('payee'), inflight: true, skip_queue: true };
  checkError(t, await api.post('/transactions', { ...body, overdraft_limit: 200 }), 400, 'TXN_OVERDRAFT_LIMIT_EXCEEDED', 'a hold past the limit');
  const hold = await api.post('/transactions', { ...body, overdraft_limit: 300 });
  t.equal(hold.body.status, 'INFLIGHT', hold.text);
  t.equal(await available(payer.id), -300n, 'the hold reserves down to the limit');
  const commit = await api.put(`/transactions/inflight/${hold.body.transaction_id}`, { status: 'commit', skip_queue: true });
  t.equal(commit.status, 200, commit.text);
  const after = await api.amounts(payer.id);
  t.equal(after.balance, -300n);
  t.equal(after.available, -300n);
});

t.test('a refund is checked by the same rule, with overdraft terms of its own (none are inherited)', async (t) => {
  const payer = await funded(1000);
  const payeeName = fresh('payee');
  const original = await api.post('/transactions', { description: 'test', precise_amount: 1000, currency: 'USD', source: payer.name, destination: payeeName, skip_queue: true, overdraft_limit: 100 });
  const payee = original.body.destination as string;
  // The payee spends 950 of the 1000, so the refund of 1000 would take it to -950.
  await api.post('/transactions', { description: 'test', precise_amount: 950, currency: 'USD', source: payeeName, destination: fresh('shop'), skip_queue: true });
  const refundOf = `/refund-transaction/${original.body.transaction_id}`;
  const short = await api.post(refundOf, { skip_queue: true, dry_run: true });
  t.equal(short.body.rejection?.code, 'TXN_INSUFFICIENT_FUNDS', 'the original\'s limit was granted to its source, not to the payee');
  const dry = await api.post(refundOf, { skip_queue: true, dry_run: true, overdraft_limit: 9 });
  t.equal(dry.status, 200, dry.text);
  t.equal(dry.body.would_apply, false);
  t.equal(dry.body.rejection?.code, 'TXN_OVERDRAFT_LIMIT_EXCEEDED', 'the dry run names the limit');
  t.equal(dry.body.rejection?.reason, 'overdraft_limit_exceeded');
  checkError(t, await api.post(refundOf, { skip_queue: true, overdraft_limit: 9 }), 400, 'TXN_OVERDRAFT_LIMIT_EXCEEDED', 'the refund');
  checkError(t, await api.post(refundOf, { skip_queue: true, overdraft_limit: -1 }), 400, 'GEN_MALFORMED_REQUEST', 'a negative limit');
  const refund = await api.post(refundOf, { skip_queue: true, overdraft_limit: 950 });
  t.equal(refund.status, 201, refund.text);
  t.equal(refund.body.overdraft_limit, 950, 'the refund records its limit');
  t.equal(await available(payee), -950n, 'at the refund\'s own limit');
  await checkZeroSumOverHttp(t, api);
});

t.test('dry runs give the limit\'s own code and write nothing', async (t) => {
  const payer = await funded(100);
  const seq = server.runtime.log.appendedSeq;
  const dry = await api.post('/transactions', { description: 'test', precise_amount: 500, currency: 'USD', source: payer.name, destination: fresh('payee'), overdraft_limit: 300, dry_run: true });
  t.equal(dry.status, 200, dry.text);
  t.equal(dry.body.would_apply, false);
  t.match(dry.body.rejection, { code: 'TXN_OVERDRAFT_LIMIT_EXCEEDED', reason: 'overdraft_limit_exceeded' });
  const fits = await api.post('/transactions', { description: 'test', precise_amount: 400, currency: 'USD', source: payer.name, destination: fresh('payee'), overdraft_limit: 300, dry_run: true });
  t.equal(fits.body.would_apply, true, fits.text);
  await sleep(50);
  t.equal(server.runtime.log.appendedSeq, seq, 'the log did not grow');
});

t.test('a reused reference with another limit is a conflict naming it', async (t) => {
  const payer = await funded(1000);
  const body = { description: 'test', precise_amount: 10, currency: 'USD', source: payer.name, destination: fresh('payee'), skip_queue: true, reference: `limit-${counter}`, overdraft_limit: 5 };
  t.equal((await api.post('/transactions', body)).status, 201);
  t.equal((await api.post('/transactions', body)).status, 200, 'the same request is a replay');
  const changed = await api.post('/transactions', { ...body, overdraft_limit: 6 });
  checkError(t, changed, 409, 'TXN_DUPLICATE_REFERENCE', 'another limit');
  t.equal(changed.body.error_detail.details?.field, 'overdraft_limit');
});

t.test('the limit survives a restart: a queued transaction decided after it still honours it', async (t) => {
  const payer = await funded(100);
  const applied = await api.post('/transactions', { description: 'test', precise_amount: 250, currency: 'USD', source: payer.name, destination: fresh('payee'), overdraft_limit: 150, skip_queue: true });
  t.equal(applied.status, 201, applied.text);
  await checkZeroSumOverHttp(t, api);
  const dataDir = server.dataDir;
  await server.stop();
  server = await startTestServer({ dataDir });
  api = new LedgerClient(server.url);
  const again = await api.transaction(applied.body.transaction_id);
  t.equal(again.overdraft_limit, 150, 'the record kept its limit through replay');
  t.equal(await available(payer.id), -150n);
  checkError(t, await api.post('/transactions', { description: 'test', precise_amount: 1, currency: 'USD', source: payer.name, destination: fresh('payee'), overdraft_limit: 150, skip_queue: true }), 400, 'TXN_OVERDRAFT_LIMIT_EXCEEDED', 'after the restart');
  await checkZeroSumOverHttp(t, api);
});
