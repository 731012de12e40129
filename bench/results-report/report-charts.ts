// The report's charts, drawn as SVG in Node by echarts' server-side renderer (no browser, no canvas),
// each from the newest result of the bench that measured it: throughput against concurrent clients for
// Folio over HTTP, the Postgres peer behind Koa and called directly, and bare Koa (peers), latency percentiles of single transfers (peers, else http),
// the index's lag over time under load (index), and start-up from a snapshot against a full replay
// (snapshots). Every chart also carries its numbers as a table, printed under it in the report. A chart
// whose bench has not run (or ran before it recorded what the chart needs) is listed as missing.

import * as echarts from 'echarts';
import { INDEX_LAG_P99_MS_MAX, STARTUP_FROM_SNAPSHOT_MS_MAX } from '../standalone-benches.js';
import { median } from '../stats.js';
import { findResult, type StoredResult } from './stored-results.js';

export interface ChartTable {
  header: string[];
  rows: string[][];
}

export interface Chart {
  /** File name under charts/. */
  file: string;
  title: string;
  /** The bench result it was drawn from. */
  from: StoredResult;
  svg: string;
  table: ChartTable;
}

export interface ChartSet {
  charts: Chart[];
  /** Charts that could not be drawn, each with why. */
  missing: string[];
}

const WIDTH = 760;
const HEIGHT = 420;
const COLORS = ['#2f6fb0', '#d9822b', '#3a9b5c', '#9b59b6', '#7f8c8d'];

function render(option: echarts.EChartsOption): string {
  const chart = echarts.init(null, null, { renderer: 'svg', ssr: true, width: WIDTH, height: HEIGHT });
  try {
    chart.setOption({ animation: false, backgroundColor: '#ffffff', color: COLORS, ...option });
    return chart.renderToSVGString();
  } finally {
    chart.dispose();
  }
}

function whole(value: number | null | undefined): string {
  return value === null || value === undefined || Number.isNaN(value) ? '' : Math.round(value).toLocaleString('en-US');
}

function decimal(value: number | null | undefined): string {
  return value === null || value === undefined || Number.isNaN(value) ? '' : value.toFixed(1);
}

function base(title: string, yName: string): echarts.EChartsOption {
  return {
    title: { text: title, left: 'center', top: 8, textStyle: { fontSize: 15 } },
    legend: { top: 38 },
    grid: { left: 80, right: 30, top: 80, bottom: 60 },
    yAxis: { type: 'value', name: yName, nameLocation: 'middle', nameGap: 60 },
    tooltip: {},
  };
}

/** A value axis tall enough to show the target line even when every value is far below it. */
function withTarget(name: string, target: number): echarts.EChartsOption['yAxis'] {
  return { type: 'value', name, nameLocation: 'middle', nameGap: 60, max: ({ max }: { max: number }) => Math.ceil(Math.max(max, target * 1.1)) };
}

/** A point of the peers bench's sweep; results recorded before issue 39 have `postgres` and no peer behind Koa. */
interface SweepPoint {
  connections: number;
  folio_http: number;
  peer_direct?: number;
  peer_koa?: number;
  postgres?: number;
  bare_koa?: number;
}

function throughputChart(results: StoredResult[]): Chart | string {
  const peers = findResult(results, 'peers');
  const sweep = peers?.details.sweep as SweepPoint[] | undefined;
  if (!peers || !Array.isArray(sweep) || sweep.length === 0) return 'throughput against connections: no peers result with a connection sweep';
  const title = 'Single transfers/s against concurrent clients';
  const lines = [
    { name: 'Folio over HTTP', values: sweep.map((point) => point.folio_http) },
    { name: 'Postgres peer behind Koa', values: sweep.map((point) => point.peer_koa) },
    { name: 'Postgres peer (direct)', values: sweep.map((point) => point.peer_direct ?? point.postgres) },
    { name: 'bare Koa (static answer)', values: sweep.map((point) => point.bare_koa) },
  ];
  // A line the result has no numbers for (an older result) is left out rather than drawn at zero.
  const series = lines.filter((line) => line.values.every((value) => typeof value === 'number')) as Array<{ name: string; values: number[] }>;
  const svg = render({
    ...base(title, 'transfers/s'),
    // A log axis: bare Koa's static answers run several times above the ledgers, and one client far below 256.
    yAxis: { type: 'log', logBase: 10, name: 'transfers/s (log scale)', nameLocation: 'middle', nameGap: 60 },
    xAxis: { type: 'category', name: 'concurrent clients', nameLocation: 'middle', nameGap: 35, data: sweep.map((point) => String(point.connections)) },
    series: series.map((line) => ({ type: 'line', name: line.name, data: line.values.map((value) => Math.round(value)), symbolSize: 7 })),
  });
  return {
    file: 'throughput-connections.svg', title, from: peers, svg,
    table: { header: ['clients', ...series.map((line) => line.name)], rows: sweep.map((point, index) => [String(point.connections), ...series.map((line) => whole(line.values[index]))]) },
  };
}

