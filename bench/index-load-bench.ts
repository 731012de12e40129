// Bench `indexload` (issue 31): does the query side keep pace with the write path at its maximum rate?
// Against the built server in a child process, as `folio serve` runs it (HTTP on worker threads):
//   1. seeds a busy balance with FOLIO_BENCH_INDEX_LOAD_CHANGES changes (single transfers, each its own
//      event, each moving it), and waits for the index to apply them;
//   2. drives bulk POSTs of 1,000 transfers between other balances as fast as the server answers, from
//      BULK_CONNECTIONS connections, for LOAD_SECONDS;
//   3. meanwhile samples the index lag (GET /search/reindex `index_lag_seconds`: how long the oldest
//      durable event the index has not applied has waited) every LAG_SAMPLE_MS, and asks
//      GET /balances/<busy>/at at random moments inside its seeded history, one request at a time,
//      timing each from the client.
// Reports lag p50/p99/max, /at p50/p99, the transfers/s the write path kept (held writes slow it: see
// docs/decisions-query.md), and any answer that was not 2xx (a write refused after waiting for the
// index, an /at refused SRCH_INDEX_BEHIND). Settings: FOLIO_BENCH_INDEX_LOAD_SECONDS (default 60),
// FOLIO_BENCH_INDEX_LOAD_CHANGES (default 100,000) shorten it for a check.

import autocannon from 'autocannon';
import { mulberry32 } from './mulberry32.js';
import type { BenchResult, Figure } from './report.js';
import { expectJson, explainFailure, requestJson, startFolio, type RunningServer } from './servers.js';
import { envInteger, type BenchSettings } from './settings.js';
import { percentileOfSorted } from './stats.js';
import { stopServers } from './http-bench.js';

/** Issue 31's targets for this load. */
export const INDEX_LAG_P99_SECONDS_MAX = 2;
export const BALANCE_AT_UNDER_LOAD_P99_MS_MAX = 10;
/** The load: 60 s of bulk beside a balance with 100,000 changes. */
const FULL_SECONDS = 60;
const FULL_CHANGES = 100_000;
const BULK_ITEMS = 1_000;
const BULK_CONNECTIONS = 8;
/** Connections seeding the busy balance, one transfer a request. */
const SEED_CONNECTIONS = 32;
const LOAD_DESTINATIONS = 1_000;
const LAG_SAMPLE_MS = 100;
/** Pause between two /at requests: a steady reader beside the writers, not a second load. */
const AT_PAUSE_MS = 20;
/** How long the seeded history may take to be indexed before the bench gives up. */
const SEED_INDEX_WAIT_MS = 300_000;

function summary(samples: number[]): { p50: number; p99: number; max: number; count: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: percentileOfSorted(sorted, 50), p99: percentileOfSorted(sorted, 99), max: sorted[sorted.length - 1] ?? Number.NaN, count: sorted.length };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function bulkBody(transfer: (index: number) => { source: string; destination: string }): string {
  const transactions = Array.from({ length: BULK_ITEMS }, (_, index) => ({
    ...transfer(index), precise_amount: 1, precision: 100, currency: 'USD', description: 'index load bench', allow_overdraft: true,
  }));
  return JSON.stringify({ transactions, atomic: false, inflight: false, skip_queue: true });
}

interface IndexStatus {
  index_checkpoint_seq: number;
  index_lag_events: number;
  index_lag_seconds: number;
}

async function indexStatus(url: string): Promise<IndexStatus> {
  return (await expectJson(url, 'GET', '/search/reindex', 200)).body as IndexStatus;
}

