// Bench `http`: synchronous single transfers (skip_queue) over HTTP against Folio as it starts by
// default (HTTP on worker threads), Folio on one thread (server.workers 0), and a bare Koa + koa-body
// server answering the same JSON, in the same run. The VM is noisy, so the three are interleaved (bare,
// folio, single, bare, ...) and medians reported; each server's CPU time per request is reported too, as
// it barely moves with the host's load, and for Folio on workers the engine thread's share of it apart
// from the workers': transfers/s can never pass one second over the engine thread's time per transfer,
// whatever the cores. Every response must be 2xx.

import fs from 'node:fs';
import { runLoad, type LoadSummary } from './load.js';
import { makeTempDir, removeTempDir } from './resources.js';
import { fdatasyncMs, mainThreadProfile, stageBudget, type StageCost } from './stage-budget.js';
import type { BenchResult, Figure } from './report.js';
import { expectJson, explainFailure, startBareKoa, PROFILED_STOP_GRACE_MS, startFolio, walCounters, walDelta, type RunningServer } from './servers.js';
import type { BenchSettings } from './settings.js';
import { median } from './stats.js';

export const RATIO_TARGET = 0.6;
/** Issue 16's targets: p99 at 64 connections, server CPU per transfer, seal to durable against one fdatasync. */
export const P99_TARGET_MS = 10;
export const CPU_PER_TRANSFER_TARGET_MICROS = 90;
export const SEAL_TO_DURABLE_FDATASYNCS_MAX = 4;
/** Issue 31's: the engine thread's CPU per transfer, workers against one thread here, and the projection for 16 cores. */
export const ENGINE_THREAD_MICROS_TARGET = 15;
export const WORKERS_RATIO_TARGET = 1.0;
export const PROJECTED_16_CORES_TARGET = 60_000;
const PROJECTED_CORES = 16;

const TRANSFER = {
  source: '@bench-src', destination: '@bench-dst', precise_amount: 1, precision: 100, currency: 'USD',
  description: 'http bench', skip_queue: true,
};

