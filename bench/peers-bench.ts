// Bench `peers`: Folio against a ledger on PostgreSQL (bench/postgres-peer: the same transfer semantics
// in plpgsql), in one run, on three sides: Folio over HTTP (the built server as `npm start` runs it,
// query index included), the peer called directly with pg (one connection per client, no HTTP in
// front), and the same peer behind the bare Koa + koa-body server the http bench uses, with a pg pool
// (what a caller of a small service on PostgreSQL gets). Folio and the peer behind Koa are driven by
// the same autocannon load, so the HTTP client costs both the same.
//
// The rows: single transfers and atomic batches of 10 at 64 clients and batches of 1,000 at 8, over
// 1,000 and over 100,000 funded balances (random pairs, transfers of 1), the hot pair (every transfer
// between the same two balances) at 64 clients, and one client. Then the sweep: single transfers over
// 1,000 balances at 1 to 256 clients (the points a row already measured are that row), with bare Koa
// answering a static body for scale. Each load runs on every side with the same warm-up and the same
// measured seconds, one side right after the other, the order turned by one each load (so no side
// always gets the quieter moment), and each side waits before its window until the servers are done
// with earlier work (Folio's index, a snapshot, PostgreSQL's background work). Last, Folio's server
// CPU per single transfer over a million balances (FOLIO_BENCH_BALANCES; 100,000 in a quick run), on a
// second Folio funded with that set alone, beside the CPU of the rows over 1,000 and 100,000: total
// and by kind of thread, from /proc.
//
// Both ledgers commit durably: Folio answers after its log is flushed, PostgreSQL runs with fsync and
// synchronous_commit on. Everything listens on 127.0.0.1.

import os from 'node:os';
import { stopServers } from './http-bench.js';
import type { BenchResult } from './report.js';
import { expectJson, explainFailure, startBareKoa, startFolio, startPeerKoa, type RunningServer } from './servers.js';
import type { BenchSettings } from './settings.js';
import { fundOverHttp, IDLE, requestBody, runHttpPeerLoad, settleFolio, type HttpPeerLoad } from './peers/http-peer-load.js';
import { peersFigures, type CpuAtBalances, type RowFigures, type SweepPoint } from './peers/peer-figures.js';
import {
  BALANCE_COUNTS, CLIENTS, loadLabel, QUICK_BALANCE_COUNTS, pairSource, peerRows, SINGLE, sideOrder, SWEEP_CONNECTIONS, sweepLoads,
  type PeerLoad, type Side,
} from './peers/peer-workloads.js';
import { PEER_CLIENTS_MAX, PostgresPeerRig, type PostgresPeerLoad } from './peers/postgres-peer-load.js';

export interface PeerRow extends RowFigures {
  batch: number;
  /** The order the sides ran in. */
  order: Side[];
  /** The host's load averages as the row began. */
  load_average: number[];
  folio_http: HttpPeerLoad;
  peer_direct: PostgresPeerLoad;
  peer_koa: HttpPeerLoad;
}

type Log = (line: string) => void;

interface Rig {
  postgres: PostgresPeerRig;
  folio: RunningServer;
  peerKoa: RunningServer;
  /** Settles that ended with a server still busy: which side, after which load. */
  unsettled: string[];
}

/** One load on every side, in the order given; each side's servers settle after its warm-up and after its window. */
async function measureLoad(rig: Rig, load: PeerLoad, order: Side[], warmupSeconds: number, seconds: number): Promise<PeerRow> {
  const label = loadLabel(load);
  const loadAverage = os.loadavg().map((value) => Number(value.toFixed(2)));
  const settled = (side: string) => (idle: boolean): void => {
    if (!idle) rig.unsettled.push(`${side}, ${label}`);
  };
  const peerIdle = (side: string) => async (): Promise<void> => settled(side)(await rig.postgres.idle(IDLE));
  const measured: Partial<Pick<PeerRow, Side>> = {};
  for (const side of order) {
    if (side === 'peer_direct') {
      measured.peer_direct = await rig.postgres.load(load, warmupSeconds, seconds);
      await peerIdle(side)();
      continue;
    }
    const folio = side === 'folio_http';
    measured[side] = await runHttpPeerLoad({
      title: `${folio ? 'folio' : 'peer behind koa'} ${label}`, server: folio ? rig.folio : rig.peerKoa, load, seed: 7,
      warmupSeconds, seconds, cpu: folio,
      settle: folio ? async () => settled(side)(await settleFolio(rig.folio)) : peerIdle(side),
    });
  }
  return {
    label, workload: load.workload.name, balances: load.balances, clients: load.clients, batch: load.workload.batch,
    order, load_average: loadAverage, folio_http: measured.folio_http!, peer_direct: measured.peer_direct!, peer_koa: measured.peer_koa!,
  };
}

