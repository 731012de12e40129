// The peers bench's figures from its measurements, each beside issue 39's target where it sets one,
// all as ratios within the run: Folio over HTTP against the Postgres peer called directly (single
// transfers at 64 clients over each balance set, batches of 1,000, one client, the hot pair), Folio
// against the same peer behind Koa at every point of the sweep, and Folio's server CPU per single
// transfer at each balance count with the growth from the smallest set to a million. Pure: the bench
// (peers-bench.ts) measures, this only reads.

import type { Figure, Target } from '../report.js';
import type { LatencyMs } from './closed-loop.js';
import { BALANCE_COUNTS, CLIENTS, type Workload } from './peer-workloads.js';

/** Issue 39's targets (ratios within one run). */
export const SINGLE_RATIO_TARGET = 2;
export const BATCH_1000_RATIO_TARGET = 5;
export const ONE_CLIENT_RATIO_TARGET = 1.0;
export const HOT_PAIR_RATIO_TARGET = 10;
/** "Ahead at every point": Folio over HTTP against the peer behind Koa at each client count of the sweep. */
export const SWEEP_KOA_RATIO_TARGET = 1.0;
/** Server CPU per single transfer over a million balances against over the smallest set. */
export const CPU_GROWTH_TARGET = 1.25;
export const CPU_TARGET_BALANCES = 1_000_000;

/** What the figures read of an HTTP load (Folio's, or the peer's behind Koa). */
export interface HttpSide {
  transfersPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
}

/** What the figures read of the peer called directly. */
export interface DirectSide {
  transfersPerSecond: number;
  latencyMs: LatencyMs;
}

export interface CpuPerTransfer {
  total: number;
  engine: number;
  http: number;
  other: number;
}

export interface RowFigures {
  label: string;
  workload: Workload['name'];
  balances: number;
  clients: number;
  folio_http: HttpSide & { cpuMicrosPerTransfer?: CpuPerTransfer };
  peer_direct: DirectSide;
  peer_koa: HttpSide;
}

export interface SweepPoint {
  connections: number;
  folio_http: number;
  peer_direct: number;
  peer_koa: number;
  /** Koa answering a static body, for scale. */
  bare_koa: number;
  folio_p50_ms: number;
  peer_direct_p50_ms: number;
  peer_koa_p50_ms: number;
}

/** Folio's server CPU per single transfer over one balance set. */
export interface CpuAtBalances {
  balances: number;
  cpu: CpuPerTransfer;
}

/** The target of Folio over HTTP against the peer called directly, for the rows the issue names. */
export function directRatioTarget(row: Pick<RowFigures, 'workload' | 'clients'>): Target | undefined {
  if (row.workload === 'hot-pair') return { op: '>=', value: HOT_PAIR_RATIO_TARGET };
  if (row.workload === 'batch-1000') return { op: '>=', value: BATCH_1000_RATIO_TARGET };
  if (row.workload === 'single' && row.clients === 1) return { op: '>=', value: ONE_CLIENT_RATIO_TARGET };
  if (row.workload === 'single' && row.clients === CLIENTS) return { op: '>=', value: SINGLE_RATIO_TARGET };
  return undefined;
}

function withTarget(target: Target | undefined): { target?: Target } {
  return target ? { target } : {};
}

export function rowFigures(row: RowFigures): Figure[] {
  const folio = row.folio_http.transfersPerSecond;
  return [
    { label: `Folio over HTTP transfers/s (${row.label})`, value: folio, unit: '/s' },
    { label: `Postgres peer direct transfers/s (${row.label})`, value: row.peer_direct.transfersPerSecond, unit: '/s' },
    { label: `Postgres peer behind Koa transfers/s (${row.label})`, value: row.peer_koa.transfersPerSecond, unit: '/s' },
    {
      label: `Folio HTTP / peer direct (${row.label})`, value: folio / row.peer_direct.transfersPerSecond, unit: 'ratio', digits: 2,
      ...withTarget(directRatioTarget(row)),
    },
    { label: `Folio HTTP / peer behind Koa (${row.label})`, value: folio / row.peer_koa.transfersPerSecond, unit: 'ratio', digits: 2 },
  ];
}

/** p50 and p99 of each side: of the 64-client single transfers over the smallest set, and of one client. */
export function latencyFigures(row: RowFigures): Figure[] {
  const of = (side: string, p50: number, p99: number): Figure[] => [
    { label: `${side} p50 (${row.label})`, value: p50, unit: 'ms', digits: 2 },
    { label: `${side} p99 (${row.label})`, value: p99, unit: 'ms', digits: 1 },
  ];
  return [
    ...of('Folio over HTTP', row.folio_http.latencyP50Ms, row.folio_http.latencyP99Ms),
    ...of('Postgres peer direct', row.peer_direct.latencyMs.p50, row.peer_direct.latencyMs.p99),
    ...of('Postgres peer behind Koa', row.peer_koa.latencyP50Ms, row.peer_koa.latencyP99Ms),
  ];
}

export function sweepFigures(sweep: SweepPoint[]): Figure[] {
  return sweep.map((point) => ({
    label: `sweep, ${point.connections === 1 ? '1 client' : `${point.connections} clients`}: Folio HTTP / peer behind Koa`,
    value: point.folio_http / point.peer_koa, unit: 'ratio', digits: 2, target: { op: '>=', value: SWEEP_KOA_RATIO_TARGET },
  }));
}

export function cpuFigures(sizes: CpuAtBalances[]): Figure[] {
  const figures: Figure[] = sizes.flatMap(({ balances, cpu }) => {
    const label = `server CPU per single transfer, ${balances.toLocaleString('en-US')} balances`;
    return [
      { label, value: cpu.total, unit: 'µs', digits: 1 },
      { label: `${label}: engine thread`, value: cpu.engine, unit: 'µs', digits: 1 },
      { label: `${label}: HTTP workers`, value: cpu.http, unit: 'µs', digits: 1 },
      { label: `${label}: the rest (index, snapshots, libuv, GC helpers)`, value: cpu.other, unit: 'µs', digits: 1 },
    ];
  });
  const smallest = sizes.reduce<CpuAtBalances | undefined>((low, size) => (low && low.balances <= size.balances ? low : size), undefined);
  const largest = sizes.reduce<CpuAtBalances | undefined>((high, size) => (high && high.balances >= size.balances ? high : size), undefined);
  if (!smallest || !largest || smallest === largest) return figures;
  const full = largest.balances >= CPU_TARGET_BALANCES;
  figures.push({
    label: `server CPU per single transfer, ${largest.balances.toLocaleString('en-US')} / ${smallest.balances.toLocaleString('en-US')} balances`,
    value: largest.cpu.total / smallest.cpu.total, unit: 'ratio', digits: 2,
    ...(full
      ? { target: { op: '<=', value: CPU_GROWTH_TARGET } }
      : { note: `the target is for ${CPU_TARGET_BALANCES.toLocaleString('en-US')} balances` }),
  });
  return figures;
}

/** Every figure of a run: the rows, the latencies of the two single-transfer rows, the sweep, the CPU. */
export function peersFigures(rows: RowFigures[], sweep: SweepPoint[], cpu: CpuAtBalances[], smallest = BALANCE_COUNTS[0]): Figure[] {
  const single = (clients: number): RowFigures | undefined =>
    rows.find((row) => row.workload === 'single' && row.balances === smallest && row.clients === clients);
  return [
    ...rows.flatMap(rowFigures),
    ...[single(CLIENTS), single(1)].flatMap((row) => (row ? latencyFigures(row) : [])),
    ...sweepFigures(sweep),
    ...cpuFigures(cpu),
  ];
}
