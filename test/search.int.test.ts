// Full-text search and index rebuilds through the real server: q with `*`, words and prefixes, relevance
// putting the one record with a unique word first, filter_by (ranges in Unix seconds, equality, lists,
// &&, || with Typesense's grouping, parentheses), sort_by, paging without overlap or gap, Typesense's
// other parameters (query_by over text and ids, prefix, facet_by, group_by, include_fields and
// exclude_fields, highlights, offset and limit) and the refusal of each one Folio does not serve, every
// refusal, the empty reconciliations collection, and POST/GET /search/reindex (progress, 409 while
// running, same answers afterwards).

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

/**
 * A search that must see every write made so far: a search answers from the index as it stands (its
 * full-text indexes may trail), unless X-Folio-Seq names a seq it must include.
 */
const search = (server: TestServer, collection: string, body: Record<string, unknown>) =>
  server.request('POST', `/search/${collection}`, body, { 'X-Folio-Seq': String(server.runtime.log.appendedSeq) });

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

t.test('filter_by with || and parentheses, grouped from the left as Typesense groups them', async (t) => {
  const { server, balance } = await seeded(t);
  const refs = async (body: Record<string, unknown>): Promise<string[]> => {
    const response = await search(server, 'transactions', { per_page: 100, ...body });
    if (response.status !== 200) throw new Error(response.text);
    return response.body.hits.map((hit: any) => hit.document.reference as string).sort();
  };
  t.same(await refs({ filter_by: 'reference:=ref-1 || reference:=ref-2' }), ['ref-1', 'ref-2']);
  // && and || have the same precedence and group from the left: (ref-1 || ref-2) && amount > 11.
  t.same(await refs({ filter_by: 'reference:=ref-1 || reference:=ref-2 && precise_amount:>11' }), ['ref-2'], 'a || b && c is (a || b) && c');
  t.same(await refs({ filter_by: 'reference:=ref-1 || (reference:=ref-2 && precise_amount:>11)' }), ['ref-1', 'ref-2'], 'parentheses first');
  t.same(await refs({ filter_by: 'precise_amount:<12 || precise_amount:>37' }), ['ref-0', 'ref-1', 'ref-28', 'ref-29']);
  t.same(await refs({ filter_by: '(status:=VOID || precise_amount:<11) && currency:=USD' }), ['ref-0']);
  t.same(await refs({ filter_by: 'reference:=`a||b` || reference:=ref-3' }), ['ref-3'], 'backquotes keep || in a value');
  // `field:v` without `=` on a searched text column holds v's words, as Typesense reads Blnk's `description:payment`.
  t.equal((await refs({ filter_by: 'description:coffee' })).length, 12, 'description:coffee: the descriptions with the word');
  t.equal((await refs({ filter_by: 'description:=coffee' })).length, 0, 'description:=coffee: equal to it');
  t.equal((await refs({ filter_by: 'description:COFFEE && description:beans' })).length, 6, 'case folded, words joined');
  t.equal((await refs({ filter_by: 'description:[beans, friends]' })).length, 12, 'a list: any of them');
  t.same(await refs({ filter_by: 'description:`rent payment` && precise_amount:<11' }), ['ref-0'], 'every word of the value');
  t.same(await refs({ q: 'coffee', filter_by: 'description:friends || precise_amount:<12' }), ['ref-1', 'ref-11', 'ref-16', 'ref-21', 'ref-26', 'ref-6']);
  t.same(await refs({ q: 'coffee', filter_by: `destination:=${balance} || meta_data.channel:=web` }), ['ref-16', 'ref-18', 'ref-21', 'ref-26', 'ref-28', 'ref-3', 'ref-6', 'ref-8']);
  t.same(await refs({ q: 'coffee', filter_by: `destination:=${balance} || source:=${balance}` }), ['ref-16', 'ref-18', 'ref-26', 'ref-28', 'ref-6', 'ref-8'], 'words and either side of a balance');
});

