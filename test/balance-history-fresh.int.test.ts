// The balance history's answers while it trails the log (index/history-reader.ts): with its follower
// held back on purpose (a pause before each batch), /at for a moment in the past answers at once from
// what the history has, and is still exactly the fold of the whole log; a back-dated transfer the
// history has not applied yet is not missed (the read waits for it); a balance created since the
// history's checkpoint did not exist at a past moment (404 at once); "now" and a window reaching past
// the checkpoint wait for the history, a bounded time, and are then refused 503 SRCH_INDEX_BEHIND rather
// than folding the log (a fold only when asked for). X-Folio-Index-Seq says how far the history was.

import t from 'tap';
import { foldBalance } from '../engine/balance-fold.js';
import type { LedgerEvent } from '../engine/events.js';
import { toJsonText } from '../wire/json-text.js';
import { balanceView } from '../wire/views.js';
import { createBalance, expectError, openServer } from './helpers/http-fixture.js';
import type { TestResponse, TestServer } from './helpers/test-server.js';

/** Long enough that a read answered before the follower's next batch plainly did not wait for it. */
const PAUSE_MS = 1_500;

async function transfer(server: TestServer, source: string, destination: string, preciseAmount: number, extra: Record<string, unknown> = {}): Promise<TestResponse> {
  const response = await server.request('POST', '/transactions', {
    description: 'test', currency: 'USD', source, destination, precise_amount: preciseAmount, allow_overdraft: true, skip_queue: true, ...extra,
  });
  if (response.status !== 201) throw new Error(`transfer refused: ${response.text}`);
  return response;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const indexSeq = (response: TestResponse): number => Number(response.headers['x-folio-index-seq']);
const seqOf = (response: TestResponse): number => Number(response.headers['x-folio-seq']);

/** Waits (bounded) until the history has applied `seq`, asking /history of `balanceId`. */
async function historyReaches(server: TestServer, balanceId: string, seq: number): Promise<void> {
  for (let tries = 0; tries < 200; tries += 1) {
    const page = await server.request('GET', `/balances/${balanceId}/history?limit=1`);
    if (page.status === 200 && indexSeq(page) >= seq) return;
    await sleep(100);
  }
  throw new Error(`the balance history did not reach seq ${seq}`);
}

t.test('a trailing balance history answers exactly, waiting only when the answer could change', async (t) => {
  const server = await openServer(t, { historyLimits: { batch_pause_ms: PAUSE_MS } });
  const balance = await createBalance(server);
  const id = balance.balance_id as string;
  await transfer(server, '@world', id, 100);
  await sleep(5);
  const middle = Date.now();
  await sleep(5);
  const settled = await transfer(server, '@world', id, 20);
  await historyReaches(server, id, seqOf(settled));
  const fold = (at: number): string => {
    const events: LedgerEvent[] = [...server.runtime.log.read(1)].map((logged) => logged.event);
    return toJsonText(balanceView(foldBalance(id, events, at)!));
  };
  const at = (moment: number): Promise<TestResponse> => server.request('GET', `/balances/${id}/at?timestamp=${encodeURIComponent(new Date(moment).toISOString())}`);

  await t.test('a moment in the past: answered from what the history has, without waiting for it', async (t) => {
    const written = await transfer(server, '@world', id, 3);
    const started = performance.now();
    const answer = await at(middle);
    const ms = performance.now() - started;
    t.equal(answer.status, 200);
    t.equal(toJsonText(answer.body.balance), fold(middle), 'the fold of the whole log at that moment');
    t.ok(indexSeq(answer) < seqOf(written), `the history had not applied the newest write (X-Folio-Index-Seq ${indexSeq(answer)} < ${seqOf(written)})`);
    t.ok(seqOf(answer) >= seqOf(written), 'and the answer is as of a seq after it');
    t.ok(ms < PAUSE_MS, `answered before the history's next batch (${ms.toFixed(0)} ms)`);
  });

  await t.test('a balance created since: it did not exist at a past moment', async (t) => {
    const later = await createBalance(server);
    const answer = await at(middle);
    t.equal(answer.status, 200, 'the first balance still answers');
    expectError(t, await server.request('GET', `/balances/${later.balance_id as string}/at?timestamp=${encodeURIComponent(new Date(middle).toISOString())}`), 404, 'BAL_NOT_FOUND', 'before it existed');
  });

  await t.test('a back-dated transfer the history has not applied yet is counted: the read waits for it', async (t) => {
    const backdated = await transfer(server, '@world', id, 7, { effective_date: new Date(middle - 2).toISOString() });
    const answer = await at(middle);
    t.equal(answer.status, 200);
    t.ok(indexSeq(answer) >= seqOf(backdated), `the history had applied it (X-Folio-Index-Seq ${indexSeq(answer)} >= ${seqOf(backdated)})`);
    t.equal(toJsonText(answer.body.balance), fold(middle), 'the fold of the whole log, the back-dated transfer included');
    t.equal(String(answer.body.balance.credit_balance), '107', 'the back-dated 7 counts at the moment');
  });

  await t.test('"now" and a window past the history\'s checkpoint wait for the history', async (t) => {
    const written = await transfer(server, '@world', id, 11);
    const now = await server.request('GET', `/balances/${id}/at`);
    t.equal(now.status, 200);
    t.ok(indexSeq(now) >= seqOf(written), 'the balance now includes the newest write');
    t.same(now.body.balance, (await server.request('GET', `/balances/${id}`)).body, 'and is the balance now');
    const written2 = await transfer(server, '@world', id, 13);
    const page = await server.request('GET', `/balances/${id}/history`);
    t.equal(page.status, 200);
    t.ok(indexSeq(page) >= seqOf(written2), 'the history lists the newest change');
    t.equal(page.body.changes.at(-1).version, (await server.request('GET', `/balances/${id}`)).body.version, 'its last change is the balance now');
    const before = await server.request('GET', `/balances/${id}/history?to=${encodeURIComponent(new Date(middle).toISOString())}`);
    t.equal(before.status, 200, 'a window ending in the past');
    t.equal(before.body.changes.length, 2, 'holds its creation and the first transfer');
  });
});

t.test('a read that would wait past its bound for the history is refused 503, never folded', async (t) => {
  // The follower pauses longer before each batch than a read waits (index/history-reader.ts, 2 s).
  const server = await openServer(t, { historyLimits: { batch_pause_ms: 4_000 } });
  const balance = await createBalance(server);
  const id = balance.balance_id as string;
  await historyReaches(server, id, seqOf(await transfer(server, '@world', id, 100)));
  await transfer(server, '@world', id, 5);
  const answer = await server.request('GET', `/balances/${id}/at`);
  expectError(t, answer, 503, 'SRCH_INDEX_BEHIND', 'refused once the wait ran out');
  t.equal(answer.headers['retry-after'], '1', 'with Retry-After');
  const folded = await server.request('GET', `/balances/${id}/at?from_source=true`);
  t.equal(folded.status, 200, 'a fold is still there when asked for');
  t.equal(folded.body.from_source, true);
  t.equal(String(folded.body.balance.balance), '105');
});
