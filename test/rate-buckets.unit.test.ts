// The token bucket's arithmetic (http/access/rate-buckets.ts) at times a test chooses: the burst at
// once, refusals with Retry-After and the RateLimit-* figures, refill one request per interval, an
// interval rounded up (never a request more than the rate), cells given out densely and shared by every
// view of the buffer, and the configuration.

import t from 'tap';
import { BucketCells, bucketStep, MASTER_BUCKET, RateBuckets, rateLimitHeaders } from '../http/access/rate-buckets.js';
import { ConfigError, loadConfig, rateLimitSettings } from '../server/config.js';

const SECOND = 1_000_000_000n;

t.test('a burst at once, then one request per interval', async (t) => {
  const buckets = new BucketCells().buckets;
  const limit = { requests_per_second: 1, burst: 5 };
  const start = 10n * SECOND;
  const remaining = [];
  for (let index = 0; index < 5; index += 1) {
    const decision = buckets.admit(MASTER_BUCKET, limit, start);
    t.ok(decision.admitted);
    remaining.push(decision.remaining);
  }
  t.same(remaining, [4, 3, 2, 1, 0]);
  const refused = buckets.admit(MASTER_BUCKET, limit, start);
  t.same(refused, { admitted: false, limit: 5, remaining: 0, resetSeconds: 5, retryAfterSeconds: 1 });
  t.same(rateLimitHeaders(refused), { 'RateLimit-Limit': '5', 'RateLimit-Remaining': '0', 'RateLimit-Reset': '5', 'Retry-After': '1' });
  t.notOk(buckets.admit(MASTER_BUCKET, limit, start + SECOND - 1n).admitted, 'a nanosecond short of the interval: still empty');
  const refilled = buckets.admit(MASTER_BUCKET, limit, start + SECOND);
  t.ok(refilled.admitted, 'one interval later: one request');
  t.equal(refilled.remaining, 0);
  t.notOk(buckets.admit(MASTER_BUCKET, limit, start + SECOND).admitted);
  const later = buckets.admit(MASTER_BUCKET, limit, start + 100n * SECOND);
  t.same([later.admitted, later.remaining, later.resetSeconds], [true, 4, 1], 'a long wait fills the bucket, no more');
});

t.test('the interval is rounded up: a rate of 3 never admits a fourth request in a second', async (t) => {
  // 1e9 / 3 = 333,333,333.3 ns: rounded up to 333,333,334, three intervals are 1,000,000,002 ns.
  let tat = 0n;
  let admitted = 0;
  for (let now = 0n; now <= SECOND; now += 1_000n) {
    const { decision, next } = bucketStep(tat, now, { requests_per_second: 3, burst: 1 });
    if (decision.admitted) {
      tat = next;
      admitted += 1;
    }
  }
  t.equal(admitted, 3, 'requests at 0, 333,333,334 and 666,666,668 ns; the next only after 1 s');
});

t.test('cells: dense, one per key, the master\'s apart, shared by every view of the buffer', async (t) => {
  const cells = new BucketCells();
  t.equal(cells.cellOf('key_a'), 1);
  t.equal(cells.cellOf('key_b'), 2);
  t.equal(cells.cellOf('key_a'), 1, 'a key keeps its cell');
  for (let index = 0; index < 5_000; index += 1) cells.cellOf(`key_${index}`);
  const limit = { requests_per_second: 1, burst: 1 };
  const other = new RateBuckets(cells.buffer);
  const cell = cells.cellOf('key_4999');
  t.ok(cells.buckets.admit(cell, limit, SECOND).admitted, 'the buffer grew to hold it');
  t.notOk(other.admit(cell, limit, SECOND).admitted, 'another view (another thread) sees the same bucket');
});

t.test('the configuration: none by default, a burst of 0 is one second of the rate, bounds', async (t) => {
  t.same(rateLimitSettings(loadConfig(undefined, {}).rate_limits), { keyDefault: undefined, master: undefined }, 'none by default');
  const config = loadConfig(undefined, { FOLIO_KEY_REQUESTS_PER_SECOND_DEFAULT: '20', FOLIO_MASTER_KEY_REQUESTS_PER_SECOND: '5', FOLIO_MASTER_KEY_BURST: '9' });
  t.same(rateLimitSettings(config.rate_limits), { keyDefault: { requests_per_second: 20, burst: 20 }, master: { requests_per_second: 5, burst: 9 } });
  t.throws(() => loadConfig(undefined, { FOLIO_KEY_BURST_DEFAULT: '100001' }), ConfigError);
  t.throws(() => loadConfig(undefined, { FOLIO_MASTER_KEY_REQUESTS_PER_SECOND: '1.5' }), ConfigError);
});
