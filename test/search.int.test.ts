// Full-text search and index rebuilds through the real server: q with `*`, words and prefixes, relevance
// putting the one record with a unique word first, filter_by (ranges in Unix seconds, equality, lists,
// &&), sort_by, paging without overlap or gap, every refusal, the empty reconciliations collection, and
// POST/GET /search/reindex (progress, 409 while running, same answers afterwards).

import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { startScopedServer } from './helpers/scoped-server.js';
import { startTestServer, tempDataDir, type TestServer } from './helpers/test-server.js';

async function post(server: TestServer, route: string, body: unknown): Promise<any> {
  const response = await server.request('POST', route, body);
  if (response.status >= 300) throw new Error(`POST ${route}: ${response.status} ${response.text}`);
  return response.body;
}

const DESCRIPTIONS = ['monthly rent payment', 'coffee with friends', 'salary for march', 'coffee beans', 'rent deposit refund'];

async function seeded(t: Test, count = 30): Promise<{ server: TestServer; balance: string; started: number }> {
  const server = await startScopedServer(t);
  const started = Math.floor(Date.now() / 1000);
  const balance = (await post(server, '/balances', { ledger_id: 'general_ledger_id', currency: 'USD', meta_data: { owner: 'zanzibar-holdings' } })).balance_id;
  for (let index = 0; index < count; index += 1) {
    await post(server, '/transactions', {
      currency: 'USD', precise_amount: 10 + index, source: '@world', destination: index % 2 === 0 ? balance : '@savings',
      allow_overdraft: true, skip_queue: true, reference: `ref-${index}`, description: DESCRIPTIONS[index % DESCRIPTIONS.length],
      meta_data: { channel: index % 3 === 0 ? 'web' : 'mobile', order: `ord-${index}` },
    });
  }
  return { server, balance, started };
}

const search = (server: TestServer, collection: string, body: Record<string, unknown>) => server.request('POST', `/search/${collection}`, body);

t.test('words, prefixes, * and relevance', async (t) => {
  const { server } = await seeded(t);
  await post(server, '/transactions', {
    currency: 'USD', precise_amount: 5, source: '@world', destination: '@savings', allow_overdraft: true, skip_queue: true,
    description: 'coffee quetzalcoatl espresso', reference: 'unique-one',
  });
  const all = await search(server, 'transactions', { q: '*' });
  t.equal(all.status, 200);
  t.equal(all.body.found, 31);
  t.equal(all.body.out_of, 31);
  t.equal(all.body.hits.length, 10, 'per_page defaults to 10');
  t.equal(all.body.page, 1);
  t.same(all.body.request_params, { collection_name: 'transactions', per_page: 10, q: '*' });
  t.type(all.body.search_time_ms, 'number');
  t.equal(all.body.hits[0].document.reference, 'unique-one', 'without words, newest first');
  // A control character separates words as whitespace does; a NUL inside a word was a 500 (fuzz seed 3567472445).
  const controlled = await search(server, 'transactions', { q: 'coffee\u0000quetzal' });
  t.equal(controlled.status, 200, 'a NUL between words is a separator');
  t.equal(controlled.body.found, 1, 'and both words are matched');

  const unique = await search(server, 'transactions', { q: 'quetzalcoatl' });
  t.equal(unique.body.found, 1, 'a unique word finds its one record');
  t.equal(unique.body.hits[0].document.reference, 'unique-one');
  const ranked = await search(server, 'transactions', { q: 'coffee quetzal' });
  t.equal(ranked.body.hits[0].document.reference, 'unique-one', 'the last word matches as a prefix');
  const coffee = await search(server, 'transactions', { q: 'coffee', per_page: 50 });
  t.equal(coffee.body.found, 13, 'every record with the word');
  t.equal(coffee.body.hits[0].document.reference, 'unique-one', 'the record where the word weighs most ranks first');
  const both = await search(server, 'transactions', { q: 'rent refund' });
  t.equal(both.body.found, 6, 'all words must appear');
  const byReference = await search(server, 'transactions', { q: 'ref-7' });
  t.same(byReference.body.hits.map((hit: any) => hit.document.reference), ['ref-7'], 'references are whole tokens');
  const byMeta = await search(server, 'transactions', { q: 'ord-12' });
  t.same(byMeta.body.hits.map((hit: any) => hit.document.reference), ['ref-12'], 'metadata values are searched');
  await post(server, '/transactions', {
    currency: 'USD', precise_amount: 6, source: '@world', destination: '@savings', allow_overdraft: true, skip_queue: true,
    description: 'Crème Brûlée for the TEAM', reference: 'accents',
  });
  const folded = await search(server, 'transactions', { q: 'creme brulee team' });
  t.same(folded.body.hits.map((hit: any) => hit.document.reference), ['accents'], 'case and diacritics are folded');
  const noise = await search(server, 'transactions', { q: '!!! ???' });
  t.equal(noise.body.found, 32, 'words without letters or digits match everything');
  const quotes = await search(server, 'transactions', { q: '"coffee" OR NEAR(rent) *' });
  t.equal(quotes.status, 200, 'FTS5 syntax in q is just text');
  const balances = await search(server, 'balances', { q: 'zanzibar' });
  t.equal(balances.body.found, 1, 'balances are searchable by metadata');
  const ledgers = await search(server, 'ledgers', { q: 'general' });
  t.equal(ledgers.body.hits[0].document.ledger_id, 'general_ledger_id');
});

