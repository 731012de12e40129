// Prometheus metrics through prom-client: request counts and latency by route, the WAL's group-commit
// sizes and flush times, and gauges read at scrape time (queued transactions, lookup backlog, log lag).

import client from 'prom-client';
import { RequestMetrics, type RequestTotals } from './request-metrics.js';

export interface GaugeSources {
  queuedTransactions(): number;
  lookupBacklog(): number;
  unflushedEvents(): number;
}

/** What the query index reports about itself. */
export interface IndexGaugeSources {
  readonly checkpointSeq: number;
  /** The log seq of an event the index keeps failing on, 0 when none. */
  readonly poisonSeq: number;
  lagEvents(): number;
  lagSeconds(): number;
}

export class Metrics {
  readonly registry = new client.Registry();
  private readonly requests = new RequestMetrics();
  private readonly walBatchEvents: client.Histogram;
  private readonly walFlushSeconds: client.Histogram;

  /** `refresh`: brings the gauge sources up to date before a scrape (a worker asks the engine's thread). */
  constructor(sources: GaugeSources, private readonly refresh?: () => Promise<void>) {
    client.collectDefaultMetrics({ register: this.registry, prefix: 'folio_' });
    this.registry.registerMetric(this.requests.counterMetric(
      'folio_http_requests_total', 'HTTP requests by method, route and status',
    ) as never);
    this.registry.registerMetric(this.requests.histogramMetric(
      'folio_http_request_duration_seconds', 'HTTP request latency by method and route',
    ) as never);
    this.walBatchEvents = new client.Histogram({
      name: 'folio_wal_batch_events', help: 'Events per WAL group commit', registers: [this.registry],
      buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000],
    });
    this.walFlushSeconds = new client.Histogram({
      name: 'folio_wal_flush_seconds', help: 'Time from sealing a WAL record to its durable commit',
      registers: [this.registry], buckets: [0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5],
    });
    new client.Gauge({
      name: 'folio_mailbox_depth', help: 'Transactions waiting in balance mailboxes', registers: [this.registry],
      collect() { this.set(sources.queuedTransactions()); },
    });
    new client.Gauge({
      name: 'folio_lookup_backlog', help: 'Transaction records not yet written to the lookup store',
      registers: [this.registry], collect() { this.set(sources.lookupBacklog()); },
    });
    new client.Gauge({
      name: 'folio_wal_unflushed_events', help: 'Events appended to the WAL and not yet durable',
      registers: [this.registry], collect() { this.set(sources.unflushedEvents()); },
    });
  }

  private indexWatched = false;

  /** Gauges of the query index: its checkpoint and how far it trails the durable log. */
  watchIndex(index: IndexGaugeSources): void {
    if (this.indexWatched) return;
    this.indexWatched = true;
    new client.Gauge({
      name: 'folio_index_lag_events', help: 'Durable log events not yet in the query index',
      registers: [this.registry], collect() { this.set(index.lagEvents()); },
    });
    new client.Gauge({
      name: 'folio_index_lag_seconds', help: 'How long the oldest durable event not yet in the query index has waited',
      registers: [this.registry], collect() { this.set(index.lagSeconds()); },
    });
    new client.Gauge({
      name: 'folio_index_checkpoint_seq', help: 'Last log seq whose effects are in the query index',
      registers: [this.registry], collect() { this.set(index.checkpointSeq); },
    });
    new client.Gauge({
      name: 'folio_index_poison_seq', help: 'Log seq of an event the query index keeps failing on (a poison event), 0 when none',
      registers: [this.registry], collect() { this.set(index.poisonSeq); },
    });
  }

  private connectionsWatched = false;

  /** Connections refused at the caps (http/server/connection-admission.ts): the process's count, whichever thread answers. */
  watchConnections(source: { refusals(): { per_address: number; connections_max: number } }): void {
    if (this.connectionsWatched) return;
    this.connectionsWatched = true;
    new client.Counter({
      name: 'folio_connections_refused_total',
      help: 'Connections refused as they were accepted: per_address over server.connections_per_address_max (answered 503), connections_max over server.connections_max (closed)',
      labelNames: ['reason'], registers: [this.registry],
      collect() {
        const refused = source.refusals();
        this.reset();
        this.inc({ reason: 'per_address' }, refused.per_address);
        this.inc({ reason: 'connections_max' }, refused.connections_max);
      },
    });
  }

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.requests.observe(method, route, status, seconds);
  }

  /** Everything this thread's requests were counted as so far. */
  requestTotals(): RequestTotals {
    return this.requests.totals();
  }

  /** The request series of the next scrapes are the sum of these (see RequestMetrics.showSummed). */
  showRequestsSummed(totals: RequestTotals[]): void {
    this.requests.showSummed(totals);
  }

  observeWalCommit(events: number, milliseconds: number): void {
    this.walBatchEvents.observe(events);
    this.walFlushSeconds.observe(milliseconds / 1000);
  }

  async text(): Promise<string> {
    await this.refresh?.();
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
