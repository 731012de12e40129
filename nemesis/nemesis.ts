// A nemesis run over a replicated group (issue 40): three real `folio serve` processes on one embedded
// PostgreSQL, each behind a TCP relay to it, each with its data directory on a size-capped disk when the
// machine allows and its clocks read through a skew file; clients write a steady mix
// (nemesis/workload.ts) while a seeded schedule of faults (nemesis/schedule.ts) is carried out
// (nemesis/faults.ts). Then, as TigerBeetle's simulator does at the end of a run, every fault is healed
// and the group must recover on its own (a leader, writes acknowledged again, every node caught up:
// liveness); then the clients stop and the checker (nemesis/checker.ts) holds the history against the
// group's log and every node. `npm run nemesis` (nemesis/nemesis-run.ts) and test/nemesis.int.test.ts
// run it; docs/operations.md says what a seed fixes and what it does not.

import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../bench/postgres/postgres-server.js';
import { ReplicatedGroup } from '../bench/replication/replicated-group.js';
import { makeTempDir } from '../bench/resources.js';
import { TcpRelay } from '../bench/replication/tcp-relay.js';
import { ensureSchema } from '../replication/postgres/replication-schema.js';
import { checkRun, type CheckReport, type Violation } from './checker.js';
import { DiskQuota, InjectedFullDisk, type FullDisk } from './disk-quota.js';
import { FaultInjector } from './faults.js';
import type { History } from './history.js';
import { describeFault, FAULT_KINDS, planFaults, type FaultKind, type PlannedFault } from './schedule.js';
import { Workload } from './workload.js';

export interface NemesisOptions {
  seed: number;
  /** How long faults keep coming. */
  chaos_ms: number;
  /** At most this many faults (the schedule is cut there: a way to replay a failure's first faults). */
  faults_max: number;
  clients: number;
  lease_ms: number;
  /** Mean time between the starts of two faults. */
  gap_ms_mean: number;
  request_timeout_ms: number;
  patience_ms: number;
  /** The first faults are one of each kind (nemesis/schedule.ts). */
  each_kind_first?: boolean;
  /** A progress line every few seconds (stderr for the command; a test's comment). */
  progress?: (line: string) => void;
}

export const DEFAULT_NEMESIS_OPTIONS: Omit<NemesisOptions, 'seed' | 'chaos_ms'> = {
  faults_max: 1_000_000,
  clients: 6,
  lease_ms: 2_500,
  gap_ms_mean: 2_500,
  request_timeout_ms: 4_000,
  patience_ms: 20_000,
};

export interface NemesisReport {
  seed: number;
  options: Omit<NemesisOptions, 'progress'>;
  disks: typeof SIZE_CAPPED | typeof INJECTED;
  chaos_ms: number;
  total_ms: number;
  faults: Record<FaultKind, { planned: number; done: number; skipped: number }>;
  faults_done: number;
  /** Faults the harness itself failed to carry out (not violations: the group was not at fault). */
  faults_failed: string[];
  violations: Violation[];
  violation_count: number;
  check: CheckReport['figures'] | undefined;
  /** How long after the last fault was healed the group acknowledged a write again, and caught up. */
  recovery_ms: { first_write: number | undefined; caught_up: number | undefined };
  /**
   * Every end of a node process. An end other than the log's own stop (exit 70) keeps the tail of the
   * node's stderr, so an end a full disk caused somewhere else than the log says where.
   */
  node_exits: Array<{ node: string; how: number | string; expected: boolean; stderr_tail?: string }>;
  schedule_head: string[];
}

const NODES = 3;
/** How the run's full disks were made (the report says which). */
const SIZE_CAPPED = 'size-capped (loop-mounted ext4)';
const INJECTED = 'write errors injected at the log (no size-capped disks here)';
const START_MS = 60_000;
const RECOVERY_MS = 90_000;
const PROGRESS_EVERY_MS = 5_000;

