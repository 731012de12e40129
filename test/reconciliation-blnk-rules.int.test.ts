// Rules the public Blnk ledger accepts and Folio used to refuse, served over HTTP against the real index:
// `reference contains` alone (statement lines that embed the ledger's reference in longer text, and
// fragments of it), one_to_many grouped by description, and a rule no index narrows (answered by the
// bounded scan, which reports progress and, past its bound, fails the run with the reason instead of
// being refused up front). Each of these was a 400 RECON_RULE_INVALID or GEN_VALIDATION_ERROR before.

import t from 'tap';
import { allResults, createRule, uploadFile, waitForRun, type StatementLine } from './helpers/reconciliation-client.js';
import { startScopedServer } from './helpers/scoped-server.js';
import type { TestServer } from './helpers/test-server.js';

const DAY = '2025-03-17T10:00:00Z';

async function transfer(server: TestServer, body: Record<string, unknown>): Promise<string> {
  const response = await server.request('POST', '/transactions', {
    currency: 'USD', precision: 100, source: '@bank', destination: '@shop', allow_overdraft: true, skip_queue: true, description: 'transfer', ...body,
  });
  if (response.status !== 201) throw new Error(`transfer: ${response.status} ${response.text}`);
  return response.body.transaction_id as string;
}

function line(id: string, amount: string, reference: string, description = ''): StatementLine {
  return { id, amount, currency: 'USD', reference, description, date: DAY, source: 'bank' };
}

t.test('reference contains alone: the statement embeds the reference in longer text, or carries a piece of it', async (t) => {
  const server = await startScopedServer(t);
  const order = await transfer(server, { precise_amount: 15_275, reference: 'ORD-2024-00042' });
  const invoice = await transfer(server, { precise_amount: 9_000, reference: 'INV-7781' });
  const tiny = await transfer(server, { precise_amount: 100, reference: 'Q7' });
  for (let filler = 0; filler < 30; filler += 1) await transfer(server, { precise_amount: 500 + filler, reference: `TXN-${1000 + filler}` });
  // Blnk's documented example: "REF-12345" contains "12345" (the external holds the internal).
  const blnkExample = await transfer(server, { precise_amount: 777, reference: '12345' });
  const rule = await createRule(server, { name: 'reference inside', criteria: [{ field: 'reference', operator: 'contains' }] });
  const lines = [
    line('bank-1', '152.75', 'ACH CREDIT ord-2024-00042 THANK YOU'),
    line('bank-2', '90.00', '7781'),
    line('bank-3', '1.00', 'Fee q7'),
    line('bank-4', '7.77', 'REF-12345'),
    line('bank-5', '1.00', 'NOTHING HERE'),
  ];
  const upload = await uploadFile(server.url, { name: 'statement.json', text: JSON.stringify(lines) }, 'bank');
  t.equal(upload.status, 201, upload.text);
  const started = await server.request('POST', '/reconciliation/start', { upload_id: upload.body.upload_id, strategy: 'one_to_one', matching_rule_ids: [rule] });
  t.equal(started.status, 201, started.text);
  const run = await waitForRun(server, started.body.reconciliation_id);
  t.match(run, { status: 'completed', matched_transactions: 4, unmatched_transactions: 1 });
  const matches = await allResults(server, started.body.reconciliation_id, 'matches');
  t.same(Object.fromEntries(matches.map((match) => [match.external_transaction_id, match.internal_transaction_ids])), {
    'bank-1': [order], 'bank-2': [invoice], 'bank-3': [tiny], 'bank-4': [blnkExample],
  }, 'each line to the transaction whose reference it holds (or that holds it), whatever the case');
  const unmatched = await allResults(server, started.body.reconciliation_id, 'unmatched');
  t.match(unmatched, [{ external_transaction_id: 'bank-5', reason: 'no_candidate' }]);
  const marked = await server.request('GET', `/transactions/${order}`);
  t.equal(marked.body.meta_data.external_transaction_id, 'bank-1', 'the matched transaction is marked');
});