t.test('query_by: text columns, ids whole or by their start, and what is not served', async (t) => {
  const { server, balance } = await seeded(t);
  const found = async (body: Record<string, unknown>): Promise<any> => {
    const response = await search(server, 'transactions', { per_page: 100, ...body });
    if (response.status !== 200) throw new Error(response.text);
    return response.body;
  };
  const byBalance = await found({ q: balance, query_by: 'source,destination' });
  t.equal(byBalance.found, 15, "Blnk's example: a balance's transactions by its id");
  t.ok(byBalance.hits.every((hit: any) => hit.document.destination === balance));
  t.equal((await found({ q: balance.slice(0, -6), query_by: 'destination' })).found, 15, 'the last word matches the start of an id');
  t.equal((await found({ q: balance.slice(0, -6), query_by: 'destination', prefix: false })).found, 0, 'prefix false: whole ids only');
  t.equal((await found({ q: balance.slice(0, -6), query_by: 'destination', prefix: 'false' })).found, 0, "prefix as Typesense's text");
  t.equal((await found({ q: 'rent', query_by: 'reference' })).found, 0, 'words only in the fields named');
  t.equal((await found({ q: 'rent', query_by: 'description' })).found, 12);
  t.equal((await found({ q: 'ord-12', query_by: 'description' })).found, 0);
  t.equal((await found({ q: 'ord-12', query_by: 'meta_data' })).found, 1);
  t.equal((await found({ q: `coffee ${balance}`, query_by: 'description,destination' })).found, 6, 'each word in one of the fields');
  const one = (await found({ filter_by: 'reference:=ref-7' })).hits[0].document.transaction_id as string;
  t.same((await found({ q: one, query_by: 'transaction_id' })).hits.map((hit: any) => hit.document.reference), ['ref-7']);
  t.equal((await found({ q: 'coff', query_by: 'description' })).found, 12, 'the last word is a prefix by default');
  t.equal((await found({ q: 'coff', query_by: 'description', prefix: false })).found, 0);
  for (const [query_by, message] of [
    ['meta_data.order', /query_by: meta_data\.order is not served/], ['status', /query_by: status is not searched by words/],
    ['nope', /query_by: unknown field "nope"/], ['description,', /empty field name/], ['$ledgers(name)', /joins/],
  ] as const) {
    const response = await search(server, 'transactions', { q: 'x', query_by });
    t.equal(response.status, 400, `query_by ${query_by}`);
    t.equal(response.body.error_detail.code, 'SRCH_QUERY_INVALID');
    t.match(response.body.error_detail.message, message);
  }
  const ledgers = await search(server, 'ledgers', { q: 'general', query_by: 'name' });
  t.equal(ledgers.body.found, 1);
  t.equal((await search(server, 'ledgers', { q: 'general_ledger_id', query_by: 'ledger_id' })).body.found, 1);
});