/** Seeds the busy balance's history; returns its id and the span of time the history covers. */
async function seedBusyBalance(url: string, changes: number, log: (line: string) => void): Promise<{ id: string; fromMs: number; toMs: number }> {
  const started = performance.now();
  const body = (source: string, destination: string): string => JSON.stringify({
    source, destination, precise_amount: 1, precision: 100, currency: 'USD', description: 'index load bench seed', allow_overdraft: true, skip_queue: true,
  });
  await expectJson(url, 'POST', '/transactions', 201, JSON.parse(body('@busy', '@seed-0')));
  // One transfer a request, each its own event: alternately out of and into the busy balance, so it
  // moves with every one.
  let counter = 0;
  const seeded = await autocannon({
    url: `${url}/transactions`, method: 'POST', connections: SEED_CONNECTIONS, amount: changes - 1,
    headers: { 'content-type': 'application/json' },
    requests: [{
      setupRequest: (request) => {
        counter += 1;
        const other = `@seed-${counter % 100}`;
        return { ...request, body: counter % 2 === 0 ? body('@busy', other) : body(other, '@busy') };
      },
    }],
  });
  if (seeded.non2xx > 0 || seeded.errors > 0) throw new Error(`seeding the busy balance: ${seeded.non2xx} non-2xx answers, ${seeded.errors} errors`);
  const id = (await expectJson(url, 'GET', '/balances/indicator/@busy/currency/USD', 200)).body.balance_id as string;
  const balance = (await expectJson(url, 'GET', `/balances/${id}`, 200)).body as { version: number; created_at: string };
  const toMs = Date.now();
  const deadline = performance.now() + SEED_INDEX_WAIT_MS;
  while ((await indexStatus(url)).index_lag_events > 0) {
    if (performance.now() > deadline) throw new Error('the index did not apply the seeded history in time');
    await sleep(200);
  }
  log(`indexload: busy balance at version ${balance.version}, indexed, in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return { id, fromMs: Date.parse(balance.created_at), toMs };
}

export async function indexLoadBench(settings: BenchSettings, log: (line: string) => void): Promise<BenchResult> {
  const seconds = envInteger(process.env, 'FOLIO_BENCH_INDEX_LOAD_SECONDS', 1) ?? FULL_SECONDS;
  const changes = envInteger(process.env, 'FOLIO_BENCH_INDEX_LOAD_CHANGES', 1) ?? FULL_CHANGES;
  let server: RunningServer | undefined;
  let failing = false;
  try {
    server = await startFolio('indexload');
    const { url } = server;
    const busy = await seedBusyBalance(url, changes, log);
    log(`indexload: ${seconds} s of bulk (${BULK_ITEMS} transfers a request, ${BULK_CONNECTIONS} connections) with lag and /at sampled`);

    let loading = true;
    const lags: number[] = [];
    const series: Array<[number, number]> = [];
    const loadStarted = performance.now();
    const sampleLag = (async () => {
      while (loading) {
        const status = await indexStatus(url);
        lags.push(status.index_lag_seconds);
        series.push([Number(((performance.now() - loadStarted) / 1000).toFixed(2)), status.index_lag_seconds]);
        await sleep(LAG_SAMPLE_MS);
      }
    })();
    const atTimes: number[] = [];
    const atRefusals: Record<string, number> = {};
    let atFolded = 0;
    const next = mulberry32(31);
    const askAt = (async () => {
      while (loading) {
        const moment = new Date(busy.fromMs + Math.floor(next() * (busy.toMs - busy.fromMs))).toISOString();
        const started = performance.now();
        const answer = await requestJson(url, 'GET', `/balances/${busy.id}/at?timestamp=${encodeURIComponent(moment)}`);
        const ms = performance.now() - started;
        if (answer.status !== 200) atRefusals[String(answer.status)] = (atRefusals[String(answer.status)] ?? 0) + 1;
        else {
          atTimes.push(ms);
          if (answer.body.from_source !== false) atFolded += 1;
        }
        await sleep(AT_PAUSE_MS);
      }
    })();

    let counter = 0;
    const result = await autocannon({
      url: `${url}/transactions/bulk`,
      method: 'POST',
      connections: BULK_CONNECTIONS,
      duration: seconds,
      headers: { 'content-type': 'application/json' },
      requests: [{
        setupRequest: (request) => {
          counter += 1;
          const offset = counter * 7;
          return { ...request, body: bulkBody((index) => ({ source: `@load-${(offset + index) % LOAD_DESTINATIONS}`, destination: `@load-${(offset + index + 1) % LOAD_DESTINATIONS}` })) };
        },
      }],
    });
    loading = false;
    await Promise.all([sampleLag, askAt]);
    const afterLoad = await indexStatus(url);

    const lag = summary(lags);
    const at = summary(atTimes);
    const transfersPerSecond = Math.round((result['2xx'] * BULK_ITEMS) / result.duration);
    const nonOk = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).filter(([status]) => !status.startsWith('2')).map(([status, stats]) => [status, stats.count]));
    log(`indexload: ${transfersPerSecond} transfers/s (${result['2xx']} bulk requests, non-2xx ${JSON.stringify(nonOk)}, errors ${result.errors}, timeouts ${result.timeouts}); `
      + `lag p50 ${lag.p50.toFixed(3)} s, p99 ${lag.p99.toFixed(3)} s, max ${lag.max.toFixed(3)} s over ${lag.count} samples; `
      + `/at p50 ${at.p50.toFixed(1)} ms, p99 ${at.p99.toFixed(1)} ms over ${at.count} answers (refused ${JSON.stringify(atRefusals)}, folded ${atFolded}); `
      + `lag after the load ${afterLoad.index_lag_events} events`);
    if (at.count === 0) throw new Error('no /at request was answered during the load');

    // A shortened run (the settings below the 60 s and 100,000 changes) says so beside its figures.
    const shortened = seconds < FULL_SECONDS || changes < FULL_CHANGES;
    const shortNote = shortened ? `shortened run: ${seconds} s, ${changes} changes` : undefined;
    const figures: Figure[] = [
      { label: 'index lag p99 during maximum-rate bulk', value: lag.p99, unit: 's', digits: 2, target: { op: '<=', value: INDEX_LAG_P99_SECONDS_MAX }, note: shortNote },
      { label: 'index lag p50 during maximum-rate bulk', value: lag.p50, unit: 's', digits: 2 },
      { label: 'index lag max during maximum-rate bulk', value: lag.max, unit: 's', digits: 2 },
      {
        label: `/at p99 on a ${changes.toLocaleString('en-US')}-change balance under that load`, value: at.p99, unit: 'ms', digits: 1,
        target: { op: '<=', value: BALANCE_AT_UNDER_LOAD_P99_MS_MAX }, note: shortNote ?? 'timed at the client, HTTP included',
      },
      { label: '/at p50 under that load', value: at.p50, unit: 'ms', digits: 1 },
      { label: 'bulk transfers/s kept during that load', value: transfersPerSecond, unit: '/s', note: 'writes wait while the index is over its lag bound (1 s)' },
      { label: 'bulk requests refused (non-2xx) during that load', value: result.non2xx, unit: '' },
      { label: '/at answers refused or folded during that load', value: Object.values(atRefusals).reduce((sum, count) => sum + count, 0) + atFolded, unit: '' },
    ];
    return {
      name: 'indexload',
      figures,
      details: {
        seconds, changes, bulk_items: BULK_ITEMS, connections: BULK_CONNECTIONS, quick: settings.quick || shortened,
        transfers_per_second: transfersPerSecond, bulk_requests: result['2xx'], non_2xx: nonOk, errors: result.errors, timeouts: result.timeouts,
        lag_seconds: lag, at_ms: at, at_refusals: atRefusals, at_folded: atFolded, lag_events_after_load: afterLoad.index_lag_events, lag_series: series,
      },
    };
  } catch (error) {
    failing = true;
    throw explainFailure(error, [server]);
  } finally {
    await stopServers([server], failing, log);
  }
}