t.test('filter_by and sort_by', async (t) => {
  const { server, balance, started } = await seeded(t);
  const ended = Math.floor(Date.now() / 1000);
  const refs = (body: Record<string, unknown>) =>
    search(server, 'transactions', { per_page: 100, ...body }).then((response) => {
      if (response.status !== 200) throw new Error(response.text);
      return response.body.hits.map((hit: any) => hit.document.reference as string);
    });
  t.equal((await refs({ filter_by: `created_at:[${started}..${ended}]` })).length, 30, 'a range in Unix seconds, inclusive');
  t.equal((await refs({ filter_by: `created_at:>${ended}` })).length, 0);
  t.equal((await refs({ filter_by: `created_at:<${started}` })).length, 0);
  t.equal((await refs({ filter_by: `created_at:>=${started}` })).length, 30);
  t.same(await refs({ filter_by: 'precise_amount:=15' }), ['ref-5']);
  t.same(await refs({ filter_by: 'precise_amount:15' }), ['ref-5'], 'a bare colon is equality');
  t.same(await refs({ filter_by: 'precise_amount:[15..17] && meta_data.channel:=web' }), ['ref-6']);
  t.same(await refs({ filter_by: 'reference:[ref-1, ref-2]', sort_by: 'reference:asc' }), ['ref-1', 'ref-2']);
  t.equal((await refs({ filter_by: 'reference:!=[ref-1,ref-2]' })).length, 28);
  t.equal((await refs({ filter_by: `destination:=${balance}` })).length, 15);
  t.equal((await refs({ filter_by: 'destination:=`' + balance + '` && precise_amount:>30' })).length, 4, 'backquoted values');
  t.same((await refs({ q: 'coffee', filter_by: 'precise_amount:<20' })).sort(), ['ref-1', 'ref-3', 'ref-6', 'ref-8']);
  t.same(await refs({ q: 'rent', filter_by: 'meta_data.channel:=web', sort_by: 'precise_amount:desc' }), ['ref-24', 'ref-15', 'ref-9', 'ref-0']);
  t.same((await refs({ sort_by: 'precise_amount:asc' })).slice(0, 3), ['ref-0', 'ref-1', 'ref-2']);
  t.same((await refs({ sort_by: 'created_at:asc' })).slice(0, 2), ['ref-0', 'ref-1']);
  t.same((await refs({ q: 'coffee', sort_by: 'precise_amount:desc' })).slice(0, 2), ['ref-28', 'ref-26'], 'words with a field sort');
  t.same(await refs({ filter_by: 'inflight:=true' }), []);
});

t.test('paging neither repeats nor skips a hit', async (t) => {
  const { server } = await seeded(t, 47);
  for (const body of [{ q: '*' }, { q: 'coffee' }, { q: '*', sort_by: 'precise_amount:asc' }, { q: 'rent', filter_by: 'precise_amount:>12' }]) {
    const seen: string[] = [];
    let found = -1;
    for (let page = 1; page < 50; page += 1) {
      const response = await search(server, 'transactions', { ...body, page, per_page: 4 });
      found = response.body.found;
      if (response.body.hits.length === 0) break;
      seen.push(...response.body.hits.map((hit: any) => hit.document.reference));
    }
    t.equal(seen.length, found, `${JSON.stringify(body)}: every hit once`);
    t.equal(new Set(seen).size, found, `${JSON.stringify(body)}: none twice`);
  }
});

