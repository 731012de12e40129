// Bench `replication`: issue 30's table, in one run on this machine.
//   - synchronous transfers over HTTP at `connections` connections against a single node (replication
//     off) and against the leader of a two-node group on PostgreSQL (replication on), the two loads
//     interleaved round by round (off, on, off, on, ...) so host drift cancels in the paired ratio; the
//     p99 each time;
//   - the p99 replication adds at those connections: both again at one offered rate (half the lower of
//     the round's two maximum rates, so neither is saturated), paired. At the maximum rate a closed loop
//     of N connections waits N / throughput on average, so there the p99 measures the throughput lost
//     (the ratio above) more than the latency a commit in PostgreSQL adds; that difference is reported
//     too, against the same target (docs/performance.md says why the two differ);
//   - both again against a second group whose PostgreSQL keeps its files on a RAM-backed directory
//     (/dev/shm), standing in for a database on a device of its own as operators run it; labelled so in
//     every figure. The same-disk group shares this machine's one disk with both nodes and the load, so
//     each commit in PostgreSQL queues behind the nodes' own fsyncs;
//   - the standby's apply lag (commit in PostgreSQL to applied on the standby) while the leader takes
//     that load: the p99 of the records it applied during the round, the worst round reported;
//   - failover: a steady load of synchronous transfers from clients that resend with their reference
//     until answered, the leader SIGKILLed, the time from the kill to the first write acknowledged by the
//     new leader; the killed node started again (it rejoins as a standby) before the next kill; the worst
//     of the kills reported;
//   - every write acknowledged during the kills looked up by reference on the final leader: the number
//     missing (or recorded with another id) is the acknowledged writes lost.
// Every load response must be 2xx (load.ts), so a throughput figure never counts refusals.

import fs from 'node:fs';
import { GroupWriter, call, type Acknowledged } from './replication/group-client.js';
import { ReplicatedGroup, type GroupNode } from './replication/replicated-group.js';
import { runLoad, type LoadSummary } from './load.js';
import type { BenchResult, Figure } from './report.js';
import { expectJson, explainFailure, startFolio, type RunningServer } from './servers.js';
import type { BenchSettings } from './settings.js';
import { median } from './stats.js';

export const RATIO_TARGET = 0.7;
export const P99_ADDED_TARGET_MS = 3;
export const FAILOVER_TARGET_MS = 5_000;
export const LAG_P99_TARGET_MS = 250;

const TRANSFER = {
  source: '@bench-src', destination: '@bench-dst', precise_amount: 1, precision: 100, currency: 'USD',
  description: 'replication bench', skip_queue: true,
};
const FUNDING = {
  description: 'test', source: '@bench-world', destination: '@bench-src', precise_amount: '1000000000000000000', precision: 100,
  currency: 'USD', allow_overdraft: true, skip_queue: true,
};
/** Clients writing during the kills (each waits for its answer, as a payment service would). */
const FAILOVER_CLIENTS = 8;

/** The offered rate of the equal-load pair, as a share of the lower of the round's maximum rates. */
const EQUAL_LOAD_SHARE = 0.5;

/** A RAM-backed directory for the second group's PostgreSQL, where the machine has one. */
const RAM_DIR = '/dev/shm';

interface Round {
  off: LoadSummary;
  on: LoadSummary;
  /** Replication on, PostgreSQL's files on RAM_DIR (absent where the machine has none). */
  on_ram?: LoadSummary;
  /** All again at one offered rate none is saturated by. */
  equal: { rate: number; off: LoadSummary; on: LoadSummary; on_ram?: LoadSummary };
  /** The standby's apply lag over the records it applied during the round. */
  lag_p99_ms: number;
  lag_samples: number;
}