t.test('highlights: both of Typesense\'s forms, tags, snippets, full values and the fields named', async (t) => {
  const { server, balance } = await seeded(t);
  const words = Array.from({ length: 40 }, (_, index) => `w${index}`);
  words[20] = 'Zanzibar';
  await post(server, '/transactions', {
    currency: 'USD', precise_amount: 1, source: '@world', destination: '@savings', allow_overdraft: true, skip_queue: true,
    reference: 'long-one', description: words.join(' '),
  });
  const first = async (body: Record<string, unknown>): Promise<any> => {
    const response = await search(server, 'transactions', body);
    if (response.status !== 200) throw new Error(response.text);
    return response.body.hits[0];
  };
  const coffee = await first({ q: 'coffee', filter_by: 'reference:=ref-1' });
  t.same(coffee.highlights, [{ field: 'description', matched_tokens: ['coffee'], snippet: '<mark>coffee</mark> with friends' }]);
  t.same(coffee.highlight, { description: { matched_tokens: ['coffee'], snippet: '<mark>coffee</mark> with friends' } });
  const prefix = await first({ q: 'frien', filter_by: 'reference:=ref-1' });
  t.same(prefix.highlight.description.matched_tokens, ['friends'], 'the last word marks the tokens it starts');
  const meta = await first({ q: 'ord-12' });
  t.same(meta.highlights, [], 'metadata is in the second form only, as Typesense nests it');
  t.same(meta.highlight, { meta_data: { order: { matched_tokens: ['ord-12'], snippet: '<mark>ord-12</mark>' } } });
  const id = await first({ q: balance, query_by: 'destination' });
  t.same(id.highlights, [{ field: 'destination', matched_tokens: [balance], snippet: `<mark>${balance}</mark>` }], "Blnk's documented highlight of an id");
  const tags = await first({ q: 'coffee', filter_by: 'reference:=ref-1', highlight_start_tag: '[', highlight_end_tag: ']', enable_highlight_v1: false });
  t.notOk('highlights' in tags, 'enable_highlight_v1 false leaves the first form out');
  t.equal(tags.highlight.description.snippet, '[coffee] with friends');
  const long = await first({ q: 'zanzibar', filter_by: 'reference:=long-one', highlight_full_fields: 'description' });
  t.equal(long.highlight.description.snippet, 'w16 w17 w18 w19 <mark>Zanzibar</mark> w21 w22 w23 w24', 'a long value: the match and 4 tokens each side');
  t.equal(long.highlight.description.value, words.join(' ').replace('Zanzibar', '<mark>Zanzibar</mark>'), 'highlight_full_fields: the whole value');
  const shorter = await first({ q: 'zanzibar', filter_by: 'reference:=long-one', highlight_affix_num_tokens: 1, snippet_threshold: 30 });
  t.equal(shorter.highlight.description.snippet, 'w19 <mark>Zanzibar</mark> w21');
  const whole = await first({ q: 'zanzibar', filter_by: 'reference:=long-one', snippet_threshold: 100 });
  t.equal(whole.highlight.description.snippet, words.join(' ').replace('Zanzibar', '<mark>Zanzibar</mark>'), 'under the threshold the snippet is the whole value');
  const elsewhere = await first({ q: 'coffee', filter_by: 'reference:=ref-1', highlight_fields: 'reference' });
  t.same(elsewhere.highlight, {}, 'highlight_fields: only the fields named');
  const all = await first({ q: '*' });
  t.same([all.highlights, all.highlight], [[], {}], 'no words, nothing marked');
  const bad = await search(server, 'transactions', { q: 'x', highlight_fields: 'status' });
  t.equal(bad.status, 400);
  t.match(bad.body.error_detail.message, /highlight_fields: status is not searched by words/);
});

t.test('facet_by counts values over every record found', async (t) => {
  const { server, balance } = await seeded(t);
  const savings = (await search(server, 'transactions', { filter_by: 'reference:=ref-1' })).body.hits[0].document.destination as string;
  const facets = async (body: Record<string, unknown>): Promise<any[]> => {
    const response = await search(server, 'transactions', { per_page: 1, ...body });
    if (response.status !== 200) throw new Error(response.text);
    return response.body.facet_counts;
  };
  const both = await facets({ q: '*', facet_by: 'meta_data.channel,destination' });
  t.same(both, [
    { counts: [{ count: 20, highlighted: 'mobile', value: 'mobile' }, { count: 10, highlighted: 'web', value: 'web' }], field_name: 'meta_data.channel', stats: { total_values: 2 } },
    {
      counts: [balance, savings].sort().map((value) => ({ count: 15, highlighted: value, value })),
      field_name: 'destination', stats: { total_values: 2 },
    },
  ], "Typesense's shape, the commonest first, ties by value");
  t.same((await facets({ q: '*', filter_by: `destination:=${balance}`, facet_by: 'meta_data.channel' }))[0].counts.map((count: any) => [count.value, count.count]), [['mobile', 10], ['web', 5]], 'over the filtered records');
  t.same((await facets({ q: 'coffee', facet_by: 'meta_data.channel' }))[0].counts.map((count: any) => [count.value, count.count]), [['mobile', 8], ['web', 4]], 'over the words\' records');
  const amounts = (await facets({ q: '*', facet_by: 'precise_amount', max_facet_values: 3 }))[0];
  t.same(amounts.counts.map((count: any) => count.value), ['10', '11', '12'], 'exact amounts in decimal, at most max_facet_values');
  t.equal(amounts.stats.total_values, 30);
  t.same((await facets({ q: '*', facet_by: 'inflight' }))[0].counts, [{ count: 30, highlighted: 'false', value: 'false' }], 'flags as true/false');
  t.same((await facets({ q: 'nothing-matches-this' , facet_by: 'status' }))[0], { counts: [], field_name: 'status', stats: { total_values: 0 } });
  t.same(await facets({ q: '*' }), [], 'always there, empty without facet_by');
  for (const [facet_by, message] of [
    ['created_at', /facet_by: created_at is not served \(a time\)/], ['balance_id', /facet_by: balance_id is not served/],
    ['nope', /facet_by: unknown field "nope"/], ['precise_amount(small:[0, 100])', /ranges or options, which are not served/],
    ['status,parent_transaction,currency,reference,source,destination,description,hash,batch_id', /at most 8 fields/],
  ] as const) {
    const response = await search(server, 'transactions', { q: '*', facet_by });
    t.equal(response.status, 400, `facet_by ${facet_by}`);
    t.match(response.body.error_detail.message, message);
  }
});

