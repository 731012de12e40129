// One autocannon load against one server, reduced to the figures the benches report, with the server's
// CPU time per request read around it. Any response that is not 2xx, any connection error or timeout
// makes the load fail: a bench that measured error answers would report nonsense.

import autocannon from 'autocannon';
import { HTTP_THREAD_NAME } from '../workers/http-workers.js';
import { MAIN_THREAD_NAME, processCpuMicros, threadCpuMicros } from './process-cpu.js';

export interface LoadOptions {
  title: string;
  url: string;
  path: string;
  method?: 'GET' | 'POST';
  body?: string;
  /** Extra request headers (an API key). */
  headers?: Record<string, string>;
  /** Requests per second across all connections; unset sends as fast as the server answers. */
  overallRate?: number;
  connections: number;
  seconds: number;
  /** Server process whose CPU time is read before and after the load. */
  serverPid?: number;
  /** Called once per connection, e.g. to give each connection its own request body. */
  setupClient?: (client: autocannon.Client) => void;
  /** Called with the running instance, e.g. to follow responses as they arrive. */
  onStart?: (instance: autocannon.Instance) => void;
  /** A sequence of requests each connection repeats (e.g. create a hold, then commit it). */
  requests?: autocannon.Request[];
}

export interface LoadSummary {
  title: string;
  /** Mean of autocannon's one-second samples of completed requests. */
  requestsPerSecond: number;
  latencyP50Ms: number;
  latencyP90Ms: number;
  latencyP99Ms: number;
  latencyMeanMs: number;
  latencyMaxMs: number;
  responses2xx: number;
  durationSeconds: number;
  /** Server CPU (user + system, all threads) divided by the 2xx responses; undefined without serverPid. */
  serverCpuMicrosPerRequest?: number;
  /** Server CPU time over wall time during the load, in cores. */
  serverCpuCores?: number;
  /**
   * The engine's thread (the server's main thread) and its HTTP worker threads (workers/http-workers.ts),
   * each's CPU per 2xx response; undefined without serverPid.
   */
  threadCpuMicrosPerRequest?: { engine: number; http: number };
}

export class LoadFailure extends Error {
  override readonly name = 'LoadFailure';
}

export async function runLoad(options: LoadOptions): Promise<LoadSummary> {
  const cpuBefore = options.serverPid === undefined ? undefined : readServerCpu(options.serverPid);
  const started = performance.now();
  const running = autocannon({
    title: options.title,
    url: options.url + options.path,
    method: options.method ?? 'POST',
    headers: { ...(options.body === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers },
    body: options.body,
    connections: options.connections,
    duration: options.seconds,
    overallRate: options.overallRate,
    setupClient: options.setupClient,
    requests: options.requests,
  }) as Promise<autocannon.Result> & autocannon.Instance;
  options.onStart?.(running);
  const result = await running;
  const wallMicros = (performance.now() - started) * 1000;
  const cpu = cpuBefore && options.serverPid !== undefined ? serverCpuUsed(cpuBefore, readServerCpu(options.serverPid)) : undefined;
  const cpuMicros = cpu?.total;

  const problems: string[] = [];
  if (result.non2xx > 0) {
    const byStatus = Object.entries(result.statusCodeStats ?? {})
      .filter(([status]) => !status.startsWith('2'))
      .map(([status, stats]) => `${stats.count ?? '?'} x ${status}`);
    problems.push(`${result.non2xx} non-2xx responses (${byStatus.join(', ')})`);
  }
  if (result.errors > 0) problems.push(`${result.errors} connection errors`);
  if (result.timeouts > 0) problems.push(`${result.timeouts} timeouts`);
  if (result['2xx'] === 0) problems.push('no 2xx responses at all');
  if (problems.length > 0) throw new LoadFailure(`${options.title}: ${problems.join('; ')}`);

  return {
    title: options.title,
    requestsPerSecond: result.requests.average,
    latencyP50Ms: result.latency.p50,
    latencyP90Ms: result.latency.p90,
    latencyP99Ms: result.latency.p99,
    latencyMeanMs: result.latency.average,
    latencyMaxMs: result.latency.max,
    responses2xx: result['2xx'],
    durationSeconds: result.duration,
    serverCpuMicrosPerRequest: cpuMicros === undefined ? undefined : cpuMicros / result['2xx'],
    serverCpuCores: cpuMicros === undefined ? undefined : cpuMicros / wallMicros,
    threadCpuMicrosPerRequest: cpu && { engine: cpu.engine / result['2xx'], http: cpu.http / result['2xx'] },
  };
}

/** A server's CPU so far: the whole process (threads that ended included) and each live thread by name. */
export interface ServerCpuReading {
  total: number;
  threads: Map<string, number>;
}

/** CPU a server used between two readings, by kind of thread (microseconds). */
export interface ServerCpuUsed {
  total: number;
  /** The main thread: the engine's in `folio serve`. */
  engine: number;
  /** The HTTP worker threads (workers/http-workers.ts) together. */
  http: number;
  /** Everything else: the index projector, snapshots, libuv's pool, V8's helpers, threads that ended. */
  other: number;
}

export function readServerCpu(pid: number): ServerCpuReading {
  return { total: processCpuMicros(pid), threads: threadCpuMicros(pid) };
}

export function serverCpuUsed(before: ServerCpuReading, after: ServerCpuReading): ServerCpuUsed {
  const used = (name: string): number => (after.threads.get(name) ?? 0) - (before.threads.get(name) ?? 0);
  let http = 0;
  for (const name of after.threads.keys()) if (name.startsWith(HTTP_THREAD_NAME)) http += used(name);
  const engine = used(MAIN_THREAD_NAME);
  const total = after.total - before.total;
  return { total, engine, http, other: total - engine - http };
}
