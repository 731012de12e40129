// Reconciliation through the real server: matching rules (create, read, list, update, delete), uploads
// (CSV with headers in any case and order, JSON arrays), every refusal with its code and nothing written,
// a recorded run end to end (progress, results paged, marks on the matched transactions in GET, filter
// and search, the run searchable, the notification webhook told, all still there after a restart), and
// dry runs that write nothing at all.

import t from 'tap';
import { freePort, HookReceiver, signatureValid } from './helpers/hook-receiver.js';
import { allResults, createRule, csvOf, uploadFile, waitForRun } from './helpers/reconciliation-client.js';
import { startScopedServer } from './helpers/scoped-server.js';
import { startTestServer, tempDataDir, type TestServer } from './helpers/test-server.js';

async function transfer(server: TestServer, fields: Record<string, unknown>): Promise<any> {
  const response = await server.request('POST', '/transactions', {
    description: 'transfer', currency: 'USD', precision: 100, source: '@bank', destination: '@customer', allow_overdraft: true, skip_queue: true, ...fields,
  });
  if (response.status !== 201) throw new Error(`transfer: ${response.status} ${response.text}`);
  return response.body;
}

t.test('matching rules: create, read, list, update, delete; every refusal', async (t) => {
  const server = await startScopedServer(t);
  const body = {
    name: 'Card payments', description: 'amount within 1%, same day',
    criteria: [{ field: 'amount', operator: 'equals', allowable_drift: 0.01 }, { field: 'date', operator: 'equals', allowable_drift: 86400 }, { field: 'currency', operator: 'equals' }],
  };
  const created = await server.request('POST', '/reconciliation/matching-rules', body);
  t.equal(created.status, 201);
  t.match(created.text, /"allowable_drift":0\.01/, 'the drift is echoed as the number sent');
  t.match(created.body, { name: 'Card payments', description: 'amount within 1%, same day', rule_id: /^rule_/ });
  const id = created.body.rule_id;
  t.same((await server.request('GET', `/reconciliation/matching-rules/${id}`)).body, created.body);
  t.same((await server.request('GET', '/reconciliation/matching-rules')).body, [created.body]);
  const updated = await server.request('PUT', `/reconciliation/matching-rules/${id}`, { name: 'By reference', criteria: [{ field: 'reference', operator: 'equals' }] });
  t.equal(updated.status, 200);
  t.match(updated.body, { rule_id: id, name: 'By reference', description: '', created_at: created.body.created_at, criteria: [{ field: 'reference', operator: 'equals' }] });

  const seq = server.runtime.log.appendedSeq;
  const refusals: Array<[string, string, unknown, number, string]> = [
    ['POST', '/reconciliation/matching-rules', { name: 'x', criteria: [{ field: 'amount', operator: 'like' }] }, 400, 'RECON_RULE_INVALID'],
    ['POST', '/reconciliation/matching-rules', { name: 'x', criteria: [{ field: 'amount', operator: 'after' }] }, 400, 'RECON_RULE_INVALID'],
    ['POST', '/reconciliation/matching-rules', { name: 'x', criteria: [{ field: 'amount', operator: 'equals', allowable_drift: 2 }] }, 400, 'RECON_RULE_INVALID'],
    ['POST', '/reconciliation/matching-rules', { name: 'x', criteria: [{ field: 'date', operator: 'equals', allowable_drift: -1 }] }, 400, 'RECON_RULE_INVALID'],
    ['POST', '/reconciliation/matching-rules', { name: 'x', criteria: [] }, 400, 'RECON_RULE_INVALID'],
    ['POST', '/reconciliation/matching-rules', { criteria: [{ field: 'reference', operator: 'equals' }] }, 400, 'RECON_RULE_INVALID'],
    ['POST', '/reconciliation/matching-rules', { name: 'x' }, 400, 'RECON_RULE_INVALID'],
    ['PUT', `/reconciliation/matching-rules/${id}`, { name: 'x', criteria: [{ field: 'colour', operator: 'equals' }] }, 400, 'RECON_RULE_INVALID'],
    ['GET', '/reconciliation/matching-rules/rule_missing', undefined, 404, 'RECON_RULE_NOT_FOUND'],
    ['PUT', '/reconciliation/matching-rules/rule_missing', { name: 'x', criteria: [{ field: 'reference', operator: 'equals' }] }, 404, 'RECON_RULE_NOT_FOUND'],
    ['DELETE', '/reconciliation/matching-rules/rule_missing', undefined, 404, 'RECON_RULE_NOT_FOUND'],
  ];
  for (const [method, route, request, status, code] of refusals) {
    const response = await server.request(method, route, request);
    t.equal(response.status, status, `${method} ${route} ${JSON.stringify(request)}`);
    t.equal(response.body.error_detail?.code, code);
  }
  t.equal(server.runtime.log.appendedSeq, seq, 'no refusal wrote anything');
  t.same((await server.request('DELETE', `/reconciliation/matching-rules/${id}`)).body, { message: 'Matching rule deleted successfully' });
  t.equal((await server.request('GET', `/reconciliation/matching-rules/${id}`)).status, 404);
});

