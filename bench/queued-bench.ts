// Bench `queued`: transfers sent without skip_queue, so each answers 201 QUEUED once durable and the
// balance actors apply it afterwards. Reports how fast requests are accepted and how fast the queue
// applies them: the mailbox depth is followed through /metrics during the load and polled afterwards
// until it is empty; the applied count is read back from the destination balances (one unit each).
// Because the queue keeps pace with HTTP ingest, it also times an in-process drain of a large backlog.

import type autocannon from 'autocannon';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DrainResult } from './drain-child.js';
import { runLoad, type LoadSummary } from './load.js';
import { processCpuMicros } from './process-cpu.js';
import type { BenchResult, Figure } from './report.js';
import { makeTempDir, removeTempDir, runJsonChild } from './resources.js';
import { expectJson, explainFailure, requestJson, startFolio, type RunningServer } from './servers.js';
import type { BenchSettings } from './settings.js';
import { stopServers } from './http-bench.js';

const DRAIN_CHILD = path.resolve(path.dirname(fileURLToPath(import.meta.url)), 'drain-child.js');
/** Backlog for the in-process drain; each of the 64 sources' mailboxes holds at most 10,000. */
const DRAIN_BACKLOG = { full: 320_000, quick: 64_000 };
const DRAIN_SOURCES = 64;
const DRAIN_TIMEOUT_MS = 300_000;
const SAMPLE_INTERVAL_MS = 500;
const DRAIN_POLL_MS = 25;
/** Below this many waiting at the end of the load, the queue was keeping up and no drain rate is given. */
const DRAIN_RATE_MIN_DEPTH = 1_000;

