// Snapshot bench (standalone: `node dist/bench/snapshot-bench.js [--events N] [--tail N] [--seconds S]`).
// Builds a data directory whose log holds N events (default 1,000,000), each a transfer to a new
// `@name` balance (so N balances), and measures:
//   - snapshot write time (state hash, encode, write, fsync) and size, from the worker;
//   - start-up to ready from that snapshot plus a short tail, against a full replay from genesis
//     (targets: <= 2 s from a snapshot of 1,000,000 balances; full replay >= 500,000 events/s);
//   - verify throughput (replay from genesis with every check);
//   - p99 latency of transfers against a running server (child process) before, during and after a
//     snapshot of all those balances is written.
// The machine's load average is printed with the figures: they mean little on a busy machine.

import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { LedgerRuntime } from '../runtime/ledger-runtime.js';
import { snapshotDirectoryIn } from '../snapshots/snapshot-directory.js';
import { verifyDataDir } from '../ops/verify.js';
import { NODE_FLAGS } from '../threads/node-flags.js';
import { percentileOfSorted } from './stats.js';

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../bin/folio.js');
const SCHEDULE_OFF = { every_events: 0, every_seconds: 0, keep: 3 };

function argument(name: string, fallback: number): number {
  const index = process.argv.indexOf(name);
  return index === -1 ? fallback : Number(process.argv[index + 1]);
}

const EVENTS = argument('--events', 1_000_000);
const TAIL = argument('--tail', 1_000);
const LATENCY_SECONDS = argument('--seconds', 40);

function say(line: string): void {
  process.stdout.write(line + '\n');
}

function number(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

function transfer(runtime: LedgerRuntime, destination: string, amount: bigint): void {
  const outcome = runtime.engine.run({ op: 'transaction.create', ...{
    source: '@world', destination, precise_amount: amount, precision: 100n, currency: 'USD', reference: '', description: '',
    meta_data: {}, allow_overdraft: true, skip_queue: true, inflight: false, inflight_expiry_date: 0, inflight_commit_date: 0,
    scheduled_for: 0, atomic: false,
  } });
  if (!outcome.ok) throw new Error(outcome.rejection.message);
}

/** Transfers to `count` new balances, 100 per event-loop turn (records of about 100 events, as under load). */
async function fill(runtime: LedgerRuntime, count: number, prefix: string): Promise<void> {
  const started = performance.now();
  for (let index = 0; index < count; index += 1) {
    transfer(runtime, `@${prefix}${index}`, BigInt(1 + (index % 10_000)));
    if (index % 100 !== 99) continue;
    await new Promise((resolve) => setImmediate(resolve));
    if (index % 20_000 === 19_999) {
      await runtime.durable(runtime.log.appendedSeq);
      while (runtime.overloaded()) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    if (index % 100_000 === 99_999) {
      process.stderr.write(`  built ${number(index + 1)} events (${number(((index + 1) / (performance.now() - started)) * 1000)}/s)\n`);
    }
  }
  await runtime.durable(runtime.log.appendedSeq);
}

async function openTimed(dataDir: string): Promise<LedgerRuntime> {
  const runtime = await LedgerRuntime.open({ dataDir });
  return runtime;
}

interface Window {
  requests: number;
  p50: number;
  p99: number;
  max: number;
}

function windowOf(samples: Array<[number, number]>, from: number, to: number): Window {
  const latencies = samples.filter(([at]) => at >= from && at < to).map(([, ms]) => ms).sort((a, b) => a - b);
  return { requests: latencies.length, p50: percentileOfSorted(latencies, 50), p99: percentileOfSorted(latencies, 99), max: latencies[latencies.length - 1] ?? NaN };
}

async function startServer(dataDir: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [...NODE_FLAGS, CLI, 'serve'], {
    env: { ...process.env, FOLIO_DATA_DIR: dataDir, FOLIO_PORT: '0', FOLIO_LOG_LEVEL: 'warn', FOLIO_SNAPSHOT_EVERY_EVENTS: '0', FOLIO_SNAPSHOT_EVERY_SECONDS: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let text = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const match = /listening on (http:\/\/[0-9.]+:\d+)/.exec(text);
      if (match) resolve(match[1] as string);
    });
    child.on('exit', (code) => reject(new Error(`server exited (${code})`)));
  });
  return { url, child };
}

async function requestSnapshot(url: string): Promise<{ seq: number; size_bytes: number; created: boolean }> {
  const response = await fetch(`${url}/admin/snapshots`, { method: 'POST' });
  if (response.status !== 201) throw new Error(`snapshot request: ${response.status} ${await response.text()}`);
  return (await response.json()) as { seq: number; size_bytes: number; created: boolean };
}

