// What the peers bench asks of both ledgers, in one place so Folio (over HTTP and in-process) and the
// Postgres peer get the same work: the workloads (single transfers, atomic batches of 10 and of 1,000,
// each with its number of concurrent clients), the balance sets they run over (1,000 and 100,000
// balances, all funded first), and the seeded choice of each transfer's two balances. Every transfer
// moves one unit without overdraft, so the funds check runs and never refuses.

import { mulberry32 } from '../mulberry32.js';

export interface Workload {
  name: 'single' | 'batch-10' | 'batch-1000';
  /** Transfers per request (Folio: an atomic bulk request, one log record; Postgres: one database transaction). */
  batch: number;
  clients: number;
}

export const WORKLOADS: readonly Workload[] = [
  { name: 'single', batch: 1, clients: 64 },
  { name: 'batch-10', batch: 10, clients: 64 },
  // Each request carries a thousand transfers, so a few in flight keep a server busy (as the lifecycle bench's bulk).
  { name: 'batch-1000', batch: 1_000, clients: 8 },
];

export const BALANCE_COUNTS: readonly number[] = [1_000, 100_000];

/** Connection counts of the throughput curve (single transfers over the smaller balance set). */
export const SWEEP_CONNECTIONS: readonly number[] = [1, 4, 16, 64, 256];

export const CURRENCY = 'USD';
export const WORLD = '@peer-world';
/** Each balance's funding: far more than a run can move out of it one unit at a time. */
export const FUNDING = 10n ** 15n;
export const FUNDING_BATCH = 1_000;

export function balanceName(balances: number, index: number): string {
  return `@p${balances}-${index}`;
}

export function balanceNames(balances: number): string[] {
  return Array.from({ length: balances }, (_, index) => balanceName(balances, index));
}

/** A seeded generator, so each run draws the same pairs. */
export const seededGenerator = mulberry32;

export interface Pair {
  source: string;
  destination: string;
}

/** Draws transfers between two different balances of the set, uniformly. */
export function pairSource(balances: number, seed: number): () => Pair {
  const next = seededGenerator(seed);
  return () => {
    const source = Math.floor(next() * balances);
    const destination = (source + 1 + Math.floor(next() * (balances - 1))) % balances;
    return { source: balanceName(balances, source), destination: balanceName(balances, destination) };
  };
}

export function workloadLabel(workload: Workload, balances: number): string {
  return `${workload.name}, ${balances.toLocaleString('en-US')} balances`;
}
