// Crash and restart with lifecycle work pending: holds with expiry and commit dates, scheduled
// transactions, and queued commits, voids and refunds stuck behind a long queue, all acknowledged, then
// SIGKILL before any date is reached. The server is restarted on the same data directory after every
// date has passed: what came due while it was down must happen at start-up, the queued work must finish,
// every balance must equal its rebuild from the log, and each currency must net to zero. A clean
// restart after that must change nothing (no timer fires twice).
// Runs the built CLI: `npm run build` first (`npm test` does).

import fs from 'node:fs';
import t from 'tap';
import { startChildServer, type ChildServer } from './helpers/child-server.js';
import { checkZeroSumOverHttp, LedgerClient, sleep } from './helpers/ledger-client.js';
import { pipelined } from './helpers/pipelined.js';
import { tempDataDir } from './helpers/test-server.js';

/**
 * Items in the bulk that keeps the queue busy while the actions behind it are acknowledged; under the
 * 10,000 one balance may have queued, so the refunds behind them are not refused with backpressure.
 */
const QUEUE_FILLER = 4_000;
/**
 * How far ahead the dates are set; everything dated must be acknowledged and killed before then, or the
 * test proves nothing (timers could have fired before the kill), so it fails. Setting up after the first
 * date takes a second or two on an idle two-core machine and several with the suite beside it.
 */
const DATES_AHEAD_MS = 15_000;

