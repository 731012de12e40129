// A run never stays in progress across a crash. The server is SIGKILLed right after a run is recorded,
// and again while a run is working through its records; after each restart the run is taken up again
// and completes with the same results a run without a crash gives. A run interrupted more often than
// the runner allows is marked failed with the reason, and the notification webhook hears of it.

import fs from 'node:fs';
import t from 'tap';
import { LedgerRuntime } from '../runtime/ledger-runtime.js';
import { startChildServer } from './helpers/child-server.js';
import { freePort, HookReceiver } from './helpers/hook-receiver.js';
import { csvOf, uploadFile } from './helpers/reconciliation-client.js';
import { sendRequest, tempDataDir } from './helpers/test-server.js';

const LEDGER = 3_000;
const LINES = 10_000;

async function seed(url: string): Promise<{ upload: string; rule: string; references: string[] }> {
  const transactions = Array.from({ length: LEDGER }, (_, index) => ({
    description: 'test', currency: 'USD', precise_amount: 100 + index, precision: 100, source: '@bank', destination: `@customer-${index % 50}`,
    allow_overdraft: true, reference: `INV-${index}`,
  }));
  const bulk = await sendRequest(url, 'POST', '/transactions/bulk', { transactions, skip_queue: true });
  if (bulk.status !== 201) throw new Error(`bulk: ${bulk.status} ${bulk.text}`);
  const today = new Date().toISOString();
  const lines = Array.from({ length: LINES }, (_, index) => ({
    id: `line-${index}`, amount: ((100 + (index % LEDGER)) / 100).toFixed(2), currency: 'USD',
    reference: index < LEDGER ? `INV-${index}` : `OTHER-${index}`, description: '', date: today,
  }));
  const upload = await uploadFile(url, { name: 'statement.csv', text: csvOf(lines) }, 'bank');
  if (upload.status !== 201) throw new Error(`upload: ${upload.status} ${upload.text}`);
  const rule = await sendRequest(url, 'POST', '/reconciliation/matching-rules', {
    name: 'reference, amount, same day', criteria: [{ field: 'reference', operator: 'equals' }, { field: 'amount', operator: 'equals' }, { field: 'date', operator: 'equals', allowable_drift: 86_400 }],
  });
  return { upload: upload.body.upload_id, rule: rule.body.rule_id, references: [] };
}

async function finished(url: string, id: string): Promise<any> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const response = await sendRequest(url, 'GET', `/reconciliation/${id}`);
    if (response.body.status === 'completed' || response.body.status === 'failed') return response.body;
    if (Date.now() > deadline) throw new Error(`still ${response.body.status}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

t.test('SIGKILL right after a run is recorded, and while it works: resumed and completed after each restart', async (t) => {
  const dataDir = tempDataDir('folio-recon-crash');
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  let server = await startChildServer(dataDir);
  t.teardown(() => server.kill());
  const { upload, rule } = await seed(server.url);

  const first = await sendRequest(server.url, 'POST', '/reconciliation/start', { upload_id: upload, strategy: 'one_to_one', matching_rule_ids: [rule] });
  t.equal(first.status, 201);
  await server.kill();
  server = await startChildServer(dataDir);
  const afterRecorded = await finished(server.url, first.body.reconciliation_id);
  t.match(afterRecorded, { status: 'completed', matched_transactions: LEDGER, unmatched_transactions: LINES - LEDGER, attempts: 2 }, 'taken up again after the restart');

  const second = await sendRequest(server.url, 'POST', '/reconciliation/start', { upload_id: upload, strategy: 'one_to_one', matching_rule_ids: [rule] });
  let seen = 'started';
  for (let tries = 0; tries < 2_000; tries += 1) {
    const status = await sendRequest(server.url, 'GET', `/reconciliation/${second.body.reconciliation_id}`);
    seen = status.body.status;
    if (seen !== 'started') break;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  await server.kill();
  t.comment(`killed while the run was ${seen}`);
  server = await startChildServer(dataDir);
  const afterWorking = await finished(server.url, second.body.reconciliation_id);
  t.equal(afterWorking.status, 'completed');
  t.equal(afterWorking.matched_transactions, LEDGER, 'the same result as without a crash');
  // A search answers from the index as it stands unless asked for a seq: the one the run's last read showed.
  const answeredAt = (await sendRequest(server.url, 'GET', `/reconciliation/${second.body.reconciliation_id}`)).headers['x-folio-seq'] as string;
  const status = await sendRequest(server.url, 'POST', '/search/reconciliations', { q: '*', filter_by: 'status:=[started,in_progress]' }, { 'X-Folio-Seq': answeredAt });
  t.equal(status.body.found, 0, 'no run is left in progress');
  await server.terminate();
});

t.test('a run interrupted more often than allowed is marked failed, with the reason, and announced', async (t) => {
  const receiver = new HookReceiver();
  await receiver.start(await freePort());
  t.teardown(() => receiver.stop());
  const dataDir = tempDataDir('folio-recon-attempts');
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const options = {
    dataDir,
    reconciliationLimits: { attempts_max: 1 },
    notifications: { url: `${receiver.url}/notify`, secret: 's', timeout_seconds: 2, retry_count: 2 },
    hookTargets: { allowPrivateNetworks: true },
  };
  let runtime = await LedgerRuntime.open(options);
  const rule = runtime.engine.run({ op: 'matching_rule.create', rule: { name: 'r', description: '', criteria: [{ field: 'reference', operator: 'equals' }] } });
  const upload = runtime.engine.run({ op: 'reconciliation.upload', upload: { source: 'bank', kind: 'file', records: [
    { id: 'a', amount: 1n, precision: 100n, currency: 'USD', reference: 'r', description: '', date: Date.now() },
  ] } });
  if (!rule.ok || !upload.ok) throw new Error('setup');
  // Recorded, then the process is gone before the runner took it up (as a crash right after the 201).
  const started = runtime.engine.run({ op: 'reconciliation.start', upload_id: upload.value.upload_id, strategy: 'one_to_one', grouping_criteria: '', matching_rule_ids: [rule.value.rule_id] });
  if (!started.ok) throw new Error(started.rejection.message);
  await runtime.durable(started.seq);
  await runtime.close();
  runtime = await LedgerRuntime.open(options);
  t.teardown(() => runtime.close());
  const record = runtime.engine.state.reconciliations.get(started.value.reconciliation_id);
  t.match(record, { status: 'failed', failure_reason: /interrupted by a restart 1 times/ });
  await receiver.waitFor((received) => received.length > 0);
  t.match(receiver.received[0]?.body, { event: 'reconciliation.failed', data: { reconciliation_id: started.value.reconciliation_id, status: 'failed' } });
});
