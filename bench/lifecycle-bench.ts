// Bench `lifecycle`: the transaction shapes beyond single transfers, over HTTP against the built server
// in a child process, every response durable before it is counted:
//   bulk      POST /transactions/bulk with 1,000 synchronous transfers per request (non-atomic, and
//             atomic: one log record per request); transfers/s is requests/s x 1,000
//   inflight  each connection places a hold (inflight, skip_queue) and then commits it in full; pairs/s
//   split     POST /transactions with 10 sources at 10% each into one destination; splits/s
// Each load runs on a fresh server so one shape's history does not slow the next.

import type autocannon from 'autocannon';
import { runLoad, type LoadSummary } from './load.js';
import type { BenchResult, Figure } from './report.js';
import { expectJson, explainFailure, startFolio, type RunningServer } from './servers.js';
import type { BenchSettings } from './settings.js';
import { stopServers } from './http-bench.js';

export const BULK_TRANSFERS_PER_SECOND_TARGET = 150_000;
/** Issue 31's: the engine thread's CPU per transfer of a bulk, and splits from ten sources per second. */
export const BULK_ENGINE_THREAD_MICROS_TARGET = 6;
export const SPLITS_PER_SECOND_TARGET = 10_000;
const BULK_ITEMS = 1_000;
/** Bulk requests in flight at once: each carries a thousand transfers, so a few keep the server busy. */
const BULK_CONNECTIONS = 8;
const BULK_DESTINATIONS = 100;
const SPLIT_SOURCES = 10;
const FUNDING = '1000000000000000000';

function bulkBody(atomic: boolean): string {
  const transactions = Array.from({ length: BULK_ITEMS }, (_, index) => ({
    source: '@bulk-src', destination: `@bulk-dst-${index % BULK_DESTINATIONS}`, precise_amount: 1, precision: 100,
    currency: 'USD', description: 'lifecycle bench bulk',
  }));
  return JSON.stringify({ transactions, atomic, inflight: false, skip_queue: true });
}

async function fund(url: string, destination: string): Promise<void> {
  await expectJson(url, 'POST', '/transactions', 201, {
    description: 'test', source: '@lifecycle-world', destination, precise_amount: FUNDING, precision: 100, currency: 'USD',
    allow_overdraft: true, skip_queue: true,
  });
}

/** Runs one load against a fresh server set up by `prepare`. */
async function onFreshServer(
  label: string,
  prepare: (url: string) => Promise<void>,
  load: (server: RunningServer) => Promise<LoadSummary>,
): Promise<LoadSummary> {
  let server: RunningServer | undefined;
  let failing = false;
  try {
    server = await startFolio(label);
    await prepare(server.url);
    return await load(server);
  } catch (error) {
    failing = true;
    throw explainFailure(error, [server]);
  } finally {
    await stopServers([server], failing, () => undefined);
  }
}

function bulkLoad(settings: BenchSettings, atomic: boolean): Promise<LoadSummary> {
  const body = bulkBody(atomic);
  return onFreshServer(`bulk${atomic ? '-atomic' : ''}`, (url) => fund(url, '@bulk-src'), async (server) => {
    // Warm the server's code paths before measuring.
    await runLoad({ title: 'bulk warm-up', url: server.url, path: '/transactions/bulk', body, connections: BULK_CONNECTIONS, seconds: 2 });
    return runLoad({
      title: `bulk ${atomic ? 'atomic' : 'non-atomic'}`, url: server.url, path: '/transactions/bulk', body,
      connections: BULK_CONNECTIONS, seconds: settings.seconds, serverPid: server.pid,
    });
  });
}

function inflightLoad(settings: BenchSettings): Promise<LoadSummary> {
  const hold = JSON.stringify({
    source: '@hold-src', destination: '@hold-dst', precise_amount: 1, precision: 100, currency: 'USD',
    description: 'lifecycle bench hold', inflight: true, skip_queue: true,
  });
  const commit = JSON.stringify({ status: 'commit', skip_queue: true });
  // runLoad sets the content type for a body of its own only; a JSON body without one is refused 415.
  const headers = { 'content-type': 'application/json' };
  const requests: autocannon.Request[] = [
    {
      method: 'POST', path: '/transactions', body: hold, headers,
      onResponse: (_status, responseBody, context) => {
        (context as { holdId?: string }).holdId = (JSON.parse(responseBody) as { transaction_id: string }).transaction_id;
      },
    },
    {
      method: 'PUT', body: commit, headers,
      setupRequest: (request, context) => ({ ...request, path: `/transactions/inflight/${(context as { holdId: string }).holdId}` }),
    },
  ];
  return onFreshServer('inflight', (url) => fund(url, '@hold-src'), async (server) => {
    const options = { url: server.url, path: '/transactions', connections: settings.connections, requests };
    await runLoad({ ...options, title: 'inflight warm-up', seconds: 2 });
    return runLoad({ ...options, title: 'inflight create + commit', seconds: settings.seconds, serverPid: server.pid });
  });
}