async function latencyDuringSnapshot(dataDir: string): Promise<Record<string, unknown>> {
  const { url, child } = await startServer(dataDir);
  try {
    const warm = performance.now();
    await requestSnapshot(url); // waits for the worker's replica to be ready
    say(`server up, snapshot worker ready after ${number(performance.now() - warm)} ms`);
    const samples: Array<[number, number]> = [];
    const began = performance.now();
    const instance = autocannon({
      url: `${url}/transactions`, method: 'POST', connections: 16, duration: LATENCY_SECONDS,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ description: 'test', precise_amount: 5, currency: 'USD', source: '@world', destination: '@latency', allow_overdraft: true, skip_queue: true }),
    });
    const events = instance as unknown as NodeJS.EventEmitter;
    events.on('response', (_client: unknown, _status: number, _bytes: number, responseTime: number) => {
      samples.push([performance.now() - began, responseTime]);
    });
    const done = new Promise<autocannon.Result>((resolve) => events.on('done', resolve));
    await new Promise((resolve) => setTimeout(resolve, Math.min(10, LATENCY_SECONDS / 4) * 1000));
    const snapshotStart = performance.now() - began;
    const snapshot = await requestSnapshot(url);
    const snapshotEnd = performance.now() - began;
    const result = await done;
    const before = windowOf(samples, 1_000, snapshotStart);
    const during = windowOf(samples, snapshotStart, snapshotEnd);
    const after = windowOf(samples, snapshotEnd, Number.MAX_SAFE_INTEGER);
    say(`transfers, 16 connections, ${LATENCY_SECONDS} s: ${number(result.requests.average)} req/s, non-2xx ${result.non2xx}`);
    say(`snapshot at seq ${number(snapshot.seq)} written while under load in ${number(snapshotEnd - snapshotStart)} ms (${(snapshot.size_bytes / 1024 / 1024).toFixed(1)} MB)`);
    for (const [label, window] of [['before', before], ['during', during], ['after', after]] as const) {
      say(`  ${label.padEnd(6)} snapshot: ${number(window.requests)} transfers, p50 ${window.p50.toFixed(2)} ms, p99 ${window.p99.toFixed(2)} ms, max ${window.max.toFixed(2)} ms`);
    }
    return { before, during, after, snapshot_ms: snapshotEnd - snapshotStart, requests_per_second: result.requests.average, non2xx: result.non2xx };
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

/**
 * A yardstick for the machine: CPU time to put 1,000,000 fresh 36-character keys in a Map, which is
 * about what loading a million balances must do at least three times over. Typically 100-200 ms on an
 * idle modern core; figures above scale with it.
 */
function calibrate(): number {
  const keys = Array.from({ length: 1_000_000 }, (_, index) => `bln_0190${String(index).padStart(28, '0')}`);
  const started = process.cpuUsage();
  const map = new Map<string, number>();
  for (let index = 0; index < keys.length; index += 1) map.set(keys[index] as string, index);
  const used = process.cpuUsage(started);
  return (used.user + used.system) / 1000;
}

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-snapbench-'));
  const figures: Record<string, unknown> = { events: EVENTS, load_average: os.loadavg().map((value) => value.toFixed(2)), cpus: os.cpus().length };
  say(`snapshot bench: ${number(EVENTS)} events in ${dataDir} (load average ${os.loadavg()[0]?.toFixed(2)}, ${os.cpus().length} CPUs)`);
  figures.calibration_map_set_1m_cpu_ms = calibrate();
  say(`yardstick: 1,000,000 Map.set of fresh string keys took ${number(figures.calibration_map_set_1m_cpu_ms as number)} ms of CPU`);
  try {
    let runtime = await LedgerRuntime.open({ dataDir, snapshots: SCHEDULE_OFF });
    const buildStarted = performance.now();
    await fill(runtime, EVENTS - 1, 'u'); // plus the genesis event
    say(`built ${number(runtime.log.appendedSeq)} events, ${number(runtime.engine.state.balances.size)} balances in ${number(performance.now() - buildStarted)} ms`);
    const taken = await runtime.snapshotNow();
    if (!taken.ok) throw new Error(`snapshot refused: ${taken.rejection.message}`);
    const snapshot = taken.value;
    say(`snapshot write (worker): ${number(snapshot.milliseconds)} ms of which state hash ${number(snapshot.hash_milliseconds)} ms; ${(snapshot.size_bytes / 1024 / 1024).toFixed(1)} MB at seq ${number(snapshot.seq)}`);
    figures.snapshot = { write_ms: snapshot.milliseconds, hash_ms: snapshot.hash_milliseconds, bytes: snapshot.size_bytes, balances: runtime.engine.state.balances.size };
    await fill(runtime, TAIL, 'tail');
    const endSeq = runtime.log.appendedSeq;
    await runtime.close();

    const fromSnapshot: number[] = [];
    for (let run = 0; run < 3; run += 1) {
      runtime = await openTimed(dataDir);
      const report = runtime.startup;
      fromSnapshot.push(report.milliseconds);
      say(`start-up from snapshot + ${number(report.replayedEvents)} events: ready in ${number(report.milliseconds)} ms (snapshot ${number(report.snapshotMilliseconds)} ms, replay ${number(report.replayMilliseconds)} ms)`);
      await runtime.close();
    }
    figures.startup_from_snapshot_ms = fromSnapshot;

    const snapshotsDir = snapshotDirectoryIn(dataDir);
    const aside = snapshotsDir + '.aside';
    fs.renameSync(snapshotsDir, aside);
    runtime = await openTimed(dataDir);
    const full = runtime.startup;
    const rate = full.replayedEvents / (full.replayMilliseconds / 1000);
    say(`start-up by full replay of ${number(full.replayedEvents)} events: ready in ${number(full.milliseconds)} ms (replay ${number(full.replayMilliseconds)} ms = ${number(rate)} events/s)`);
    figures.full_replay = { ready_ms: full.milliseconds, replay_ms: full.replayMilliseconds, events_per_second: rate };
    await runtime.close();
    fs.renameSync(aside, snapshotsDir);

    const verifyStarted = performance.now();
    const verified = verifyDataDir({ dataDir });
    const verifyMs = performance.now() - verifyStarted;
    say(`verify: ${verified.ok ? 'OK' : 'FAILED'}, ${number(verified.events)} events, ${number(verified.snapshots.length)} snapshot(s) in ${number(verifyMs)} ms = ${number(verified.events / (verifyMs / 1000))} events/s`);
    figures.verify = { ok: verified.ok, ms: verifyMs, events_per_second: verified.events / (verifyMs / 1000), end_seq: endSeq };

    figures.latency = await latencyDuringSnapshot(dataDir);
    say(JSON.stringify(figures));
  } finally {
    if (!process.argv.includes('--keep')) fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`snapshot bench failed: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
