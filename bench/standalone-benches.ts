// The benches that also run on their own (`node dist/bench/<name>-bench.js`), run here as child
// processes so `npm run bench` covers them: each prints its figures as one JSON line last, which is
// turned into the common table with the targets their issues set. Quick settings shrink their sizes.
//   access     auth on vs off, hook to a slow receiver vs none (access-bench.ts)
//   index      projection rate, filter, search and balance history latency at 100,000 and 1,000,000
//              transactions, lag under load
//   snapshots  start-up from a snapshot of 1,000,000 balances vs full replay, write, verify, latency

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchResult, Figure } from './report.js';
import { runJsonChild } from './resources.js';
import type { BenchSettings } from './settings.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CHILD_TIMEOUT_MS = 45 * 60 * 1000;

export const AUTH_COST_PERCENT_MAX = 5;
export const HOOK_COST_PERCENT_MAX = 10;
export const INDEX_ROWS_PER_SECOND_TARGET = 50_000;
export const INDEX_LAG_P99_MS_MAX = 1_000;
export const FILTER_P99_MS_MAX = 50;
export const SEARCH_P99_MS_MAX = 15;
export const BALANCE_AT_P99_MS_MAX = 5;
export const HISTORY_PAGE_P99_MS_MAX = 10;
export const P99_GROWTH_MAX = 1.5;
export const STARTUP_FROM_SNAPSHOT_MS_MAX = 2_000;
export const REPLAY_EVENTS_PER_SECOND_TARGET = 500_000;

