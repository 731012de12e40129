// `npm run bench -- recon`: reconciliation of 10,000 statement lines against 1,000,000 ledger
// transactions (FOLIO_BENCH_QUICK: 1,000 against 100,000), two ways, each with its target of 2 s:
//   reference + amount        one_to_one, rule: reference equals, amount equals (no drift)
//   amount drift + date       one_to_one, rule: amount within 0.5 %, date within 10 minutes, no reference
//   reference contains        one_to_one, rule: reference contains alone; each line's reference is the
//                             ledger's inside longer text, in upper case (`PAYMENT INV-123 SETTLED`), so
//                             the run walks the folded references for every place one could start (no target yet)
// The ledger is seeded through the engine with a clock that moves 30 s per transaction (a year of
// business in a million), in log records of 100 events, then indexed as a rebuild does; the statement is lines of randomly chosen
// transactions, amounts nudged inside the drift and dates moved by up to 5 minutes for the second rule,
// plus 1 % lines that match nothing. Each run is a recorded background run through the runner, timed
// from the start to the durable completion (results and marks written); an instant dry run of the same
// lines is timed too. Memory: the process's resident size before, and its peak during the runs.

import fs from 'node:fs';
import { LedgerRuntime } from '../runtime/ledger-runtime.js';
import type { Clock } from '../engine/ports.js';
import type { ExternalRecord } from '../engine/reconciliation-records.js';
import { transferCommand } from '../engine/commands.js';
import { indexFileIn, removeIndexFiles } from '../index/index-store.js';
import { buildIndexFile } from '../index/secondary-index.js';
import { LmdbLog } from '../wal/lmdb-log.js';
import { mulberry32 } from './mulberry32.js';
import type { BenchResult, Figure } from './report.js';
import { makeTempDir, removeTempDir } from './resources.js';
import type { BenchSettings } from './settings.js';

export const RECON_RUN_MS_MAX = 2_000;
const STEP_MS = 30_000;
const START_MS = Date.UTC(2025, 0, 1);
const BALANCES = 1_000;
/**
 * Events per log record while seeding: what a server's group commit writes under steady load. Marking a
 * matched transaction does not read its record back (the lookups keep merged patches beside it), so the
 * record size no longer shapes the cost of marking: see docs/decisions-recon.md.
 */
const RECORD_EVENTS = 100;

interface Seeded {
  amounts: bigint[];
}