/** Stops every server that started; a stop failure is reported unless an earlier error is already on its way. */
export async function stopServers(servers: Array<RunningServer | undefined>, failing: boolean, log: (line: string) => void): Promise<void> {
  const outcomes = await Promise.allSettled(servers.filter((server) => server !== undefined).map((server) => server.stop()));
  const failures = outcomes.filter((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failures.length === 0) return;
  if (failing) for (const failure of failures) log(`also: ${(failure.reason as Error).message}`);
  else throw failures[0]!.reason;
}

function summarise(runs: LoadSummary[]): { rps: number; p50: number; p99: number; cpu: number } {
  return {
    rps: median(runs.map((run) => run.requestsPerSecond)),
    p50: median(runs.map((run) => run.latencyP50Ms)),
    p99: median(runs.map((run) => run.latencyP99Ms)),
    cpu: median(runs.map((run) => run.serverCpuMicrosPerRequest ?? Number.NaN)),
  };
}

export async function httpBench(settings: BenchSettings, log: (line: string) => void): Promise<BenchResult> {
  let folio: RunningServer | undefined;
  let single: RunningServer | undefined;
  let bare: RunningServer | undefined;
  let failing = false;
  const rounds: { bare: LoadSummary[]; folio: LoadSummary[]; single: LoadSummary[] } = { bare: [], folio: [], single: [] };
  const walRounds: Array<ReturnType<typeof walDelta>> = [];
  try {
    folio = await startFolio('http');
    await expectJson(folio.url, 'POST', '/transactions', 201, {
      description: 'test', source: '@bench-world', destination: '@bench-src', precise_amount: '1000000000000000000', precision: 100,
      currency: 'USD', allow_overdraft: true, skip_queue: true,
    });
    const sample = await expectJson(folio.url, 'POST', '/transactions', 201, TRANSFER);
    if (sample.body?.status !== 'APPLIED') throw new Error(`sample transfer was not applied: ${sample.text}`);
    bare = await startBareKoa(sample.text);
    const bareSample = await expectJson(bare.url, 'POST', '/transactions', 201, TRANSFER);
    if (bareSample.text.length !== sample.text.length) {
      throw new Error(`bare server answers ${bareSample.text.length} bytes, Folio ${sample.text.length}`);
    }

    single = await startFolio('http-single', { workers: 0 });
    await expectJson(single.url, 'POST', '/transactions', 201, {
      description: 'test', source: '@bench-world', destination: '@bench-src', precise_amount: '1000000000000000000', precision: 100,
      currency: 'USD', allow_overdraft: true, skip_queue: true,
    });
    const body = JSON.stringify(TRANSFER);
    const servers = { bare, folio, single };
    const load = (which: 'bare' | 'folio' | 'single', seconds: number, round: string): Promise<LoadSummary> =>
      runLoad({
        title: `${which} ${round}`, url: servers[which].url, path: '/transactions', body,
        connections: settings.connections, seconds, serverPid: servers[which].pid,
      });
    // Folio's first seconds cost more CPU per request (JIT, a fresh LMDB file growing): warm both up first.
    const warmupSeconds = Math.min(5, settings.seconds);
    log(`http: warm-up ${warmupSeconds} s each`);
    await load('bare', warmupSeconds, 'warm-up');
    await load('folio', warmupSeconds, 'warm-up');
    await load('single', warmupSeconds, 'warm-up');
    for (let round = 1; round <= settings.rounds; round += 1) {
      for (const which of ['bare', 'folio', 'single'] as const) {
        const walBefore = which === 'folio' ? await walCounters(folio.url) : undefined;
        const summary = await load(which, settings.seconds, `round ${round}`);
        rounds[which].push(summary);
        if (walBefore) walRounds.push(walDelta(walBefore, await walCounters(folio.url)));
        log(
          `http: round ${round} ${which.padEnd(5)} ${summary.requestsPerSecond.toFixed(0)} req/s, ` +
          `p50 ${summary.latencyP50Ms} ms, p99 ${summary.latencyP99Ms} ms, ` +
          `${(summary.serverCpuMicrosPerRequest ?? Number.NaN).toFixed(1)} µs CPU/req` +
          (which === 'folio' ? ` (engine thread ${summary.threadCpuMicrosPerRequest?.engine.toFixed(1)} µs, workers ${summary.threadCpuMicrosPerRequest?.http.toFixed(1)} µs)` : ''),
        );
      }
    }
  } catch (error) {
    failing = true;
    throw explainFailure(error, [bare, folio, single]);
  } finally {
    await stopServers([bare, folio, single], failing, log);
  }
  const stages = await profiledStages(settings, log);
  const probeDir = makeTempDir('fdatasync');
  const fdatasync = fdatasyncMs(probeDir);
  removeTempDir(probeDir);
  log(`http: one 4 KiB write + fdatasync of this disk: ${fdatasync.toFixed(3)} ms`);

  const b = summarise(rounds.bare);
  const f = summarise(rounds.folio);
  // Each Folio round ran right after a bare one, so the ratio within a round cancels most host drift.
  const paired = (ratio: (bare: LoadSummary, folio: LoadSummary) => number): number =>
    median(rounds.folio.map((folioRound, index) => ratio(rounds.bare[index]!, folioRound)));
  const rpsRatio = paired((bareRound, folioRound) => folioRound.requestsPerSecond / bareRound.requestsPerSecond);
  const workersRatio = median(rounds.folio.map((folioRound, index) => folioRound.requestsPerSecond / rounds.single[index]!.requestsPerSecond));
  const s1 = summarise(rounds.single);
  const engineMicros = median(rounds.folio.map((round) => round.threadCpuMicrosPerRequest?.engine ?? Number.NaN));
  const workerMicros = median(rounds.folio.map((round) => round.threadCpuMicrosPerRequest?.http ?? Number.NaN));
  // On a machine of PROJECTED_CORES cores: the engine thread on one, workers on the rest, whichever saturates first.
  const projected = Math.min(1_000_000 / engineMicros, ((PROJECTED_CORES - 1) * 1_000_000) / workerMicros);
  const cpuRatio = paired((bareRound, folioRound) => (bareRound.serverCpuMicrosPerRequest ?? Number.NaN) / (folioRound.serverCpuMicrosPerRequest ?? Number.NaN));
  const figures: Figure[] = [
    { label: 'bare Koa req/s (median)', value: b.rps, unit: 'req/s' },
    { label: 'Folio req/s (median)', value: f.rps, unit: 'req/s' },
    { label: 'Folio / bare, req/s (paired rounds)', value: rpsRatio, unit: 'ratio', digits: 2, target: { op: '>=', value: RATIO_TARGET } },
    { label: 'bare Koa p50', value: b.p50, unit: 'ms' },
    { label: 'bare Koa p99', value: b.p99, unit: 'ms' },
    { label: 'Folio p50', value: f.p50, unit: 'ms' },
    { label: 'Folio p99', value: f.p99, unit: 'ms', target: { op: '<=', value: P99_TARGET_MS } },
    { label: 'Folio on one thread req/s (median)', value: s1.rps, unit: 'req/s' },
    { label: 'Folio workers / one thread, req/s (paired rounds)', value: workersRatio, unit: 'ratio', digits: 2, target: { op: '>=', value: WORKERS_RATIO_TARGET } },
    { label: 'Folio on one thread p99', value: s1.p99, unit: 'ms' },
    { label: 'engine thread CPU per transfer (workers)', value: engineMicros, unit: 'µs', digits: 1, target: { op: '<=', value: ENGINE_THREAD_MICROS_TARGET } },
    { label: 'HTTP worker CPU per transfer', value: workerMicros, unit: 'µs', digits: 1 },
    { label: 'Folio on one thread server CPU/request', value: s1.cpu, unit: 'µs', digits: 1 },
    {
      label: `projected transfers/s on ${PROJECTED_CORES} cores`, value: projected, unit: '/s', target: { op: '>=', value: PROJECTED_16_CORES_TARGET },
      note: 'min(1 s / engine thread µs, 15 workers\' cores / worker µs)',
    },
    { label: 'bare Koa server CPU/request', value: b.cpu, unit: 'µs', digits: 1 },
    { label: 'Folio server CPU/request', value: f.cpu, unit: 'µs', digits: 1, target: { op: '<=', value: CPU_PER_TRANSFER_TARGET_MICROS } },
    {
      label: 'Folio / bare, by CPU/request', value: cpuRatio, unit: 'ratio', digits: 2,
      target: { op: '>=', value: RATIO_TARGET }, note: 'steadier than req/s on this VM',
    },
    { label: 'Folio WAL events per commit', value: median(walRounds.map((wal) => wal.eventsPerCommit)), unit: 'events', digits: 1 },
    { label: 'Folio WAL seal to durable (mean)', value: median(walRounds.map((wal) => wal.commitMs)), unit: 'ms', digits: 2 },
    { label: 'disk: 4 KiB write + fdatasync (mean)', value: fdatasync, unit: 'ms', digits: 3 },
    {
      label: 'WAL seal to durable / one fdatasync', value: median(walRounds.map((wal) => wal.commitMs)) / fdatasync, unit: 'x', digits: 1,
      target: { op: '<=', value: SEAL_TO_DURABLE_FDATASYNCS_MAX },
    },
    ...stages.map((cost): Figure => ({ label: `CPU per transfer: ${cost.stage}`, value: cost.micros_per_request, unit: 'µs', digits: 1 })),
  ];
  return {
    name: 'http',
    figures,
    details: { connections: settings.connections, seconds_per_round: settings.seconds, rounds, folio_wal_per_round: walRounds, stage_budget: stages, fdatasync_ms: fdatasync },
  };
}

/**
 * A separate Folio run under the same load with the CPU profiler on (profiling costs time, so none of
 * the figures above come from it), charged stage by stage (stage-budget.ts): the main thread's
 * microseconds per transfer in each stage of the request, plus GC and idle.
 */
async function profiledStages(settings: BenchSettings, log: (line: string) => void): Promise<StageCost[]> {
  const profileDir = makeTempDir('http-profile');
  let server: RunningServer | undefined;
  let requests = 0;
  try {
    server = await startFolio('http-profiled', { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`], stopGraceMs: PROFILED_STOP_GRACE_MS });
    await expectJson(server.url, 'POST', '/transactions', 201, {
      description: 'test', source: '@bench-world', destination: '@bench-src', precise_amount: '1000000000000000000', precision: 100,
      currency: 'USD', allow_overdraft: true, skip_queue: true,
    });
    const body = JSON.stringify(TRANSFER);
    for (const round of ['warm-up', 'profiled']) {
      const summary = await runLoad({
        title: `folio ${round}`, url: server.url, path: '/transactions', body, connections: settings.connections,
        seconds: round === 'warm-up' ? Math.min(5, settings.seconds) : settings.seconds,
      });
      requests += summary.responses2xx;
    }
  } finally {
    await server?.stop();
  }
  const stages = stageBudget(mainThreadProfile(profileDir), requests);
  fs.rmSync(profileDir, { recursive: true, force: true });
  log(`http: CPU per transfer by stage (main thread, profiled run): ${stages.map((cost) => `${cost.stage} ${cost.micros_per_request.toFixed(1)} µs`).join(', ')}`);
  return stages;
}