async function mailboxDepth(url: string): Promise<number> {
  const response = await requestJson(url, 'GET', '/metrics');
  const match = /^folio_mailbox_depth (\d+)/m.exec(response.text);
  if (response.status !== 200 || !match) throw new Error(`cannot read folio_mailbox_depth from /metrics (${response.status})`);
  return Number(match[1]);
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls the mailbox depth until it is zero; returns when it was first seen empty. */
async function waitUntilEmpty(url: string, since: number): Promise<number> {
  for (let depth = await mailboxDepth(url); depth > 0; depth = await mailboxDepth(url)) {
    if (performance.now() - since > DRAIN_TIMEOUT_MS) throw new Error(`queue still holds ${depth} after ${DRAIN_TIMEOUT_MS} ms`);
    await sleep(DRAIN_POLL_MS);
  }
  return performance.now();
}

/** Every queued transfer moves one unit to its destination, so the destinations' total counts the applied ones. */
async function appliedSoFar(url: string, sources: number): Promise<bigint> {
  let total = 0n;
  for (let index = 0; index < sources; index += 1) {
    const balance = await requestJson(url, 'GET', `/balances/indicator/@queued-dst-${index}/currency/USD`);
    if (balance.status === 404) continue;
    if (balance.status !== 200) throw new Error(`reading @queued-dst-${index}: ${balance.status} ${balance.text}`);
    total += BigInt(balance.body.credit_balance);
  }
  return total;
}

export async function queuedBench(settings: BenchSettings, log: (line: string) => void): Promise<BenchResult> {
  let folio: RunningServer | undefined;
  let failing = false;
  const sources = settings.connections;
  const depthSamples: Array<{ ms: number; depth: number }> = [];
  let load: LoadSummary | undefined;
  let cpuBefore = 0;
  let cpuMicros = 0;
  let loadStart = 0;
  let loadEnd = 0;
  let drained = 0;
  let depthAtEnd = 0;
  let applied = 0n;
  try {
    folio = await startFolio('queued');
    const url = folio.url;
    for (let index = 0; index < sources; index += 1) {
      await expectJson(url, 'POST', '/transactions', 201, {
        description: 'test', source: '@queued-world', destination: `@queued-src-${index}`, precise_amount: '1000000000000000', precision: 100,
        currency: 'USD', allow_overdraft: true, skip_queue: true,
      });
    }
    const bodies = Array.from({ length: sources }, (_, index) => JSON.stringify({
      source: `@queued-src-${index}`, destination: `@queued-dst-${index}`, precise_amount: 1, precision: 100,
      currency: 'USD', description: 'queued bench',
    }));
    const sample = await expectJson(url, 'POST', '/transactions', 201, JSON.parse(bodies[0]!));
    if (sample.body?.status !== 'QUEUED') throw new Error(`a queued transfer answered ${sample.text}`);

    let nextConnection = 0;
    const setupClient = (client: autocannon.Client): void => client.setBody(bodies[nextConnection++ % sources]!);
    const warmupSeconds = Math.min(2, settings.seconds);
    log(`queued: warm-up ${warmupSeconds} s`);
    await runLoad({ title: 'queued warm-up', url, path: '/transactions', body: bodies[0], connections: settings.connections, seconds: warmupSeconds, setupClient });
    await waitUntilEmpty(url, performance.now());
    const appliedBefore = await appliedSoFar(url, sources);

    let sampling = true;
    cpuBefore = processCpuMicros(folio.pid);
    loadStart = performance.now();
    const sampler = (async () => {
      while (sampling) {
        depthSamples.push({ ms: performance.now() - loadStart, depth: await mailboxDepth(url) });
        await sleep(SAMPLE_INTERVAL_MS);
      }
    })();
    log(`queued: ${settings.connections} connections, ${sources} source balances, ${settings.seconds} s`);
    try {
      load = await runLoad({
        title: 'queued', url, path: '/transactions', body: bodies[0], connections: settings.connections,
        seconds: settings.seconds, serverPid: folio.pid,
        setupClient,
      });
    } finally {
      sampling = false;
      await sampler;
    }
    loadEnd = performance.now();
    depthAtEnd = await mailboxDepth(url);
    drained = await waitUntilEmpty(url, loadEnd);
    cpuMicros = processCpuMicros(folio.pid) - cpuBefore;
    applied = (await appliedSoFar(url, sources)) - appliedBefore;
    const accepted = BigInt(load.responses2xx);
    if (applied < accepted) throw new Error(`${accepted} transfers were accepted but only ${applied} applied`);
  } catch (error) {
    failing = true;
    throw explainFailure(error, [folio]);
  } finally {
    await stopServers([folio], failing, log);
  }

  if (!load) throw new Error('queued: the load did not run');
  const backlog = settings.quick ? DRAIN_BACKLOG.quick : DRAIN_BACKLOG.full;
  log(`queued: in-process drain of a ${backlog.toLocaleString('en-US')} transfer backlog`);
  const drainDir = makeTempDir('drain');
  let drain: DrainResult;
  try {
    drain = await runJsonChild<DrainResult>(DRAIN_CHILD, [String(backlog), String(DRAIN_SOURCES), drainDir], { timeoutMs: DRAIN_TIMEOUT_MS });
  } finally {
    removeTempDir(drainDir);
  }
  const appliedCount = Number(applied);
  const appliedPerSecond = appliedCount / ((drained - loadStart) / 1000);
  const drainMs = drained - loadEnd;
  const peakDepth = Math.max(depthAtEnd, ...depthSamples.map((sample) => sample.depth));
  const figures: Figure[] = [
    { label: 'accepted/s (201 QUEUED)', value: load.requestsPerSecond, unit: 'req/s' },
    { label: 'accepted p50', value: load.latencyP50Ms, unit: 'ms' },
    { label: 'accepted p99', value: load.latencyP99Ms, unit: 'ms' },
    { label: 'applied/s (start of load to queue empty)', value: appliedPerSecond, unit: '/s' },
    { label: 'peak mailbox depth', value: peakDepth, unit: 'queued' },
    { label: 'queue empty after load ended', value: drainMs, unit: 'ms' },
  ];
  if (depthAtEnd >= DRAIN_RATE_MIN_DEPTH) {
    figures.push({ label: 'drain rate after load', value: depthAtEnd / (drainMs / 1000), unit: '/s' });
  }
  figures.push({ label: 'server CPU per transfer, accept + apply', value: cpuMicros / appliedCount, unit: 'µs', digits: 1 });
  figures.push({
    label: 'backlog drain, in-process durable', value: drain.appliedPerSecond, unit: '/s',
    note: `${drain.transfers.toLocaleString('en-US')} queued`,
  });
  return {
    name: 'queued',
    figures,
    details: {
      connections: settings.connections,
      source_balances: sources,
      seconds: settings.seconds,
      load,
      applied: appliedCount,
      depth_at_load_end: depthAtEnd,
      in_process_drain: drain,
      depth_samples: depthSamples.map((sample) => ({ ms: Math.round(sample.ms), depth: sample.depth })),
    },
  };
}