t.test('bad searches are refused with SRCH_QUERY_INVALID', async (t) => {
  const { server } = await seeded(t, 3);
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ q: '*', page: 0 }, /page/],
    [{ q: '*', per_page: 251 }, /per_page/],
    [{ q: 42 }, /q/],
    [{ filter_by: 'precise_amount' }, /cannot read filter_by clause/],
    [{ filter_by: 'nope:=1' }, /unknown field "nope"/],
    [{ filter_by: 'precise_amount:=abc' }, /whole number/],
    [{ filter_by: 'created_at:>yesterday' }, /Unix seconds/],
    [{ filter_by: 'status:=APPLIED || status:=VOID' }, /&& only/],
    [{ filter_by: 'status:=APPLIED && ' }, /empty clause/],
    [{ filter_by: 'reference:=`open' }, /unclosed backquote/],
    [{ filter_by: 'precise_amount:>[1..2]' }, /range cannot follow/],
    [{ filter_by: 'precise_amount:[1..2' }, /unclosed \[/],
    [{ filter_by: 'inflight:>true' }, /= or != only/],
    [{ sort_by: 'description:asc' }, /cannot sort transactions by "description"/],
    [{ sort_by: 'precise_amount' }, /field:asc or field:desc/],
    [{ sort_by: 'precise_amount:asc,_text_match:desc' }, /only be the first/],
    [{ sort_by: 'a:asc,b:asc,c:asc,d:asc' }, /at most 3/],
  ];
  for (const [body, message] of cases) {
    const response = await search(server, 'transactions', body);
    t.equal(response.status, 400, `${JSON.stringify(body)} -> 400`);
    t.equal(response.body.error_detail?.code, 'SRCH_QUERY_INVALID');
    t.match(response.body.error_detail?.message, message);
  }
  const unknown = await search(server, 'invoices', { q: '*' });
  t.equal(unknown.status, 404);
  t.equal(unknown.body.error_detail.code, 'GEN_NOT_FOUND');
  const reconciliations = await search(server, 'reconciliations', { q: '*', page: 2, per_page: 5 });
  t.equal(reconciliations.status, 200);
  // A real collection now (reconciliation runs; none here): the answer's shape, its time measured.
  const { search_time_ms: took, ...rest } = reconciliations.body;
  t.type(took, 'number');
  t.same(rest, { found: 0, hits: [], out_of: 0, page: 2, request_params: { collection_name: 'reconciliations', per_page: 5, q: '*' } });
});

t.test('reindex rebuilds the index while it keeps answering', async (t) => {
  const { server } = await seeded(t, 60);
  const before = await search(server, 'transactions', { q: 'coffee', per_page: 100 });
  const idle = await server.request('GET', '/search/reindex');
  t.equal(idle.body.status, 'idle');
  t.equal(idle.body.index_lag_events, 0);
  const started = await server.request('POST', '/search/reindex');
  t.equal(started.status, 202);
  t.equal(started.body.status, 'running');
  const again = await server.request('POST', '/search/reindex');
  t.equal(again.status, 409, 'one rebuild at a time');
  t.equal(again.body.error_detail.code, 'SRCH_REINDEX_IN_PROGRESS');
  // Writes and queries go on during the rebuild and see their own writes.
  await post(server, '/transactions', { currency: 'USD', precise_amount: 9, source: '@world', destination: '@savings', allow_overdraft: true, skip_queue: true, description: 'during rebuild', reference: 'mid-rebuild' });
  const during = await search(server, 'transactions', { q: 'during' });
  t.equal(during.body.found, 1);
  let status: any;
  // A hang guard, not a timing check: a rebuild on a crowded machine (its full-text child included) took over 10 s.
  const patience = Date.now() + 60_000;
  while (Date.now() < patience) {
    status = (await server.request('GET', '/search/reindex')).body;
    if (status.status !== 'running') break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  t.equal(status.status, 'completed', JSON.stringify(status));
  t.equal(status.progress, 1);
  t.ok(status.rows_written > 60);
  t.match(status, { started_at: String, finished_at: String });
  const after = await search(server, 'transactions', { q: 'coffee', per_page: 100 });
  t.same(after.body.hits, before.body.hits, 'the same answers from the rebuilt index');
  const afterDuring = await search(server, 'transactions', { q: 'during' });
  t.equal(afterDuring.body.found, 1, 'writes made during the rebuild are in the new index');
  const metrics = await server.request('GET', '/metrics');
  t.match(metrics.text, /folio_index_lag_events \d+/);
  t.match(metrics.text, /folio_index_checkpoint_seq \d+/);
});

t.test('closing the server during a rebuild stops it cleanly', async (t) => {
  const dataDir = tempDataDir('folio-close-rebuild');
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const server = await startTestServer({ dataDir });
  const transactions = Array.from({ length: 3_000 }, (_, index) => ({
    precise_amount: 1 + index, currency: 'USD', source: '@world', destination: `@close-${index % 20}`, allow_overdraft: true, description: `close ${index}`,
  }));
  t.equal((await server.request('POST', '/transactions/bulk', { skip_queue: true, transactions })).status, 201);
  t.equal((await server.request('POST', '/search/reindex')).status, 202);
  await server.stop();
  t.notOk(fs.existsSync(path.join(server.dataDir, 'index.sqlite.rebuild')), 'the half-built file is removed');
  t.ok(fs.existsSync(path.join(server.dataDir, 'index.sqlite')), 'the live index stays');
});
