// The HTTP side of the peers bench: funding a balance set on a Folio server, waiting until a server has
// finished the work earlier requests left it, and autocannon loads of a workload's requests (single
// transfers to POST /transactions, atomic batches to POST /transactions/bulk), each request's pairs
// drawn as it is sent from the workload's seeded source, so every balance of the set is in play (a
// fixed list of bodies sent in turn would touch only a few thousand of a million). Every answer must
// be 2xx. Folio's CPU is read from /proc around the measured window and on until it has settled after
// it, so the work the window left behind (the query index catching up) is charged to its transfers.

import type autocannon from 'autocannon';
import { readServerCpu, runLoad, serverCpuUsed, type LoadSummary, type ServerCpuUsed } from '../load.js';
import { processCpuMicros, waitUntilIdle, type IdleWait } from '../process-cpu.js';
import { requestJson, type RunningServer } from '../servers.js';
import { balanceNames, CURRENCY, FUNDING, FUNDING_BATCH, pairSource, WORLD, type PeerLoad } from './peer-workloads.js';

export interface HttpPeerLoad extends LoadSummary {
  transfersPerSecond: number;
  /**
   * The server's CPU per transfer, by kind of thread, from the start of the measured window until it
   * had settled after it (Folio only).
   */
  cpuMicrosPerTransfer?: ServerCpuUsed;
}

/** Funding requests in flight at once: enough to keep parsing, deciding and the log's commits overlapping. */
const FUNDING_REQUESTS_IN_FLIGHT = 4;
/** How long a funding request may keep being told to come back (503: the index is behind) before the bench gives up. */
const FUNDING_RETRY_MS_MAX = 120_000;
const FUNDING_RETRY_PAUSE_MS = 250;

/** One bulk request; a 503 (Folio holding writes while its index catches up) is sent again after a pause, as a client would. */
async function sendFunding(url: string, body: unknown): Promise<void> {
  const deadline = performance.now() + FUNDING_RETRY_MS_MAX;
  for (;;) {
    const response = await requestJson(url, 'POST', '/transactions/bulk', body);
    if (response.status === 201) return;
    if (response.status !== 503 || performance.now() > deadline) {
      throw new Error(`POST /transactions/bulk while funding: expected 201, got ${response.status}: ${response.text}`);
    }
    await new Promise((resolve) => setTimeout(resolve, FUNDING_RETRY_PAUSE_MS));
  }
}

/** Creates and funds the set's balances from the world balance, in atomic bulk requests. */
export async function fundOverHttp(url: string, balances: number): Promise<void> {
  const names = balanceNames(balances);
  let next = 0;
  const sender = async (): Promise<void> => {
    for (let start = next; start < names.length; start = next) {
      next += FUNDING_BATCH;
      const transactions = names.slice(start, start + FUNDING_BATCH).map((name) => ({
        description: 'test', source: WORLD, destination: name, precise_amount: FUNDING.toString(), currency: CURRENCY, allow_overdraft: true,
      }));
      await sendFunding(url, { transactions, atomic: true, inflight: false, skip_queue: true });
    }
  };
  await Promise.all(Array.from({ length: FUNDING_REQUESTS_IN_FLIGHT }, sender));
}

/** How long a Folio server may take to project what it was just sent. */
const SETTLE_TIMEOUT_MS = 300_000;
/** A server counts as settled below a twentieth of a core over a quarter of a second. */
export const IDLE: IdleWait = { coresMax: 0.05, windowMs: 250, timeoutMs: 30_000 };

function gauge(metrics: string, name: string): number {
  const match = new RegExp(`^${name} ([0-9.e+-]+)$`, 'm').exec(metrics);
  if (!match) throw new Error(`no ${name} in Folio's /metrics`);
  return Number(match[1]);
}

/**
 * Waits until Folio has no work left from earlier requests: the query index and the lookup store have
 * caught up with the log, and then its process is idle (a snapshot the load set off has been written),
 * so that work takes no CPU from the next measurement, Folio's or the peer's. Resolves false if the
 * process was still busy at the end of the idle wait (the bench records it).
 */
export async function settleFolio(folio: RunningServer): Promise<boolean> {
  const deadline = performance.now() + SETTLE_TIMEOUT_MS;
  for (;;) {
    const { status, text } = await requestJson(folio.url, 'GET', '/metrics');
    if (status !== 200) throw new Error(`GET /metrics answered ${status}`);
    if (gauge(text, 'folio_index_lag_events') === 0 && gauge(text, 'folio_lookup_backlog') === 0) break;
    if (performance.now() > deadline) throw new Error(`Folio still busy after ${SETTLE_TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return waitUntilIdle(() => processCpuMicros(folio.pid), IDLE);
}

/** JSON text of one request of the workload: a transfer, or an atomic bulk of `batch` of them. */
export function requestBody(load: PeerLoad, next: ReturnType<typeof pairSource>): string {
  const transfer = (): Record<string, unknown> => {
    const { source, destination } = next();
    return { description: 'test', source, destination, precise_amount: 1, currency: CURRENCY, skip_queue: true };
  };
  if (load.workload.batch === 1) return JSON.stringify(transfer());
  const transactions = Array.from({ length: load.workload.batch }, transfer);
  return JSON.stringify({ transactions, atomic: true, inflight: false, skip_queue: true });
}

export function requestPath(load: PeerLoad): string {
  return load.workload.batch === 1 ? '/transactions' : '/transactions/bulk';
}

export interface HttpPeerLoadOptions {
  title: string;
  server: RunningServer;
  load: PeerLoad;
  seed: number;
  warmupSeconds: number;
  seconds: number;
  /** Waits until the server (and what is behind it) has finished earlier work; called after the warm-up and after the load. */
  settle(): Promise<unknown>;
  /** Read the server's CPU by kind of thread from the window's start until settled after it. */
  cpu: boolean;
}

export async function runHttpPeerLoad(options: HttpPeerLoadOptions): Promise<HttpPeerLoad> {
  const next = pairSource(options.load.workload, options.load.balances, options.seed);
  const requests: autocannon.Request[] = [{ setupRequest: (request) => ({ ...request, body: requestBody(options.load, next) }) }];
  const load = {
    url: options.server.url, path: requestPath(options.load), body: requestBody(options.load, next),
    connections: options.load.clients, requests,
  };
  if (options.warmupSeconds > 0) await runLoad({ ...load, title: `${options.title} warm-up`, seconds: options.warmupSeconds });
  await options.settle();
  const cpuBefore = options.cpu ? readServerCpu(options.server.pid) : undefined;
  const summary = await runLoad({ ...load, title: options.title, seconds: options.seconds, serverPid: options.server.pid });
  await options.settle();
  const transfers = summary.responses2xx * options.load.workload.batch;
  const result: HttpPeerLoad = { ...summary, transfersPerSecond: transfers / summary.durationSeconds };
  if (cpuBefore) {
    const used = serverCpuUsed(cpuBefore, readServerCpu(options.server.pid));
    result.cpuMicrosPerTransfer = {
      total: used.total / transfers, engine: used.engine / transfers, http: used.http / transfers, other: used.other / transfers,
    };
  }
  return result;
}
