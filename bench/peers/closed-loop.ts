// A closed-loop load inside one process: N clients each start an operation, wait for it to finish, and
// start the next, for a warm-up and then a measured window (as the engine bench's clients do). Only
// operations that finish inside the measured window count, each with its latency. Used for the Postgres
// peer (driven directly with pg) and for Folio in-process.

import { percentileOfSorted, Samples } from '../stats.js';

export interface LatencyMs {
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export interface ClosedLoopResult {
  clients: number;
  warmupSeconds: number;
  measuredSeconds: number;
  /** Operations (a transfer, or a whole batch) finished in the measured window. */
  operations: number;
  latencyMs: LatencyMs;
}

export interface ClosedLoopOptions {
  clients: number;
  warmupSeconds: number;
  seconds: number;
  /** One operation of client `client`; it must reject on anything but success. */
  operation(client: number): Promise<void>;
}

export function latencySummary(samples: Samples, sum: number): LatencyMs {
  const sorted = samples.sorted();
  return {
    p50: percentileOfSorted(sorted, 50),
    p90: percentileOfSorted(sorted, 90),
    p99: percentileOfSorted(sorted, 99),
    max: sorted[sorted.length - 1] ?? Number.NaN,
    mean: sorted.length === 0 ? Number.NaN : sum / sorted.length,
  };
}

export async function runClosedLoop(options: ClosedLoopOptions): Promise<ClosedLoopResult> {
  const measureFrom = performance.now() + options.warmupSeconds * 1000;
  const measureTo = measureFrom + options.seconds * 1000;
  const latencies = new Samples();
  let sum = 0;
  let failed = false;
  const client = async (index: number): Promise<void> => {
    for (;;) {
      const started = performance.now();
      if (started >= measureTo || failed) return;
      try {
        await options.operation(index);
      } catch (error) {
        failed = true; // the other clients stop at their next turn
        throw error;
      }
      const done = performance.now();
      if (done < measureFrom || done > measureTo) continue;
      latencies.push(done - started);
      sum += done - started;
    }
  };
  await Promise.all(Array.from({ length: options.clients }, (_, index) => client(index)));
  return {
    clients: options.clients,
    warmupSeconds: options.warmupSeconds,
    measuredSeconds: options.seconds,
    operations: latencies.length,
    latencyMs: latencySummary(latencies, sum),
  };
}