/** The trigger that records every take of a term: who took it (the checker's "terms"). */
const TERM_TRIGGER = [
  `CREATE TABLE IF NOT EXISTS nemesis_terms (term bigint NOT NULL, holder text NOT NULL, holder_name text NOT NULL, taken_at timestamptz NOT NULL DEFAULT clock_timestamp())`,
  `CREATE OR REPLACE FUNCTION nemesis_term_taken() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     IF NEW.term <> OLD.term THEN INSERT INTO nemesis_terms (term, holder, holder_name) VALUES (NEW.term, NEW.holder, NEW.holder_name); END IF;
     RETURN NEW;
   END $$`,
  `CREATE TRIGGER nemesis_term_taken AFTER UPDATE ON folio_lease FOR EACH ROW EXECUTE FUNCTION nemesis_term_taken()`,
];


function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function prepareDatabase(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await ensureSchema(client);
    for (const statement of TERM_TRIGGER) await client.query(statement);
  } finally {
    await client.end().catch(() => undefined);
  }
}

function tallyFaults(plan: readonly PlannedFault[], history: History): Pick<NemesisReport, 'faults' | 'faults_done'> {
  const faults = Object.fromEntries(FAULT_KINDS.map((kind) => [kind, { planned: 0, done: 0, skipped: 0 }])) as NemesisReport['faults'];
  for (const fault of plan) faults[fault.kind].planned += 1;
  for (const record of history.faults) {
    if (record.done) faults[record.kind].done += 1;
    else faults[record.kind].skipped += 1;
  }
  return { faults, faults_done: history.faults.filter((record) => record.done).length };
}

