// Request counts and latencies by route, kept in plain arrays and handed to prom-client only when
// /metrics is scraped. prom-client's own labelled metrics hash their label object on every update,
// which shows up on a route answering tens of thousands of requests a second; here an update is one
// Map lookup and one bucket scan.
//
// With HTTP on several worker threads each keeps its own; a scrape shows them summed (`showSummed`,
// fed by workers/http-worker.ts from the totals the workers report to the engine's thread).

/** Latency histogram bucket bounds, in seconds. */
export const LATENCY_BUCKETS_SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
/** Distinct (method, route, status) series kept; unmatched routes share one, so this is never reached in practice. */
const SERIES_MAX = 2_000;

interface MetricValue {
  value: number;
  labels: Record<string, string | number>;
  metricName?: string;
}

/** The shape prom-client's registry reads from a metric when it renders the text format. */
interface RegistryMetric {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  get(): { name: string; help: string; type: string; aggregator: string; values: MetricValue[] };
  reset(): void;
}

interface LatencySeries {
  method: string;
  route: string;
  buckets: number[];
  sum: number;
  count: number;
}

/** A worker's counts and latencies as plain data, to cross threads and be summed. */
export interface RequestTotals {
  counts: Array<[method: string, route: string, status: number, count: number]>;
  latencies: Array<[method: string, route: string, buckets: number[], sum: number, count: number]>;
}

/** The keys of a count series and a latency series: the same for a thread's own and for summed totals. */
const countKeyOf = (method: string, route: string, status: number): string => `${method} ${status} ${route}`;
const latencyKeyOf = (method: string, route: string): string => `${method} ${route}`;

export class RequestMetrics {
  private readonly counts = new Map<string, { method: string; route: string; status: number; count: number }>();
  private readonly latencies = new Map<string, LatencySeries>();

  observe(method: string, route: string, status: number, seconds: number): void {
    const countKey = countKeyOf(method, route, status);
    const counted = this.counts.get(countKey);
    if (counted) counted.count += 1;
    else if (this.counts.size < SERIES_MAX) this.counts.set(countKey, { method, route, status, count: 1 });

    const latencyKey = latencyKeyOf(method, route);
    let series = this.latencies.get(latencyKey);
    if (!series) {
      if (this.latencies.size >= SERIES_MAX) return;
      series = { method, route, buckets: new Array<number>(LATENCY_BUCKETS_SECONDS.length).fill(0), sum: 0, count: 0 };
      this.latencies.set(latencyKey, series);
    }
    series.sum += seconds;
    series.count += 1;
    for (let index = 0; index < LATENCY_BUCKETS_SECONDS.length; index += 1) {
      if (seconds <= (LATENCY_BUCKETS_SECONDS[index] as number)) {
        series.buckets[index] = (series.buckets[index] as number) + 1;
        break;
      }
    }
  }

  /** Totals to render instead of this thread's own, until the next call (undefined: its own again). */
  private summed: RequestTotals[] | undefined;

  /** Everything observed here so far, as plain data. */
  totals(): RequestTotals {
    return {
      counts: [...this.counts.values()].map((series) => [series.method, series.route, series.status, series.count]),
      latencies: [...this.latencies.values()].map((series) => [series.method, series.route, [...series.buckets], series.sum, series.count]),
    };
  }

  /** Makes the next renderings show the sum of `totals` (this thread's own among them, as the caller took them). */
  showSummed(totals: RequestTotals[] | undefined): void {
    this.summed = totals;
  }

  /** The request counter, in the form prom-client's registry renders. */
  counterMetric(name: string, help: string): RegistryMetric {
    return this.metric(name, help, 'counter', () => [...this.countSeries().values()].map((series) => ({
      value: series.count,
      labels: { method: series.method, route: series.route, status: series.status },
    })));
  }

  /** The latency histogram (cumulative buckets, sum, count), in the form prom-client renders. */
  histogramMetric(name: string, help: string): RegistryMetric {
    return this.metric(name, help, 'histogram', () => {
      const values: MetricValue[] = [];
      for (const series of this.latencySeries().values()) {
        const labels = { method: series.method, route: series.route };
        let cumulative = 0;
        for (const [index, bound] of LATENCY_BUCKETS_SECONDS.entries()) {
          cumulative += series.buckets[index] as number;
          values.push({ value: cumulative, labels: { ...labels, le: bound }, metricName: `${name}_bucket` });
        }
        values.push({ value: series.count, labels: { ...labels, le: '+Inf' }, metricName: `${name}_bucket` });
        values.push({ value: series.sum, labels, metricName: `${name}_sum` });
        values.push({ value: series.count, labels, metricName: `${name}_count` });
      }
      return values;
    });
  }

  private countSeries(): Map<string, { method: string; route: string; status: number; count: number }> {
    if (!this.summed) return this.counts;
    const summed = new Map<string, { method: string; route: string; status: number; count: number }>();
    for (const totals of this.summed) {
      for (const [method, route, status, count] of totals.counts) {
        const key = countKeyOf(method, route, status);
        const series = summed.get(key);
        if (series) series.count += count;
        else summed.set(key, { method, route, status, count });
      }
    }
    return summed;
  }

  private latencySeries(): Map<string, LatencySeries> {
    if (!this.summed) return this.latencies;
    const summed = new Map<string, LatencySeries>();
    for (const totals of this.summed) {
      for (const [method, route, buckets, sum, count] of totals.latencies) {
        const key = latencyKeyOf(method, route);
        const series = summed.get(key);
        if (!series) {
          summed.set(key, { method, route, buckets: [...buckets], sum, count });
          continue;
        }
        series.sum += sum;
        series.count += count;
        for (let index = 0; index < series.buckets.length; index += 1) series.buckets[index] = (series.buckets[index] as number) + (buckets[index] ?? 0);
      }
    }
    return summed;
  }

  private metric(name: string, help: string, type: 'counter' | 'histogram', values: () => MetricValue[]): RegistryMetric {
    return {
      name,
      help,
      type,
      aggregator: 'sum',
      get: () => ({ name, help, type, aggregator: 'sum', values: values() }),
      reset: () => {
        this.counts.clear();
        this.latencies.clear();
      },
    };
  }
}