export async function replicationBench(settings: BenchSettings, log: (line: string) => void): Promise<BenchResult> {
  const rounds: Round[] = [];
  let single: RunningServer | undefined;
  let group: ReplicatedGroup | undefined;
  let ramGroup: ReplicatedGroup | undefined;
  let failing = false;
  try {
    // A replicated node serves HTTP on server.workers threads as a single node does (docs/decisions-threads.md):
    // both run the default, so the ratio is replication's cost alone.
    single = await startFolio('replication-off');
    group = await ReplicatedGroup.start({ nodes: 2, label: 'bench-replication', env: { FOLIO_LOG_LEVEL: process.env.FOLIO_BENCH_SERVER_LOG_LEVEL ?? 'warn' } });
    const leader = await group.waitForLeader(60_000);
    const standby = group.nodes.find((node) => node !== leader) as GroupNode;
    await group.waitForStandby(standby, 60_000);
    let ramLeader: GroupNode | undefined;
    if (fs.existsSync(RAM_DIR)) {
      ramGroup = await ReplicatedGroup.start({
        nodes: 2, label: 'bench-replication-ram', postgresParentDir: RAM_DIR, env: { FOLIO_LOG_LEVEL: process.env.FOLIO_BENCH_SERVER_LOG_LEVEL ?? 'warn' },
      });
      ramLeader = await ramGroup.waitForLeader(60_000);
      await ramGroup.waitForStandby(ramGroup.nodes.find((node) => node !== ramLeader) as GroupNode, 60_000);
    } else {
      log(`replication: no ${RAM_DIR} on this machine; the figures with PostgreSQL on RAM are left out`);
    }
    for (const url of [single.url, leader.url as string, ...(ramLeader ? [ramLeader.url as string] : [])]) {
      await expectJson(url, 'POST', '/transactions', 201, FUNDING);
      await expectJson(url, 'POST', '/transactions', 201, TRANSFER);
    }
    const body = JSON.stringify(TRANSFER);
    const load = (title: string, url: string, seconds: number, pid?: number, overallRate?: number): Promise<LoadSummary> =>
      runLoad({ title, url, path: '/transactions', body, connections: settings.connections, seconds, serverPid: pid, overallRate });
    const warmupSeconds = Math.min(5, settings.seconds);
    log(`replication: warm-up ${warmupSeconds} s each`);
    await load('off warm-up', single.url, warmupSeconds);
    await load('on warm-up', leader.url as string, warmupSeconds);
    if (ramLeader) await load('on (PostgreSQL on RAM) warm-up', ramLeader.url as string, warmupSeconds);
    for (let round = 1; round <= settings.rounds; round += 1) {
      const off = await load(`off round ${round}`, single.url, settings.seconds, single.pid);
      const started = performance.now();
      const on = await load(`on round ${round}`, leader.url as string, settings.seconds, leader.child?.pid);
      const lag = await lagOf(standby, performance.now() - started);
      const onRam = ramLeader ? await load(`on (PostgreSQL on RAM) round ${round}`, ramLeader.url as string, settings.seconds, ramLeader.child?.pid) : undefined;
      const rate = Math.round(EQUAL_LOAD_SHARE * Math.min(off.requestsPerSecond, on.requestsPerSecond, onRam?.requestsPerSecond ?? Infinity));
      const equal = {
        rate,
        off: await load(`off round ${round} at ${rate} req/s`, single.url, settings.seconds, single.pid, rate),
        on: await load(`on round ${round} at ${rate} req/s`, leader.url as string, settings.seconds, leader.child?.pid, rate),
        on_ram: ramLeader ? await load(`on (PostgreSQL on RAM) round ${round} at ${rate} req/s`, ramLeader.url as string, settings.seconds, ramLeader.child?.pid, rate) : undefined,
      };
      rounds.push({ off, on, on_ram: onRam, equal, lag_p99_ms: lag.p99, lag_samples: lag.samples });
      const ramLine = onRam && equal.on_ram ? `; PostgreSQL on RAM ${onRam.requestsPerSecond.toFixed(0)} req/s p99 ${onRam.latencyP99Ms} ms, at ${rate} req/s p99 ${equal.on_ram.latencyP99Ms} ms` : '';
      log(`replication: round ${round} off ${off.requestsPerSecond.toFixed(0)} req/s p99 ${off.latencyP99Ms} ms; on ${on.requestsPerSecond.toFixed(0)} req/s p99 ${on.latencyP99Ms} ms; standby lag p99 ${lag.p99.toFixed(1)} ms; at ${rate} req/s p99 off ${equal.off.latencyP99Ms} ms, on ${equal.on.latencyP99Ms} ms${ramLine}`);
    }
    await single.stop();
    single = undefined;
    await ramGroup?.stop();
    ramGroup = undefined;
    const kills = await failovers(group, settings.quick ? 1 : 3, log);
    return result(settings, rounds, kills);
  } catch (error) {
    failing = true;
    throw explainFailure(error, [single]);
  } finally {
    await single?.stop().catch((error: unknown) => {
      if (!failing) throw error;
    });
    await ramGroup?.stop();
    await group?.stop();
  }
}