export async function runNemesis(options: NemesisOptions): Promise<NemesisReport> {
  const began = performance.now();
  const say = options.progress ?? (() => undefined);
  const plan = planFaults(options.seed, { chaos_ms: options.chaos_ms, lease_ms: options.lease_ms, gap_ms_mean: options.gap_ms_mean, faults_max: options.faults_max, each_kind_first: options.each_kind_first ?? false });
  const history: History = { writes: [], reads: [], faults: [], health: [], exits: [] };
  // FOLIO_NEMESIS_DISKS=injected takes the fallback where size-capped disks could be made (to test it).
  const disksAvailable = process.env.FOLIO_NEMESIS_DISKS !== 'injected' && DiskQuota.available();
  const group = await ReplicatedGroup.start({
    nodes: NODES, label: 'nemesis', startAll: false, leaseMs: options.lease_ms, env: { FOLIO_TEST_HOOKS: '1' },
    postgresSettings: { max_connections: '100' },
  });
  const relays = new Map<string, TcpRelay>();
  const disks = new Map<string, FullDisk>();
  const clockFiles = new Map<string, string>();
  const clockDir = makeTempDir('nemesis-clocks');
  let injector: FaultInjector | undefined;
  let workload: Workload | undefined;
  const violations: Violation[] = [];
  const recovery: NemesisReport['recovery_ms'] = { first_write: undefined, caught_up: undefined };
  let check: CheckReport | undefined;
  let chaosMs = 0;
  try {
    await prepareDatabase(group.postgres.url);
    for (const node of group.nodes) {
      const relay = await TcpRelay.start({ host: group.postgres.connection.host, port: group.postgres.connection.port });
      relays.set(node.name, relay);
      node.postgresUrl = relay.urlFor(group.postgres.url);
      node.port = await freePort();
      const clockFile = path.join(clockDir, `${node.name}.json`);
      clockFiles.set(node.name, clockFile);
      node.env = { FOLIO_TEST_CLOCK_FILE: clockFile };
      if (disksAvailable) {
        const disk = DiskQuota.make(node.name);
        disks.set(node.name, disk);
        node.dataDir = disk.dataDir;
      } else {
        const disk = new InjectedFullDisk(path.join(clockDir, `${node.name}.disk-full`));
        disks.set(node.name, disk);
        node.env.FOLIO_TEST_DISK_FULL_FILE = disk.file;
      }
    }
    injector = new FaultInjector({ group, relays, disks, clockFiles }, history);
    const [first, ...others] = group.nodes;
    await injector.start(first!);
    await group.waitForLeader(START_MS);
    for (const node of others) await injector.start(node);
    for (const node of others) await group.waitForStandby(node, START_MS);
    injector.watch();
    const urls = group.nodes.map((node) => `http://127.0.0.1:${node.port}`);
    const names = new Map(group.nodes.map((node) => [`http://127.0.0.1:${node.port}`, node.name]));
    workload = new Workload(
      { seed: options.seed, clients: options.clients, request_timeout_ms: options.request_timeout_ms, patience_ms: options.patience_ms },
      { urls: () => urls, nameOf: (url) => names.get(new URL(url).origin) ?? url },
      history,
    );
    workload.start();
    say(`nemesis seed ${options.seed}: ${plan.length} faults planned over ${Math.round(options.chaos_ms / 1000)} s; disks ${disksAvailable ? SIZE_CAPPED : INJECTED}`);

    // Chaos: each fault starts at its time, several at once when they overlap.
    const chaosBegan = performance.now();
    const running: Array<Promise<unknown>> = [];
    let nextProgress = chaosBegan + PROGRESS_EVERY_MS;
    for (const fault of plan) {
      for (;;) {
        const now = performance.now();
        const due = chaosBegan + fault.at_ms;
        if (now >= due) break;
        if (now >= nextProgress) {
          say(progressLine(history, now - chaosBegan));
          nextProgress += PROGRESS_EVERY_MS;
        }
        await sleep(Math.min(due - now, 250));
      }
      running.push(injector.carryOut(fault));
    }
    await Promise.all(running);
    chaosMs = performance.now() - chaosBegan;
    say(`${progressLine(history, chaosMs)}; healing everything`);

    // Liveness: with every fault healed the group must recover by itself.
    await injector.healAll();
    const healedAt = performance.now();
    const acknowledgedBefore = history.writes.filter((op) => op.outcome === 'ok').length;
    recovery.first_write = await waitUntil(RECOVERY_MS, async () => (
      history.writes.filter((op) => op.outcome === 'ok').length > acknowledgedBefore ? performance.now() - healedAt : undefined));
    if (recovery.first_write === undefined) violations.push({ check: 'liveness', detail: `no write was acknowledged within ${RECOVERY_MS} ms of every fault being healed\n${group.describe()}` });
    await workload.stop();
    recovery.caught_up = await waitUntil(RECOVERY_MS, async () => (await caughtUp(group) ? performance.now() - healedAt : undefined));
    if (recovery.caught_up === undefined) violations.push({ check: 'liveness', detail: `the nodes did not all reach the log's end within ${RECOVERY_MS} ms of every fault being healed\n${group.describe()}` });
    await injector.stop();
    say('checking');
    const nodes = group.nodes.filter((node) => group.isRunning(node)).map((node) => ({ name: node.name, url: node.url as string }));
    if (nodes.length < NODES) violations.push({ check: 'liveness', detail: `only ${nodes.map((node) => node.name).join(', ')} running at the end` });
    check = await checkRun(history, group.postgres.url, nodes, say);
  } catch (error) {
    violations.push({ check: 'run', detail: `the run itself failed: ${(error as Error).stack ?? (error as Error).message}\n${group.describe()}` });
  } finally {
    if (workload) {
      workload.stopping = true;
    }
    await injector?.stop();
    for (const relay of relays.values()) await relay.close().catch(() => undefined);
    await group.stop().catch(() => undefined);
    for (const disk of disks.values()) disk.release();
    fs.rmSync(clockDir, { recursive: true, force: true });
  }
  const all = [...violations, ...(check?.violations ?? [])];
  return {
    seed: options.seed,
    options: {
      seed: options.seed, chaos_ms: options.chaos_ms, faults_max: options.faults_max, clients: options.clients, lease_ms: options.lease_ms,
      gap_ms_mean: options.gap_ms_mean, request_timeout_ms: options.request_timeout_ms, patience_ms: options.patience_ms,
    },
    disks: disksAvailable ? SIZE_CAPPED : INJECTED,
    chaos_ms: Math.round(chaosMs),
    total_ms: Math.round(performance.now() - began),
    ...tallyFaults(plan, history),
    faults_failed: history.faults.filter((record) => record.failed !== undefined).map((record) => `${describeFault(record.planned)}: ${record.failed}`),
    violations: all,
    violation_count: violations.length + (check?.violation_count ?? 0),
    check: check?.figures,
    recovery_ms: { first_write: round(recovery.first_write), caught_up: round(recovery.caught_up) },
    node_exits: history.exits.map((exit) => ({ node: exit.node, how: exit.how, expected: exit.expected, ...(exit.how === 70 ? {} : { stderr_tail: exit.stderr_tail }) })),
    schedule_head: plan.slice(0, 5).map(describeFault),
  };
}

