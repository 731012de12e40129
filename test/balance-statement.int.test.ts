// A balance's statement over HTTP (http/routes/statement-routes.ts, engine/balance-statement.ts): the
// opening balance counts everything settled before `from` (a back-dated transfer recorded later too), the
// movements are the settled ones inside the window ordered by when they count, each with its transaction
// and the balance after it, a hold counts only once committed (as the commit transaction) and a void not
// at all, the closing balance is the opening plus the movements and equals the balance as of `to`; paging
// with limit/offset keeps the running balance; CSV with format=csv or Accept: text/csv; bad times,
// unknown balances refused in the envelope; a window ending in a closed period names the period's seal
// and reads the same after a restart.

import t from 'tap';
import { startTestServer, tempDataDir, type TestServer } from './helpers/test-server.js';
import { timeText } from '../wire/views.js';

const DAY = 86_400_000;
const iso = (ms: number): string => new Date(ms).toISOString();
/** A time as the API writes it (Go's RFC 3339: no trailing zeros in the fraction), whatever its milliseconds. */
const shown = (ms: number): string => timeText(ms);

async function created(server: TestServer, path: string, body: unknown): Promise<any> {
  const answer = await server.request('POST', path, body);
  if (answer.status !== 201) throw new Error(`${path}: ${answer.status} ${answer.text}`);
  return answer.body;
}