/** The standby's apply lag over the records it applied in the last `windowMs`, as it reports it. */
async function lagOf(standby: GroupNode, windowMs: number): Promise<{ p99: number; samples: number }> {
  const answer = await call(standby.url as string, 'GET', `/admin/replication?lag_window_ms=${Math.ceil(windowMs)}`);
  const lag = answer.body?.lag_percentiles_ms as { p99: number; samples: number } | undefined;
  if (!lag || lag.samples === 0) throw new Error(`the standby reported no apply lag for the round: ${JSON.stringify(answer.body)}`);
  return { p99: Number(lag.p99), samples: Number(lag.samples) };
}

interface Kill {
  killed: string;
  successor: string;
  first_acknowledged_ms: number;
}

/** Kills the leader `count` times under a steady load; returns each kill and the writes lost. */
async function failovers(group: ReplicatedGroup, count: number, log: (line: string) => void): Promise<{ kills: Kill[]; acknowledged: number; lost: string[] }> {
  const writer = new GroupWriter(group, 120_000);
  let stopping = false;
  let sent = 0;
  const clients = Array.from({ length: FAILOVER_CLIENTS }, async (_, client) => {
    while (!stopping) {
      sent += 1;
      await writer.transfer({
        description: 'test', source: '@bench-world', destination: `@bench-fail${client}`, currency: 'USD', precise_amount: BigInt(1 + (sent % 1000)),
        reference: `bench-kill-${process.pid}-${client}-${sent}`, allow_overdraft: true, skip_queue: true,
      });
    }
  });
  const acknowledgedAtLeast = (acks: number) => group.waitFor(`${acks} acknowledged`, 120_000, async () => (writer.acknowledged.length >= acks ? true : undefined));
  const kills: Kill[] = [];
  try {
    for (let kill = 0; kill < count; kill += 1) {
      await acknowledgedAtLeast(writer.acknowledged.length + 200);
      const leader = await group.waitForLeader(60_000);
      const killedAt = performance.now();
      await group.kill(leader);
      const first = await group.waitFor('a write acknowledged by the new leader', 120_000, async () =>
        writer.acknowledged.find((ack: Acknowledged) => ack.at_ms > killedAt && ack.node_url !== leader.url));
      const successor = group.nodes.find((node) => node.url === first.node_url)?.name ?? first.node_url;
      kills.push({ killed: leader.name, successor, first_acknowledged_ms: first.at_ms - killedAt });
      log(`replication: killed ${leader.name}; ${successor} acknowledged a write ${(first.at_ms - killedAt).toFixed(0)} ms later`);
      await group.startNode(leader);
      await group.waitForStandby(leader, 60_000);
    }
    await acknowledgedAtLeast(writer.acknowledged.length + 100);
  } finally {
    stopping = true;
    await Promise.all(clients);
  }
  const leader = await group.waitForLeader(60_000);
  const lost: string[] = [];
  for (const ack of writer.acknowledged) {
    const found = await call(leader.url as string, 'GET', `/transactions/reference/${encodeURIComponent(ack.transfer.reference)}`);
    if (found.status !== 200 || found.body.transaction_id !== ack.transaction_id) lost.push(ack.transfer.reference);
  }
  log(`replication: ${writer.acknowledged.length} writes acknowledged over the kills, ${lost.length} lost`);
  return { kills, acknowledged: writer.acknowledged.length, lost };
}

