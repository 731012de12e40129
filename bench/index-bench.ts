// Bench of the query side, runnable on its own: `npm run build && node dist/bench/index-bench.js`.
//
//   1. Seeds a log with N/10 transactions (one event each, as the HTTP path writes them) between a few
//      thousand balances, with descriptions and metadata to search, one a millisecond (SEED_INTERVAL_MS);
//      one busy balance takes part in every tenth transaction (100,000 changes at N = 1,000,000).
//   2. Builds the index of that log, and copies the log and its index aside: the small size.
//   3. Seeds the rest, up to N transactions (default 1,000,000).
//   4. Projection: builds the index from the whole log in the projector's thread, as a rebuild does;
//      rows/s and events/s with FTS, and the main thread's event-loop delay meanwhile. The balance
//      history (index/history-store.ts) is followed to the log's end before the queries, and its rate
//      printed.
//   5. Filters, searches, balance as of a time and history pages on both indexes, through the same code
//      the routes call, each shape's runs interleaved between the two sizes (measureQueries says why):
//      p50/p99 per query shape and size, and how each p99 grew; one fold of the busy balance at the
//      middle of each log, as `from_source=true` answers it. 1,000 runs a shape: a p99 of 400 runs is
//      the fifth-worst, which a single pause of the host decides for the fast shapes.
//   6. Lag under HTTP load: autocannon posts transfers to a live server while the index tails the log;
//      the lag in seconds is sampled throughout (p50/p99/max, and the series over time).
// Settings: INDEX_BENCH_REUSE=1 (with INDEX_BENCH_DIR: query the indexes an earlier run built and kept),
// INDEX_BENCH_TRANSACTIONS, INDEX_BENCH_BALANCES, INDEX_BENCH_QUERIES, INDEX_BENCH_LOAD_SECONDS,
// INDEX_BENCH_CONNECTIONS, INDEX_BENCH_DIR (kept when given; a temp dir is removed otherwise).

import { mulberry32 } from './mulberry32.js';
import { INDEX_PROJECTOR_WORKER } from '../runtime/index-workers.js';
import { BalanceFolds } from '../runtime/balance-folds.js';
import autocannon from 'autocannon';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pino from 'pino';
import { LedgerRuntime } from '../runtime/ledger-runtime.js';
import type { CreateTransactionCommand } from '../engine/commands.js';
import { BODY_BYTES_IN_FLIGHT_MAX_DEFAULT } from '../http/server/body-bytes-in-flight.js';
import { DEFAULT_CONNECTION_LIMITS } from '../http/server/server-limits.js';
import { startLedgerHttp } from '../server/ledger-http.js';
import type { FilterRequest } from '../index/filter-compiler.js';
import { indexFileIn, removeIndexFiles } from '../index/index-store.js';
import type { SearchRequest } from '../index/search-compiler.js';
import { ProjectorThread } from '../index/projector-thread.js';
import { SecondaryIndex } from '../index/secondary-index.js';
import { LmdbLog } from '../wal/lmdb-log.js';
import type { LoggedEvent } from '../engine/events.js';
import { HistoryFollower } from '../index/history-follower.js';
import { HistoryProgress } from '../index/history-progress.js';
import { BalanceHistoryReader } from '../index/history-reader.js';
import { historyDirIn, HistoryStore } from '../index/history-store.js';
import { percentileOfSorted } from './stats.js';

const TRANSACTIONS = Number(process.env.INDEX_BENCH_TRANSACTIONS ?? 1_000_000);
const BALANCES = Number(process.env.INDEX_BENCH_BALANCES ?? 5_000);
const QUERIES = Number(process.env.INDEX_BENCH_QUERIES ?? 1_000);
const LOAD_SECONDS = Number(process.env.INDEX_BENCH_LOAD_SECONDS ?? 20);
const CONNECTIONS = Number(process.env.INDEX_BENCH_CONNECTIONS ?? 32);
const WORDS = ['rent', 'salary', 'coffee', 'invoice', 'refund', 'payout', 'fee', 'transfer', 'grocery', 'travel', 'utility', 'bonus'];
const CHANNELS = ['web', 'mobile', 'api', 'branch', 'partner'];