function rowLine(row: PeerRow): string {
  const rate = (value: number): string => `${Math.round(value)}/s`;
  return `peers: ${row.label}: Folio HTTP ${rate(row.folio_http.transfersPerSecond)}, peer direct ${rate(row.peer_direct.transfersPerSecond)}, ` +
    `peer behind Koa ${rate(row.peer_koa.transfersPerSecond)} (x${(row.folio_http.transfersPerSecond / row.peer_direct.transfersPerSecond).toFixed(2)} ` +
    `the direct peer; order ${row.order.join(', ')}; load ${row.load_average[0]})`;
}

/** The sweep's points from the rows and the sweep's own loads, each with bare Koa at the same client count. */
async function measureSweep(rows: PeerRow[], sweepRows: PeerRow[], smallest: number, bare: RunningServer, seconds: number, log: Log): Promise<SweepPoint[]> {
  const points: SweepPoint[] = [];
  for (const clients of SWEEP_CONNECTIONS) {
    const load: PeerLoad = { workload: SINGLE, balances: smallest, clients };
    const row = [...rows, ...sweepRows].find((candidate) => candidate.workload === 'single' && candidate.balances === load.balances && candidate.clients === clients);
    if (!row) throw new Error(`no measurement of ${loadLabel(load)}`);
    // A static answer needs no more than a second to warm up.
    const bareRun = await runHttpPeerLoad({
      title: `bare koa ${clients} clients`, server: bare, load, seed: 11, warmupSeconds: 1, seconds, cpu: false, settle: async () => undefined,
    });
    points.push({
      connections: clients, folio_http: row.folio_http.transfersPerSecond, peer_direct: row.peer_direct.transfersPerSecond,
      peer_koa: row.peer_koa.transfersPerSecond, bare_koa: bareRun.transfersPerSecond, folio_p50_ms: row.folio_http.latencyP50Ms,
      peer_direct_p50_ms: row.peer_direct.latencyMs.p50, peer_koa_p50_ms: row.peer_koa.latencyP50Ms,
    });
    log(`peers: sweep, ${clients} clients: Folio HTTP ${Math.round(row.folio_http.transfersPerSecond)}/s, peer direct ${Math.round(row.peer_direct.transfersPerSecond)}/s, ` +
      `peer behind Koa ${Math.round(row.peer_koa.transfersPerSecond)}/s, bare Koa ${Math.round(bareRun.transfersPerSecond)}/s`);
  }
  return points;
}

/** A second Folio with only the largest set, funded over HTTP, then single transfers at 64 clients: its CPU per transfer. */
async function measureLargestSet(balances: number, warmupSeconds: number, seconds: number, log: Log): Promise<{ fundingSeconds: number; load: HttpPeerLoad; unsettled: boolean }> {
  let folio: RunningServer | undefined;
  let failing = false;
  try {
    folio = await startFolio('peers-largest');
    const started = performance.now();
    log(`peers: funding ${balances.toLocaleString('en-US')} balances on a second Folio`);
    await fundOverHttp(folio.url, balances);
    let settled = await settleFolio(folio);
    const fundingSeconds = (performance.now() - started) / 1000;
    log(`peers: funded and settled in ${fundingSeconds.toFixed(1)} s`);
    const server = folio;
    const load = await runHttpPeerLoad({
      title: `folio single over ${balances} balances`, server, load: { workload: SINGLE, balances, clients: CLIENTS }, seed: 7,
      warmupSeconds, seconds, cpu: true,
      settle: async () => {
        const idle = await settleFolio(server);
        settled = settled && idle;
      },
    });
    return { fundingSeconds, load, unsettled: !settled };
  } catch (error) {
    failing = true;
    throw explainFailure(error, [folio]);
  } finally {
    await stopServers([folio], failing, log);
  }
}

