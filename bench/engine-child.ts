// One mode of the engine bench, in a process of its own so neither mode inherits the other's heap or
// JIT state: `memory` runs LedgerEngine on the in-memory log and transaction store (no WAL at all);
// `lmdb` runs the real LedgerRuntime (LMDB log with group commit, lookup store) on the given directory,
// without the query index: the engine and its log alone. The index has a bench of its own, and the
// http bench measures the whole server, index included. Many concurrent in-process clients each loop:
// decide a transfer, wait until it is durable, repeat; so every commit of the log carries the transfers
// of all the clients waiting on it. Prints one JSON line.
//
//   node dist/bench/engine-child.js <memory|lmdb> <seconds> <clients> [dataDir]

import { LedgerRuntime } from '../runtime/ledger-runtime.js';
import { systemClock } from '../runtime/system-clock.js';
import { UuidV7Ids } from '../runtime/uuid-v7-ids.js';
import { transferCommand, type CreateTransactionCommand } from '../engine/commands.js';
import { LedgerEngine } from '../engine/ledger-engine.js';
import { MemoryTransactionStore } from '../lookups/memory-transaction-store.js';
import { MemoryLog } from '../wal/memory-log.js';
import { percentileOfSorted, Samples } from './stats.js';

export interface EngineModeResult {
  mode: 'memory' | 'lmdb';
  clients: number;
  measuredSeconds: number;
  warmupSeconds: number;
  transfers: number;
  transfersPerSecond: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  /** LMDB mode: records written (group commits) while measuring, and transfers per record. */
  commits?: number;
  eventsPerCommit?: number;
  /** Mean time from sealing a record to its durability. */
  commitMs?: number;
  rssBytesAtEnd: number;
}

interface Harness {
  engine: LedgerEngine;
  durable(seq: number): Promise<void>;
  close(): Promise<void>;
}

const SOURCES_MAX = 64;

function transfer(source: string, destination: string, amount: bigint, overdraft: boolean): CreateTransactionCommand {
  return transferCommand({
    source, destination, precise_amount: amount, precision: 100n, currency: 'USD', reference: '',
    description: 'engine bench', meta_data: {}, allow_overdraft: overdraft, skip_queue: true,
  });
}

async function main(): Promise<void> {
  const [mode, secondsText, clientsText, dataDir] = process.argv.slice(2);
  if (mode !== 'memory' && mode !== 'lmdb') throw new Error(`mode must be memory or lmdb, not ${mode}`);
  const seconds = Number(secondsText);
  const clients = Number(clientsText);
  if (!(seconds > 0) || !(clients > 0)) throw new Error('usage: engine-child <memory|lmdb> <seconds> <clients> [dataDir]');

  let harness: Harness;
  let commits = 0;
  let committedEvents = 0;
  let commitMilliseconds = 0;
  let counting = false;
  if (mode === 'memory') {
    const log = new MemoryLog();
    const engine = new LedgerEngine({ clock: systemClock, ids: new UuidV7Ids(systemClock), log, transactions: new MemoryTransactionStore() });
    engine.run({ op: 'genesis.ensure' });
    harness = { engine, durable: (seq) => log.durable(seq), close: async () => undefined };
  } else {
    if (!dataDir) throw new Error('lmdb mode needs a data directory');
    const runtime = await LedgerRuntime.open({ dataDir, index: false });
    runtime.onCommit((stats) => {
      if (!counting) return;
      commits += 1;
      committedEvents += stats.events;
      commitMilliseconds += stats.milliseconds;
    });
    harness = { engine: runtime.engine, durable: (seq) => runtime.durable(seq), close: () => runtime.close() };
  }
  const { engine } = harness;

  // Fund the sources once, so the measured transfers pass the funds check without overdraft.
  const sources = Math.min(clients, SOURCES_MAX);
  let lastSeq = 0;
  for (let index = 0; index < sources; index += 1) {
    const outcome = engine.run({ op: 'transaction.create', ...transfer('@bench-world', `@bench-src-${index}`, 10n ** 15n, true) });
    if (!outcome.ok) throw new Error(`funding failed: ${outcome.rejection.code}`);
    lastSeq = outcome.seq;
  }
  await harness.durable(lastSeq);

  const warmupSeconds = seconds >= 5 ? 2 : 0.5;
  const measureFrom = performance.now() + warmupSeconds * 1000;
  const measureTo = measureFrom + seconds * 1000;
  const latencies = new Samples();
  let latencySum = 0;
  setTimeout(() => {
    counting = true;
  }, warmupSeconds * 1000).unref();

  const client = async (index: number): Promise<void> => {
    const command = transfer(`@bench-src-${index % sources}`, `@bench-dst-${index % sources}`, 1n, false);
    for (;;) {
      const started = performance.now();
      if (started >= measureTo) return;
      const outcome = engine.run({ op: 'transaction.create', ...command });
      if (!outcome.ok) throw new Error(`transfer refused: ${outcome.rejection.code} ${outcome.rejection.message}`);
      await harness.durable(outcome.seq);
      const done = performance.now();
      if (done >= measureFrom && done <= measureTo) {
        latencies.push(done - started);
        latencySum += done - started;
      }
    }
  };
  await Promise.all(Array.from({ length: clients }, (_, index) => client(index)));
  counting = false;
  await harness.close();

  const sorted = latencies.sorted();
  const result: EngineModeResult = {
    mode,
    clients,
    measuredSeconds: seconds,
    warmupSeconds,
    transfers: sorted.length,
    transfersPerSecond: sorted.length / seconds,
    latencyMs: {
      p50: percentileOfSorted(sorted, 50),
      p90: percentileOfSorted(sorted, 90),
      p99: percentileOfSorted(sorted, 99),
      max: sorted[sorted.length - 1] ?? Number.NaN,
      mean: latencySum / sorted.length,
    },
    rssBytesAtEnd: process.memoryUsage().rss,
  };
  if (mode === 'lmdb') {
    result.commits = commits;
    result.eventsPerCommit = commits === 0 ? 0 : committedEvents / commits;
    result.commitMs = commits === 0 ? 0 : commitMilliseconds / commits;
  }
  process.stdout.write(JSON.stringify(result) + '\n');
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`engine-child: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
