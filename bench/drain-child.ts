// The queued bench's in-process part: how fast the balance actors drain a backlog when nothing else
// competes for the process. Over HTTP the queue keeps pace with ingest (each connection waits for its
// 201), so the applied rate there is the ingest rate. Here the real LedgerRuntime is given a backlog of
// queued transfers in one go, then timed until its queue runner has applied all of them durably.
// Prints one JSON line.
//
//   node dist/bench/drain-child.js <transfers> <sources> <dataDir>

import { LedgerRuntime } from '../runtime/ledger-runtime.js';
import { transferCommand, type CreateTransactionCommand } from '../engine/commands.js';

export interface DrainResult {
  transfers: number;
  sources: number;
  /** Time to queue the backlog and make it durable (before the runner gets a turn). */
  enqueueSeconds: number;
  drainSeconds: number;
  appliedPerSecond: number;
}

function transfer(source: string, destination: string, amount: bigint, queued: boolean): CreateTransactionCommand {
  return transferCommand({
    source, destination, precise_amount: amount, precision: 100n, currency: 'USD', reference: '',
    description: 'drain bench', meta_data: {}, allow_overdraft: !queued, skip_queue: !queued,
  });
}

async function main(): Promise<void> {
  const [transfersText, sourcesText, dataDir] = process.argv.slice(2);
  const transfers = Number(transfersText);
  const sources = Number(sourcesText);
  if (!(transfers > 0) || !(sources > 0) || !dataDir) throw new Error('usage: drain-child <transfers> <sources> <dataDir>');
  const runtime = await LedgerRuntime.open({ dataDir });
  const { engine } = runtime;
  for (let index = 0; index < sources; index += 1) {
    const funded = engine.run({ op: 'transaction.create', ...transfer('@drain-world', `@drain-src-${index}`, 10n ** 15n, false) });
    if (!funded.ok) throw new Error(`funding refused: ${funded.rejection.code}`);
  }
  await runtime.durable(runtime.visibleSeq());

  // All of the backlog is decided in one synchronous stretch, so the runner cannot start before it is queued.
  const started = performance.now();
  let lastSeq = 0;
  for (let index = 0; index < transfers; index += 1) {
    const queued = engine.run({ op: 'transaction.create', ...transfer(`@drain-src-${index % sources}`, `@drain-dst-${index % sources}`, 1n, true) });
    if (!queued.ok) throw new Error(`queueing transfer ${index} refused: ${queued.rejection.code} ${queued.rejection.message}`);
    lastSeq = queued.seq;
  }
  const queuedAt = performance.now();
  await runtime.durable(lastSeq);
  const durableAt = performance.now();
  while (engine.view.queuedCount() > 0) await new Promise((resolve) => setTimeout(resolve, 1));
  await runtime.durable(runtime.visibleSeq());
  const drainedAt = performance.now();

  let applied = 0n;
  for (let index = 0; index < sources; index += 1) {
    applied += engine.state.balanceByIndicator(`@drain-dst-${index}`, 'USD')?.credit_balance ?? 0n;
  }
  if (applied !== BigInt(transfers)) throw new Error(`queued ${transfers} transfers, ${applied} applied`);
  await runtime.close();
  // Timed from the end of queueing: writing the backlog's last records is part of the drain's wait.
  const drainSeconds = (drainedAt - queuedAt) / 1000;
  const result: DrainResult = {
    transfers,
    sources,
    enqueueSeconds: (durableAt - started) / 1000,
    drainSeconds,
    appliedPerSecond: transfers / drainSeconds,
  };
  process.stdout.write(JSON.stringify(result) + '\n');
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`drain-child: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