export async function peersBench(settings: BenchSettings, benchLog: Log): Promise<BenchResult> {
  const began = performance.now();
  const log: Log = (line) => benchLog(`[${((performance.now() - began) / 1000).toFixed(0).padStart(4)} s] ${line}`);
  const balanceCounts = settings.quick ? QUICK_BALANCE_COUNTS : BALANCE_COUNTS;
  const warmupSeconds = settings.quick ? 1 : 3;
  // The sweep's own points are half a row's length (a quick run's 1 s): 1 to 256 clients in the time of two rows.
  const sweepSeconds = Math.max(1, Math.round(settings.seconds / 2));
  const largest = settings.balances;
  let postgres: PostgresPeerRig | undefined;
  let folio: RunningServer | undefined;
  let peerKoa: RunningServer | undefined;
  let bare: RunningServer | undefined;
  let failing = false;
  const rows: PeerRow[] = [];
  const sweepRows: PeerRow[] = [];
  let sweep: SweepPoint[];
  let postgresVersion: string;
  const fundingSeconds: Record<string, number> = {};
  const unsettled: string[] = [];
  try {
    postgres = await PostgresPeerRig.start();
    postgresVersion = postgres.server.version;
    log(`peers: ${postgresVersion.split(',')[0]} on 127.0.0.1:${postgres.server.connection.port}`);
    folio = await startFolio('peers');
    peerKoa = await startPeerKoa(postgres.server.connection, PEER_CLIENTS_MAX);
    for (const balances of balanceCounts) {
      log(`peers: funding ${balances.toLocaleString('en-US')} balances on Folio and on the peer`);
      const started = performance.now();
      await Promise.all([postgres.fund(balances), fundOverHttp(folio.url, balances)]);
      fundingSeconds[String(balances)] = (performance.now() - started) / 1000;
    }
    await postgres.settle();
    await settleFolio(folio);
    const rig: Rig = { postgres, folio, peerKoa, unsettled };
    const plan = peerRows(balanceCounts);
    for (const [index, load] of plan.entries()) {
      const row = await measureLoad(rig, load, sideOrder(index), warmupSeconds, settings.seconds);
      rows.push(row);
      log(rowLine(row));
    }
    for (const [index, load] of sweepLoads(plan, balanceCounts).entries()) {
      const row = await measureLoad(rig, load, sideOrder(plan.length + index), warmupSeconds, sweepSeconds);
      sweepRows.push(row);
      log(rowLine(row));
    }
    // Bare Koa answers with the JSON of a real Folio transfer, as in the http bench.
    const sample = await expectJson(folio.url, 'POST', '/transactions', 201, JSON.parse(requestBody(plan[0]!, pairSource(SINGLE, balanceCounts[0]!, 3))));
    bare = await startBareKoa(sample.text);
    sweep = await measureSweep(rows, sweepRows, balanceCounts[0]!, bare, sweepSeconds, log);
    if (!(await postgres.sumsToZero())) throw new Error('the Postgres peer\'s balances do not sum to zero after the run');
  } catch (error) {
    failing = true;
    throw explainFailure(error, [bare, peerKoa, folio]);
  } finally {
    await stopServers([bare, peerKoa, folio], failing, log);
    await postgres?.stop().catch((error: unknown) => {
      if (!failing) throw error;
      log(`also: ${(error as Error).message}`);
    });
  }

  const largestRun = await measureLargestSet(largest, warmupSeconds, settings.seconds, log);
  if (largestRun.unsettled) unsettled.push(`folio_http, ${largest} balances`);
  const cpu: CpuAtBalances[] = balanceCounts.map((balances) => {
    const row = rows.find((candidate) => candidate.workload === 'single' && candidate.balances === balances && candidate.clients === CLIENTS);
    return { balances, cpu: row!.folio_http.cpuMicrosPerTransfer! };
  });
  cpu.push({ balances: largest, cpu: largestRun.load.cpuMicrosPerTransfer! });
  for (const size of cpu) {
    log(`peers: server CPU per single transfer over ${size.balances} balances: ${size.cpu.total.toFixed(1)} µs ` +
      `(engine ${size.cpu.engine.toFixed(1)}, HTTP workers ${size.cpu.http.toFixed(1)}, the rest ${size.cpu.other.toFixed(1)})`);
  }
  return {
    name: 'peers',
    figures: peersFigures(rows, sweep, cpu, balanceCounts[0]),
    details: {
      postgres_version: postgresVersion,
      postgres_durability: 'fsync on, synchronous_commit on, full_page_writes on',
      folio_http: `the built server as npm start runs it (query index included), holding the ${balanceCounts.join(' and ')} balance sets`,
      peer_direct: 'the peer\'s plpgsql transfer called with pg from the bench process, one connection per client',
      peer_koa: `the same peer behind bare Koa + koa-body with a pg pool of ${PEER_CLIENTS_MAX} connections opened before the run (at N clients, N busy)`,
      largest_set: `a second Folio holding only the ${largest} balances, single transfers at ${CLIENTS} clients`,
      warmup_seconds: warmupSeconds,
      seconds: settings.seconds,
      sweep_seconds: sweepSeconds,
      funding_seconds: { ...fundingSeconds, [String(largest)]: largestRun.fundingSeconds },
      unsettled,
      rows,
      sweep_rows: sweepRows,
      sweep,
      cpu_per_transfer: cpu,
      largest_set_load: largestRun.load,
    },
  };
}
