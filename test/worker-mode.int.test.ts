// The server with HTTP on worker threads (workers/http-workers.ts), as `folio serve` runs by default: what
// crosses the thread boundary arrives whole (exact amounts far past 2^53, errors in their envelope with
// their headers), many writers through two workers leave every currency at zero with every reference
// once, the change feed reads the log from the worker, and stopping ends the workers. The rest of the
// suite runs in this mode with FOLIO_TEST_WORKERS=1 (docs/decisions-threads.md).

import net from 'node:net';
import os from 'node:os';
import t from 'tap';
import { ConfigError, loadConfig, WORKERS_MAX } from '../server/config.js';
import { sendRequest, startTestServer } from './helpers/test-server.js';

const MASTER_KEY = 'k'.repeat(40);
const auth = { authorization: `Bearer ${MASTER_KEY}` };

t.test('two workers in front of one engine', async (t) => {
  const server = await startTestServer({}, { workers: 2, secretKey: MASTER_KEY });
  let stopped = false;
  t.teardown(() => (stopped ? undefined : server.stop()));

  t.test('amounts past 2^53 cross exactly, both ways', async (t) => {
    const huge = 123456789012345678901234567890n;
    const created = await server.request('POST', '/transactions', {
      description: 'huge', precise_amount: huge, precision: 100, currency: 'USD', source: '@world', destination: '@whale',
      allow_overdraft: true, skip_queue: true,
    }, auth);
    t.equal(created.status, 201, created.text);
    t.equal(created.body.precise_amount, huge);
    t.match(created.headers['x-folio-seq'], /^[0-9]+$/, 'the write names its seq');
    const whale = await server.request('GET', '/balances/indicator/@whale/currency/USD', undefined, auth);
    t.equal(whale.body.balance, huge, 'read back to the last digit');
  });

  t.test('refusals keep their envelope, status and headers', async (t) => {
    const missing = await server.request('GET', '/transactions/txn_00000000-0000-7000-8000-000000000000', undefined, auth);
    t.equal(missing.status, 404);
    t.equal(missing.body.error_detail.code, 'TXN_NOT_FOUND');
    const unauthorised = await server.request('GET', '/ledgers');
    t.equal(unauthorised.status, 401, 'the master key is checked in the worker');
    const invalid = await server.request('POST', '/transactions', { description: 'no amount', currency: 'USD', source: '@a', destination: '@b' }, auth);
    t.equal(invalid.status, 400);
    t.equal(invalid.body.error_detail.code, 'TXN_VALIDATION_ERROR');
    const duplicate = { description: 'once', precise_amount: 5, currency: 'USD', source: '@world', destination: '@once', reference: 'only-once', allow_overdraft: true, skip_queue: true };
    const first = await server.request('POST', '/transactions', duplicate, auth);
    t.equal(first.status, 201);
    const retried = await server.request('POST', '/transactions', duplicate, auth);
    t.equal(retried.body.transaction_id, first.body.transaction_id, 'a retry gets the transaction it made');
    const other = await server.request('POST', '/transactions', { ...duplicate, precise_amount: 6 }, auth);
    t.equal(other.status, 409);
    t.equal(other.body.error_detail.code, 'TXN_DUPLICATE_REFERENCE', 'the engine decides, whichever worker asks');
  });

  t.test('many writers over many connections: each reference once, every currency at zero', async (t) => {
    const writes = 300;
    const answers = await Promise.all(Array.from({ length: writes }, (_, index) => sendRequest(server.url, 'POST', '/transactions', {
      description: `writer ${index}`, precise_amount: BigInt(index + 1), currency: index % 2 === 0 ? 'USD' : 'EUR',
      source: `@writer-${index % 7}`, destination: `@reader-${index % 5}`, reference: `many-${index % 250}`,
      allow_overdraft: true, skip_queue: true,
    }, { ...auth, connection: 'close' })));
    const created = answers.filter((answer) => answer.status === 201).length;
    const refused = answers.filter((answer) => answer.status === 409 && answer.body.error_detail.code === 'TXN_DUPLICATE_REFERENCE').length;
    t.equal(created, 250, 'each reference applied once');
    t.equal(refused, 50, 'every repeat refused');
    const seqs = answers.filter((answer) => answer.status === 201).map((answer) => Number(answer.headers['x-folio-seq']));
    t.equal(new Set(seqs).size, seqs.length, 'every write has a seq of its own');
    const totals = new Map<string, bigint>();
    for (const balance of server.runtime.engine.state.balances.values()) {
      totals.set(balance.currency, (totals.get(balance.currency) ?? 0n) + balance.credit_balance - balance.debit_balance);
    }
    for (const [currency, total] of totals) t.equal(total, 0n, `${currency} sums to zero`);
  });

  t.test('a scrape of /metrics counts the requests of every worker, whichever answers it', async (t) => {
    // The 300 writes above went over 300 connections, which SO_REUSEPORT spread over both workers.
    const countOf = (text: string, status: number): number => {
      const line = text.split('\n').find((candidate) => candidate.startsWith('folio_http_requests_total{')
        && candidate.includes('method="POST"') && candidate.includes('route="/transactions"') && candidate.includes(`status="${status}"`));
      return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
    };
    for (let scrape = 0; scrape < 8; scrape += 1) {
      const metrics = await sendRequest(server.url, 'GET', '/metrics', undefined, { ...auth, connection: 'close' });
      t.equal(metrics.status, 200);
      const created = countOf(metrics.text, 201);
      const refused = countOf(metrics.text, 409);
      // 250 of the writes above and two of the first tests; 50 of them and one.
      t.equal(created, 252, `scrape ${scrape}: every 201 of both workers`);
      t.equal(refused, 51, `scrape ${scrape}: every 409 of both workers`);
    }
  });

  t.test('the change feed reads the engine\'s log from a worker', async (t) => {
    const page = await server.request('GET', '/events?after=0&limit=5', undefined, auth);
    t.equal(page.status, 200, page.text);
    t.equal(page.body.events.length, 5);
    t.same(page.body.events.map((event: { seq: number }) => event.seq), [1, 2, 3, 4, 5], 'in seq order from the start');
    t.equal(page.body.has_more, true);
  });

  t.test('stopping ends the workers and frees the port', async (t) => {
    const { port } = new URL(server.url);
    await server.stop();
    stopped = true;
    const refused = await new Promise<boolean>((resolve) => {
      const socket = net.connect(Number(port), '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', () => resolve(true));
    });
    t.ok(refused, 'nothing listens any more');
  });
});

t.test('server.workers: the cores but one by default, FOLIO_WORKERS within 0-64, anything else refused', async (t) => {
  t.equal(loadConfig(undefined, {}).server.workers, Math.max(1, Math.min(WORKERS_MAX, os.availableParallelism() - 1)));
  t.equal(loadConfig(undefined, { FOLIO_WORKERS: '0' }).server.workers, 0, '0: HTTP on the engine\'s thread');
  t.equal(loadConfig(undefined, { FOLIO_WORKERS: '3' }).server.workers, 3);
  for (const text of ['-1', '65', '1.5', 'two', '0x2', ' 2']) {
    t.throws(() => loadConfig(undefined, { FOLIO_WORKERS: text }), ConfigError, `${JSON.stringify(text)} is refused`);
  }
});