function summary(samples: number[]): { p50: number; p99: number; max: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const round = (value: number): number => Number(value.toFixed(2));
  return { p50: round(percentileOfSorted(sorted, 50)), p99: round(percentileOfSorted(sorted, 99)), max: round(sorted[sorted.length - 1] ?? Number.NaN) };
}

/** A seeded generator, so runs compare like with like. */
const random = mulberry32;

/** The balance in every tenth transaction (alternately sending and receiving): the busy history. */
const BUSY = '@busy';
const BUSY_EVERY = 10;

function transfer(next: () => number, index: number, names: string[]): CreateTransactionCommand {
  const pick = (): string => names[Math.floor(next() * names.length)] as string;
  let source = pick();
  let destination = pick();
  while (destination === source) destination = pick();
  if (index % BUSY_EVERY === 0) {
    if (index % (2 * BUSY_EVERY) === 0) source = BUSY;
    else destination = BUSY;
  }
  return {
    source, destination, precise_amount: BigInt(1 + Math.floor(next() * 1_000_000)), precision: 100n, currency: 'USD',
    reference: `inv-${index}`, description: `${WORDS[index % WORDS.length]} ${WORDS[(index * 7) % WORDS.length]} order ${index}`,
    meta_data: { order_id: `ord-${index}`, channel: CHANNELS[index % CHANNELS.length] }, allow_overdraft: true, skip_queue: true,
    inflight: false, inflight_expiry_date: 0, inflight_commit_date: 0, scheduled_for: 0, atomic: false,
  };
}

interface Seeded {
  /** Transactions in the log: ids and references are drawn among those that exist. */
  transactions: number;
  balanceIds: string[];
  busyId: string;
  firstAt: number;
  lastAt: number;
}

/**
 * When seeded transaction `index` happens: one a millisecond from a fixed start, a busy ledger's steady
 * thousand a second (a million span 17 minutes). The log's times are then the same in every run and
 * have no holes: on the wall clock, the seeding's own pause between the two sizes (the small index
 * built and copied) left a third of the million's 15 seconds empty, and a time window falling there
 * held a few hundred transactions where its neighbours held a hundred thousand.
 */
const SEED_START_MS = Date.UTC(2026, 0, 1);
const SEED_INTERVAL_MS = 1;

/** Seeds transactions [from, to); the generator carries on across calls, so two calls make the log one call would. */
async function seed(dataDir: string, next: () => number, from: number, to: number): Promise<Seeded> {
  const clock = { ms: SEED_START_MS + from * SEED_INTERVAL_MS, now(): number { return this.ms; } };
  const runtime = await LedgerRuntime.open({ dataDir, index: false, clock });
  const { engine } = runtime;
  const names = Array.from({ length: BALANCES }, (_, index) => `@customer-${index}`);
  const started = performance.now();
  for (let index = from; index < to; index += 1) {
    clock.ms = SEED_START_MS + index * SEED_INTERVAL_MS;
    const outcome = engine.run({ op: 'transaction.create', ...transfer(next, index, names) });
    if (!outcome.ok) throw new Error(`seed transaction ${index} refused: ${outcome.rejection.message}`);
    if (index % 10_000 === 9_999) {
      await runtime.durable(outcome.seq);
      if (index % 200_000 === 199_999) process.stdout.write(`  seeded ${index + 1} transactions\n`);
    }
  }
  await runtime.durable(runtime.log.appendedSeq);
  process.stdout.write(`  seeded ${to} transactions, ${engine.state.balances.size} balances (${to - from} in ${((performance.now() - started) / 1000).toFixed(1)} s)\n`);
  await runtime.close();
  return reuse(dataDir, to);
}

