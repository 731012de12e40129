// Searches and the full-text indexes' own track (index/projector.ts textBatch): with the full-text
// indexes held behind the rows on purpose (a pause before each text batch), a filter still sees every
// write made before it (it waits for the rows, which keep up), while a search answers at once from the
// index as it stands and says how far its full-text indexes were (X-Folio-Index-Seq): a record they do
// not hold yet is not found by its words. A search sent with X-Folio-Seq waits, bounded, for them to
// hold that seq, and is refused 503 SRCH_INDEX_BEHIND (Retry-After) if they do not by then; once they
// do, it finds the record. An identity deleted and another created after it is found (row ids are
// never reused, so a new row is never taken for one the full-text index already holds).

import t from 'tap';
import { expectError, openServer } from './helpers/http-fixture.js';
import type { TestResponse, TestServer } from './helpers/test-server.js';

const TEXT_PAUSE_MS = 8_000;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const indexSeq = (response: TestResponse): number => Number(response.headers['x-folio-index-seq']);

async function textReaches(server: TestServer, seq: number): Promise<void> {
  for (let tries = 0; tries < 600; tries += 1) {
    if ((await server.request('GET', '/search/reindex')).body.index_text_checkpoint_seq >= seq) return;
    await sleep(100);
  }
  throw new Error(`the full-text indexes did not reach seq ${seq}`);
}

t.test('a search trails the rows while the full-text indexes do, and says so; asked for a seq, it waits for it', async (t) => {
  const server = await openServer(t, { indexOptions: { wait_ms_max: 500, limits: { text_pause_ms: TEXT_PAUSE_MS } } });
  const written = await server.request('POST', '/transactions', {
    description: 'paid the quetzalcoatl invoice', reference: 'fresh-1', currency: 'USD', source: '@world', destination: '@shop', precise_amount: 5, allow_overdraft: true, skip_queue: true,
  });
  t.equal(written.status, 201);
  const seq = Number(written.headers['x-folio-seq']);

  const filtered = await server.request('POST', '/transactions/filter', { filters: [{ field: 'reference', operator: 'eq', value: 'fresh-1' }] });
  t.equal(filtered.status, 200);
  t.equal(filtered.body.data.length, 1, 'a filter sees the write: it waits for the rows');
  t.ok(indexSeq(filtered) >= seq, `and says the index held its seq (X-Folio-Index-Seq ${indexSeq(filtered)})`);

  const trailing = await server.request('POST', '/search/transactions', { q: 'quetzalcoatl' });
  t.equal(trailing.status, 200, 'a search answers at once');
  t.ok(indexSeq(trailing) < seq, `from full-text indexes that do not hold the write yet (X-Folio-Index-Seq ${indexSeq(trailing)} < ${seq})`);
  t.equal(trailing.body.found, 0, 'so its words do not find it yet');
  t.equal(Number(trailing.headers['x-folio-seq']), indexSeq(trailing), 'the answer reflects the seq the index held');

  const refused = await server.request('POST', '/search/transactions', { q: 'quetzalcoatl' }, { 'X-Folio-Seq': String(seq) });
  expectError(t, refused, 503, 'SRCH_INDEX_BEHIND', 'asked for the write\'s seq, it waits a bounded time, then');
  t.equal(refused.headers['retry-after'], '1', 'with Retry-After');

  await textReaches(server, seq);
  const found = await server.request('POST', '/search/transactions', { q: 'quetzalcoatl' }, { 'X-Folio-Seq': String(seq) });
  t.equal(found.status, 200);
  t.equal(found.body.found, 1, 'once the full-text indexes hold the seq, the search finds the write');
  t.ok(indexSeq(found) >= seq);
});

t.test('an identity created after one was deleted is found by its words', async (t) => {
  const server = await openServer(t);
  const search = async (words: string): Promise<TestResponse> =>
    server.request('POST', '/search/identities', { q: words }, { 'X-Folio-Seq': String(server.runtime.log.appendedSeq) });
  const created = await server.request('POST', '/identities', { identity_type: 'individual', first_name: 'Zebulon' });
  t.equal(created.status, 201);
  t.equal((await search('zebulon')).body.found, 1, 'the first identity is found');
  t.equal((await server.request('DELETE', `/identities/${created.body.identity_id as string}`)).status, 200);
  t.equal((await search('zebulon')).body.found, 0, 'and is gone once deleted');
  t.equal((await server.request('POST', '/identities', { identity_type: 'individual', first_name: 'Yarrowby' })).status, 201);
  t.equal((await search('yarrowby')).body.found, 1, 'the identity created after it is found');
});