t.test('uploads: CSV in any column order and case, JSON arrays; every bad file refused whole', async (t) => {
  const server = await startScopedServer(t);
  const columns = ['Description', 'DATE', 'id', 'Amount', 'reference', 'CURRENCY'];
  const csv = csvOf([
    { id: 'p-1', amount: '152.75', currency: 'USD', reference: 'INV-1', description: 'Invoice, settled', date: '2025-03-17T06:32:49Z' },
    { id: 'p-2', amount: '-90', currency: 'JPY', reference: 'INV-2', description: 'Refund "partial"', date: '2025-03-17 08:00:00' },
  ], columns);
  const uploaded = await uploadFile(server.url, { name: 'statement.csv', text: csv }, 'Stripe');
  t.equal(uploaded.status, 201, uploaded.text);
  t.match(uploaded.body, { upload_id: /^upload_/, record_count: 2, source: 'Stripe', status: 'success' });
  const json = JSON.stringify([{ id: 'j-1', amount: 12.5, currency: 'EUR', reference: 'R', description: '', date: '2025-01-01T00:00:00Z', source: 'x' }]);
  const jsonUpload = await uploadFile(server.url, { name: 'statement.json', text: json }, 'Adyen');
  t.equal(jsonUpload.status, 201, jsonUpload.text);

  const seq = server.runtime.log.appendedSeq;
  const header = 'id,amount,currency,reference,description,date';
  const bad: Array<[{ name: string; text: string }, string | undefined, Record<string, unknown>]> = [
    [{ name: 's.csv', text: `${header}\np-1,,USD,R,d,2025-01-01` }, 'bank', { line: 2, field: 'amount' }],
    [{ name: 's.csv', text: `${header}\np-1,1,USD,R,d,2025-01-01\np-2,1.234,USD,R,d,2025-01-01` }, 'bank', { line: 3, field: 'amount' }],
    [{ name: 's.csv', text: `${header}\np-1,1,USD,R,d,2025-13-01` }, 'bank', { line: 2, field: 'date' }],
    [{ name: 's.csv', text: `${header}\np-1,1,USD,R,d,2025-01-01\np-1,2,USD,R,d,2025-01-01` }, 'bank', { line: 3, field: 'id' }],
    [{ name: 's.csv', text: 'id,amount,currency,description,date\np-1,1,USD,d,2025-01-01' }, 'bank', { line: 1, field: 'reference' }],
    [{ name: 's.csv', text: `${header}\np-1,1,USD,R,d` }, 'bank', { line: 2 }],
    [{ name: 's.json', text: '[{"id": "a", "amount": 1, "currency": "USD", "reference": "r", "description": "", "date": "2025-01-01"}, {"id": "b"}]' }, 'bank', { line: 1, field: 'amount' }],
    [{ name: 's.json', text: '{"id": "a"}' }, 'bank', { line: 1 }],
    [{ name: 's.csv', text: `${header}\np-1,1,USD,R,d,2025-01-01` }, undefined, { field: 'source' }],
    [{ name: 's.csv', text: `${header}\n` }, 'bank', {}],
  ];
  for (const [file, source, details] of bad) {
    const response = await uploadFile(server.url, file, source);
    t.equal(response.status, 400, file.text);
    t.equal(response.body.error_detail?.code, 'RECON_UPLOAD_FAILED', response.text);
    t.match(response.body.error_detail?.details, details, response.body.error_detail?.message);
  }
  const tooMany = [header, ...Array.from({ length: 10_001 }, (_, index) => `p-${index},1,USD,R,d,2025-01-01`)].join('\n');
  const many = await uploadFile(server.url, { name: 's.csv', text: tooMany }, 'bank');
  t.equal(many.status, 400);
  t.match(many.body.error_detail, { code: 'RECON_UPLOAD_FAILED', details: { records_max: 10_000 } });
  const asJson = await server.request('POST', '/reconciliation/upload', { source: 'bank' });
  t.equal(asJson.body.error_detail?.code, 'RECON_UPLOAD_FAILED', 'a JSON body is not a file');
  const latin1 = await fetch(`${server.url}/reconciliation/upload`, { method: 'POST', body: (() => {
    const form = new FormData();
    form.set('file', new Blob([Buffer.from(`${header}\np-1,1,USD,caf\xe9,d,2025-01-01`, 'latin1')]), 's.csv');
    form.set('source', 'bank');
    return form;
  })() });
  t.equal(latin1.status, 400, 'a file that is not UTF-8 is refused, not garbled');
  t.equal(server.runtime.log.appendedSeq, seq, 'nothing of a refused upload was written');
});