/** The event loop's delay with nothing to do: what the machine's own load adds to every figure. */
async function idleEventLoopDelay(): Promise<{ p99: number; max: number }> {
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  delay.disable();
  return { p99: Number((delay.percentile(99) / 1e6).toFixed(1)), max: Number((delay.max / 1e6).toFixed(1)) };
}

/** What the queries need from a seeded data directory of `transactions` transactions. */
async function reuse(dataDir: string, transactions: number): Promise<Seeded> {
  const runtime = await LedgerRuntime.open({ dataDir, index: false });
  let firstAt = 0;
  for (const { event } of runtime.log.read(1)) {
    if (event.transactions?.length) {
      firstAt = event.at;
      break;
    }
  }
  const busyId = runtime.engine.state.balanceByIndicator(BUSY, 'USD')?.balance_id;
  if (!busyId) throw new Error('the seeded log has no busy balance');
  const result = { transactions, balanceIds: [...runtime.engine.state.balances.keys()], busyId, firstAt, lastAt: runtime.engine.state.lastEventAt };
  await runtime.close();
  return result;
}

async function measureProjection(dataDir: string): Promise<Record<string, number>> {
  const idle = await idleEventLoopDelay();
  const runtime = await LedgerRuntime.open({ dataDir, index: false });
  const file = indexFileIn(dataDir);
  const delay = monitorEventLoopDelay({ resolution: 5 });
  let rows = 0;
  let events = 0;
  let batches = 0;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  delay.enable();
  // The production path of a rebuild: the projector in its own thread, building a fresh file.
  const thread = await ProjectorThread.start({
    worker: INDEX_PROJECTOR_WORKER,
    walDir: LmdbLog.directoryIn(dataDir), indexFile: `${file}.rebuild`, build: true, durableSeq: () => runtime.log.durableSeq,
  });
  thread.onBatch((report) => {
    rows += report.rows;
    events += report.events;
    batches += 1;
  });
  await thread.finish(runtime.log.durableSeq);
  const built = `${file}.rebuild`;
  delay.disable();
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  removeIndexFiles(file);
  fs.renameSync(built, file);
  await runtime.close();
  return {
    seconds: Number(seconds.toFixed(1)),
    rows,
    events,
    batches,
    rows_per_second: Math.round(rows / seconds),
    events_per_second: Math.round(events / seconds),
    process_cpu_seconds: Number(((cpu.user + cpu.system) / 1e6).toFixed(1)),
    idle_event_loop_delay_p99_ms: idle.p99,
    idle_event_loop_delay_max_ms: idle.max,
    event_loop_delay_p99_ms: Number((delay.percentile(99) / 1e6).toFixed(1)),
    event_loop_delay_max_ms: Number((delay.max / 1e6).toFixed(1)),
    index_file_mb: Math.round(fs.statSync(file).size / 1e6),
  };
}

/** One seeded log and its index, open for queries, with its own generator of query arguments. */
interface QueryTarget {
  seeded: Seeded;
  runtime: LedgerRuntime;
  index: SecondaryIndex;
  history: BalanceHistoryReader;
  seq: number;
  next: () => number;
}

async function openTarget(dataDir: string, seeded: Seeded): Promise<QueryTarget> {
  const runtime = await LedgerRuntime.open({ dataDir, index: false });
  const index = await SecondaryIndex.open({ dataDir, walDir: LmdbLog.directoryIn(dataDir), source: runtime.log, projectorWorker: INDEX_PROJECTOR_WORKER });
  await index.waitFor(runtime.log.durableSeq, 600_000);
  const built = await followHistory(dataDir, runtime.log);
  process.stdout.write(`  balance history of ${dataDir}: ${built.changes} balance changes followed in ${built.seconds} s (${built.changes_per_second} a second, in the bench's own thread)\n`);
  const progress = new HistoryProgress();
  progress.published(runtime.log.durableSeq);
  const history = new BalanceHistoryReader(historyDirIn(dataDir), progress);
  return { seeded, runtime, index, history, seq: runtime.log.durableSeq, next: random(7) };
}

