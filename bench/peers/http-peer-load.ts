// The HTTP side of the peers bench: funding a balance set on a Folio server, and autocannon loads of a
// workload's requests (single transfers to POST /transactions, atomic batches to POST
// /transactions/bulk) with bodies drawn ahead of time from the workload's seeded pairs and sent in
// turn, so the load generator spends no time building JSON while it measures. Every answer must be 2xx.

import type autocannon from 'autocannon';
import { runLoad, type LoadSummary } from '../load.js';
import { expectJson, requestJson } from '../servers.js';
import { balanceNames, CURRENCY, FUNDING, FUNDING_BATCH, pairSource, WORLD, type Workload } from './peer-workloads.js';

/** Distinct bodies per workload: enough that the pairs vary, few enough to build in a moment. */
const BODIES_OF_TRANSFERS = 4_096;
const BODIES_OF_BATCHES_MAX = 512;

export interface HttpPeerLoad extends LoadSummary {
  transfersPerSecond: number;
}

function transferBody(source: string, destination: string): Record<string, unknown> {
  return { description: 'test', source, destination, precise_amount: 1, currency: CURRENCY, skip_queue: true };
}

export async function fundOverHttp(url: string, balances: number): Promise<void> {
  const names = balanceNames(balances);
  for (let start = 0; start < names.length; start += FUNDING_BATCH) {
    const transactions = names.slice(start, start + FUNDING_BATCH).map((name) => ({
      description: 'test', source: WORLD, destination: name, precise_amount: FUNDING.toString(), currency: CURRENCY, allow_overdraft: true,
    }));
    await expectJson(url, 'POST', '/transactions/bulk', 201, { transactions, atomic: true, inflight: false, skip_queue: true });
  }
}

/** How long a Folio server may take to project what it was just sent. */
const SETTLE_TIMEOUT_MS = 300_000;

function gauge(metrics: string, name: string): number {
  const match = new RegExp(`^${name} ([0-9.e+-]+)$`, 'm').exec(metrics);
  if (!match) throw new Error(`no ${name} in Folio's /metrics`);
  return Number(match[1]);
}

/**
 * Waits until the server has no work left from earlier requests (the query index and the lookup store
 * have caught up with the log), so that work does not take CPU from the next measurement, Folio's or
 * the peer's.
 */
export async function settle(url: string): Promise<void> {
  const deadline = performance.now() + SETTLE_TIMEOUT_MS;
  for (;;) {
    const { status, text } = await requestJson(url, 'GET', '/metrics');
    if (status !== 200) throw new Error(`GET /metrics answered ${status}`);
    if (gauge(text, 'folio_index_lag_events') === 0 && gauge(text, 'folio_lookup_backlog') === 0) return;
    if (performance.now() > deadline) throw new Error(`Folio still busy after ${SETTLE_TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The request bodies of a workload over a balance set, as JSON text. */
export function requestBodies(workload: Workload, balances: number, seed: number): string[] {
  const next = pairSource(balances, seed);
  const count = workload.batch === 1 ? BODIES_OF_TRANSFERS : Math.min(BODIES_OF_BATCHES_MAX, Math.ceil(BODIES_OF_TRANSFERS * 4 / workload.batch));
  return Array.from({ length: count }, () => {
    if (workload.batch === 1) {
      const { source, destination } = next();
      return JSON.stringify(transferBody(source, destination));
    }
    const transactions = Array.from({ length: workload.batch }, () => {
      const { source, destination } = next();
      return transferBody(source, destination);
    });
    return JSON.stringify({ transactions, atomic: true, inflight: false, skip_queue: true });
  });
}

export interface HttpPeerLoadOptions {
  title: string;
  url: string;
  serverPid: number;
  workload: Workload;
  bodies: string[];
  connections: number;
  warmupSeconds: number;
  seconds: number;
  /** Folio: wait for its background work to finish after the warm-up and after the load (bare Koa has none). */
  settles: boolean;
}

export async function runHttpPeerLoad(options: HttpPeerLoadOptions): Promise<HttpPeerLoad> {
  let turn = 0;
  const requests: autocannon.Request[] = [{
    setupRequest: (request) => ({ ...request, body: options.bodies[turn++ % options.bodies.length] }),
  }];
  const load = {
    url: options.url, path: options.workload.batch === 1 ? '/transactions' : '/transactions/bulk', body: options.bodies[0],
    connections: options.connections, requests,
  };
  if (options.warmupSeconds > 0) await runLoad({ ...load, title: `${options.title} warm-up`, seconds: options.warmupSeconds });
  if (options.settles) await settle(options.url);
  const summary = await runLoad({ ...load, title: options.title, seconds: options.seconds, serverPid: options.serverPid });
  if (options.settles) await settle(options.url);
  return { ...summary, transfersPerSecond: (summary.responses2xx * options.workload.batch) / summary.durationSeconds };
}