t.test('run requests: every refusal, with nothing written', async (t) => {
  const server = await startScopedServer(t);
  const rule = await createRule(server, { name: 'r', criteria: [{ field: 'reference', operator: 'equals' }] });
  const upload = (await uploadFile(server.url, { name: 's.csv', text: csvOf([{ id: 'a', amount: '1', currency: 'USD', reference: 'r', description: '', date: '2025-01-01' }]) }, 'bank')).body.upload_id;
  const item = { id: 'x', amount: 1, currency: 'USD', reference: 'r', description: '', date: '2025-01-01T00:00:00Z', source: 'bank' };
  const seq = server.runtime.log.appendedSeq;
  const cases: Array<[string, unknown, number, string, Record<string, unknown>?]> = [
    ['/reconciliation/start', { upload_id: 'upload_missing', strategy: 'one_to_one', matching_rule_ids: [rule] }, 404, 'RECON_UPLOAD_NOT_FOUND'],
    ['/reconciliation/start', { upload_id: upload, strategy: 'one_to_one', matching_rule_ids: ['rule_missing'] }, 404, 'RECON_RULE_NOT_FOUND'],
    ['/reconciliation/start', { upload_id: upload, strategy: 'one_to_one', matching_rule_ids: [] }, 400, 'RECON_MATCHING_RULES_REQUIRED'],
    ['/reconciliation/start', { upload_id: upload, strategy: 'one_to_one' }, 400, 'RECON_MATCHING_RULES_REQUIRED'],
    ['/reconciliation/start', { upload_id: upload, strategy: 'best_guess', matching_rule_ids: [rule] }, 400, 'GEN_VALIDATION_ERROR', { strategy: /one_to_one/ }],
    ['/reconciliation/start', { upload_id: upload, strategy: 'one_to_many', matching_rule_ids: [rule] }, 400, 'GEN_VALIDATION_ERROR', { grouping_criteria: /required/ }],
    ['/reconciliation/start', { upload_id: upload, strategy: 'one_to_many', grouping_criteria: 'meta_data', matching_rule_ids: [rule] }, 400, 'GEN_VALIDATION_ERROR', { grouping_criteria: /parent_transaction/ }],
    ['/reconciliation/start', { upload_id: upload, strategy: 'many_to_one', grouping_criteria: 'batch_id', matching_rule_ids: [rule] }, 400, 'GEN_VALIDATION_ERROR', { grouping_criteria: /external records/ }],
    ['/reconciliation/start', { strategy: 'one_to_one', matching_rule_ids: [rule] }, 400, 'GEN_VALIDATION_ERROR', { upload_id: /./ }],
    ['/reconciliation/start-instant', { strategy: 'one_to_one', matching_rule_ids: [rule] }, 400, 'RECON_EXTERNAL_TXNS_REQUIRED'],
    ['/reconciliation/start-instant', { external_transactions: [], strategy: 'one_to_one', matching_rule_ids: [rule] }, 400, 'RECON_EXTERNAL_TXNS_REQUIRED'],
    ['/reconciliation/start-instant', { external_transactions: Array.from({ length: 10_001 }, (_, index) => ({ ...item, id: `x-${index}` })), strategy: 'one_to_one', matching_rule_ids: [rule] }, 400, 'GEN_VALIDATION_ERROR'],
    ['/reconciliation/start-instant', { external_transactions: [item, { ...item, id: 'y', amount: '1.001' }, { ...item, id: 'z', date: 'soon' }], strategy: 'one_to_one', matching_rule_ids: [rule] }, 400, 'GEN_VALIDATION_ERROR',
      { 'external_transactions.1.amount': /decimal places/, 'external_transactions.2.date': /./ }],
    ['/reconciliation/start-instant', { external_transactions: [item, item], strategy: 'one_to_one', matching_rule_ids: [rule] }, 400, 'GEN_VALIDATION_ERROR', { 'external_transactions.1.id': /already used/ }],
    ['/reconciliation/start-instant', { external_transactions: [item], strategy: 'one_to_one', matching_rule_ids: ['rule_missing'] }, 404, 'RECON_RULE_NOT_FOUND'],
    ['/reconciliation/start-instant', { external_transactions: [item], strategy: 'many_to_one', grouping_criteria: 'colour', matching_rule_ids: [rule] }, 400, 'GEN_VALIDATION_ERROR'],
    ['/reconciliation/start-instant', '{"external_transactions": [', 400, 'GEN_MALFORMED_REQUEST'],
  ];
  for (const [route, body, status, code, details] of cases) {
    const response = await server.request('POST', route, body);
    t.equal(response.status, status, `${route} ${JSON.stringify(body).slice(0, 160)}`);
    t.equal(response.body.error_detail?.code, code, response.text.slice(0, 300));
    if (details) t.match(response.body.error_detail?.details, details);
  }
  for (const route of ['/reconciliation/recon_missing', '/reconciliation/recon_missing/matches', '/reconciliation/recon_missing/unmatched']) {
    const response = await server.request('GET', route);
    t.equal(response.status, 404);
    t.equal(response.body.error_detail?.code, 'RECON_NOT_FOUND');
  }
  t.equal((await server.request('GET', `/reconciliation/${'x'}/matches?limit=5000`)).status, 404, 'an unknown run before its paging');
  t.equal(server.runtime.log.appendedSeq, seq, 'no refused run wrote anything');
});

