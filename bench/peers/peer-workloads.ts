// What the peers bench asks of Folio and of the Postgres peer, in one place so every side gets the same
// work: the workloads (single transfers, atomic batches of 10 and of 1,000, and a hot pair where every
// transfer goes between the same two balances), the balance sets they run over (1,000 and 100,000,
// all funded first), the loads of a run (each workload at its number of clients, plus one client and
// the sweep from 1 to 256 clients) and the order the sides take in each load, and the seeded choice of
// each transfer's two balances. Every transfer moves one unit without overdraft, so the funds check
// runs and never refuses.

import { mulberry32 } from '../mulberry32.js';

export interface Workload {
  name: 'single' | 'batch-10' | 'batch-1000' | 'hot-pair';
  /** Transfers per request (Folio: an atomic bulk request, one log record; Postgres: one database transaction). */
  batch: number;
  /** 'random': two different balances of the set drawn uniformly; 'hot': always from its first balance to its second. */
  pairs: 'random' | 'hot';
}

export const SINGLE: Workload = { name: 'single', batch: 1, pairs: 'random' };
export const BATCH_10: Workload = { name: 'batch-10', batch: 10, pairs: 'random' };
export const BATCH_1000: Workload = { name: 'batch-1000', batch: 1_000, pairs: 'random' };
export const HOT_PAIR: Workload = { name: 'hot-pair', batch: 1, pairs: 'hot' };

/** One load of a run: a workload over a balance set at a number of concurrent clients, measured on every side. */
export interface PeerLoad {
  workload: Workload;
  balances: number;
  clients: number;
}

/** The sides of a load: Folio over HTTP, the Postgres peer called with pg, the same peer behind Koa over HTTP. */
export const SIDES = ['folio_http', 'peer_direct', 'peer_koa'] as const;
export type Side = (typeof SIDES)[number];

export const BALANCE_COUNTS: readonly number[] = [1_000, 100_000];
/** A quick run's (FOLIO_BENCH_QUICK): the second set smaller, so funding it takes moments and it differs from the largest set. */
export const QUICK_BALANCE_COUNTS: readonly number[] = [1_000, 10_000];
/** Concurrent clients of most loads; a batch of 1,000 keeps a server busy with a few in flight (as the lifecycle bench's bulk). */
export const CLIENTS = 64;
export const BATCH_1000_CLIENTS = 8;
/** Client counts of the throughput sweep (single transfers over the smaller balance set). */
export const SWEEP_CONNECTIONS: readonly number[] = [1, 4, 16, 64, 256];

/** The rows of a run, in the order they are measured: every workload over every set, then the hot pair and one client. */
export function peerRows(balanceCounts: readonly number[] = BALANCE_COUNTS): PeerLoad[] {
  const smallest = balanceCounts[0]!;
  return [
    ...balanceCounts.flatMap((balances): PeerLoad[] => [
      { workload: SINGLE, balances, clients: CLIENTS },
      { workload: BATCH_10, balances, clients: CLIENTS },
      { workload: BATCH_1000, balances, clients: BATCH_1000_CLIENTS },
    ]),
    { workload: HOT_PAIR, balances: smallest, clients: CLIENTS },
    { workload: SINGLE, balances: smallest, clients: 1 },
  ];
}

export function sameLoad(a: PeerLoad, b: PeerLoad): boolean {
  return a.workload.name === b.workload.name && a.balances === b.balances && a.clients === b.clients;
}

/**
 * The sweep's loads (single transfers over the smallest set at each client count) that no row already
 * measures: a point the rows have (one client, 64 clients) is that row, not a second figure beside it.
 */
export function sweepLoads(rows: readonly PeerLoad[], balanceCounts: readonly number[] = BALANCE_COUNTS): PeerLoad[] {
  return SWEEP_CONNECTIONS
    .map((clients): PeerLoad => ({ workload: SINGLE, balances: balanceCounts[0]!, clients }))
    .filter((load) => !rows.some((row) => sameLoad(row, load)));
}

/**
 * The order the sides run in for the `index`th load: turned by one each load, so over a run each side
 * goes first, second and last about as often and none always gets the quieter moment.
 */
export function sideOrder(index: number): Side[] {
  const shift = ((index % SIDES.length) + SIDES.length) % SIDES.length;
  return [...SIDES.slice(shift), ...SIDES.slice(0, shift)];
}

export function loadLabel(load: PeerLoad): string {
  const clients = load.clients === 1 ? '1 client' : `${load.clients} clients`;
  if (load.workload.pairs === 'hot') return `hot pair, ${clients}`;
  return `${load.workload.name}, ${load.balances.toLocaleString('en-US')} balances, ${clients}`;
}

export const CURRENCY = 'USD';
export const WORLD = '@peer-world';
/** Each balance's funding: far more than a run can move out of it one unit at a time. */
export const FUNDING = 10n ** 15n;
/** Balances funded per request or database transaction. */
export const FUNDING_BATCH = 1_000;

export function balanceName(balances: number, index: number): string {
  return `@p${balances}-${index}`;
}

export function balanceNames(balances: number): string[] {
  return Array.from({ length: balances }, (_, index) => balanceName(balances, index));
}

export interface Pair {
  source: string;
  destination: string;
}

/** Draws the pairs of a workload over a balance set: uniformly random, or the set's first two balances every time. */
export function pairSource(workload: Workload, balances: number, seed: number): () => Pair {
  if (workload.pairs === 'hot') {
    const hot = { source: balanceName(balances, 0), destination: balanceName(balances, 1) };
    return () => hot;
  }
  const next = mulberry32(seed);
  return () => {
    const source = Math.floor(next() * balances);
    const destination = (source + 1 + Math.floor(next() * (balances - 1))) % balances;
    return { source: balanceName(balances, source), destination: balanceName(balances, destination) };
  };
}
