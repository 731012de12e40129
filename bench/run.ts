// `npm run bench [-- name ...]`: runs the named benches (all when none is named) one after another,
// prints a table of figures beside their targets, and writes bench/results/<name>.json for each, then
// bench/results/report.md with charts from the newest results of every bench (results-report/). A bench
// that fails (e.g. a non-2xx response under load) is reported and makes the run exit 1; the others still
// run. Missed targets are shown in the table but are not failures. Settings: see settings.ts.

import os from 'node:os';
import { cloudBench } from './cloud-bench.js';
import { engineBench } from './engine-bench.js';
import { httpBench } from './http-bench.js';
import { indexLoadBench } from './index-load-bench.js';
import { lifecycleBench } from './lifecycle-bench.js';
import { memoryBench } from './memory-bench.js';
import { peersBench } from './peers-bench.js';
import { queuedBench } from './queued-bench.js';
import { reconBench } from './recon-bench.js';
import { replicationBench } from './replication-bench.js';
import { accessBench, indexBench, snapshotsBench } from './standalone-benches.js';
import { formatTable, writeResult, type BenchResult } from './report.js';
import { writeReport } from './results-report/write-report.js';
import { loadSettings, type BenchSettings } from './settings.js';

type Bench = (settings: BenchSettings, log: (line: string) => void) => Promise<BenchResult>;

const BENCHES: Record<string, Bench> = {
  engine: engineBench,
  http: httpBench,
  queued: queuedBench,
  lifecycle: lifecycleBench,
  memory: memoryBench,
  access: accessBench,
  index: indexBench,
  indexload: indexLoadBench,
  snapshots: snapshotsBench,
  cloud: cloudBench,
  peers: peersBench,
  recon: reconBench,
  replication: replicationBench,
};

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

async function main(argv: string[]): Promise<number> {
  const names = argv.length > 0 ? argv : Object.keys(BENCHES);
  const unknown = names.filter((name) => !(name in BENCHES));
  if (unknown.length > 0) {
    log(`unknown bench ${unknown.join(', ')}; choose from ${Object.keys(BENCHES).join(', ')}`);
    return 2;
  }
  const settings = loadSettings();
  log(`bench settings: ${JSON.stringify(settings)}${settings.quick ? ' (quick: results go to <name>.quick.json)' : ''}`);
  const results: BenchResult[] = [];
  const failures: string[] = [];
  for (const name of names) {
    const startedAt = new Date();
    const loadAtStart = os.loadavg();
    log(`${name}: host load average ${loadAtStart.map((value) => value.toFixed(2)).join(' ')}`);
    try {
      const result = await BENCHES[name]!(settings, log);
      results.push(result);
      log(`${name}: wrote ${writeResult(result, settings, startedAt, loadAtStart)}`);
    } catch (error) {
      failures.push(name);
      log(`${name}: FAILED: ${(error as Error).stack ?? String(error)}`);
    }
  }
  try {
    const report = writeReport({ quick: settings.quick, order: Object.keys(BENCHES) });
    log(`report: wrote ${report.reportFile} with ${report.chartFiles.length} charts${report.missingCharts.map((reason) => `; not drawn: ${reason}`).join('')}`);
  } catch (error) {
    failures.push('report');
    log(`report: FAILED: ${(error as Error).stack ?? String(error)}`);
  }
  if (results.length > 0) process.stdout.write(`\n${formatTable(results)}\n`);
  if (failures.length > 0) {
    process.stdout.write(`\nFAILED: ${failures.join(', ')}\n`);
    return 1;
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    log(`bench: ${(error as Error).stack ?? String(error)}`);
    process.exit(1);
  },
);
