// Back-dated transactions (Blnk's `effective_date`): accepted and echoed, `created_at` when none is given,
// refused in the future on both paths, and the time a transaction counts at for historical balances,
// also when it was recorded after the moment asked about, and after a restart (replayed from the log).

import t from 'tap';
import { startTestServer, tempDataDir, type TestServer } from './helpers/test-server.js';

const DAY = 86_400_000;

async function post(server: TestServer, body: Record<string, unknown>): Promise<any> {
  const response = await server.request('POST', '/transactions', { description: 'test', currency: 'USD', allow_overdraft: true, skip_queue: true, ...body });
  if (response.status !== 201) throw new Error(`transfer failed: ${response.status} ${response.text}`);
  return response.body;
}

t.test('effective_date is echoed, defaults to created_at, and may not be in the future', async (t) => {
  const server = await startTestServer();
  t.teardown(() => server.stop());
  const plain = await post(server, { precise_amount: 5, source: '@ed-world', destination: '@ed-a' });
  t.equal(plain.effective_date, plain.created_at, 'none given: when it was recorded');
  const past = new Date(Date.now() - 30 * DAY).toISOString();
  const dated = await post(server, { precise_amount: 5, source: '@ed-world', destination: '@ed-a', effective_date: past });
  t.equal(Date.parse(dated.effective_date), Date.parse(past), 'echoed as given');
  t.not(Date.parse(dated.created_at), Date.parse(past));
  t.equal(Date.parse((await server.request('GET', `/transactions/${dated.transaction_id}`)).body.effective_date), Date.parse(past), 'and read back');
  const future = new Date(Date.now() + DAY).toISOString();
  for (const skip_queue of [true, false]) {
    const refused = await server.request('POST', '/transactions', {
      description: 'test', precise_amount: 5, currency: 'USD', source: '@ed-world', destination: '@ed-a', allow_overdraft: true, skip_queue, effective_date: future,
    });
    t.equal(refused.status, 400, `future, skip_queue ${skip_queue}`);
    t.equal(refused.body.error_detail.code, 'TXN_VALIDATION_ERROR');
    t.match(refused.body.error_detail.message, /must not be in the future/);
  }
  const unreadable = await server.request('POST', '/transactions', { description: 'test', precise_amount: 5, currency: 'USD', source: '@ed-world', destination: '@ed-a', effective_date: 'yesterday' });
  t.equal(unreadable.body.error_detail.code, 'TXN_VALIDATION_ERROR');
  t.ok(unreadable.body.error_detail.details.effective_date);
});

t.test('historical balances count a transaction at its effective date', async (t) => {
  const dataDir = tempDataDir();
  let server = await startTestServer({ dataDir });
  const first = await post(server, { precise_amount: 100, source: '@hist-world', destination: '@hist-a' });
  const wallet = first.destination as string;
  const afterFirst = new Date(Date.parse(first.created_at) + 1).toISOString();
  await new Promise((resolve) => setTimeout(resolve, 20));
  // Recorded now, but dated before the first one.
  const backDated = new Date(Date.parse(first.created_at) - DAY).toISOString();
  await post(server, { precise_amount: 40, source: '@hist-world', destination: wallet, effective_date: backDated });
  await post(server, { precise_amount: 7, source: '@hist-world', destination: wallet });
  const check = async (label: string): Promise<void> => {
    // Folded from the log, and from the index's balance history: the same balance.
    const at = async (timestamp: string): Promise<number> => {
      const folded = await server.request('GET', `/balances/${wallet}/at?timestamp=${encodeURIComponent(timestamp)}&from_source=true`);
      t.equal(folded.status, 200, `${label}: ${timestamp}`);
      t.equal(folded.body.from_source, true, `${label}: folded`);
      const indexed = await server.request('GET', `/balances/${wallet}/at?timestamp=${encodeURIComponent(timestamp)}`);
      t.equal(indexed.body.from_source, false, `${label}: from the index`);
      t.same(indexed.body.balance, folded.body.balance, `${label}: the index's answer is the fold's`);
      return folded.body.balance.balance as number;
    };
    t.equal(await at(afterFirst), 140, `${label}: the back-dated 40 counts before the later-recorded first`);
    t.equal(await at(new Date(Date.parse(backDated) + 1).toISOString()), 40, `${label}: a day back, only the back-dated one`);
    t.equal(await at(new Date().toISOString()), 147, `${label}: now, all three`);
    t.equal((await server.request('GET', `/balances/${wallet}`)).body.balance, 147, `${label}: the running balance has them all`);
  };
  await check('live');
  await server.stop();
  server = await startTestServer({ dataDir });
  t.teardown(() => server.stop());
  await check('after a restart');
});