t.test('group_by pages groups of hits in the search\'s order', async (t) => {
  const { server, balance } = await seeded(t);
  const savings = (await search(server, 'transactions', { filter_by: 'reference:=ref-1' })).body.hits[0].document.destination as string;
  const grouped = async (body: Record<string, unknown>): Promise<any> => {
    const response = await search(server, 'transactions', body);
    if (response.status !== 200) throw new Error(response.text);
    return response.body;
  };
  const byDestination = await grouped({ q: '*', group_by: 'destination', group_limit: 2 });
  t.notOk('hits' in byDestination, 'grouped_hits in place of hits, as Typesense answers');
  t.equal(byDestination.found, 2, 'found counts groups');
  t.same(byDestination.grouped_hits.map((group: any) => [group.group_key, group.found, group.hits.map((hit: any) => hit.document.reference)]), [
    [[savings], 15, ['ref-29', 'ref-27']],
    [[balance], 15, ['ref-28', 'ref-26']],
  ], 'groups by their newest hit, each with its first two');
  const second = await grouped({ q: '*', group_by: 'destination', page: 2, per_page: 1 });
  t.same(second.grouped_hits.map((group: any) => group.group_key), [[balance]], 'a page is a page of groups');
  t.equal(second.grouped_hits[0].hits.length, 3, 'group_limit defaults to 3');
  const twoFields = await grouped({ q: 'coffee', group_by: 'meta_data.channel,destination', per_page: 10, facet_by: 'meta_data.channel' });
  t.same(twoFields.grouped_hits.map((group: any) => [group.group_key[0], group.found]).sort(), [['mobile', 4], ['mobile', 4], ['web', 2], ['web', 2]]);
  t.same(twoFields.facet_counts[0].counts.map((count: any) => count.count), [8, 4], 'facets count records, not groups');
  const byAmount = await grouped({ q: '*', filter_by: 'precise_amount:<12', group_by: 'precise_amount', sort_by: 'precise_amount:asc' });
  t.same(byAmount.grouped_hits.map((group: any) => group.group_key), [[10], [11]], 'an amount key is the exact number');
  const missing = await grouped({ q: '*', group_by: 'meta_data.tier', per_page: 50 });
  t.same([missing.found, missing.grouped_hits[0].group_key, missing.grouped_hits[0].found], [1, [], 30], 'records without the key: one group, the key left out');
  const apart = await grouped({ q: '*', group_by: 'meta_data.tier', group_missing_values: false, per_page: 50 });
  t.equal(apart.found, 30, 'group_missing_values false: a group each');
  const bad = await search(server, 'transactions', { q: '*', group_by: 'created_at' });
  t.equal(bad.status, 400);
  t.match(bad.body.error_detail.message, /group_by: created_at is not served/);
  const limit = await search(server, 'transactions', { q: '*', group_by: 'status', group_limit: 100 });
  t.equal(limit.status, 400, 'group_limit at most 99, as in Typesense');
});

