// Fair use through the real server (`folio serve` as a child process, two HTTP worker threads): an API
// key's token bucket holds across the workers (its requests are spread over both, the bucket is the
// process's), a refusal is 429 GEN_RATE_LIMITED with Retry-After and the RateLimit-* headers, a wait
// of Retry-After admits again, the master key is unlimited unless configured, the configured default
// applies to keys made without a rate, a key cannot make a faster key, rates are checked, survive a
// restart, HTTP on the engine's own thread limits the same, and with authentication off the master
// key's limit is the server's.
//
// Counts are asserted against a bound that allows for the refill during the burst of requests, measured
// on the monotonic clock, with a rate (1 per second) far below the burst, so a slow machine only loosens
// the bound by a few requests: it stays far below what buckets per worker would admit.

import { performance } from 'node:perf_hooks';
import t, { type Test } from 'tap';
import { startChildServer, type ChildServer } from './helpers/child-server.js';
import { sendRequest, tempDataDir, type TestResponse } from './helpers/test-server.js';

const MASTER = 'rate-limit-test-master-key-0123456789abcdef';
const WORKERS = '2';
const inADay = (): string => new Date(Date.now() + 24 * 3600_000).toISOString();
/** Sooner than inADay, so keys made by a key may use it. */
const inAnHour = (): string => new Date(Date.now() + 3600_000).toISOString();

async function createKey(url: string, key: string, body: Record<string, unknown>): Promise<TestResponse> {
  return sendRequest(url, 'POST', '/api-keys', { name: 'k', owner: 'team', scopes: ['*:*'], expires_at: inADay(), ...body }, { 'X-svc-key': key });
}

/** `count` GETs of /ledgers at once, each on a connection of its own (so both workers get some). */
async function burst(url: string, key: string | undefined, count: number): Promise<{ answers: TestResponse[]; seconds: number }> {
  const started = performance.now();
  const headers: Record<string, string> = { connection: 'close', ...(key === undefined ? {} : { 'X-svc-key': key }) };
  const answers = await Promise.all(Array.from({ length: count }, () => sendRequest(url, 'GET', '/ledgers', undefined, headers)));
  return { answers, seconds: (performance.now() - started) / 1000 };
}

function checkRefusals(t: Test, answers: TestResponse[], limit: number): void {
  for (const answer of answers.filter((response) => response.status === 429)) {
    t.equal((answer.body as { error_detail: { code: string } }).error_detail.code, 'GEN_RATE_LIMITED');
    t.match(answer.headers['retry-after'], /^[1-9][0-9]*$/, 'Retry-After: whole seconds, at least 1');
    t.equal(answer.headers['ratelimit-limit'], String(limit));
    t.equal(answer.headers['ratelimit-remaining'], '0');
    t.match(answer.headers['ratelimit-reset'], /^[0-9]+$/);
  }
}

async function serverWith(t: Test, env: Record<string, string>, dataDir = tempDataDir('folio-rate')): Promise<ChildServer> {
  const server = await startChildServer(dataDir, { FOLIO_WORKERS: WORKERS, FOLIO_LOG_LEVEL: 'error', ...env });
  t.teardown(() => server.terminate());
  return server;
}

t.test('a key\'s bucket holds across two HTTP workers: burst admitted, the rest 429, admitted again after Retry-After', async (t) => {
  const server = await serverWith(t, { FOLIO_SECRET_KEY: MASTER });
  const BURST = 40;
  const REQUESTS = 100;
  const created = await createKey(server.url, MASTER, { rate_limit: { requests_per_second: 1, burst: BURST } });
  t.equal(created.status, 201, created.text);
  const made = created.body as { key: string; rate_limit: unknown };
  t.same(made.rate_limit, { requests_per_second: 1, burst: BURST }, 'the key shows its rate');
  const { answers, seconds } = await burst(server.url, made.key, REQUESTS);
  const admitted = answers.filter((response) => response.status === 200);
  const refused = answers.filter((response) => response.status === 429);
  t.equal(admitted.length + refused.length, REQUESTS, 'every answer is 200 or 429');
  t.ok(admitted.length >= BURST, `the whole burst is admitted (${admitted.length})`);
  // The bucket refills one request a second while the burst is served; buckets per worker would admit 2 * BURST.
  const bound = BURST + Math.ceil(seconds) + 1;
  t.ok(admitted.length <= bound, `at most the burst and the refill are admitted: ${admitted.length} <= ${bound} (${seconds.toFixed(2)} s)`);
  for (const answer of admitted) {
    t.equal(answer.headers['ratelimit-limit'], String(BURST));
    t.match(answer.headers['ratelimit-remaining'], /^[0-9]+$/);
    t.match(answer.headers['ratelimit-reset'], /^[0-9]+$/);
    t.equal(answer.headers['retry-after'], undefined);
  }
  checkRefusals(t, answers, BURST);
  const wait = Number(refused[0]?.headers['retry-after'] ?? 1);
  await new Promise((resolve) => setTimeout(resolve, wait * 1000 + 200));
  const again = await sendRequest(server.url, 'GET', '/ledgers', undefined, { 'X-svc-key': made.key });
  t.equal(again.status, 200, 'admitted again after Retry-After');
});

