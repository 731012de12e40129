// The query side's own refusals under pressure: a query that cannot see the caller's writes in time is
// refused with 503 SRCH_INDEX_BEHIND (and Retry-After) instead of answered from a stale index, and a query
// running past its time limit is interrupted with 503 SRCH_QUERY_TIMEOUT. Both limits are set very low
// here so the situations arise on purpose; the writes are large so the index is surely busy.

import t from 'tap';
import { startScopedServer } from './helpers/scoped-server.js';

function bulk(size: number, tag: string): unknown {
  return {
    skip_queue: true,
    transactions: Array.from({ length: size }, (_, index) => ({
      precise_amount: 1 + index, currency: 'USD', source: '@world', destination: `@${tag}-${index % 50}`, allow_overdraft: true,
      description: `${tag} item ${index}`, meta_data: { note: `${tag}-${index}` },
    })),
  };
}

t.test('a query the index cannot answer in time is refused, not answered stale', async (t) => {
  const server = await startScopedServer(t, { indexOptions: { wait_ms_max: 0 } });
  let refusal: any;
  for (let attempt = 0; attempt < 5 && !refusal; attempt += 1) {
    t.equal((await server.request('POST', '/transactions/bulk', bulk(5_000, `behind${attempt}`))).status, 201);
    const response = await server.request('POST', '/transactions/filter', { filters: [] });
    if (response.status === 503) refusal = response;
  }
  t.ok(refusal, 'the index was behind the acknowledged write at least once');
  t.equal(refusal.body.error_detail.code, 'SRCH_INDEX_BEHIND');
  t.equal(refusal.headers['retry-after'], '1');
  t.match(refusal.body.error_detail.message, /events behind the log/);
  let caughtUp = false;
  for (let attempt = 0; attempt < 500 && !caughtUp; attempt += 1) {
    caughtUp = (await server.request('GET', '/search/reindex')).body.index_lag_events === 0;
    if (!caughtUp) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  t.ok(caughtUp, 'the index catches up');
});

t.test('a query past its time limit is interrupted', async (t) => {
  const server = await startScopedServer(t, { indexOptions: { queryTimeoutMs: 1 } });
  // Enough rows that the query takes a few milliseconds: the interrupt only stops a statement that is
  // running when it fires, and a scan of 20,000 rows sometimes finished first.
  for (const tag of ['slow', 'slower', 'slowest', 'slowerstill']) {
    t.equal((await server.request('POST', '/transactions/bulk', bulk(10_000, tag))).status, 201);
  }
  let timeout: any;
  for (let attempt = 0; attempt < 60 && !timeout; attempt += 1) {
    const response = await server.request('POST', '/transactions/filter', {
      filters: [{ field: 'meta_data.note', operator: 'ilike', value: '%zz%' }, { field: 'description', operator: 'like', value: '%9%' }],
      logical_operator: 'or', include_count: true, sort_by: 'precise_amount',
    });
    // A busy machine can leave the index behind the 40,000 rows for a moment (503 SRCH_INDEX_BEHIND): try again.
    if (response.status === 503 && response.body.error_detail.code === 'SRCH_QUERY_TIMEOUT') timeout = response;
  }
  t.ok(timeout, 'a slow query was interrupted');
  t.equal(timeout.body.error_detail.code, 'SRCH_QUERY_TIMEOUT');
  t.equal(timeout.headers['retry-after'], '1');
  // Tiny queries finish before the 1 ms limit almost always; a few tries rule out an unlucky timer.
  let quick = 0;
  for (let attempt = 0; attempt < 10 && quick !== 200; attempt += 1) quick = (await server.request('POST', '/search/ledgers', { q: '*' })).status;
  t.equal(quick, 200, 'the reader connections are usable again');
});
