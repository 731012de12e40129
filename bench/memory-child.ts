// The memory bench's worker, run with --expose-gc: opens the real LedgerRuntime on the given directory,
// measures RSS after GC, then sends one transfer from an overdraft source to each of N distinct @names
// (so N balances are created through the engine, each holding an amount), waits until the log, the
// lookup store and the query index have caught up, collects garbage again and measures. Prints one
// JSON line.
//
// It then writes a snapshot, so that a second run on the same directory measures a server restarted
// from it: the balances then stay in the snapshot's bytes until touched (engine/balance-table.ts).
//
//   node --expose-gc dist/bench/memory-child.js <balances> <dataDir>
//   node --expose-gc dist/bench/memory-child.js restart <dataDir>

import fs from 'node:fs';
import { LedgerRuntime } from '../runtime/ledger-runtime.js';
import { transferCommand, type CreateTransactionCommand } from '../engine/commands.js';

export interface MemorySnapshot {
  rssBytes: number;
  rssAnonBytes: number;
  rssFileBytes: number;
  rssShmemBytes: number;
  heapUsedBytes: number;
  heapTotalBytes: number;
  externalBytes: number;
  arrayBuffersBytes: number;
  /** Resident file-backed bytes per mapped file (absolute paths, 1 MiB or more), largest first. */
  rssFileByMapping: Array<[string, number]>;
  /** Resident bytes of malloc's main arena (the `[heap]` mapping): what the main thread's malloc holds, in use or free. */
  rssMainArenaBytes: number;
}

export interface MemoryChildResult {
  balances: number;
  createSeconds: number;
  baseline: MemorySnapshot;
  loaded: MemorySnapshot;
}

export interface RestartResult {
  balances: number;
  startupMilliseconds: number;
  restarted: MemorySnapshot;
}

/** Snapshots on request only: the bench writes one after creating the balances. */
const SNAPSHOTS_ON_REQUEST = { every_events: 0, every_seconds: 0, keep: 1 };

/** How long the index may take to catch up with the log after the balances are created. */
const INDEX_CATCH_UP_MS = 10 * 60 * 1000;
/** Transfers decided per turn before waiting for the log; one WAL record holds at most 10,000 events. */
const CHUNK = 10_000;
/**
 * How many times the snapshot taken after the balances is asked for while it is still being written: on a busy host it
 * took longer than the runtime's 30 s wait, and the child died after measuring (2026-12-02).
 */
const SNAPSHOT_ATTEMPTS = 10;

function gc(): void {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (!collect) throw new Error('run with --expose-gc');
  collect();
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Collects garbage a few times with turns in between, so finalisers and freed pages settle, then reads. */
async function snapshot(): Promise<MemorySnapshot> {
  for (let pass = 0; pass < 3; pass += 1) {
    gc();
    await sleep(100);
  }
  const status = fs.readFileSync('/proc/self/status', 'utf8');
  const kib = (field: string): number => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    if (!match) throw new Error(`no ${field} in /proc/self/status`);
    return Number(match[1]) * 1024;
  };
  const usage = process.memoryUsage();
  return {
    rssBytes: kib('VmRSS'),
    rssAnonBytes: kib('RssAnon'),
    rssFileBytes: kib('RssFile'),
    rssShmemBytes: kib('RssShmem'),
    heapUsedBytes: usage.heapUsed,
    heapTotalBytes: usage.heapTotal,
    externalBytes: usage.external,
    arrayBuffersBytes: usage.arrayBuffers,
    rssFileByMapping: residentFileMappings(),
    rssMainArenaBytes: residentOf('[heap]'),
  };
}

/** Sums `Rss` per mapped file from /proc/self/smaps: which files the file-backed part of RSS comes from. */
function residentFileMappings(): Array<[string, number]> {
  const totals = new Map<string, number>();
  let file: string | undefined;
  for (const line of fs.readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ (\d+)\s*(.*)$/.exec(line);
    if (header) {
      file = header[1] !== '0' && header[2]?.startsWith('/') ? header[2] : undefined;
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss && file) totals.set(file, (totals.get(file) ?? 0) + Number(rss[1]) * 1024);
  }
  return [...totals].filter(([, bytes]) => bytes >= 1024 ** 2).sort((a, b) => b[1] - a[1]);
}