t.test('the master key is unlimited unless configured; the default applies to keys made without a rate', async (t) => {
  const server = await serverWith(t, { FOLIO_SECRET_KEY: MASTER, FOLIO_KEY_REQUESTS_PER_SECOND_DEFAULT: '1', FOLIO_KEY_BURST_DEFAULT: '3' });
  const master = await burst(server.url, MASTER, 60);
  t.same(master.answers.map((response) => response.status), new Array(60).fill(200), 'the master key is never refused');
  t.equal(master.answers[0]?.headers['ratelimit-limit'], undefined, 'and gets no RateLimit-* headers');

  const plain = await createKey(server.url, MASTER, {});
  t.equal(plain.status, 201);
  const key = (plain.body as { key: string }).key;
  t.same((plain.body as { rate_limit: unknown }).rate_limit, { requests_per_second: 1, burst: 3 }, 'the default is shown on the key');
  const { answers, seconds } = await burst(server.url, key, 30);
  const admitted = answers.filter((response) => response.status === 200).length;
  t.ok(admitted >= 3 && admitted <= 3 + Math.ceil(seconds) + 1, `the default bucket: ${admitted} admitted of 30`);
  checkRefusals(t, answers, 3);

  // A key makes keys no faster than itself; one made without a rate gets its maker's.
  const maker = await createKey(server.url, MASTER, { rate_limit: { requests_per_second: 1000, burst: 1000 } });
  const makerKey = (maker.body as { key: string }).key;
  const faster = await createKey(server.url, makerKey, { expires_at: inAnHour(), rate_limit: { requests_per_second: 1001, burst: 10 } });
  t.equal(faster.status, 400);
  t.equal((faster.body as { error_detail: { code: string } }).error_detail.code, 'GEN_VALIDATION_ERROR');
  const inherited = await createKey(server.url, makerKey, { expires_at: inAnHour() });
  t.same((inherited.body as { rate_limit: unknown }).rate_limit, { requests_per_second: 1000, burst: 1000 });
  const slower = await createKey(server.url, makerKey, { expires_at: inAnHour(), rate_limit: { requests_per_second: 5, burst: 1 } });
  t.same((slower.body as { rate_limit: unknown }).rate_limit, { requests_per_second: 5, burst: 1 });
});

t.test('rates are checked, and kept across a restart', async (t) => {
  const dataDir = tempDataDir('folio-rate');
  let server = await startChildServer(dataDir, { FOLIO_WORKERS: WORKERS, FOLIO_LOG_LEVEL: 'error', FOLIO_SECRET_KEY: MASTER });
  t.teardown(() => server.terminate());
  for (const rate_limit of [
    { requests_per_second: 0, burst: 1 }, { requests_per_second: 1, burst: 0 }, { requests_per_second: 1.5, burst: 2 },
    { requests_per_second: 100_001, burst: 1 }, { requests_per_second: 1, burst: 100_001 }, { requests_per_second: '1', burst: 1 },
    { requests_per_second: 1 }, null, 'fast',
  ]) {
    const refused = await createKey(server.url, MASTER, { rate_limit });
    t.equal(refused.status, 400, JSON.stringify(rate_limit));
    t.equal((refused.body as { error_detail: { code: string } }).error_detail.code, 'GEN_VALIDATION_ERROR');
  }
  const made = await createKey(server.url, MASTER, { rate_limit: { requests_per_second: 2, burst: 7 } });
  t.equal(made.status, 201);
  const id = (made.body as { api_key_id: string }).api_key_id;
  await server.terminate();
  server = await startChildServer(dataDir, { FOLIO_WORKERS: WORKERS, FOLIO_LOG_LEVEL: 'error', FOLIO_SECRET_KEY: MASTER });
  const listed = await sendRequest(server.url, 'GET', '/api-keys', undefined, { 'X-svc-key': MASTER });
  const record = (listed.body as Array<{ api_key_id: string; rate_limit: unknown }>).find((key) => key.api_key_id === id);
  t.same(record?.rate_limit, { requests_per_second: 2, burst: 7 }, 'the rate is in the log');
  const unlimited = await createKey(server.url, MASTER, {});
  t.equal((unlimited.body as { rate_limit: unknown }).rate_limit, null, 'no default configured: a key without a rate is unlimited');
});

t.test('HTTP on the engine\'s thread (FOLIO_WORKERS=0) keeps the same buckets', async (t) => {
  const server = await serverWith(t, { FOLIO_SECRET_KEY: MASTER, FOLIO_WORKERS: '0' });
  const created = await createKey(server.url, MASTER, { rate_limit: { requests_per_second: 1, burst: 3 } });
  const { answers, seconds } = await burst(server.url, (created.body as { key: string }).key, 20);
  const admitted = answers.filter((response) => response.status === 200).length;
  t.ok(admitted >= 3 && admitted <= 3 + Math.ceil(seconds) + 1, `${admitted} admitted of 20`);
  checkRefusals(t, answers, 3);
});

t.test('authentication off: the master key\'s limit, when configured, is every caller\'s; public routes take nothing', async (t) => {
  const server = await serverWith(t, { FOLIO_MASTER_KEY_REQUESTS_PER_SECOND: '1', FOLIO_MASTER_KEY_BURST: '4' });
  const { answers, seconds } = await burst(server.url, undefined, 30);
  const admitted = answers.filter((response) => response.status === 200).length;
  t.ok(admitted >= 4 && admitted <= 4 + Math.ceil(seconds) + 1, `${admitted} admitted of 30`);
  checkRefusals(t, answers, 4);
  const health = await Promise.all(Array.from({ length: 10 }, () => sendRequest(server.url, 'GET', '/health')));
  t.same(health.map((response) => response.status), new Array(10).fill(200), '/health is never limited');
});