async function closeTarget(target: QueryTarget): Promise<void> {
  await target.history.close();
  await target.index.close();
  await target.runtime.close();
}

/**
 * Brings the balance history of a data directory up to the end of its log, in this thread, as its
 * follower does in its own (runtime/history-worker.ts): the changes per second it writes.
 */
async function followHistory(dataDir: string, log: LmdbLog): Promise<{ seconds: number; changes: number; changes_per_second: number }> {
  const store = HistoryStore.open(historyDirIn(dataDir));
  const follower = new HistoryFollower(store);
  const started = performance.now();
  let changes = 0;
  try {
    for (;;) {
      const from = follower.checkpoint.seq + 1;
      if (from > log.durableSeq) break;
      const batch: LoggedEvent[] = [];
      for (const logged of log.read(from, log.durableSeq)) {
        batch.push(logged);
        changes += (logged.event.postings?.length ?? 0) + (logged.event.balances?.length ?? 0);
        if (batch.length >= 5_000) break;
      }
      await follower.apply(batch);
    }
  } finally {
    await store.close();
  }
  const seconds = (performance.now() - started) / 1000;
  return { seconds: Number(seconds.toFixed(1)), changes, changes_per_second: Math.round(changes / Math.max(seconds, 0.001)) };
}

/** A query shape: one run of it on a target. */
interface Shape {
  label: string;
  run: (target: QueryTarget) => Promise<void>;
}

const SHAPES: Shape[] = (() => {
  const anyBalance = ({ seeded, next }: QueryTarget): string => seeded.balanceIds[1 + Math.floor(next() * (seeded.balanceIds.length - 1))] as string;
  const span = ({ seeded }: QueryTarget): number => Math.max(1, seeded.lastAt - seeded.firstAt);
  const filter = async (target: QueryTarget, request: Partial<FilterRequest>): Promise<void> => {
    const answer = await target.index.filter('transactions', { filters: [], limit: 20, offset: 0, ...request }, target.seq);
    if (!answer.ok) throw new Error(answer.rejection.message);
  };
  const search = async (target: QueryTarget, request: Partial<SearchRequest>): Promise<void> => {
    const answer = await target.index.search('transactions', { q: '*', filter_by: '', sort_by: '', page: 1, per_page: 10, ...request }, target.seq);
    if (!answer.ok) throw new Error(answer.rejection.message);
  };
  return [
    { label: 'filter source eq <balance>, limit 20', run: (target) => filter(target, { filters: [{ field: 'source', operator: 'eq', value: anyBalance(target) }] }) },
    { label: 'filter balance_id eq <balance> (either side), limit 20', run: (target) => filter(target, { filters: [{ field: 'balance_id', operator: 'eq', value: anyBalance(target) }] }) },
    { label: 'filter reference eq, limit 20', run: (target) => filter(target, { filters: [{ field: 'reference', operator: 'eq', value: `inv-${Math.floor(target.next() * target.seeded.transactions)}` }] }) },
    { label: 'filter status eq APPLIED, sort created_at desc, limit 20', run: (target) => filter(target, { filters: [{ field: 'status', operator: 'eq', value: 'APPLIED' }] }) },
    {
      label: 'filter precise_amount between, sort precise_amount, limit 20',
      run: (target) => filter(target, { filters: [{ field: 'precise_amount', operator: 'between', values: [500_000, 500_500] }], sort_by: 'precise_amount', sort_order: 'asc' }),
    },
    {
      label: 'filter created_at between (1% window), limit 20, offset 100',
      run: (target) => {
        const from = target.seeded.firstAt + Math.floor(target.next() * span(target) * 0.99);
        return filter(target, { filters: [{ field: 'created_at', operator: 'between', values: [new Date(from).toISOString(), new Date(from + span(target) / 100).toISOString()] }], offset: 100 });
      },
    },
    { label: 'filter meta_data.channel eq (not indexed), limit 20', run: (target) => filter(target, { filters: [{ field: 'meta_data.channel', operator: 'eq', value: 'api' }] }) },
    { label: 'filter source eq <balance> with include_count', run: (target) => filter(target, { filters: [{ field: 'source', operator: 'eq', value: anyBalance(target) }], include_count: true }) },
    { label: 'search q=<common word>, per_page 10', run: (target) => search(target, { q: WORDS[Math.floor(target.next() * WORDS.length)] as string }) },
    { label: 'search q=<unique order id>', run: (target) => search(target, { q: `ord-${Math.floor(target.next() * target.seeded.transactions)}` }) },
    {
      // A hundredth of the log's seconds, whole seconds as filter_by takes them (the range is inclusive).
      label: 'search q=* filter_by created_at range (1% window), sort precise_amount',
      run: (target) => {
        const from = Math.floor((target.seeded.firstAt + target.next() * span(target) * 0.99) / 1000);
        const seconds = Math.max(1, Math.round(span(target) / 100_000));
        return search(target, { filter_by: `created_at:[${from}..${from + seconds - 1}]`, sort_by: 'precise_amount:desc' });
      },
    },
    { label: 'search q=<word> filter_by source:=<balance>', run: (target) => search(target, { q: 'coffee', filter_by: `source:=${anyBalance(target)}` }) },
    {
      label: 'balance as of <any time>, busy balance',
      run: async (target) => {
        const { seeded } = target;
        const answer = await target.history.balanceAt(seeded.busyId, seeded.firstAt - 1_000 + Math.floor(target.next() * (span(target) + 2_000)), target.seq);
        if (!answer.ok) throw new Error(answer.rejection.message);
      },
    },
    {
      label: 'history page of 100 changes from <any time>, busy balance',
      run: async (target) => {
        const from = target.seeded.firstAt + Math.floor(target.next() * span(target) * 0.99);
        const answer = await target.history.balanceChanges(target.seeded.busyId, { from_ms: from, to_ms: Number.MAX_SAFE_INTEGER, limit: 100 }, target.seq);
        if (!answer.ok || !answer.value.page || answer.value.page.changes.length === 0) throw new Error('no history page');
      },
    },
  ];
})();