async function seed(dataDir: string, count: number, log: (line: string) => void): Promise<Seeded> {
  const clock = { at: START_MS, now(): number { return this.at; } };
  const runtime = await LedgerRuntime.open({ dataDir, index: false, clock });
  const next = mulberry32(7);
  const amounts: bigint[] = new Array(count);
  const started = performance.now();
  for (let index = 0; index < count; index += 1) {
    clock.at += STEP_MS;
    const amount = BigInt(1 + Math.floor(next() * 1_000_000));
    amounts[index] = amount;
    const source = `@customer-${Math.floor(next() * BALANCES)}`;
    const outcome = runtime.engine.run({ op: 'transaction.create', ...transferCommand({
      source, destination: '@merchant', precise_amount: amount, currency: 'USD', precision: 100n, reference: `inv-${index}`,
      description: `order ${index}`, allow_overdraft: true, skip_queue: true,
    }) });
    if (!outcome.ok) throw new Error(`seed transaction ${index}: ${outcome.rejection.message}`);
    if (index % RECORD_EVENTS === RECORD_EVENTS - 1) await runtime.durable(outcome.seq);
  }
  await runtime.durable(runtime.log.appendedSeq);
  await runtime.close();
  log(`recon: seeded ${count} transactions in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return { amounts };
}

async function buildIndex(dataDir: string, log: (line: string) => void): Promise<void> {
  const started = performance.now();
  const logStore = LmdbLog.open({ dir: LmdbLog.directoryIn(dataDir) });
  const file = indexFileIn(dataDir);
  try {
    await buildIndexFile(`${file}.bench`, logStore);
  } finally {
    await logStore.close();
  }
  removeIndexFiles(file);
  fs.renameSync(`${file}.bench`, file);
  log(`recon: indexed in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

/** Statement lines for `lines` random transactions; `drifted` nudges amounts and dates inside the rule. */
function statement(seeded: Seeded, lines: number, drifted: boolean, seedValue: number, embedded = false): ExternalRecord[] {
  const next = mulberry32(seedValue);
  const chosen = new Set<number>();
  while (chosen.size < lines) chosen.add(Math.floor(next() * seeded.amounts.length));
  const records: ExternalRecord[] = [];
  let line = 0;
  for (const index of chosen) {
    const amount = seeded.amounts[index] as bigint;
    const unmatched = line % 100 === 99;
    const nudge = drifted ? (amount * BigInt(Math.floor(next() * 5))) / 1_000n : 0n;
    records.push({
      id: `stmt-${line}`,
      amount: unmatched ? amount + 10_000_000n : amount + nudge,
      precision: 100n,
      currency: 'USD',
      reference: unmatched ? `unknown-${line}` : embedded ? `PAYMENT INV-${index} SETTLED` : `inv-${index}`,
      description: `statement line ${line}`,
      date: START_MS + (index + 1) * STEP_MS + (drifted ? Math.floor((next() - 0.5) * 600_000) : 0),
    });
    line += 1;
  }
  return records;
}

interface Timed {
  ms: number;
  matched: number;
  unmatched: number;
}

/**
 * The same lines twice: as an instant dry run (matching alone: nothing is written) and as a recorded
 * background run over an upload (reading the upload back from the index, matching, and writing the
 * results and a mark on every matched transaction, durably). Each starts once the index holds
 * everything before it, as it would on a server at rest.
 */
async function timedRun(runtime: LedgerRuntime, records: ExternalRecord[], ruleId: string): Promise<{ background: Timed; instantDry: Timed }> {
  const port = runtime.reconciliation;
  const index = runtime.query;
  if (!port || !index) throw new Error('reconciliation needs the index');
  const settle = async (): Promise<void> => {
    await runtime.durable(runtime.log.appendedSeq);
    if (!(await index.waitFor(runtime.log.appendedSeq, 120_000))) throw new Error('the index did not catch up');
  };
  const request = { strategy: 'one_to_one' as const, grouping_criteria: '', matching_rule_ids: [ruleId] };
  await settle();
  const instantStarted = performance.now();
  const instant = await port.runInstant(request, records, true);
  if (!instant.ok) throw new Error(instant.rejection.message);
  const instantMs = performance.now() - instantStarted;
  const upload = runtime.engine.run({ op: 'reconciliation.upload', upload: { source: 'bench', kind: 'file', records } });
  if (!upload.ok) throw new Error(upload.rejection.message);
  await settle();
  const started = performance.now();
  const run = await port.startBackground({ ...request, upload_id: upload.value.upload_id }, false);
  if (!run.ok) throw new Error(run.rejection.message);
  for (;;) {
    const record = await port.record(run.value.reconciliation_id);
    if (record?.status === 'failed') throw new Error(`run failed: ${record.failure_reason}`);
    if (record?.status === 'completed') break;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  const backgroundMs = performance.now() - started;
  const done = await port.record(run.value.reconciliation_id);
  return {
    background: { ms: backgroundMs, matched: done?.matched_transactions ?? 0, unmatched: done?.unmatched_transactions ?? 0 },
    instantDry: { ms: instantMs, matched: instant.value.record.matched_transactions, unmatched: instant.value.record.unmatched_transactions },
  };
}

function rule(runtime: LedgerRuntime, name: string, criteria: Array<{ field: string; operator: string; allowable_drift?: string }>): string {
  const created = runtime.engine.run({ op: 'matching_rule.create', rule: { name, description: '', criteria } });
  if (!created.ok) throw new Error(created.rejection.message);
  return created.value.rule_id;
}

export async function reconBench(settings: BenchSettings, log: (line: string) => void): Promise<BenchResult> {
  const transactions = settings.quick ? 100_000 : 1_000_000;
  const lines = settings.quick ? 1_000 : 10_000;
  const dataDir = makeTempDir('recon');
  try {
    const seeded = await seed(dataDir, transactions, log);
    await buildIndex(dataDir, log);
    const clock: Clock = { now: () => START_MS + (transactions + 10) * STEP_MS + Math.floor(performance.now()) };
    const runtime = await LedgerRuntime.open({ dataDir, clock });
    let peakRss = 0;
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
    }, 10);
    try {
      const baseRss = process.memoryUsage().rss;
      const byReference = rule(runtime, 'reference and amount', [
        { field: 'reference', operator: 'equals' }, { field: 'amount', operator: 'equals' },
      ]);
      const byAmountAndDate = rule(runtime, 'amount within 0.5% and date within 10 minutes', [
        { field: 'amount', operator: 'equals', allowable_drift: '0.005' }, { field: 'date', operator: 'equals', allowable_drift: '600' },
        { field: 'currency', operator: 'equals' },
      ]);
      log(`recon: ${lines} lines against ${transactions} transactions, reference + amount`);
      const reference = await timedRun(runtime, statement(seeded, lines, false, 11), byReference);
      log(`recon:   ${reference.background.ms.toFixed(0)} ms (background), ${reference.instantDry.ms.toFixed(0)} ms (instant dry run)`);
      log(`recon: ${lines} lines against ${transactions} transactions, amount within 0.5% + date within 600 s`);
      const drift = await timedRun(runtime, statement(seeded, lines, true, 13), byAmountAndDate);
      log(`recon:   ${drift.background.ms.toFixed(0)} ms (background), ${drift.instantDry.ms.toFixed(0)} ms (instant dry run)`);
      const byContains = rule(runtime, 'reference contains', [{ field: 'reference', operator: 'contains' }]);
      log(`recon: ${lines} lines against ${transactions} transactions, reference contains (the reference inside longer text)`);
      const contains = await timedRun(runtime, statement(seeded, lines, false, 17, true), byContains);
      log(`recon:   ${contains.background.ms.toFixed(0)} ms (background), ${contains.instantDry.ms.toFixed(0)} ms (instant dry run)`);
      const memory = process.memoryUsage();
      const mib = (bytes: number): number => bytes / 1024 / 1024;
      const target = { op: '<=' as const, value: RECON_RUN_MS_MAX };
      const figures: Figure[] = [
        { label: `one_to_one reference + amount, ${lines} vs ${transactions} (recorded run)`, value: reference.background.ms, unit: 'ms', target },
        { label: `one_to_one amount drift + date window, ${lines} vs ${transactions} (recorded run)`, value: drift.background.ms, unit: 'ms', target },
        { label: 'reference + amount, instant dry run', value: reference.instantDry.ms, unit: 'ms' },
        { label: 'amount drift + date window, instant dry run', value: drift.instantDry.ms, unit: 'ms' },
        { label: `one_to_one reference contains, ${lines} vs ${transactions} (recorded run)`, value: contains.background.ms, unit: 'ms' },
        { label: 'reference contains, instant dry run', value: contains.instantDry.ms, unit: 'ms' },
        { label: 'resident memory before the runs', value: mib(baseRss), unit: 'MiB', digits: 0 },
        { label: 'resident memory, peak during the runs', value: mib(peakRss), unit: 'MiB', digits: 0 },
      ];
      return {
        name: 'recon',
        figures,
        details: {
          transactions, lines, reference, drift, contains,
          memory: { base_rss_mib: mib(baseRss), peak_rss_mib: mib(peakRss), heap_used_mib: mib(memory.heapUsed) },
        },
      };
    } finally {
      clearInterval(sampler);
      await runtime.close();
    }
  } finally {
    removeTempDir(dataDir);
  }
}