function round(value: number | undefined): number | undefined {
  return value === undefined ? undefined : Math.round(value);
}

async function waitUntil<T>(timeoutMs: number, check: () => Promise<T | undefined>): Promise<T | undefined> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    const value = await check();
    if (value !== undefined) return value;
    await sleep(200);
  }
  return undefined;
}

/** Every node runs, one leads, and all have applied the same seq. */
async function caughtUp(group: ReplicatedGroup): Promise<boolean> {
  const healths = await Promise.all(group.nodes.map((node) => group.health(node)));
  if (healths.some((health) => health === undefined)) return false;
  if (healths.filter((health) => health!.role === 'leader').length !== 1) return false;
  return new Set(healths.map((health) => health!.applied_seq)).size === 1;
}

function progressLine(history: History, elapsedMs: number): string {
  const outcomes = { ok: 0, refused: 0, unknown: 0 };
  for (const op of history.writes) outcomes[op.outcome] += 1;
  const done = history.faults.filter((record) => record.done);
  const kinds = FAULT_KINDS.map((kind) => `${kind} ${done.filter((record) => record.kind === kind).length}`).join(', ');
  const leader = [...history.health].reverse().find((sample) => sample.role === 'leader');
  return `${Math.round(elapsedMs / 1000)} s: faults ${done.length} (${kinds}); writes ok ${outcomes.ok}, refused ${outcomes.refused}, unknown ${outcomes.unknown}; last leader ${leader ? `${leader.node} term ${leader.term}` : 'none yet'}`;
}

/** The report as text: the figures, then each violation. */
export function formatReport(report: NemesisReport, replay: string): string {
  const lines: string[] = [];
  lines.push(`nemesis seed ${report.seed}: ${report.violation_count === 0 ? 'no violations' : `${report.violation_count} VIOLATIONS`}`);
  lines.push(`  chaos ${Math.round(report.chaos_ms / 1000)} s, whole run ${Math.round(report.total_ms / 1000)} s; lease ${report.options.lease_ms} ms; ${report.options.clients} clients; disks ${report.disks}`);
  lines.push(`  faults injected ${report.faults_done}: ${FAULT_KINDS.map((kind) => `${kind} ${report.faults[kind].done}${report.faults[kind].skipped ? ` (+${report.faults[kind].skipped} skipped)` : ''}`).join(', ')}`);
  const figures = report.check;
  if (figures) {
    const writes = Object.entries(figures.writes).map(([kind, tally]) => `${kind} ${tally!.ok}/${tally!.refused}/${tally!.unknown}${tally!.unknown ? ` (${tally!.unknown_present} of those in the log)` : ''}`);
    lines.push(`  writes ok/refused/unknown: ${writes.join(', ')}`);
    const answers = Object.entries(figures.answers).sort((a, b) => b[1] - a[1]).map(([answer, count]) => `${answer}: ${count}`);
    lines.push(`  answers to attempts: ${answers.join(', ')}`);
    lines.push(`  reads with X-Folio-Seq: ${Object.entries(figures.reads).map(([answer, count]) => `${answer}: ${count}`).join(', ') || 'none'}`);
    lines.push(`  log: ${figures.log.records} records to seq ${figures.log.end_seq}, ${figures.log.transactions} transactions; ${figures.terms} terms; late acknowledgements after a pause: ${figures.late_acknowledgements}`);
  }
  lines.push(`  recovery after the last heal: first write ${report.recovery_ms.first_write ?? '-'} ms, every node caught up ${report.recovery_ms.caught_up ?? '-'} ms`);
  for (const failed of report.faults_failed) lines.push(`  a fault the harness could not carry out: ${failed}`);
  if (report.node_exits.length > 0) lines.push(`  node exits: ${report.node_exits.map((exit) => `${exit.node} ${exit.how}${exit.expected ? ' (full disk)' : ''}`).join(', ')}`);
  for (const violation of report.violations) lines.push(`  VIOLATION [${violation.check}] ${violation.detail}`);
  if (report.violation_count > 0) lines.push(`  replay: ${replay}`);
  return lines.join('\n');
}