/**
 * Every shape on every target (the small log's index and the full one's), its runs interleaved: a run
 * on one, then on the next. Whatever the machine does meanwhile (a pause of the host, another
 * process) then falls on both sizes alike, and a p99's growth is the index's, not the minute's: run one
 * size after the other, minutes apart, and the same code measured a p99 of 3.8 ms at 100,000
 * transactions in one run and 0.4 ms in the next. Returns each target's figures, in target order.
 */
async function measureQueries(targets: QueryTarget[]): Promise<Array<Array<Record<string, unknown>>>> {
  const results: Array<Array<Record<string, unknown>>> = targets.map(() => []);
  for (const shape of SHAPES) {
    const samples: number[][] = targets.map(() => []);
    for (let index = 0; index < Math.min(20, QUERIES); index += 1) for (const target of targets) await shape.run(target); // warm the page cache
    for (let index = 0; index < QUERIES; index += 1) {
      for (const [position, target] of targets.entries()) {
        const started = performance.now();
        await shape.run(target);
        samples[position]?.push(performance.now() - started);
      }
    }
    const figures = samples.map((taken) => ({ query: shape.label, runs: QUERIES, ...summary(taken) }));
    figures.forEach((figure, position) => results[position]?.push(figure));
    process.stdout.write(`  ${shape.label.padEnd(58)} ${figures.map((figure) => `p50 ${String(figure.p50).padStart(6)} p99 ${String(figure.p99).padStart(6)} ms`).join(' | ')}\n`);
  }
  for (const [position, target] of targets.entries()) results[position]?.push(await foldOfBusyBalance(target));
  return results;
}

