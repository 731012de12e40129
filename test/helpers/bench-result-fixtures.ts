// Bench result files as bench/report.ts writeResult writes them, with made-up figures, for the tests of
// the bench report: one per bench that a chart is drawn from (peers, http, index, snapshots) plus one
// that only has figures (engine).

import fs from 'node:fs';
import path from 'node:path';
import type { StoredResult } from '../../bench/results-report/stored-results.js';

const MACHINE = {
  cpus: 2, cpu_model: 'Fixture CPU 9000', memory_bytes: 8 * 1024 ** 3, node: 'v24.0.0-fixture', platform: 'linux fixture',
  load_average_at_start: [0.51, 0.42, 0.33], load_average_at_end: [0.61, 0.52, 0.43],
};

function result(bench: string, startedAt: string, figures: StoredResult['figures'], details: Record<string, unknown>, quick = false): StoredResult {
  return { bench, started_at: startedAt, machine: MACHINE, settings: { quick, seconds: quick ? 2 : 10 }, figures, details };
}

function latency(p50: number, p90: number, p99: number): Record<string, number> {
  return { p50, p90, p99, max: p99 * 2, mean: p50 * 1.2 };
}

export function peersFixture(startedAt = '2026-01-02T03:04:05.000Z', quick = false): StoredResult {
  const row = (workload: string, balances: number, batch: number, clients: number, scale: number) => ({
    workload, balances, batch, clients,
    folio_http: { transfersPerSecond: 12_345 * scale, latencyP50Ms: 4, latencyP90Ms: 7, latencyP99Ms: 13 },
    peer_direct: { transfersPerSecond: 1_234 * scale, latencyMs: latency(9.5, 15.25, 31.5) },
    peer_koa: { transfersPerSecond: 1_000 * scale, latencyP50Ms: 11, latencyP90Ms: 18, latencyP99Ms: 40 },
  });
  return result('peers', startedAt, [
    { label: 'Folio over HTTP transfers/s (single, 1,000 balances, 64 clients)', value: 12_345, unit: '/s' },
    { label: 'Postgres peer direct transfers/s (single, 1,000 balances, 64 clients)', value: 1_234, unit: '/s' },
    { label: 'Folio HTTP / peer direct (single, 1,000 balances, 64 clients)', value: 10.0040, unit: 'ratio', digits: 2, target: { op: '>=', value: 2 }, met: true },
    { label: 'Folio HTTP / peer direct (batch-1000, 1,000 balances, 8 clients)', value: 3.554, unit: 'ratio', digits: 2, target: { op: '>=', value: 5 }, met: false },
  ], {
    rows: [row('single', 1_000, 1, 64, 1), row('batch-1000', 1_000, 1_000, 8, 3)],
    sweep: [1, 4, 16, 64, 256].map((connections, index) => ({
      connections, folio_http: 1_000 * (index + 1), peer_koa: 400 * (index + 1), peer_direct: 300 * (index + 1), bare_koa: 2_500 * (index + 1),
    })),
  }, quick);
}

/** A peers result as recorded before issue 39: Folio in-process, the peer only called directly (`postgres`). */
export function legacyPeersFixture(): StoredResult {
  const row = {
    workload: 'single', balances: 1_000, batch: 1, clients: 64,
    folio_http: { transfersPerSecond: 4_000, latencyP50Ms: 12, latencyP90Ms: 23, latencyP99Ms: 52 },
    folio_in_process: { transfersPerSecond: 33_000, latencyMs: latency(1.5, 2.5, 8) },
    postgres: { transfersPerSecond: 3_200, latencyMs: latency(17.75, 30, 47.75) },
  };
  return result('peers', '2025-12-01T00:00:00.000Z', [], {
    rows: [row],
    sweep: [1, 4].map((connections) => ({ connections, folio_http: 300 * connections, bare_koa: 8_000 * connections, postgres: 700 * connections })),
  });
}

export function httpFixture(): StoredResult {
  const round = (p50: number, p99: number) => ({ latencyP50Ms: p50, latencyP99Ms: p99, requestsPerSecond: 1 });
  return result('http', '2026-01-02T02:00:00.000Z', [
    { label: 'Folio req/s (median)', value: 9_876.5, unit: 'req/s' },
    { label: 'Folio p99', value: 21, unit: 'ms', target: { op: '<=', value: 25 }, met: true },
  ], { rounds: { bare: [round(2, 6), round(3, 7)], folio: [round(5, 20), round(6, 22)] } });
}

export function indexFixture(withSeries = true): StoredResult {
  const series = Array.from({ length: 60 }, (_, index) => [Number((index * 0.05).toFixed(2)), 100 + (index % 7) * 35.5]);
  return result('index', '2026-01-02T02:10:00.000Z', [
    { label: 'index lag p99 under HTTP transfer load', value: 313.25, unit: 'ms', target: { op: '<=', value: 1_000 }, met: true },
  ], { lag: { requests_per_second: 4_321, lag_p50_ms: 200, lag_p99_ms: 313.25, ...(withSeries ? { lag_series: series } : {}) } });
}

export function snapshotsFixture(): StoredResult {
  return result('snapshots', '2026-01-02T02:20:00.000Z', [
    { label: 'start-up from a snapshot of 1000000 balances (median)', value: 987, unit: 'ms', target: { op: '<=', value: 2_000 }, met: true },
    { label: 'full replay', value: 131_072, unit: 'events/s', target: { op: '>=', value: 500_000 }, met: false },
  ], { events: 1_000_000, startup_from_snapshot_ms: [1_100, 987, 950], full_replay: { ready_ms: 7_777 } });
}

export function engineFixture(): StoredResult {
  return result('engine', '2026-01-02T01:00:00.000Z', [
    { label: 'transfers/s, durable', value: 83_798.4, unit: '/s', target: { op: '>=', value: 300_000 }, met: false },
    { label: 'durable latency p99', value: 29.904, unit: 'ms', digits: 2 },
  ], {});
}

/** Writes results into `dir` under the names writeResult gives them. */
export function writeFixtures(dir: string, results: StoredResult[]): void {
  fs.mkdirSync(dir, { recursive: true });
  for (const stored of results) {
    const name = `${stored.bench}${stored.settings.quick ? '.quick' : ''}.json`;
    fs.writeFileSync(path.join(dir, name), JSON.stringify(stored, null, 2));
  }
}