t.test('a statement: opening, movements in the order they count, closing, exact', async (t) => {
  const dataDir = tempDataDir('statement');
  let server = await startTestServer({ dataDir });
  t.teardown(() => server.stop());
  const ledger = (await created(server, '/ledgers', { name: 'books' })).ledger_id as string;
  const wallet = (await created(server, '/balances', { ledger_id: ledger, currency: 'USD' })).balance_id as string;
  const now = Date.now();
  const from = now - 20 * DAY;
  const to = now - 10 * DAY;
  const move = (fields: Record<string, unknown>): Promise<any> => created(server, '/transactions', {
    description: 'move', currency: 'USD', allow_overdraft: true, skip_queue: true, ...fields,
  });
  // Amounts past 2^53 stay exact.
  const big = 9_007_199_254_740_993n;
  await move({ reference: 'before', precise_amount: big, source: '@world', destination: wallet, effective_date: iso(from - DAY) });
  const second = await move({ reference: 'second', precise_amount: 300, source: wallet, destination: '@rent', effective_date: iso(from + 2 * DAY) });
  const first = await move({ reference: 'first', precise_amount: 1_000, source: '@world', destination: wallet, effective_date: iso(from + DAY) });
  await move({ reference: 'after', precise_amount: 5, source: '@world', destination: wallet, effective_date: iso(to + DAY) });
  // Recorded last, counting before the window: it belongs in the opening balance.
  await move({ reference: 'late-opening', precise_amount: 7, source: wallet, destination: '@fees', effective_date: iso(from - 2 * DAY) });
  // A hold inside the window: it counts when committed (now, after the window) and a voided one never.
  const hold = await move({ reference: 'hold', precise_amount: 50, source: wallet, destination: '@card', inflight: true });
  const voided = await move({ reference: 'voided', precise_amount: 60, source: wallet, destination: '@card', inflight: true });
  t.equal((await server.request('PUT', `/transactions/inflight/${hold.transaction_id}`, { status: 'commit', skip_queue: true })).status, 200);
  t.equal((await server.request('PUT', `/transactions/inflight/${voided.transaction_id}`, { status: 'void', skip_queue: true })).status, 200);

  const opening = big - 7n;
  const answer = await server.request('GET', `/balances/${wallet}/statement?from=${iso(from)}&to=${iso(to)}`);
  t.equal(answer.status, 200, answer.text);
  t.match(answer.body, {
    balance_id: wallet, ledger_id: ledger, currency: 'USD',
    opening_balance: opening, closing_balance: opening + 700n, total_credits: 1_000n, total_debits: 300n, movement_count: 2, sealed_by: null,
  });
  t.same(answer.body.movements, [
    { transaction_id: first.transaction_id, reference: 'first', effective_date: shown(from + DAY), amount: 1_000n, running_balance: opening + 1_000n },
    { transaction_id: second.transaction_id, reference: 'second', effective_date: shown(from + 2 * DAY), amount: -300n, running_balance: opening + 700n },
  ], 'ordered by when they count, not by when they were recorded');
  const at = await server.request('GET', `/balances/${wallet}/at?timestamp=${iso(to)}`);
  t.equal(BigInt(at.body.balance.balance), BigInt(answer.body.closing_balance), 'closing balance = the balance as of `to`');

  const whole = await server.request('GET', `/balances/${wallet}/statement`);
  const current = await server.request('GET', `/balances/${wallet}`);
  t.equal(BigInt(whole.body.opening_balance), 0n);
  t.equal(BigInt(whole.body.closing_balance), BigInt(current.body.balance), 'the whole history closes at the balance now');
  t.equal(whole.body.movement_count, 6, 'five transfers and the commit; the holds themselves and the void move no settled money');
  const commit = whole.body.movements.find((movement: any) => BigInt(movement.amount) === -50n);
  t.not(commit.transaction_id, hold.transaction_id, 'a hold shows as the commit transaction');
  t.ok(commit.transaction_id, 'which is named');

  const page = await server.request('GET', `/balances/${wallet}/statement?limit=2&offset=2`);
  t.same(page.body.movements.map((movement: any) => movement.running_balance), whole.body.movements.slice(2, 4).map((movement: any) => movement.running_balance), 'pages keep the running balance');
  t.equal(page.body.movement_count, 6);

  const csv = await server.request('GET', `/balances/${wallet}/statement?from=${iso(from)}&to=${iso(to)}&format=csv`);
  t.match(csv.headers['content-type'], /^text\/csv/);
  const rows = csv.text.trimEnd().split('\r\n');
  t.equal(rows[0], 'kind,transaction_id,reference,effective_date,amount,running_balance');
  t.equal(rows[1], `opening,,,${shown(from)},,${opening}`);
  t.equal(rows[2], `movement,"${first.transaction_id}","first",${shown(from + DAY)},1000,${opening + 1_000n}`);
  t.equal(rows[4], `closing,,,${shown(to)},700,${opening + 700n}`);
  const accepted = await server.request('GET', `/balances/${wallet}/statement?from=${iso(from)}&to=${iso(to)}`, undefined, { accept: 'text/csv' });
  t.equal(accepted.text, csv.text, 'Accept: text/csv asks for the same');

  for (const [query, code] of [['from=yesterday', 'BAL_INVALID_TIMESTAMP'], [`from=${iso(to)}&to=${iso(from)}`, 'BAL_INVALID_TIMESTAMP'], ['format=xml', 'GEN_VALIDATION_ERROR']] as Array<[string, string]>) {
    const refused = await server.request('GET', `/balances/${wallet}/statement?${query}`);
    t.equal(refused.status, 400, query);
    t.equal(refused.body.error_detail.code, code, `${query}: ${code}`);
  }
  t.equal((await server.request('GET', '/balances/bln_missing/statement')).body.error_detail.code, 'BAL_NOT_FOUND');

  // A window inside a closed period names the seal, and reads the same after a restart.
  const period = (await created(server, `/ledgers/${ledger}/periods`, { closes_at: iso(to) }));
  const sealed = await server.request('GET', `/balances/${wallet}/statement?from=${iso(from)}&to=${iso(to)}`);
  t.same(sealed.body.sealed_by, { period_id: period.period_id, sealed_seq: period.sealed_seq, sealed_hash: period.sealed_hash });
  t.same({ ...sealed.body, sealed_by: null }, answer.body, 'the same statement, now sealed');
  await server.stop();
  server = await startTestServer({ dataDir });
  t.same((await server.request('GET', `/balances/${wallet}/statement?from=${iso(from)}&to=${iso(to)}`)).body, sealed.body, 'after a restart');
});