function splitLoad(settings: BenchSettings): Promise<LoadSummary> {
  const sources = Array.from({ length: SPLIT_SOURCES }, (_, index) => ({ identifier: `@split-src-${index}`, distribution: '10%' }));
  const body = JSON.stringify({
    sources, destination: '@split-dst', precise_amount: 1000, precision: 100, currency: 'USD',
    description: 'lifecycle bench split', skip_queue: true,
  });
  const prepare = async (url: string): Promise<void> => {
    for (const source of sources) await fund(url, source.identifier);
  };
  return onFreshServer('split', prepare, async (server) => {
    await runLoad({ title: 'split warm-up', url: server.url, path: '/transactions', body, connections: settings.connections, seconds: 2 });
    return runLoad({
      title: `split from ${SPLIT_SOURCES} sources`, url: server.url, path: '/transactions', body,
      connections: settings.connections, seconds: settings.seconds, serverPid: server.pid,
    });
  });
}

function perSecond(load: LoadSummary, perRequest: number): number {
  return (load.responses2xx * perRequest) / load.durationSeconds;
}

export async function lifecycleBench(settings: BenchSettings, log: (line: string) => void): Promise<BenchResult> {
  log(`lifecycle: bulk of ${BULK_ITEMS} transfers, ${BULK_CONNECTIONS} connections, ${settings.seconds} s`);
  const bulk = await bulkLoad(settings, false);
  log(`lifecycle: bulk ${Math.round(perSecond(bulk, BULK_ITEMS))} transfers/s, request p99 ${bulk.latencyP99Ms} ms`);
  log('lifecycle: atomic bulk');
  const atomic = await bulkLoad(settings, true);
  log(`lifecycle: inflight create + commit, ${settings.connections} connections`);
  const inflight = await inflightLoad(settings);
  log(`lifecycle: split from ${SPLIT_SOURCES} sources, ${settings.connections} connections`);
  const split = await splitLoad(settings);

  const figures: Figure[] = [
    { label: `bulk transfers/s (${BULK_ITEMS} per request)`, value: perSecond(bulk, BULK_ITEMS), unit: '/s', target: { op: '>=', value: BULK_TRANSFERS_PER_SECOND_TARGET } },
    { label: 'bulk request p99', value: bulk.latencyP99Ms, unit: 'ms' },
    { label: 'bulk server CPU per transfer', value: (bulk.serverCpuMicrosPerRequest ?? Number.NaN) / BULK_ITEMS, unit: 'µs', digits: 1 },
    {
      label: 'bulk engine thread CPU per transfer', value: (bulk.threadCpuMicrosPerRequest?.engine ?? Number.NaN) / BULK_ITEMS, unit: 'µs', digits: 1,
      target: { op: '<=', value: BULK_ENGINE_THREAD_MICROS_TARGET },
    },
    { label: 'atomic bulk transfers/s', value: perSecond(atomic, BULK_ITEMS), unit: '/s' },
    { label: 'inflight create + commit pairs/s', value: perSecond(inflight, 0.5), unit: '/s' },
    { label: 'inflight request p99', value: inflight.latencyP99Ms, unit: 'ms' },
    { label: `splits/s (${SPLIT_SOURCES} sources)`, value: perSecond(split, 1), unit: '/s', target: { op: '>=', value: SPLITS_PER_SECOND_TARGET } },
    { label: 'split engine thread CPU per split', value: split.threadCpuMicrosPerRequest?.engine ?? Number.NaN, unit: 'µs', digits: 1 },
    { label: 'split legs/s', value: perSecond(split, SPLIT_SOURCES), unit: '/s' },
    { label: 'split request p99', value: split.latencyP99Ms, unit: 'ms' },
  ];
  return { name: 'lifecycle', figures, details: { bulk, atomic_bulk: atomic, inflight, split } };
}
