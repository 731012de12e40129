// Acting on many holds in one request, against the real server: a bulk request's batch id commits or
// voids every open hold it made all or none (one operation, one event), even when one hold's mailbox is
// full part way; the bulk commit and void routes decide every hold in one event, each on its own; and a
// dry run of a batch action projects the same decision.

import fs from 'node:fs';
import t from 'tap';
import { checkError, LedgerClient } from './helpers/ledger-client.js';
import { startTestServer, type TestServer } from './helpers/test-server.js';

let server: TestServer;
let api: LedgerClient;
let counter = 0;
const fresh = (label: string): string => `@${label}_${(counter += 1)}`;

t.before(async () => {
  // One queued transaction fills a balance's mailbox, so a refusal part way is easy to arrange.
  server = await startTestServer({ limits: { mailbox_depth_max: 1 } });
  api = new LedgerClient(server.url);
});
t.teardown(async () => {
  await server?.stop();
  if (server) fs.rmSync(server.dataDir, { recursive: true, force: true });
});

/** Two holds from two funded balances, made by one bulk request; the batch id and the payers. */
async function batchOfHolds(): Promise<{ batchId: string; payers: string[]; holds: [string, string] }> {
  const payers = [fresh('payer'), fresh('payer')];
  for (const payer of payers) await api.fund(payer, 100);
  const tag = `batch-${counter}`;
  const batch = await api.post('/transactions/bulk', {
    inflight: true, skip_queue: true, atomic: true,
    transactions: payers.map((payer, index) => ({ description: 'test', precise_amount: 10, currency: 'USD', source: payer, destination: fresh('payee'), reference: `${tag}-${index}` })),
  });
  if (batch.status !== 201) throw new Error(batch.text);
  const holds: string[] = [];
  for (const index of [0, 1]) holds.push((await api.get(`/transactions/reference/${tag}-${index}`)).body.transaction_id as string);
  return { batchId: batch.body.batch_id as string, payers, holds: holds as [string, string] };
}

t.test('a batch action refused part way acts on no hold at all', async (t) => {
  const { batchId, payers, holds } = await batchOfHolds();
  // The queue runner is stopped so the second payer's mailbox stays full while the batch is acted on.
  await server.runtime.pauseWork();
  try {
    const queued = await api.post('/transactions', { description: 'test', precise_amount: 1, currency: 'USD', source: payers[1], destination: fresh('shop') });
    t.equal(queued.body.status, 'QUEUED', queued.text);
    const seq = server.runtime.log.appendedSeq;
    const refused = await api.put(`/transactions/inflight/${batchId}`, { status: 'void' });
    checkError(t, refused, 503, 'QUEUE_BACKPRESSURE', 'the second hold\'s mailbox is full');
    t.equal(server.runtime.log.appendedSeq, seq, 'nothing was logged: the first hold has no void queued either');
  } finally {
    await server.runtime.startWork();
  }
  await api.settled((await api.recentTransactions(1))[0].transaction_id);
  for (const hold of holds) t.equal((await api.transaction(hold)).status, 'INFLIGHT', `hold ${hold} is still open`);
  const voided = await api.put(`/transactions/inflight/${batchId}`, { status: 'void', skip_queue: true });
  t.equal(voided.status, 200, voided.text);
  for (const hold of holds) t.equal((await api.transaction(hold)).status, 'VOID', 'both voided together once there is room');
});

t.test('a batch commit is one event, and its dry run projects it without writing', async (t) => {
  const { batchId, payers } = await batchOfHolds();
  const seq = server.runtime.log.appendedSeq;
  const dry = await api.put(`/transactions/inflight/${batchId}`, { status: 'commit', skip_queue: true, dry_run: true });
  t.equal(dry.status, 200, dry.text);
  t.match(dry.body, { dry_run: true, would_apply: true, operation: 'commit', transaction_count: 2 });
  t.equal(dry.body.balances.length, 4, 'both payers and both payees');
  t.equal(server.runtime.log.appendedSeq, seq, 'the dry run wrote nothing');
  const committed = await api.put(`/transactions/inflight/${batchId}`, { status: 'commit', skip_queue: true });
  t.equal(committed.status, 200, committed.text);
  t.equal(server.runtime.log.appendedSeq, seq + 1, 'one event for the whole batch');
  for (const payer of payers) t.equal((await api.balanceByName(payer)).balance, 90);
});

t.test('bulk commit and void decide every hold in one event, each on its own', async (t) => {
  const { holds } = await batchOfHolds();
  const seq = server.runtime.log.appendedSeq;
  const result = await api.post('/transactions/inflight/bulk/commit', {
    skip_queue: true,
    transactions: [{ transaction_id: holds[0], precise_amount: 4 }, { transaction_id: 'txn_missing' }, { transaction_id: holds[1] }, { transaction_id: holds[1] }],
  });
  t.equal(result.status, 200, result.text);
  t.match(result.body, { succeeded: 2, failed: 2 });
  t.same(result.body.results.map((item: { status: string; code?: string }) => [item.status, item.code]), [
    ['succeeded', undefined], ['failed', 'NOT_FOUND'], ['succeeded', undefined], ['failed', 'ALREADY_COMMITTED'],
  ]);
  t.equal(server.runtime.log.appendedSeq, seq + 1, 'the two commits are one event');
  t.equal((await api.transaction(holds[0])).status, 'INFLIGHT', 'a partial commit leaves the rest held');
  const voids = await api.post('/transactions/inflight/bulk/void', { skip_queue: true, transaction_ids: [holds[0], holds[1]] });
  t.match(voids.body, { succeeded: 1, failed: 1 });
  t.equal((await api.transaction(holds[0])).status, 'VOID');
});