t.test('include_fields and exclude_fields cut the documents, amounts exact', async (t) => {
  const { server } = await seeded(t, 3);
  await post(server, '/transactions', {
    description: 'test', currency: 'USD', precise_amount: '12345678901234567890123', source: '@world', destination: '@savings', allow_overdraft: true, skip_queue: true,
    reference: 'huge', meta_data: { order: 'big', nested: { keep: 1, drop: 2 } },
  });
  const document = async (body: Record<string, unknown>): Promise<{ body: any; text: string }> => {
    const response = await search(server, 'transactions', { filter_by: 'reference:=huge', ...body });
    if (response.status !== 200) throw new Error(response.text);
    return { body: response.body.hits[0].document, text: response.text };
  };
  const included = await document({ include_fields: 'reference,precise_amount' });
  t.same(Object.keys(included.body), ['reference', 'precise_amount']);
  t.match(included.text, /"precise_amount":12345678901234567890123[,}]/, 'the amount keeps every digit');
  const excluded = await document({ exclude_fields: 'meta_data,hash' });
  t.notOk('meta_data' in excluded.body || 'hash' in excluded.body);
  t.equal(excluded.body.reference, 'huge');
  t.same((await document({ include_fields: 'meta_data.nested.keep,reference' })).body, { meta_data: { nested: { keep: 1 } }, reference: 'huge' });
  t.same((await document({ include_fields: 'meta_data', exclude_fields: 'meta_data.nested.drop' })).body, { meta_data: { order: 'big', nested: { keep: 1 } } }, 'exclude after include');
  for (const [body, message] of [
    [{ include_fields: 'id' }, /include_fields: the documents have no field "id"/],
    [{ exclude_fields: 'amount_string.x' }, /exclude_fields: the documents have no field/],
    [{ include_fields: '$identities(*)' }, /include_fields: joins/],
  ] as const) {
    const response = await search(server, 'transactions', { q: '*', ...body });
    t.equal(response.status, 400, JSON.stringify(body));
    t.match(response.body.error_detail.message, message);
  }
});