t.test('pending holds, schedules and queued actions complete after a SIGKILL and restart', async (t) => {
  const dataDir = tempDataDir('folio-life-restart');
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  let child: ChildServer | undefined = await startChildServer(dataDir);
  t.teardown(async () => {
    if (child && child.process.exitCode === null && child.process.signalCode === null) await child.kill();
  });
  let api = new LedgerClient(child.url);

  // Queued actions behind a long queue on the same balance: holds and originals whose refunds come from @hub.
  const hub = await api.fund('@hub', 20_000);
  const queuedHolds = [];
  for (const amount of [100, 100, 100]) {
    queuedHolds.push((await api.post('/transactions', { description: 'test', precise_amount: amount, currency: 'USD', source: '@hub', destination: '@hub_to', inflight: true, skip_queue: true })).body.transaction_id as string);
  }
  const originals = [];
  for (const amount of [50, 70]) {
    originals.push((await api.post('/transactions', { description: 'test', precise_amount: amount, currency: 'USD', source: '@donor', destination: '@hub', allow_overdraft: true, skip_queue: true })).body.transaction_id as string);
  }
  // Refund history the restarted server must remember: one refund applied, one rejected for funds.
  const refundedOnce = await api.post('/transactions', { description: 'test', precise_amount: 30, currency: 'USD', source: '@donor', destination: '@rr', allow_overdraft: true, skip_queue: true });
  const refundShort = await api.post('/transactions', { description: 'test', precise_amount: 100, currency: 'USD', source: '@donor', destination: '@rr', allow_overdraft: true, skip_queue: true });
  t.equal((await api.post(`/refund-transaction/${refundedOnce.body.transaction_id}`, { skip_queue: true })).status, 201);
  await api.post('/transactions', { description: 'test', precise_amount: 100, currency: 'USD', source: '@rr', destination: '@elsewhere', skip_queue: true });
  const rejectedRefund = await api.post(`/refund-transaction/${refundShort.body.transaction_id}`);
  t.equal((await api.settled(rejectedRefund.body.transaction_id)).status, 'REJECTED', 'a queued refund @rr cannot pay');

  const timed = await api.fund('@timed', 10_000);
  const scheduledFrom = await api.fund('@sched', 1_000);
  const due = Date.now() + DATES_AHEAD_MS;
  const dueText = new Date(due).toISOString();

  // Holds that expire, holds that commit themselves (one partly committed already), both while down.
  const hold = async (amount: number, extra: Record<string, unknown>): Promise<string> => {
    const created = await api.post('/transactions', { description: 'test', precise_amount: amount, currency: 'USD', source: '@timed', destination: '@timed_to', inflight: true, skip_queue: true, ...extra });
    if (created.status !== 201) throw new Error(created.text);
    return created.body.transaction_id;
  };
  const expiring = [await hold(100, { inflight_expiry_date: dueText }), await hold(200, { inflight_expiry_date: dueText })];
  const committing = [await hold(300, { inflight_commit_date: dueText }), await hold(400, { inflight_commit_date: dueText })];
  await api.put(`/transactions/inflight/${committing[1]}`, { status: 'commit', precise_amount: 150, skip_queue: true });
  const bothDates = await hold(500, { inflight_expiry_date: dueText, inflight_commit_date: new Date(due + 60_000).toISOString() });

  // Scheduled transfers: two that fit, then one the source can no longer pay when it falls due.
  const schedule = async (amount: number, when: string): Promise<string> => {
    const created = await api.post('/transactions', { description: 'test', precise_amount: amount, currency: 'USD', source: '@sched', destination: '@sched_to', scheduled_for: when });
    if (created.status !== 201 || created.body.status !== 'SCHEDULED') throw new Error(created.text);
    return created.body.transaction_id;
  };
  const scheduled = [
    await schedule(400, dueText),
    await schedule(500, new Date(due).toISOString().slice(0, 19).replace('T', ' ')),
    await schedule(300, new Date(due + 1).toISOString()),
  ];
  const scheduledHold = (await api.post('/transactions', {
    description: 'test', precise_amount: 50, currency: 'USD', source: '@timed', destination: '@timed_to', inflight: true,
    scheduled_for: dueText, inflight_expiry_date: new Date(due + 500).toISOString(),
  })).body.transaction_id as string;

  const filler = Array.from({ length: QUEUE_FILLER }, () => ({ description: 'test', precise_amount: 1, currency: 'USD', source: '@hub', destination: '@sink' }));
  const answers = await pipelined(child.url, [
    { method: 'POST', path: '/transactions/bulk', body: { transactions: filler } },
    { method: 'PUT', path: `/transactions/inflight/${queuedHolds[0]}`, body: { status: 'commit' } },
    { method: 'PUT', path: `/transactions/inflight/${queuedHolds[1]}`, body: { status: 'void' } },
    { method: 'PUT', path: `/transactions/inflight/${queuedHolds[2]}`, body: { status: 'commit', precise_amount: 40 } },
    { method: 'POST', path: `/refund-transaction/${originals[0]}` },
    { method: 'POST', path: `/refund-transaction/${originals[1]}`, body: { description: 'back' } },
  ]);
  const metrics = await api.get('/metrics');
  await child.kill();
  const killedAt = Date.now();
  t.same(answers.map((answer) => answer.status), [201, 200, 200, 200, 201, 201], 'all queued work was acknowledged');
  t.equal(answers[0]?.body.status, 'queued');
  for (const answer of answers.slice(1, 4)) t.equal(answer.body.queued, true);
  const refundIds = answers.slice(4).map((answer) => answer.body.transaction_id as string);
  const depth = /^folio_mailbox_depth (\d+)/m.exec(metrics.text)?.[1];
  t.comment(`queued transactions just before the kill: ${depth ?? 'unknown'}`);
  // The premise: nothing dated could have come due before the kill.
  t.ok(killedAt < due, `killed before the dates (${due - killedAt} ms before them)`);

  await sleep(Math.max(0, due - Date.now()) + 1_500);
  child = await startChildServer(dataDir);
  api = new LedgerClient(child.url);

  // Expired while down: voided at start-up without any request touching them.
  for (const id of expiring) t.equal((await api.waitForTransaction(id, (record) => record.status !== 'INFLIGHT')).status, 'VOID', `hold ${id} expired`);
  for (const id of committing) {
    const record = await api.waitForTransaction(id, (candidate) => candidate.status !== 'INFLIGHT');
    t.equal(record.status, 'APPLIED', `hold ${id} committed itself`);
    t.equal(record.precise_committed_amount, record.precise_amount);
  }
  t.equal((await api.waitForTransaction(bothDates, (record) => record.status !== 'INFLIGHT')).status, 'VOID', 'the earlier date (expiry) won');
  t.same(await Promise.all(scheduled.map(async (id) => (await api.settled(id)).status)), ['APPLIED', 'APPLIED', 'REJECTED'],
    'scheduled: the first two fit, the third was short when it fell due');
  t.equal((await api.waitForTransaction(scheduledHold, (record) => record.status === 'VOID' || record.status === 'REJECTED')).status, 'VOID',
    'the scheduled hold opened and then expired');

  t.equal((await api.waitForTransaction(queuedHolds[0] as string, (record) => record.status !== 'INFLIGHT')).status, 'APPLIED', 'queued commit');
  t.equal((await api.waitForTransaction(queuedHolds[1] as string, (record) => record.status !== 'INFLIGHT')).status, 'VOID', 'queued void');
  t.equal((await api.waitForTransaction(queuedHolds[2] as string, (record) => record.precise_committed_amount === 40)).status, 'INFLIGHT', 'queued partial commit');
  for (const id of refundIds) t.equal((await api.settled(id)).status, 'APPLIED', `queued refund ${id}`);
  t.equal((await api.balanceByName('@sink')).balance, QUEUE_FILLER, 'the whole queued bulk was applied');

  t.same(await api.amounts(timed), { balance: 10_000n - 300n - 400n, inflight_debit: 0n, inflight_credit: 0n, available: 9_300n });
  t.same(await api.amounts(scheduledFrom), { balance: 100n, inflight_debit: 0n, inflight_credit: 0n, available: 100n });
  t.same(await api.amounts(hub), {
    balance: 20_000n + 120n - 120n - BigInt(QUEUE_FILLER) - 100n - 40n, inflight_debit: 60n, inflight_credit: 0n, available: 20_000n - BigInt(QUEUE_FILLER) - 140n - 60n,
  });

  const again409 = await api.post(`/refund-transaction/${refundedOnce.body.transaction_id}`, { skip_queue: true });
  t.equal(again409.status, 409, 'a refund applied before the crash still counts');
  t.equal(again409.body.error_detail.code, 'GEN_CONFLICT');
  await api.fund('@rr', 100);
  const retried = await api.post(`/refund-transaction/${refundShort.body.transaction_id}`, { skip_queue: true });
  t.equal(retried.status, 201, 'a refund rejected before the crash may be retried');
  t.equal(retried.body.status, 'APPLIED');

  const balances = await api.allBalances();
  for (const record of balances) {
    const rebuilt = (await api.get(`/balances/${record.balance_id}?from_source=true`)).body.balance;
    t.same(
      [rebuilt.balance, rebuilt.credit_balance, rebuilt.debit_balance, rebuilt.inflight_debit_balance, rebuilt.inflight_credit_balance],
      [record.balance, record.credit_balance, record.debit_balance, record.inflight_debit_balance, record.inflight_credit_balance],
      `${record.indicator} equals its rebuild from the log`,
    );
  }
  await checkZeroSumOverHttp(t, api);

  // A clean stop and another start: nothing fires twice, nothing changes.
  t.equal(await child.terminate(), 0, 'SIGTERM exits 0');
  child = await startChildServer(dataDir);
  api = new LedgerClient(child.url);
  await sleep(500);
  const again = await api.allBalances();
  const view = (list: any[]) => list.map((record) => [record.balance_id, record.balance, record.inflight_debit_balance, record.inflight_credit_balance]).sort();
  t.same(view(again), view(balances), 'balances unchanged by a second restart');
  t.equal(await child.terminate(), 0);
});