t.test('a recorded run end to end, announced to the webhook, and all of it after a restart', async (t) => {
  const receiver = new HookReceiver();
  await receiver.start(await freePort());
  t.teardown(() => receiver.stop());
  const dataDir = tempDataDir();
  const options = {
    dataDir,
    notifications: { url: `${receiver.url}/notify`, secret: 'webhook-secret', timeout_seconds: 2, retry_count: 3 },
    hookTargets: { allowPrivateNetworks: true },
  };
  let server = await startTestServer(options);
  const made = [];
  for (let index = 0; index < 30; index += 1) made.push(await transfer(server, { amount: 10 + index, reference: `INV-${index}`, description: `invoice ${index}` }));
  const hookSeen: any[] = [];
  // A transaction hook must never hear of reconciliation.
  const hook = await server.request('POST', '/hooks', { name: 'h', url: `${receiver.url}/hook`, type: 'POST_TRANSACTION', active: true, timeout: 2, retry_count: 0 });
  t.equal(hook.status, 201);
  const lines = made.slice(0, 25).map((txn, index) => ({
    id: `line-${index}`, amount: String(10 + index), currency: 'USD', reference: `INV-${index}`, description: 'bank line', date: txn.created_at,
  }));
  lines.push({ id: 'line-unknown', amount: '5', currency: 'USD', reference: 'NOT-OURS', description: 'bank fee', date: made[0].created_at });
  lines.push({ id: 'line-duplicate', amount: '10', currency: 'USD', reference: 'INV-0', description: 'listed twice', date: made[0].created_at });
  const upload = (await uploadFile(server.url, { name: 'statement.csv', text: csvOf(lines) }, 'First Bank')).body;
  const rule = await createRule(server, { name: 'reference and amount', criteria: [{ field: 'reference', operator: 'equals' }, { field: 'amount', operator: 'equals' }] });
  const started = await server.request('POST', '/reconciliation/start', { upload_id: upload.upload_id, strategy: 'one_to_one', matching_rule_ids: [rule] });
  t.equal(started.status, 201);
  t.match(started.body, { reconciliation_id: /^recon_/, is_dry_run: false });
  const id = started.body.reconciliation_id;
  const run = await waitForRun(server, id);
  t.match(run, { status: 'completed', matched_transactions: 25, unmatched_transactions: 2, processed_count: 27, total_count: 27, source: 'First Bank', upload_id: upload.upload_id });

  const matches = await allResults(server, id, 'matches', 10);
  t.equal(matches.length, 25, 'paged in tens');
  t.same(matches.map((match) => match.external_transaction_id), lines.slice(0, 25).map((line) => line.id), 'in upload order');
  t.same(matches.map((match) => match.internal_transaction_id), made.slice(0, 25).map((txn) => txn.transaction_id), 'each line with its own transaction');
  t.match(matches[0], { rule_id: rule, amount_difference: 0, precise_amount_difference: 0, difference_precision: 100, time_difference_seconds: 0 });
  const unmatched = await allResults(server, id, 'unmatched');
  t.same(unmatched.map((entry) => [entry.external_transaction_id, entry.reason]), [['line-unknown', 'no_candidate'], ['line-duplicate', 'already_matched']]);
  t.match(unmatched[0].record, { id: 'line-unknown', amount: 5, precise_amount: 500, precision: 100, currency: 'USD', source: 'First Bank' });

  const marked = await server.request('GET', `/transactions/${made[3].transaction_id}`);
  t.match(marked.body.meta_data, { reconciliation_id: id, external_transaction_id: 'line-3', reconciled_at: /^20/ });
  const filtered = await server.request('POST', '/transactions/filter', { filters: [{ field: 'meta_data.reconciliation_id', operator: 'eq', value: id }], include_count: true, limit: 100 });
  t.equal(filtered.body.total_count, 25, 'the marks are in the index: filter finds every matched transaction');
  const searched = await server.request('POST', '/search/transactions', { q: 'line-7' }, { 'X-Folio-Seq': String(server.runtime.log.appendedSeq) });
  t.same(searched.body.hits.map((hit: any) => hit.document.transaction_id), [made[7].transaction_id], 'and search finds one by its statement line');
  const listed = await server.request('GET', '/transactions?limit=100');
  t.equal(listed.body.length, 30, 'marked transactions are still listed');
  const runs = await server.request('POST', '/search/reconciliations', { q: 'first bank' }, { 'X-Folio-Seq': String(server.runtime.log.appendedSeq) });
  t.match(runs.body, { found: 1, hits: [{ document: { reconciliation_id: id, status: 'completed' } }] });
  const byStatus = await server.request('POST', '/search/reconciliations', { q: '*', filter_by: 'status:=completed && matched_transactions:>=25' }, { 'X-Folio-Seq': String(server.runtime.log.appendedSeq) });
  t.equal(byStatus.body.found, 1);

  // The webhook carries Blnk's other events too (the transactions, the balances): the run's among them.
  const runNotices = () => receiver.received.filter((delivery) => delivery.path === '/notify' && String(delivery.body.event).startsWith('reconciliation.'));
  await receiver.waitFor(() => runNotices().length > 0);
  const notice = runNotices()[0];
  t.match(notice?.body, { event: 'reconciliation.completed', data: { reconciliation_id: id, status: 'completed', matched_transactions: 25 } });
  t.ok(notice && signatureValid('webhook-secret', notice), 'signed with the webhook secret');
  hookSeen.push(...receiver.received.filter((delivery) => delivery.path === '/hook'));
  t.notOk(hookSeen.some((delivery) => String(delivery.body.event).startsWith('reconciliation')), 'transaction hooks never hear of runs');

  await server.stop();
  server = await startTestServer(options);
  t.teardown(() => server.stop());
  t.match((await server.request('GET', `/reconciliation/${id}`)).body, { status: 'completed', matched_transactions: 25 }, 'the run survives a restart');
  t.equal((await allResults(server, id, 'matches')).length, 25, 'and its results');
  t.match((await server.request('GET', `/transactions/${made[3].transaction_id}`)).body.meta_data, { reconciliation_id: id }, 'and the marks');
  t.equal((await server.request('GET', `/reconciliation/matching-rules/${rule}`)).status, 200, 'and the rule');
  t.equal(runNotices().length, 1, 'the notification is not sent again');
});