t.test('one_to_many grouped by description (Blnk\'s documented grouping), and by every field Blnk allows', async (t) => {
  const server = await startScopedServer(t);
  const bulk = await server.request('POST', '/transactions/bulk', {
    skip_queue: true,
    transactions: [100_00, 200_00, 53_00].map((cents, index) => ({
      currency: 'USD', precision: 100, precise_amount: cents, source: '@bank', destination: `@seller${index}`, allow_overdraft: true,
      reference: `PAYOUT-7-${index}`, description: 'Payout run 7',
    })),
  });
  t.equal(bulk.status, 201, bulk.text);
  await transfer(server, { precise_amount: 353_00, reference: 'OTHER-1', description: 'Payout run 8' });
  const members = (await server.request('POST', '/transactions/filter', { filters: [{ field: 'description', operator: 'eq', value: 'Payout run 7' }] })).body.data
    .map((record: any) => record.transaction_id as string).sort();
  t.equal(members.length, 3);
  // Blnk's own one_to_many case (TestOneToManyReconciliation): amount with 1% drift, description and reference contains, currency.
  const rule = await createRule(server, {
    name: 'payout', criteria: [
      { field: 'amount', operator: 'equals', allowable_drift: 0.01 }, { field: 'description', operator: 'contains' },
      { field: 'reference', operator: 'contains' }, { field: 'currency', operator: 'equals' },
    ],
  });
  const response = await server.request('POST', '/reconciliation/start-instant', {
    strategy: 'one_to_many', grouping_criteria: 'description', matching_rule_ids: [rule],
    external_transactions: [line('payout-7', '353.00', 'PAYOUT-7', 'payout run 7 settled')],
  });
  t.equal(response.status, 200, response.text);
  t.match(response.body, { status: 'completed', matched_transactions: 1 });
  t.same(response.body.matches[0]?.internal_transaction_ids.slice().sort(), members, 'the line matches the whole group, not the other 353.00');

  const amountOnly = await createRule(server, { name: 'sum', criteria: [{ field: 'amount', operator: 'equals' }, { field: 'currency', operator: 'equals' }] });
  for (const grouping of ['description', 'transaction_id', 'currency', 'status', 'created_at', 'parent_transaction', 'batch_id', 'reference', 'source', 'destination']) {
    const run = await server.request('POST', '/reconciliation/start-instant', {
      strategy: 'one_to_many', grouping_criteria: grouping, matching_rule_ids: [amountOnly], dry_run: true,
      external_transactions: [line('sum', '353.00', 'x')],
    });
    t.equal(run.status, 200, `grouped by ${grouping}: ${run.text.slice(0, 200)}`);
    t.equal(run.body.status, 'completed', `grouped by ${grouping}`);
  }
  const byDescription = await server.request('POST', '/reconciliation/start-instant', {
    strategy: 'one_to_many', grouping_criteria: 'description', matching_rule_ids: [amountOnly], dry_run: true,
    external_transactions: [line('sum', '353.00', 'x')],
  });
  t.equal(byDescription.body.matched_transactions, 1, 'an amount alone finds no group through an index: the groups are scanned');
  t.same(byDescription.body.matches[0]?.internal_transaction_ids.slice().sort(), members, 'the batch, recorded nearer the line\'s date than the single 353.00');
  const many = await server.request('POST', '/reconciliation/start-instant', {
    strategy: 'many_to_one', grouping_criteria: 'source', matching_rule_ids: [amountOnly], dry_run: true,
    external_transactions: [line('a', '300.00', 'x'), line('b', '53.00', 'y')],
  });
  t.equal(many.status, 200, many.text);
  t.equal(many.body.matched_transactions, 2, 'many_to_one by source: the statement is one group, summing to 353.00');
});

t.test('a rule no index narrows: scanned with progress, and stopped at its bound with the reason, never refused', async (t) => {
  const server = await startScopedServer(t, { matcherLimits: { scan_page_rows: 5, scan_pair_checks_max: 200 } });
  const ids: string[] = [];
  for (let index = 0; index < 20; index += 1) ids.push(await transfer(server, { precise_amount: 1_000 + index * 100, reference: `T-${index}` }));
  // Blnk accepts amount greater_than with no other narrowing criterion; the best candidate is the nearest below.
  const rule = await createRule(server, { name: 'more than', criteria: [{ field: 'amount', operator: 'greater_than' }, { field: 'currency', operator: 'equals' }] });
  const small = await server.request('POST', '/reconciliation/start-instant', {
    strategy: 'one_to_one', matching_rule_ids: [rule], external_transactions: [line('near', '15.50', 'nothing')],
  });
  t.equal(small.status, 200, small.text);
  t.match(small.body, { status: 'completed', matched_transactions: 1 });
  t.same(small.body.matches[0]?.internal_transaction_ids, [ids[5]], '15.50 is greater than 15.00, the nearest below it');

  const lines = Array.from({ length: 30 }, (_, index) => line(`l-${index}`, `${20 + index}.00`, 'nothing'));
  const upload = await uploadFile(server.url, { name: 'statement.json', text: JSON.stringify(lines) }, 'bank');
  const started = await server.request('POST', '/reconciliation/start', { upload_id: upload.body.upload_id, strategy: 'one_to_one', matching_rule_ids: [rule] });
  t.equal(started.status, 201, 'accepted: a slow rule is not refused up front');
  const run = await waitForRun(server, started.body.reconciliation_id);
  t.equal(run.status, 'failed');
  t.match(run.failure_reason, /scan_pair_checks_max/, run.failure_reason);
  t.ok(run.processed_count > 0, `progress was reported before the bound (${run.processed_count} of ${run.total_count})`);
  const instant = await server.request('POST', '/reconciliation/start-instant', { strategy: 'one_to_one', matching_rule_ids: [rule], external_transactions: lines, dry_run: true });
  t.equal(instant.status, 200);
  t.match(instant.body, { status: 'failed', failure_reason: /scan_pair_checks_max/ }, 'a dry run stops at the same bound, with the reason');
});

t.test('rules that compare nothing are accepted and never hold, as in Blnk', async (t) => {
  const server = await startScopedServer(t);
  await transfer(server, { precise_amount: 1_000, reference: 'R-1' });
  const rule = await createRule(server, { name: 'dead', criteria: [{ field: 'amount', operator: 'contains', allowable_drift: 1000 }, { field: 'reference', operator: 'equals' }] });
  const response = await server.request('POST', '/reconciliation/start-instant', { strategy: 'one_to_one', matching_rule_ids: [rule], external_transactions: [line('x', '10.00', 'R-1')], dry_run: true });
  t.match(response.body, { status: 'completed', matched_transactions: 0 });
});
