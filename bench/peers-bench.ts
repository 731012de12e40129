// Bench `peers`: Folio against a ledger on PostgreSQL (bench/postgres-peer: the same transfer semantics
// in SQL), in one run. Each workload (single durable transfers at 64 clients, atomic batches of 10 at 64
// and of 1,000 at 8) over each balance set (1,000 and 100,000 funded balances) runs on Folio over HTTP
// (the built server in a child process, driven by autocannon), on Folio in-process (the runtime in a
// child process, no HTTP) and on the Postgres peer called directly with pg (no HTTP in front, which
// favours it), one right after the other so the ratios compare like moments. Then a throughput curve:
// single transfers at 1 to 256 connections for Folio over HTTP, bare Koa and the peer. Both ledgers
// commit durably: Folio acknowledges after its log is flushed, PostgreSQL runs with fsync and
// synchronous_commit on.

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stopServers } from './http-bench.js';
import { runJsonChild, makeTempDir, removeTempDir } from './resources.js';
import type { BenchResult, Figure } from './report.js';
import { expectJson, explainFailure, startBareKoa, startFolio, type RunningServer } from './servers.js';
import type { BenchSettings } from './settings.js';
import type { InProcessResult } from './peers/folio-in-process-child.js';
import { fundOverHttp, requestBodies, runHttpPeerLoad, settle, type HttpPeerLoad } from './peers/http-peer-load.js';
import { BALANCE_COUNTS, SWEEP_CONNECTIONS, WORKLOADS, workloadLabel, type Workload } from './peers/peer-workloads.js';
import { PostgresPeerRig, type PostgresPeerLoad } from './peers/postgres-peer-load.js';

export const SINGLE_RATIO_TARGET = 10;
export const BATCH_1000_RATIO_TARGET = 30;
/** For scale, from the issue: a published Postgres ledger on this kind of machine. */
const PUBLISHED_POSTGRES_PER_SECOND: Partial<Record<Workload['name'], number>> = { single: 1_800, 'batch-10': 4_500 };

const CHILD = path.resolve(path.dirname(fileURLToPath(import.meta.url)), 'peers/folio-in-process-child.js');

export interface PeerRow {
  workload: Workload['name'];
  balances: number;
  clients: number;
  batch: number;
  folio_http: HttpPeerLoad;
  folio_in_process: InProcessResult;
  postgres: PostgresPeerLoad;
}

export interface SweepPoint {
  connections: number;
  folio_http: number;
  bare_koa: number;
  postgres: number;
  /** Median latency of a transfer at this many connections, milliseconds. */
  folio_p50_ms: number;
  postgres_p50_ms: number;
}

async function inProcess(workload: Workload, balances: number, warmupSeconds: number, seconds: number): Promise<InProcessResult> {
  const dataDir = makeTempDir('peers-in-process');
  try {
    const args = [balances, workload.batch, workload.clients, warmupSeconds, seconds].map(String);
    return await runJsonChild<InProcessResult>(CHILD, [...args, dataDir], { timeoutMs: (warmupSeconds + seconds + 300) * 1000 });
  } finally {
    removeTempDir(dataDir);
  }
}

function ratioTarget(workload: Workload['name']): Figure['target'] {
  if (workload === 'single') return { op: '>=', value: SINGLE_RATIO_TARGET };
  if (workload === 'batch-1000') return { op: '>=', value: BATCH_1000_RATIO_TARGET };
  return undefined;
}

function rowFigures(row: PeerRow): Figure[] {
  const label = workloadLabel({ name: row.workload, batch: row.batch, clients: row.clients }, row.balances);
  const published = PUBLISHED_POSTGRES_PER_SECOND[row.workload];
  const target = ratioTarget(row.workload);
  const postgres = row.postgres.transfersPerSecond;
  return [
    { label: `Folio HTTP transfers/s (${label}, ${row.clients} clients)`, value: row.folio_http.transfersPerSecond, unit: '/s' },
    { label: `Folio in-process transfers/s (${label})`, value: row.folio_in_process.transfersPerSecond, unit: '/s' },
    {
      label: `Postgres peer transfers/s (${label})`, value: postgres, unit: '/s',
      ...(published ? { note: `a published Postgres ledger: ~${published.toLocaleString('en-US')}/s` } : {}),
    },
    { label: `Folio HTTP / Postgres (${label})`, value: row.folio_http.transfersPerSecond / postgres, unit: 'ratio', digits: 2, ...(target ? { target } : {}) },
    { label: `Folio in-process / Postgres (${label})`, value: row.folio_in_process.transfersPerSecond / postgres, unit: 'ratio', digits: 2, ...(target ? { target } : {}) },
  ];
}