t.test("Typesense's other parameters: served, accepted where they change nothing, or refused by name", async (t) => {
  const { server } = await seeded(t, 12);
  const paged = await search(server, 'transactions', { q: '*', sort_by: 'created_at:asc', offset: 5, limit: 3 });
  t.same(paged.body.hits.map((hit: any) => hit.document.reference), ['ref-5', 'ref-6', 'ref-7'], 'offset and limit');
  t.same([paged.body.page, paged.body.request_params.per_page], [2, 3]);
  for (const body of [
    { num_typos: 0 }, { num_typos: '0,0' }, { drop_tokens_threshold: 0 }, { typo_tokens_threshold: 0 }, { infix: 'off' }, { split_join_tokens: 'off' },
    { use_cache: true, cache_ttl: 60 }, { exhaustive_search: true }, { enable_overrides: false, enable_synonyms: true }, { prefix: 'true,true' },
  ]) {
    const response = await search(server, 'transactions', { q: 'coffee', ...body });
    t.equal(response.status, 200, `${JSON.stringify(body)} is what Folio does`);
  }
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ pinned_hits: 'x:1' }, /Typesense search parameter not served: pinned_hits/],
    [{ facet_query: 'status:A', vector_query: 'v:([])' }, /Typesense search parameters not served: facet_query, vector_query/],
    [{ search_cutoff_ms: 10 }, /not served: search_cutoff_ms/],
    [{ query_by_weights: '2,1' }, /not served: query_by_weights/],
    [{ num_typos: 2 }, /num_typos: only 0 is served/],
    [{ drop_tokens_threshold: 1 }, /drop_tokens_threshold: only 0 is served/],
    [{ infix: 'always' }, /infix: only off is served/],
    [{ prefix: 'true,false' }, /prefix takes true or false/],
    [{ foo: 1, bar: 2 }, /unknown search parameters: "foo", "bar"/],
    [{ collection: 'transactions' }, /unknown search parameter: "collection"/],
    [{ offset: 1, page: 2 }, /page or offset, not both/],
    [{ limit: 1, per_page: 2 }, /per_page or limit, not both/],
    [{ group_missing_values: 'yes' }, /group_missing_values/],
  ];
  for (const [body, message] of cases) {
    const response = await search(server, 'transactions', { q: '*', ...body });
    t.equal(response.status, 400, `${JSON.stringify(body)} -> 400`);
    t.equal(response.body.error_detail?.code, 'SRCH_QUERY_INVALID');
    t.match(response.body.error_detail?.message, message);
  }
  const multi = await server.request('POST', '/multi-search', { searches: [{ collection: 'transactions', q: '*', pinned_hits: 'x:1' }, { collection: 'transactions', q: '*', facet_by: 'status' }] });
  t.equal(multi.status, 200);
  t.same(multi.body.results[0], { code: 400, error: 'Typesense search parameter not served: pinned_hits' }, 'in a multi-search, in its place');
  t.equal(multi.body.results[1].facet_counts[0].counts[0].count, 12);
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
    [{ filter_by: 'status:=APPLIED || ' }, /empty clause/],
    [{ filter_by: '(status:=APPLIED' }, /unclosed \(/],
    [{ filter_by: '(status:=APPLIED) status:=VOID' }, /join clauses and groups with && or \|\|/],
    [{ filter_by: '$balances(currency:=USD)' }, /joins/],
    [{ filter_by: '((((((((((status:=APPLIED))))))))))' }, /nests parentheses more than 8 deep/],
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
  t.same(rest, {
    facet_counts: [], found: 0, hits: [], out_of: 0, page: 2, request_params: { collection_name: 'reconciliations', per_page: 5, q: '*' }, search_cutoff: false,
  });
});

t.test('reindex rebuilds the index while it keeps answering', async (t) => {
  const { server } = await seeded(t, 60);
  const before = await search(server, 'transactions', { q: 'coffee', per_page: 100 });
  const idle = await server.request('GET', '/search/reindex');
  t.equal(idle.body.status, 'idle');
  t.equal(idle.body.index_lag_events, 0);
  t.equal(idle.body.paused, false, 'Blnk\'s paused field, never true here');
  const started = await server.request('POST', '/search/reindex');
  t.equal(started.status, 202);
  t.match(started.body, { status: 'in_progress', phase: 'indexing', paused: false, processed_records: Number, total_records: Number }, 'Blnk\'s words and fields');
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
    if (status.status !== 'in_progress') break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  t.equal(status.status, 'completed', JSON.stringify(status));
  t.equal(status.progress, 1);
  t.ok(status.rows_written > 60);
  t.match(status, { started_at: String, finished_at: String, completed_at: String, paused: false });
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

t.test('POST /search/reindex takes a malformed body as Blnk does (api/reindex.go StartReindex)', async (t) => {
  const dataDir = tempDataDir('folio-reindex-body');
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const server = await startTestServer({ dataDir });
  t.teardown(() => server.stop());
  const send = (body: string, type = 'application/json') =>
    fetch(`${server.url}/search/reindex`, { method: 'POST', headers: { 'content-type': type }, body });
  const malformed = await send('{"batch_size": ');
  t.equal(malformed.status, 202, 'a malformed body is ignored: the rebuild starts with its defaults');
  t.match(await malformed.json(), { status: 'in_progress' });
  const plain = await send('{}', 'text/plain');
  t.equal(plain.status, 415, 'a body that does not say it is JSON is still refused (a cross-site form cannot start a rebuild)');
  const ledger = await fetch(`${server.url}/ledgers`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name": ' });
  t.equal(ledger.status, 400, 'other routes still refuse a malformed body');
});