interface LatencySeries {
  name: string;
  p50: number | null;
  p90: number | null;
  p99: number | null;
}

function peersLatencyRow(peers: StoredResult): Record<string, any> | undefined {
  const rows = peers.details.rows as Array<Record<string, any>> | undefined;
  return rows?.find((candidate) => candidate.workload === 'single' && candidate.clients > 1);
}

function peersLatencies(row: Record<string, any>): LatencySeries[] {
  const overHttp = (name: string, load: Record<string, number>): LatencySeries => ({ name, p50: load.latencyP50Ms!, p90: load.latencyP90Ms ?? null, p99: load.latencyP99Ms! });
  const series = [overHttp('Folio over HTTP', row.folio_http)];
  if (row.peer_koa) series.push(overHttp('Postgres peer behind Koa', row.peer_koa));
  // Results recorded before issue 39 measured Folio in-process instead of the peer behind Koa.
  if (row.folio_in_process) series.push({ name: 'Folio in-process', ...row.folio_in_process.latencyMs });
  series.push({ name: 'Postgres peer (direct)', ...(row.peer_direct ?? row.postgres).latencyMs });
  return series;
}

function httpLatencies(http: StoredResult): LatencySeries[] | undefined {
  const rounds = http.details.rounds as Record<'bare' | 'folio', Array<Record<string, number>>> | undefined;
  if (!rounds?.bare?.length || !rounds.folio?.length) return undefined;
  const of = (name: string, runs: Array<Record<string, number>>): LatencySeries => ({
    name,
    p50: median(runs.map((run) => run.latencyP50Ms!)),
    p90: runs.every((run) => run.latencyP90Ms !== undefined) ? median(runs.map((run) => run.latencyP90Ms!)) : null,
    p99: median(runs.map((run) => run.latencyP99Ms!)),
  });
  return [of('Folio over HTTP', rounds.folio), of('bare Koa', rounds.bare)];
}

function latencyChart(results: StoredResult[]): Chart | string {
  const peers = findResult(results, 'peers');
  const http = findResult(results, 'http');
  const row = peers ? peersLatencyRow(peers) : undefined;
  const fromPeers = row ? peersLatencies(row) : undefined;
  const fromHttp = !fromPeers && http ? httpLatencies(http) : undefined;
  const series = fromPeers ?? fromHttp;
  const from = fromPeers ? peers : http;
  if (!series || !from) return 'latency percentiles: no peers or http result';
  const title = row
    ? `Latency of single durable transfers, ${row.clients} clients, ${whole(row.balances)} balances (peers bench)`
    : 'Latency of single transfers, 64 connections (http bench)';
  // The http bench recorded no p90 before the peers bench was added: a percentile nobody measured is left out.
  const percentiles = (['p50', 'p90', 'p99'] as const).filter((key) => series.some((line) => line[key] !== null && line[key] !== undefined));
  const svg = render({
    ...base(title, 'milliseconds'),
    xAxis: { type: 'category', data: [...percentiles] },
    series: series.map((line) => ({ type: 'bar', name: line.name, data: percentiles.map((key) => (line[key] === null ? null : Number(line[key]!.toFixed(2)))) })),
  });
  return {
    file: 'latency-percentiles.svg', title, from, svg,
    table: { header: ['', ...percentiles.map((key) => `${key} (ms)`)], rows: series.map((line) => [line.name, ...percentiles.map((key) => decimal(line[key]))]) },
  };
}