function latencyFigures(row: PeerRow): Figure[] {
  const label = workloadLabel({ name: row.workload, batch: row.batch, clients: row.clients }, row.balances);
  return [
    { label: `Folio HTTP p50 (${label})`, value: row.folio_http.latencyP50Ms, unit: 'ms', digits: 1 },
    { label: `Folio HTTP p99 (${label})`, value: row.folio_http.latencyP99Ms, unit: 'ms', digits: 1 },
    { label: `Folio in-process p50 (${label})`, value: row.folio_in_process.latencyMs.p50, unit: 'ms', digits: 1 },
    { label: `Folio in-process p99 (${label})`, value: row.folio_in_process.latencyMs.p99, unit: 'ms', digits: 1 },
    { label: `Postgres peer p50 (${label})`, value: row.postgres.latencyMs.p50, unit: 'ms', digits: 1 },
    { label: `Postgres peer p99 (${label})`, value: row.postgres.latencyMs.p99, unit: 'ms', digits: 1 },
  ];
}

type Log = (line: string) => void;

/** Every workload over every balance set, on Folio over HTTP, Folio in-process and the peer, one after the other. */
async function measureWorkloads(postgres: PostgresPeerRig, folio: RunningServer, warmupSeconds: number, seconds: number, log: Log): Promise<PeerRow[]> {
  const rows: PeerRow[] = [];
  for (const balances of BALANCE_COUNTS) {
    for (const workload of WORKLOADS) {
      const label = workloadLabel(workload, balances);
      const folioHttp = await runHttpPeerLoad({
        title: `folio http ${label}`, url: folio.url, serverPid: folio.pid, workload, bodies: requestBodies(workload, balances, 7),
        connections: workload.clients, warmupSeconds, seconds, settles: true,
      });
      const folioInProcess = await inProcess(workload, balances, warmupSeconds, seconds);
      const peer = await postgres.load(workload, balances, workload.clients, warmupSeconds, seconds);
      rows.push({ workload: workload.name, balances, clients: workload.clients, batch: workload.batch, folio_http: folioHttp, folio_in_process: folioInProcess, postgres: peer });
      log(
        `peers: ${label}, ${workload.clients} clients: Folio HTTP ${Math.round(folioHttp.transfersPerSecond)}/s, ` +
        `in-process ${Math.round(folioInProcess.transfersPerSecond)}/s, Postgres ${Math.round(peer.transfersPerSecond)}/s ` +
        `(x${(folioHttp.transfersPerSecond / peer.transfersPerSecond).toFixed(2)} over HTTP)`,
      );
    }
  }
  return rows;
}

/** Single transfers over the smaller balance set at each connection count: bare Koa, Folio over HTTP, the peer. */
async function measureSweep(postgres: PostgresPeerRig, folio: RunningServer, bare: RunningServer, seconds: number, log: Log): Promise<SweepPoint[]> {
  const single = WORKLOADS.find((workload) => workload.name === 'single')!;
  const balances = BALANCE_COUNTS[0]!;
  const bodies = requestBodies(single, balances, 11);
  const sweep: SweepPoint[] = [];
  for (const connections of SWEEP_CONNECTIONS) {
    const options = { workload: single, bodies, connections, warmupSeconds: 1, seconds };
    const bareRun = await runHttpPeerLoad({ ...options, title: `bare koa ${connections} connections`, url: bare.url, serverPid: bare.pid, settles: false });
    const folioRun = await runHttpPeerLoad({ ...options, title: `folio ${connections} connections`, url: folio.url, serverPid: folio.pid, settles: true });
    const peerRun = await postgres.load(single, balances, connections, 1, seconds);
    sweep.push({
      connections, folio_http: folioRun.transfersPerSecond, bare_koa: bareRun.transfersPerSecond, postgres: peerRun.transfersPerSecond,
      folio_p50_ms: folioRun.latencyP50Ms, postgres_p50_ms: peerRun.latencyMs.p50,
    });
    log(`peers: ${connections} connections: bare Koa ${Math.round(bareRun.transfersPerSecond)}/s, Folio ${Math.round(folioRun.transfersPerSecond)}/s, Postgres ${Math.round(peerRun.transfersPerSecond)}/s`);
  }
  return sweep;
}