function child<T>(script: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<T> {
  return runJsonChild<T>(path.join(HERE, script), args, { env: { ...process.env, ...env }, timeoutMs: CHILD_TIMEOUT_MS });
}

/** The cost of `other` against `base` in percent: how much lower throughput is, or how much more CPU. */
function lossPercent(base: number, other: number): number {
  return ((base - other) / base) * 100;
}

function gainPercent(base: number, other: number): number {
  return ((other - base) / base) * 100;
}

interface AccessOutput {
  configs: Record<string, { rps: number; cpu_us_per_request: number }>;
  auth_in_process_us: { apiKey: number; master: number };
  deliveries: number;
}

export async function accessBench(settings: BenchSettings, log: (line: string) => void): Promise<BenchResult> {
  const args = ['--seconds', String(Math.max(2, settings.seconds - 2)), '--rounds', String(settings.rounds)];
  log(`access: auth off / API key / master / hook servers, ${args.join(' ')}`);
  const output = await child<AccessOutput>('access-bench.js', args);
  const config = (name: string): { rps: number; cpu_us_per_request: number } => {
    const found = output.configs[name];
    if (!found) throw new Error(`access bench reported no ${name} configuration`);
    return found;
  };
  const [off, apiKey, master, hook, offAgain] = ['off', 'api-key', 'master', 'hook', 'off-2'].map(config) as Array<ReturnType<typeof config>>;
  const note = 'between servers; see the noise floor';
  const figures: Figure[] = [
    { label: 'auth cost, API key vs off (req/s)', value: lossPercent(off!.rps, apiKey!.rps), unit: '%', digits: 1, target: { op: '<=', value: AUTH_COST_PERCENT_MAX }, note },
    { label: 'auth cost, API key vs off (CPU/request)', value: gainPercent(off!.cpu_us_per_request, apiKey!.cpu_us_per_request), unit: '%', digits: 1, target: { op: '<=', value: AUTH_COST_PERCENT_MAX }, note },
    { label: 'auth CPU in process, share of a request', value: (output.auth_in_process_us.apiKey / off!.cpu_us_per_request) * 100, unit: '%', digits: 2, target: { op: '<=', value: AUTH_COST_PERCENT_MAX } },
    { label: 'hook cost, slow POST hook vs none (req/s)', value: lossPercent(master!.rps, hook!.rps), unit: '%', digits: 1, target: { op: '<=', value: HOOK_COST_PERCENT_MAX }, note },
    { label: 'hook cost (CPU/request)', value: gainPercent(master!.cpu_us_per_request, hook!.cpu_us_per_request), unit: '%', digits: 1, target: { op: '<=', value: HOOK_COST_PERCENT_MAX }, note },
    { label: 'noise floor: identical servers (req/s)', value: lossPercent(off!.rps, offAgain!.rps), unit: '%', digits: 1 },
    { label: 'transfers/s, auth off', value: off!.rps, unit: 'req/s' },
    { label: 'hook deliveries made during the run', value: output.deliveries, unit: '' },
  ];
  return { name: 'access', figures, details: output as unknown as Record<string, unknown> };
}

interface IndexOutput {
  transactions: number;
  small_transactions: number;
  projection: {
    rows_per_second: number; events_per_second: number; process_cpu_seconds: number; event_loop_delay_p99_ms: number;
  };
  queries: Array<{ query: string; p50?: number; p99?: number; ms?: number }>;
  growth: Array<{ query: string; ratio: number }>;
  lag: { requests_per_second: number; lag_p50_ms: number; lag_p99_ms: number; caught_up_after_load: boolean };
}

export async function indexBench(settings: BenchSettings, log: (line: string) => void): Promise<BenchResult> {
  const transactions = settings.quick ? 100_000 : 1_000_000;
  log(`index: seed ${transactions} transactions, project, query, lag under load`);
  const output = await child<IndexOutput>('index-bench.js', [], {
    INDEX_BENCH_TRANSACTIONS: String(transactions),
    INDEX_BENCH_LOAD_SECONDS: String(Math.max(5, settings.seconds * 2)),
  });
  const figures: Figure[] = [
    { label: 'projection rows/s (with full-text index)', value: output.projection.rows_per_second, unit: '/s', target: { op: '>=', value: INDEX_ROWS_PER_SECOND_TARGET } },
    { label: 'projection events/s', value: output.projection.events_per_second, unit: '/s' },
    { label: 'index lag p99 under HTTP transfer load', value: output.lag.lag_p99_ms, unit: 'ms', target: { op: '<=', value: INDEX_LAG_P99_MS_MAX } },
    { label: 'HTTP transfers/s during the lag measurement', value: output.lag.requests_per_second, unit: '/s' },
  ];
  for (const query of output.queries) {
    if (query.p99 === undefined) {
      figures.push({ label: query.query, value: query.ms ?? Number.NaN, unit: 'ms' });
      continue;
    }
    const target = queryTarget(query.query);
    figures.push({ label: `p99 ${query.query}`, value: query.p99, unit: 'ms', digits: 2, ...(target === undefined ? {} : { target: { op: '<=' as const, value: target } }) });
  }
  for (const entry of output.growth) {
    figures.push({
      label: `p99 growth ${output.small_transactions} -> ${output.transactions}: ${entry.query}`, value: entry.ratio, unit: 'x', digits: 2,
      target: { op: '<=', value: P99_GROWTH_MAX },
    });
  }
  return { name: 'index', figures, details: output as unknown as Record<string, unknown> };
}

/** The p99 target of a query shape: issue 5's for an indexed filter, issue 17's for searches and balance history. */
function queryTarget(query: string): number | undefined {
  if (query.startsWith('filter source eq <balance>, limit 20')) return FILTER_P99_MS_MAX;
  if (query.startsWith('search ')) return SEARCH_P99_MS_MAX;
  if (query.startsWith('balance as of')) return BALANCE_AT_P99_MS_MAX;
  if (query.startsWith('history page')) return HISTORY_PAGE_P99_MS_MAX;
  return undefined;
}

interface SnapshotOutput {
  events: number;
  calibration_map_set_1m_cpu_ms: number;
  snapshot: { write_ms: number; hash_ms: number; bytes: number; balances: number };
  startup_from_snapshot_ms: number[];
  full_replay: { ready_ms: number; events_per_second: number };
  verify: { ok: boolean; events_per_second: number };
  latency: { before: { p99: number }; during: { p99: number }; after: { p99: number }; snapshot_ms: number };
}

export async function snapshotsBench(settings: BenchSettings, log: (line: string) => void): Promise<BenchResult> {
  const events = settings.quick ? 100_000 : 1_000_000;
  log(`snapshots: build ${events} events, snapshot, start-up, replay, verify, latency during a snapshot`);
  const output = await child<SnapshotOutput>('snapshot-bench.js', ['--events', String(events)]);
  const sorted = [...output.startup_from_snapshot_ms].sort((a, b) => a - b);
  const startup = sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
  const figures: Figure[] = [
    { label: `start-up from a snapshot of ${output.snapshot.balances} balances (median)`, value: startup, unit: 'ms', target: { op: '<=', value: STARTUP_FROM_SNAPSHOT_MS_MAX } },
    { label: 'full replay', value: output.full_replay.events_per_second, unit: 'events/s', target: { op: '>=', value: REPLAY_EVENTS_PER_SECOND_TARGET } },
    { label: 'snapshot write (worker)', value: output.snapshot.write_ms, unit: 'ms' },
    { label: 'snapshot size', value: output.snapshot.bytes / 1024 / 1024, unit: 'MiB', digits: 1 },
    { label: 'verify', value: output.verify.events_per_second, unit: 'events/s' },
    { label: 'transfer p99 before a snapshot', value: output.latency.before.p99, unit: 'ms', digits: 1 },
    { label: 'transfer p99 while a snapshot is written', value: output.latency.during.p99, unit: 'ms', digits: 1 },
    { label: 'yardstick: 1,000,000 Map.set (CPU)', value: output.calibration_map_set_1m_cpu_ms, unit: 'ms' },
  ];
  return { name: 'snapshots', figures, details: output as unknown as Record<string, unknown> };
}
