import t from 'tap';
import { startScopedServer } from './helpers/scoped-server.js';
import { allResults, createRule, csvOf, uploadFile, waitForRun } from './helpers/reconciliation-client.js';

t.test('smoke', async (t) => {
  const server = await startScopedServer(t);
  const made: any[] = [];
  for (let index = 0; index < 5; index += 1) {
    const response = await server.request('POST', '/transactions', {
      currency: 'USD', amount: 10 + index, precision: 100, source: '@bank', destination: '@customer', allow_overdraft: true, skip_queue: true,
      reference: `INV-${index}`, description: `invoice ${index}`,
    });
    t.equal(response.status, 201, response.text);
    made.push(response.body);
  }
  const rows = made.map((txn, index) => ({ id: `ext-${index}`, amount: String(10 + index), currency: 'USD', reference: `INV-${index}`, description: 'x', date: txn.created_at }));
  rows.push({ id: 'ext-x', amount: '99.99', currency: 'USD', reference: 'NOPE', description: 'y', date: made[0].created_at });
  const upload = await uploadFile(server.url, { name: 'statement.csv', text: csvOf(rows) }, 'bank');
  t.equal(upload.status, 201, upload.text);
  const rule = await createRule(server, { name: 'ref', criteria: [{ field: 'reference', operator: 'equals' }, { field: 'amount', operator: 'equals', allowable_drift: 0 }] });
  const started = await server.request('POST', '/reconciliation/start', { upload_id: upload.body.upload_id, strategy: 'one_to_one', matching_rule_ids: [rule] });
  t.equal(started.status, 201, started.text);
  const run = await waitForRun(server, started.body.reconciliation_id);
  t.equal(run.status, 'completed', JSON.stringify(run));
  t.equal(run.matched_transactions, 5);
  t.equal(run.unmatched_transactions, 1);
  const matches = await allResults(server, run.reconciliation_id, 'matches');
  t.equal(matches.length, 5);
  const unmatched = await allResults(server, run.reconciliation_id, 'unmatched');
  t.equal(unmatched[0].reason, 'no_candidate');
  const txn = await server.request('GET', `/transactions/${made[0].transaction_id}`);
  t.equal(txn.body.meta_data.reconciliation_id, run.reconciliation_id);
  const amountRule = await createRule(server, { name: 'amt', criteria: [{ field: 'amount', operator: 'equals', allowable_drift: 0.01 }, { field: 'date', operator: 'equals', allowable_drift: 60 }] });
  const instant = await server.request('POST', '/reconciliation/start-instant', {
    external_transactions: rows.map((row) => ({ ...row, source: 'bank' })), strategy: 'one_to_one', matching_rule_ids: [amountRule], dry_run: true,
  });
  t.equal(instant.status, 200, instant.text);
  t.equal(instant.body.matches.length, 5, instant.text);
  const search = await server.request('POST', '/search/reconciliations', { q: 'bank' }, { 'X-Folio-Seq': String(server.runtime.log.appendedSeq) });
  t.equal(search.body.found, 1, search.text);
});
