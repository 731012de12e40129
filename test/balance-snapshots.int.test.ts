// POST /balances-snapshots and GET /balances/:id/at as Blnk has them: a snapshot taken on request, and
// a historical balance answered from it (`from_source: false`) with the same amounts as a fold of the
// whole log (`from_source=true` asks for that, and says `from_source: true`).

import t from 'tap';
import { listSnapshots, snapshotDirectoryIn } from '../snapshots/snapshot-directory.js';
import { startTestServer, tempDataDir } from './helpers/test-server.js';

const AMOUNT_FIELDS = ['balance', 'credit_balance', 'debit_balance', 'inflight_balance', 'version'] as const;

t.test('a balance at a time, from a balance snapshot or from the log', async (t) => {
  const server = await startTestServer({ dataDir: tempDataDir(), snapshots: { every_events: 0, every_seconds: 0, keep: 2 } });
  t.teardown(() => server.stop());
  const send = async (amount: number): Promise<void> => {
    const answer = await server.request('POST', '/transactions', { description: 'test', precise_amount: amount, currency: 'USD', source: '@world', destination: '@snapshotted', allow_overdraft: true, skip_queue: true });
    t.equal(answer.status, 201);
  };
  await send(100);
  await send(250);
  const taken = await server.request('POST', '/balances-snapshots');
  t.same(taken.body, { message: 'Snapshotting in progress. should be completed shortly' });
  const dir = snapshotDirectoryIn(server.dataDir);
  for (let tries = 0; listSnapshots(dir).length === 0 && tries < 200; tries += 1) await new Promise((resolve) => setTimeout(resolve, 50));
  t.equal(listSnapshots(dir).length, 1, 'the snapshot is written');
  await send(7);
  const id = (await server.request('GET', '/balances/indicator/@snapshotted/currency/USD')).body.balance_id as string;
  const now = encodeURIComponent(new Date(Date.now() + 1000).toISOString());
  const fromSnapshot = await server.request('GET', `/balances/${id}/at?timestamp=${now}`);
  const fromLog = await server.request('GET', `/balances/${id}/at?timestamp=${now}&from_source=true`);
  t.equal(fromSnapshot.body.from_source, false, 'answered from the snapshot');
  t.equal(fromLog.body.from_source, true, 'answered from the log');
  for (const field of AMOUNT_FIELDS) t.equal(fromSnapshot.body.balance[field], fromLog.body.balance[field], `${field} the same either way`);
  t.equal(fromSnapshot.body.balance.credit_balance, 357);
});