t.test('dry runs write nothing; an instant run answers with its result', async (t) => {
  const server = await startScopedServer(t);
  const made = [];
  for (let index = 0; index < 5; index += 1) made.push(await transfer(server, { amount: 1 + index, reference: `R-${index}` }));
  const rule = await createRule(server, { name: 'r', criteria: [{ field: 'reference', operator: 'equals' }] });
  const items = made.map((txn, index) => ({ id: `e-${index}`, amount: String(1 + index), currency: 'USD', reference: `R-${index}`, description: '', date: txn.created_at, source: 'bank' }));
  const upload = (await uploadFile(server.url, { name: 's.json', text: JSON.stringify(items) }, 'bank')).body.upload_id;
  const seq = server.runtime.log.appendedSeq;

  const instantDry = await server.request('POST', '/reconciliation/start-instant', { external_transactions: items, strategy: 'one_to_one', matching_rule_ids: [rule], dry_run: true });
  t.equal(instantDry.status, 200);
  t.match(instantDry.body, { is_dry_run: true, status: 'completed', matched_transactions: 5, unmatched_transactions: 0 });
  t.equal(instantDry.body.matches.length, 5);
  const background = await server.request('POST', '/reconciliation/start', { upload_id: upload, strategy: 'one_to_one', matching_rule_ids: [rule], dry_run: true });
  t.equal(background.status, 201);
  const run = await waitForRun(server, background.body.reconciliation_id);
  t.match(run, { is_dry_run: true, status: 'completed', matched_transactions: 5 });
  t.equal((await allResults(server, run.reconciliation_id, 'matches')).length, 5, 'a dry run\'s results are listable while the server runs');
  t.equal(server.runtime.log.appendedSeq, seq, 'no dry run wrote anything to the log');
  t.notOk((await server.request('GET', `/transactions/${made[0].transaction_id}`)).body.meta_data.reconciliation_id, 'nor marked anything');
  t.equal((await server.request('POST', '/search/reconciliations', { q: '*' }, { 'X-Folio-Seq': String(server.runtime.log.appendedSeq) })).body.found, 0, 'nor is searchable');

  const instant = await server.request('POST', '/reconciliation/start-instant', { external_transactions: items.slice(0, 3), strategy: 'one_to_one', matching_rule_ids: [rule] });
  t.equal(instant.status, 200);
  t.match(instant.body, { is_dry_run: false, status: 'completed', matched_transactions: 3, source: 'instant' });
  t.match((await server.request('GET', `/reconciliation/${instant.body.reconciliation_id}`)).body, { status: 'completed', matched_transactions: 3 });
  t.match((await server.request('GET', `/transactions/${made[1].transaction_id}`)).body.meta_data, { reconciliation_id: instant.body.reconciliation_id });
});