/** One fold of the busy balance at the middle of the log, as `from_source=true` answers it, checked against the index. */
async function foldOfBusyBalance({ seeded, runtime, history, seq }: QueryTarget): Promise<Record<string, unknown>> {
  const started = performance.now();
  const middle = seeded.firstAt + Math.floor((seeded.lastAt - seeded.firstAt) / 2);
  const [folded, indexed] = [await new BalanceFolds(runtime.log).at(seeded.busyId, middle, seq), await history.balanceAt(seeded.busyId, middle, seq)];
  const ms = Math.round(performance.now() - started);
  const same = folded.ok && indexed.ok && JSON.stringify(folded.value.balance, exact) === JSON.stringify(indexed.value.balance, exact);
  if (!same) throw new Error('the balance history and the fold disagree on the busy balance at the middle of the log');
  process.stdout.write(`  busy balance at the middle of ${seeded.transactions} transactions, folded (from_source=true): ${ms} ms, the same as the balance history's\n`);
  return { query: 'busy balance at the middle of the log, folded (from_source=true)', runs: 1, ms };
}

function exact(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}

/** Each shape's p99 at the full size against the small one. */
function growth(small: Array<Record<string, unknown>>, full: Array<Record<string, unknown>>): Array<{ query: string; ratio: number }> {
  return full.filter((entry) => entry.p99 !== undefined).map((entry) => {
    const before = small.find((candidate) => candidate.query === entry.query);
    return { query: entry.query as string, ratio: Number(((entry.p99 as number) / ((before?.p99 as number) ?? Number.NaN)).toFixed(2)) };
  });
}