export async function peersBench(settings: BenchSettings, log: Log): Promise<BenchResult> {
  const warmupSeconds = settings.quick ? 1 : 3;
  const sweepSeconds = Math.max(2, Math.round(settings.seconds / 2));
  let postgres: PostgresPeerRig | undefined;
  let folio: RunningServer | undefined;
  let bare: RunningServer | undefined;
  let failing = false;
  let rows: PeerRow[];
  let sweep: SweepPoint[];
  let postgresVersion: string;
  try {
    postgres = await PostgresPeerRig.start();
    postgresVersion = postgres.server.version;
    log(`peers: ${postgresVersion.split(',')[0]} on 127.0.0.1:${postgres.server.connection.port}`);
    folio = await startFolio('peers');
    for (const balances of BALANCE_COUNTS) {
      log(`peers: funding ${balances} balances on both`);
      await postgres.fund(balances);
      await fundOverHttp(folio.url, balances);
    }
    await postgres.settle();
    await settle(folio.url);
    rows = await measureWorkloads(postgres, folio, warmupSeconds, settings.seconds, log);
    // The bare server answers with the JSON of a real Folio transfer, as in the http bench.
    const sample = await expectJson(folio.url, 'POST', '/transactions', 201, JSON.parse(requestBodies(WORKLOADS[0]!, BALANCE_COUNTS[0]!, 3)[0]!));
    bare = await startBareKoa(sample.text);
    sweep = await measureSweep(postgres, folio, bare, sweepSeconds, log);
    if (!(await postgres.sumsToZero())) throw new Error('the Postgres peer\'s balances do not sum to zero after the run');
  } catch (error) {
    failing = true;
    throw explainFailure(error, [bare, folio]);
  } finally {
    await stopServers([bare, folio], failing, log);
    await postgres?.stop().catch((error: unknown) => {
      if (!failing) throw error;
      log(`also: ${(error as Error).message}`);
    });
  }

  const figures = rows.flatMap(rowFigures);
  const headline = rows.find((row) => row.workload === 'single' && row.balances === BALANCE_COUNTS[0]);
  if (headline) figures.push(...latencyFigures(headline));
  // Issue 31's: a commit here is the log's fdatasyncs plus two crossings between threads; the peer's is
  // PostgreSQL's WAL flush. docs/performance.md says where the single client's time goes.
  for (const point of sweep.filter((candidate) => candidate.connections <= 4)) {
    const clients = point.connections === 1 ? '1 client' : `${point.connections} clients`;
    figures.push(
      { label: `single transfers, ${clients}: Folio over HTTP`, value: point.folio_http, unit: 'per s' },
      { label: `single transfers, ${clients}: Postgres peer`, value: point.postgres, unit: 'per s' },
      { label: `single transfers, ${clients}: Folio p50`, value: point.folio_p50_ms, unit: 'ms', digits: 2 },
      { label: `single transfers, ${clients}: Postgres peer p50`, value: point.postgres_p50_ms, unit: 'ms', digits: 2 },
    );
  }
  return {
    name: 'peers',
    figures,
    details: {
      postgres_version: postgresVersion,
      postgres_durability: 'fsync on, synchronous_commit on, full_page_writes on',
      folio_in_process: 'LedgerRuntime with its LMDB log and lookup store, without the query index (the peer has none)',
      folio_http: 'the built server with everything on, query index included',
      warmup_seconds: warmupSeconds,
      seconds: settings.seconds,
      sweep_seconds: sweepSeconds,
      rows,
      sweep,
    },
  };
}
