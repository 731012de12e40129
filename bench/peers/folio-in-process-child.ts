// Folio in-process for the peers bench, in a process of its own (the engine bench's approach): the real
// LedgerRuntime (LMDB log with group commit, lookup store; no query index, as the Postgres peer has
// none) on a temp dir. It funds the balance set, then runs one workload with a closed loop of clients:
// each decides a transfer (or an atomic bulk of `batch` transfers, one log record), waits until it is
// durable, and repeats. Prints one JSON line.
//
//   node dist/bench/peers/folio-in-process-child.js <balances> <batch> <clients> <warmupSeconds> <seconds> <dataDir>

import { LedgerRuntime } from '../../app/ledger-runtime.js';
import { transferCommand, type CreateTransactionCommand } from '../../engine/commands.js';
import { runClosedLoop, type ClosedLoopResult } from './closed-loop.js';
import { balanceNames, CURRENCY, FUNDING, FUNDING_BATCH, pairSource, WORLD } from './peer-workloads.js';

export interface InProcessResult extends ClosedLoopResult {
  balances: number;
  batch: number;
  transfersPerSecond: number;
  /** Log records written while measuring, and events per record. */
  commits: number;
  eventsPerCommit: number;
}

function transfer(source: string, destination: string, amount: bigint, overdraft: boolean): CreateTransactionCommand {
  return transferCommand({ description: 'test', source, destination, precise_amount: amount, currency: CURRENCY, allow_overdraft: overdraft, skip_queue: true });
}

function decideBulk(runtime: LedgerRuntime, transactions: CreateTransactionCommand[]): number {
  const outcome = runtime.engine.run({ op: 'transaction.bulk', transactions, atomic: true, inflight: false, skip_queue: true });
  if (!outcome.ok) throw new Error(`bulk refused: ${outcome.rejection.code} ${outcome.rejection.message}`);
  return outcome.seq;
}

async function fund(runtime: LedgerRuntime, names: string[]): Promise<void> {
  for (let start = 0; start < names.length; start += FUNDING_BATCH) {
    const chunk = names.slice(start, start + FUNDING_BATCH).map((name) => transfer(WORLD, name, FUNDING, true));
    await runtime.durable(decideBulk(runtime, chunk));
  }
}

async function main(): Promise<void> {
  const [balancesText, batchText, clientsText, warmupText, secondsText, dataDir] = process.argv.slice(2);
  const [balances, batch, clients, warmupSeconds, seconds] = [balancesText, batchText, clientsText, warmupText, secondsText].map(Number) as number[];
  if (!dataDir || !(balances! > 1 && batch! >= 1 && clients! >= 1 && warmupSeconds! >= 0 && seconds! > 0)) {
    throw new Error('usage: folio-in-process-child <balances> <batch> <clients> <warmupSeconds> <seconds> <dataDir>');
  }
  const runtime = await LedgerRuntime.open({ dataDir, index: false });
  await fund(runtime, balanceNames(balances!));

  let counting = false;
  let commits = 0;
  let events = 0;
  runtime.onCommit((stats) => {
    if (!counting) return;
    commits += 1;
    events += stats.events;
  });
  setTimeout(() => void (counting = true), warmupSeconds! * 1000).unref();
  const pairs = Array.from({ length: clients! }, (_, client) => pairSource(balances!, 1 + client));
  const loop = await runClosedLoop({
    clients: clients!, warmupSeconds: warmupSeconds!, seconds: seconds!,
    async operation(client) {
      const next = pairs[client]!;
      if (batch === 1) {
        const { source, destination } = next();
        const outcome = runtime.engine.run({ op: 'transaction.create', ...transfer(source, destination, 1n, false) });
        if (!outcome.ok) throw new Error(`transfer refused: ${outcome.rejection.code} ${outcome.rejection.message}`);
        await runtime.durable(outcome.seq);
        return;
      }
      const items = Array.from({ length: batch! }, () => {
        const { source, destination } = next();
        return transfer(source, destination, 1n, false);
      });
      await runtime.durable(decideBulk(runtime, items));
    },
  });
  counting = false;
  await runtime.close();
  const result: InProcessResult = {
    ...loop, balances: balances!, batch: batch!, transfersPerSecond: (loop.operations * batch!) / seconds!,
    commits, eventsPerCommit: commits === 0 ? 0 : events / commits,
  };
  process.stdout.write(JSON.stringify(result) + '\n');
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`folio-in-process-child: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