function indexLagChart(results: StoredResult[]): Chart | string {
  const index = findResult(results, 'index');
  const lag = index?.details.lag as { lag_series?: Array<[number, number]>; lag_p99_ms?: number; requests_per_second?: number } | undefined;
  if (!index || !Array.isArray(lag?.lag_series) || lag.lag_series.length === 0) return 'index lag over time: no index result with a lag series (recorded since the peers bench was added)';
  const series = lag.lag_series;
  const title = `Index lag under HTTP load (${whole(lag.requests_per_second)} transfers/s)`;
  const svg = render({
    ...base(title, 'lag (ms)'),
    yAxis: withTarget('lag (ms)', INDEX_LAG_P99_MS_MAX),
    legend: { show: false },
    xAxis: { type: 'value', name: 'seconds into the load', nameLocation: 'middle', nameGap: 35 },
    series: [{
      type: 'line', name: 'index lag', showSymbol: false, data: series.map(([seconds, ms]) => [seconds, ms]),
      markLine: { symbol: 'none', label: { formatter: 'target p99', position: 'insideEndTop' }, lineStyle: { type: 'dashed', color: '#c0392b' }, data: [{ yAxis: INDEX_LAG_P99_MS_MAX }] },
    }],
  });
  // The table gives the lag at whole seconds, not every sample.
  const rows: string[][] = [];
  for (let second = 0, at = 0; at < series.length; second += 1) {
    while (at < series.length && series[at]![0] < second) at += 1;
    if (at < series.length) rows.push([String(second), decimal(series[at]![1])]);
  }
  return { file: 'index-lag.svg', title, from: index, svg, table: { header: ['second', 'lag (ms)'], rows } };
}

function startupChart(results: StoredResult[]): Chart | string {
  const snapshots = findResult(results, 'snapshots');
  const details = snapshots?.details as { events?: number; startup_from_snapshot_ms?: number[]; full_replay?: { ready_ms?: number } } | undefined;
  if (!snapshots || !details?.startup_from_snapshot_ms?.length || details.full_replay?.ready_ms === undefined) {
    return 'start-up from a snapshot against replay: no snapshots result';
  }
  const fromSnapshot = median(details.startup_from_snapshot_ms);
  const replay = details.full_replay.ready_ms;
  const title = `Start-up with ${whole(details.events)} events in the log`;
  const bars = [
    { name: 'from a snapshot (median)', value: fromSnapshot },
    { name: 'full replay of the log', value: replay },
  ];
  const svg = render({
    ...base(title, 'milliseconds to ready'),
    yAxis: withTarget('milliseconds to ready', STARTUP_FROM_SNAPSHOT_MS_MAX),
    legend: { show: false },
    xAxis: { type: 'category', data: bars.map((bar) => bar.name) },
    series: [{
      type: 'bar', name: 'start-up', barWidth: '40%', data: bars.map((bar, index) => ({ value: Math.round(bar.value), itemStyle: { color: COLORS[index] } })),
      label: { show: true, position: 'top', formatter: ({ value }: { value: unknown }) => whole(Number(value)) },
      markLine: { symbol: 'none', label: { formatter: 'target from a snapshot', position: 'insideEndTop' }, lineStyle: { type: 'dashed', color: '#c0392b' }, data: [{ yAxis: STARTUP_FROM_SNAPSHOT_MS_MAX }] },
    }],
  });
  return { file: 'startup-snapshot-vs-replay.svg', title, from: snapshots, svg, table: { header: ['start-up', 'ms'], rows: bars.map((bar) => [bar.name, whole(bar.value)]) } };
}

export function buildCharts(results: StoredResult[]): ChartSet {
  const set: ChartSet = { charts: [], missing: [] };
  for (const build of [throughputChart, latencyChart, indexLagChart, startupChart]) {
    const chart = build(results);
    if (typeof chart === 'string') set.missing.push(chart);
    else set.charts.push(chart);
  }
  return set;
}