async function measureLagUnderLoad(): Promise<Record<string, unknown>> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-index-lag-'));
  try {
    const runtime = await LedgerRuntime.open({ dataDir });
    const logger = pino({ level: 'silent' });
    // HTTP on this thread, as folio serve assembles it (server/ledger-http.ts): the index's lag is read here.
    const http = await startLedgerHttp({
      host: '127.0.0.1', port: 0, workers: 0, limits: DEFAULT_CONNECTION_LIMITS, bodyBytesInFlightMax: BODY_BYTES_IN_FLIGHT_MAX_DEFAULT,
      version: 'bench', logger, logLevel: 'silent', secretKey: '', hookTargets: { allowPrivateNetworks: false }, dataDir,
      snapshots: false, index: true, replication: false, onWorkersFailed: () => undefined,
    }, { runtime });
    const url = `http://127.0.0.1:${http.address.port}`;
    const query = runtime.query as SecondaryIndex;
    const lags: number[] = [];
    // The lag over time as well, [seconds into the load, lag in ms], for the report's chart.
    const series: Array<[number, number]> = [];
    const loadStarted = performance.now();
    const sampler = setInterval(() => {
      const lag = query.lagSeconds();
      lags.push(lag);
      series.push([Number(((performance.now() - loadStarted) / 1000).toFixed(2)), Number((lag * 1000).toFixed(1))]);
    }, 50);
    let counter = 0;
    const result = await autocannon({
      url: `${url}/transactions`,
      method: 'POST',
      connections: CONNECTIONS,
      duration: LOAD_SECONDS,
      headers: { 'content-type': 'application/json' },
      requests: [{
        setupRequest: (request) => {
          counter += 1;
          return {
            ...request,
            body: JSON.stringify({
              precise_amount: 100 + (counter % 1000), currency: 'USD', source: `@load-${counter % 500}`, destination: `@load-${(counter + 1) % 500}`,
              allow_overdraft: true, skip_queue: true, description: `${WORDS[counter % WORDS.length]} load ${counter}`, meta_data: { channel: 'api' },
            }),
          };
        },
      }],
    });
    clearInterval(sampler);
    const caughtUp = await query.waitFor(runtime.log.durableSeq, 60_000);
    await http.close();
    await runtime.close();
    const lag = summary(lags.map((seconds) => seconds * 1000));
    const figures = {
      seconds: LOAD_SECONDS, connections: CONNECTIONS, requests_per_second: Math.round(result.requests.average),
      non_2xx: result.non2xx, lag_p50_ms: lag.p50, lag_p99_ms: lag.p99, lag_max_ms: lag.max, caught_up_after_load: caughtUp,
      lag_series: series,
    };
    process.stdout.write(`  ${figures.requests_per_second} transfers/s over HTTP; index lag p50 ${lag.p50} ms, p99 ${lag.p99} ms, max ${lag.max} ms\n`);
    return figures;
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const keep = process.env.INDEX_BENCH_DIR !== undefined;
  const dataDir = process.env.INDEX_BENCH_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'folio-index-bench-'));
  // The small log and its index, copied aside before the log grows: queried beside the full one.
  const smallDir = `${dataDir}.small`;
  fs.mkdirSync(dataDir, { recursive: true });
  process.stdout.write(`index bench: ${TRANSACTIONS} transactions, ${BALANCES} balances, data in ${dataDir}\n`);
  process.stdout.write(`machine: ${os.cpus().length} cpus, load average ${os.loadavg().map((value) => value.toFixed(1)).join(' ')}\n`);
  try {
    const reusing = keep && process.env.INDEX_BENCH_REUSE === '1' && fs.existsSync(indexFileIn(dataDir)) && fs.existsSync(indexFileIn(smallDir));
    const next = random(42);
    const small = Math.max(1, Math.floor(TRANSACTIONS / 10));
    if (!reusing) {
      process.stdout.write(`seed ${small} transactions\n`);
      await seed(dataDir, next, 0, small);
      process.stdout.write('index of the small log\n');
      await measureProjection(dataDir);
      fs.rmSync(smallDir, { recursive: true, force: true });
      fs.cpSync(dataDir, smallDir, { recursive: true });
    }
    process.stdout.write(reusing ? 'reusing the seeded logs and their indexes\n' : `seed up to ${TRANSACTIONS} transactions\n`);
    const seeded = reusing ? await reuse(dataDir, TRANSACTIONS) : await seed(dataDir, next, small, TRANSACTIONS);
    process.stdout.write('projection (full build with FTS)\n');
    const projection = reusing ? {} as Record<string, number> : await measureProjection(dataDir);
    if (!reusing) process.stdout.write(`  ${projection.rows} rows from ${projection.events} events in ${projection.seconds} s: ${projection.rows_per_second} rows/s, `
      + `${projection.events_per_second} events/s; `
      + `main event loop delay p99 ${projection.event_loop_delay_p99_ms} ms, max ${projection.event_loop_delay_max_ms} ms `
      + `(idle machine noise: p99 ${projection.idle_event_loop_delay_p99_ms} ms, max ${projection.idle_event_loop_delay_max_ms} ms); `
      + `${projection.process_cpu_seconds} CPU s; file ${projection.index_file_mb} MB\n`);
    process.stdout.write(`queries at ${small} | ${TRANSACTIONS} transactions, interleaved (${QUERIES} runs each)\n`);
    const targets = [await openTarget(smallDir, await reuse(smallDir, small)), await openTarget(dataDir, seeded)];
    const [querySmall = [], queries = []] = await measureQueries(targets);
    for (const target of targets) await closeTarget(target);
    const grown = growth(querySmall, queries);
    for (const entry of grown) process.stdout.write(`  p99 growth ${entry.query.padEnd(58)} x${entry.ratio}\n`);
    process.stdout.write(`lag under HTTP load (${LOAD_SECONDS} s, ${CONNECTIONS} connections)\n`);
    const lag = await measureLagUnderLoad();
    process.stdout.write(`machine after: load average ${os.loadavg().map((value) => value.toFixed(1)).join(' ')}\n`);
    process.stdout.write(JSON.stringify({ transactions: TRANSACTIONS, small_transactions: small, balances: BALANCES, projection, queries, queries_small: querySmall, growth: grown, lag }) + '\n');
  } finally {
    if (!keep) {
      fs.rmSync(dataDir, { recursive: true, force: true });
      fs.rmSync(smallDir, { recursive: true, force: true });
    }
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`index bench failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