function result(settings: BenchSettings, rounds: Round[], failover: { kills: Kill[]; acknowledged: number; lost: string[] }): BenchResult {
  const paired = (value: (round: Round) => number): number => median(rounds.map(value));
  const figures: Figure[] = [
    { label: 'replication off: transfers/s (median)', value: median(rounds.map((round) => round.off.requestsPerSecond)), unit: 'req/s' },
    { label: 'replication on: transfers/s (median)', value: median(rounds.map((round) => round.on.requestsPerSecond)), unit: 'req/s' },
    {
      label: 'on / off, transfers/s (paired rounds)', value: paired((round) => round.on.requestsPerSecond / round.off.requestsPerSecond), unit: 'ratio', digits: 2,
      target: { op: '>=', value: RATIO_TARGET },
    },
    { label: `replication off: p99 at ${settings.connections} connections`, value: median(rounds.map((round) => round.off.latencyP99Ms)), unit: 'ms' },
    { label: `replication on: p99 at ${settings.connections} connections`, value: median(rounds.map((round) => round.on.latencyP99Ms)), unit: 'ms' },
    {
      label: 'p99 added by replication (paired rounds, maximum rate)', value: paired((round) => round.on.latencyP99Ms - round.off.latencyP99Ms), unit: 'ms', digits: 1,
      target: { op: '<=', value: P99_ADDED_TARGET_MS },
    },
    { label: `replication off: p99 at ${settings.connections} connections, equal offered rate`, value: median(rounds.map((round) => round.equal.off.latencyP99Ms)), unit: 'ms' },
    { label: `replication on: p99 at ${settings.connections} connections, equal offered rate`, value: median(rounds.map((round) => round.equal.on.latencyP99Ms)), unit: 'ms' },
    {
      label: 'p99 added by replication (paired rounds, equal offered rate)', value: paired((round) => round.equal.on.latencyP99Ms - round.equal.off.latencyP99Ms), unit: 'ms', digits: 1,
      target: { op: '<=', value: P99_ADDED_TARGET_MS }, note: `offered ${median(rounds.map((round) => round.equal.rate)).toFixed(0)} req/s, ${EQUAL_LOAD_SHARE} of the lower maximum`,
    },
    ...ramFigures(settings, rounds),
    {
      label: 'leader SIGKILL to first acknowledged write on the new leader (worst)', value: Math.max(...failover.kills.map((kill) => kill.first_acknowledged_ms)), unit: 'ms',
      target: { op: '<=', value: FAILOVER_TARGET_MS }, note: `${failover.kills.length} kills`,
    },
    {
      label: 'standby apply lag p99 at the leader\'s maximum rate (worst round)', value: Math.max(...rounds.map((round) => round.lag_p99_ms)), unit: 'ms', digits: 1,
      target: { op: '<=', value: LAG_P99_TARGET_MS },
    },
    {
      label: 'acknowledged writes lost over the kills', value: failover.lost.length, unit: 'writes',
      target: { op: '<=', value: 0 }, note: `of ${failover.acknowledged}; the kill test in npm test checks the same (test/replication-failover.int.test.ts)`,
    },
  ];
  return {
    name: 'replication',
    figures,
    details: { connections: settings.connections, seconds_per_round: settings.seconds, rounds, kills: failover.kills, lost: failover.lost.slice(0, 20) },
  };
}

/** The same figures against the group whose PostgreSQL keeps its files on RAM_DIR, where it ran. */
function ramFigures(settings: BenchSettings, rounds: Round[]): Figure[] {
  const measured = rounds.filter((round): round is Round & { on_ram: LoadSummary; equal: { on_ram: LoadSummary } } => round.on_ram !== undefined && round.equal.on_ram !== undefined);
  if (measured.length === 0) return [];
  const label = `PostgreSQL on RAM (${RAM_DIR})`;
  return [
    { label: `replication on, ${label}: transfers/s (median)`, value: median(measured.map((round) => round.on_ram.requestsPerSecond)), unit: 'req/s' },
    {
      label: `on / off, ${label}, transfers/s (paired rounds)`, value: median(measured.map((round) => round.on_ram.requestsPerSecond / round.off.requestsPerSecond)), unit: 'ratio', digits: 2,
      target: { op: '>=', value: RATIO_TARGET },
    },
    {
      label: `p99 added by replication, ${label} (paired rounds, maximum rate)`, value: median(measured.map((round) => round.on_ram.latencyP99Ms - round.off.latencyP99Ms)), unit: 'ms', digits: 1,
      target: { op: '<=', value: P99_ADDED_TARGET_MS }, note: `${settings.connections} connections`,
    },
    {
      label: `p99 added by replication, ${label} (paired rounds, equal offered rate)`, value: median(measured.map((round) => round.equal.on_ram.latencyP99Ms - round.equal.off.latencyP99Ms)), unit: 'ms', digits: 1,
      target: { op: '<=', value: P99_ADDED_TARGET_MS },
    },
  ];
}