/** Sums `Rss` of the mappings named `name` in /proc/self/smaps. */
function residentOf(name: string): number {
  let inside = false;
  let total = 0;
  for (const line of fs.readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (header) {
      inside = header[1] === name;
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss && inside) total += Number(rss[1]) * 1024;
  }
  return total;
}

function transferTo(destination: string): CreateTransactionCommand {
  return transferCommand({
    source: '@memory-source', destination, precise_amount: 100n, precision: 100n, currency: 'USD', reference: '',
    description: '', meta_data: {}, allow_overdraft: true, skip_queue: true,
  });
}

async function restart(dataDir: string): Promise<void> {
  const runtime = await LedgerRuntime.open({ dataDir, snapshots: SNAPSHOTS_ON_REQUEST });
  const restarted = await snapshot();
  const result: RestartResult = { balances: runtime.engine.state.balances.size, startupMilliseconds: runtime.startup.milliseconds, restarted };
  await runtime.close();
  process.stdout.write(JSON.stringify(result) + '\n');
}

async function main(): Promise<void> {
  const [balancesText, dataDir] = process.argv.slice(2);
  if (balancesText === 'restart' && dataDir) return restart(dataDir);
  const balances = Number(balancesText);
  if (!Number.isInteger(balances) || balances < 1 || !dataDir) throw new Error('usage: memory-child <balances> <dataDir>');
  const runtime = await LedgerRuntime.open({ dataDir, snapshots: SNAPSHOTS_ON_REQUEST });
  const { engine } = runtime;
  // The source exists before the baseline, so the loaded state differs by the N destinations only.
  const first = engine.run({ op: 'transaction.create', ...transferTo('@memory-warmup') });
  if (!first.ok) throw new Error(`warm-up transfer refused: ${first.rejection.code}`);
  await runtime.durable(first.seq);
  const baseline = await snapshot();

  const started = performance.now();
  for (let from = 0; from < balances; from += CHUNK) {
    let lastSeq = 0;
    for (let index = from; index < Math.min(balances, from + CHUNK); index += 1) {
      const outcome = engine.run({ op: 'transaction.create', ...transferTo(`@memory-${index}`) });
      if (!outcome.ok) throw new Error(`transfer ${index} refused: ${outcome.rejection.code}`);
      lastSeq = outcome.seq;
    }
    await runtime.durable(lastSeq);
  }
  const createSeconds = (performance.now() - started) / 1000;
  // Records waiting for the lookup store, and log records waiting for the index and the balance history,
  // are memory a running server would have freed by now: measure the server at rest.
  while (runtime.store.backlog > 0) await sleep(50);
  if (runtime.query && !(await runtime.query.waitFor(runtime.log.durableSeq, INDEX_CATCH_UP_MS))) {
    throw new Error(`the index did not catch up within ${INDEX_CATCH_UP_MS} ms`);
  }
  if (runtime.history && !(await runtime.history.reached(runtime.log.durableSeq, INDEX_CATCH_UP_MS))) {
    throw new Error(`the balance history did not catch up within ${INDEX_CATCH_UP_MS} ms`);
  }
  const created = engine.state.balances.size;
  if (created < balances + 2) throw new Error(`expected at least ${balances + 2} balances, found ${created}`);
  const loaded = await snapshot();
  let taken = await runtime.snapshotNow();
  for (let attempt = 1; attempt < SNAPSHOT_ATTEMPTS && !taken.ok && taken.rejection.retry_after_seconds !== undefined; attempt += 1) {
    taken = await runtime.snapshotNow();
  }
  if (!taken.ok) throw new Error(`snapshot refused: ${taken.rejection.message}`);
  await runtime.close();
  const result: MemoryChildResult = { balances, createSeconds, baseline, loaded };
  process.stdout.write(JSON.stringify(result) + '\n');
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`memory-child: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
