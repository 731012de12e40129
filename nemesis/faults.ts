// Carries out a nemesis schedule (nemesis/schedule.ts) against a running group: each fault is aimed at
// a node when it starts (the leader as the nodes themselves say it, a standby, any node), applied, held
// for its duration and healed, several at once when the schedule overlaps them (never two of one kind on
// one node, never a kill and a pause together, one PostgreSQL fault at a time). Beside the faults it
// keeps the group alive the way an operator's supervisor would: a node that ended without being killed
// (a full disk stops it, exit 70) is recorded and started again once nothing holds it down; and it
// watches every node's own word about itself (GET /health), which aims the faults and feeds the checker.
//
// The means: SIGKILL, SIGSTOP/SIGCONT and restarts of real `folio serve` processes
// (bench/replication/replicated-group.ts); a TCP relay per node in front of PostgreSQL
// (bench/replication/tcp-relay.ts); PostgreSQL halted and restarted on its files
// (bench/postgres/postgres-server.ts); each node's clocks read through a skew file the process reads when
// it runs with test hooks (runtime/system-clock.ts); each node's data directory on a size-capped file
// system (nemesis/disk-quota.ts) when the machine allows it.

import fs from 'node:fs';
import type { GroupNode, NodeHealth, ReplicatedGroup } from '../bench/replication/replicated-group.js';
import type { TcpRelay } from '../bench/replication/tcp-relay.js';
import { skewAt, type ClockSkew } from '../runtime/system-clock.js';
import type { FullDisk } from './disk-quota.js';
import type { FaultRecord, HealthSample, History } from './history.js';
import type { FaultKind, PlannedFault } from './schedule.js';

export interface GroupParts {
  group: ReplicatedGroup;
  relays: ReadonlyMap<string, TcpRelay>;
  /** Each node's data disk: size-capped where the machine allows, else write errors injected at the log. */
  disks: ReadonlyMap<string, FullDisk>;
  clockFiles: ReadonlyMap<string, string>;
}

const HEALTH_EVERY_MS = 250;
const HEALTH_TIMEOUT_MS = 1_000;
/** How long a fault aimed at the leader waits for there to be one before it is skipped. */
const LEADER_WAIT_MS = 4_000;
const RESTART_RETRY_MS = 1_000;
/** A node that will not start is tried this many times, then left down (and reported). */
const START_TRIES_MAX = 5;

/** Fault kinds that cannot hit one node at once: a node is killed or paused, not both. */
function conflicts(kind: FaultKind, busy: ReadonlySet<FaultKind>): boolean {
  if (busy.has(kind)) return true;
  if (kind === 'kill' || kind === 'pause') return busy.has('kill') || busy.has('pause');
  return false;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export class FaultInjector {
  private readonly busy = new Map<string, Set<FaultKind>>();
  /** Nodes whose disk was filled since they last started (a lost write may surface at a later fsync). */
  private readonly filledWhileRunning = new Set<string>();
  /** Why a node must stay down (a kill not yet healed, a full disk), by node. */
  private readonly heldDown = new Map<string, Set<string>>();
  private readonly killing = new Set<string>();
  private readonly paused = new Set<string>();
  private readonly starting = new Map<string, Promise<void>>();
  private readonly latest = new Map<string, NodeHealth & { at: number }>();
  private readonly skews = new Map<string, ClockSkew>();
  private postgresBusy = false;
  private watching = false;
  private watcher: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly parts: GroupParts, private readonly history: History) {
    for (const node of parts.group.nodes) {
      this.busy.set(node.name, new Set());
      this.heldDown.set(node.name, new Set());
    }
  }

  get nodes(): readonly GroupNode[] {
    return this.parts.group.nodes;
  }

  node(name: string): GroupNode {
    const node = this.nodes.find((candidate) => candidate.name === name);
    if (!node) throw new Error(`no node ${name}`);
    return node;
  }

  // --- nodes' lives ---

  /** Starts a node and follows its exit. */
  async start(node: GroupNode): Promise<void> {
    await this.parts.group.startNode(node);
    this.filledWhileRunning.delete(node.name);
    const child = node.child!;
    void child.exited.then((how) => this.ended(node, how));
  }

  private ended(node: GroupNode, how: number | string): void {
    if (this.killing.has(node.name) || this.stopped) return;
    // A full disk explains an end while it lasts, and also a log failure after it in the same process:
    // a write the full disk lost is reported at the file's next fsync, however much later (Linux keeps
    // the writeback error for the open file), and the log stops on it (exit 70), as it must.
    const disk = (this.busy.get(node.name)?.has('disk') ?? false) || (how === 70 && this.filledWhileRunning.has(node.name));
    this.history.exits.push({
      node: node.name, at: performance.now(), how, expected: disk, stderr_tail: node.stderr.split('\n').slice(-12).join('\n'),
    });
    if (how === 78) return; // refused to rejoin: an operator's call, and a finding (the checker reports it)
    void sleep(RESTART_RETRY_MS).then(() => this.ensureRunning(node));
  }

  /** Starts the node unless it runs, is being started, or something holds it down; retries a failed start. */
  ensureRunning(node: GroupNode): Promise<void> {
    const under = this.starting.get(node.name);
    if (under) return under;
    const mayStart = (): boolean => !this.stopped && !this.parts.group.isRunning(node) && (this.heldDown.get(node.name)?.size ?? 0) === 0;
    if (!mayStart()) return Promise.resolve();
    const starting = (async () => {
      for (let tries = 1; mayStart(); tries += 1) {
        try {
          await this.start(node);
          return;
        } catch (error) {
          if (tries >= START_TRIES_MAX) {
            this.history.exits.push({ node: node.name, at: performance.now(), how: 'would not start', expected: false, stderr_tail: (error as Error).message.slice(-2_000) });
            return;
          }
          await sleep(RESTART_RETRY_MS);
        }
      }
    })().finally(() => this.starting.delete(node.name));
    this.starting.set(node.name, starting);
    return starting;
  }

  // --- what the nodes say ---

  /** Polls every running node's /health until stop(), keeping each change of role or term. */
  watch(): void {
    if (this.watching) return;
    this.watching = true;
    this.watcher = (async () => {
      while (this.watching) {
        await Promise.all(this.nodes.map((node) => this.sample(node)));
        await sleep(HEALTH_EVERY_MS);
      }
    })();
  }

  private async sample(node: GroupNode): Promise<NodeHealth | undefined> {
    if (!node.url || this.paused.has(node.name) || !this.parts.group.isRunning(node)) {
      this.latest.delete(node.name);
      return undefined;
    }
    let health: NodeHealth | undefined;
    try {
      const response = await fetch(`${node.url}/health`, { signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS) });
      if (response.status === 200) health = await response.json() as NodeHealth;
    } catch {
      health = undefined;
    }
    if (!health) {
      this.latest.delete(node.name);
      return undefined;
    }
    const at = performance.now();
    const before = this.latest.get(node.name);
    this.latest.set(node.name, { ...health, at });
    if (!before || before.role !== health.role || before.term !== health.term) {
      const sample: HealthSample = { node: node.name, at, role: health.role, term: health.term, applied_seq: health.applied_seq };
      this.history.health.push(sample);
    }
    return health;
  }

  /** The node that says it leads with the highest term, asked now. */
  async leader(): Promise<GroupNode | undefined> {
    const answers = await Promise.all(this.nodes.map(async (node) => ({ node, health: await this.sample(node) })));
    const leading = answers.filter((answer) => answer.health?.role === 'leader').sort((a, b) => (b.health?.term ?? 0) - (a.health?.term ?? 0));
    return leading[0]?.node;
  }

  /** What a node last said of itself (undefined: it did not answer). */
  lastHealth(name: string): (NodeHealth & { at: number }) | undefined {
    return this.latest.get(name);
  }

  // --- faults ---

  /** Aims, applies, holds and heals one fault; the record says how it went. */
  async carryOut(planned: PlannedFault): Promise<FaultRecord> {
    const record: FaultRecord = { planned, kind: planned.kind, done: false };
    this.history.faults.push(record);
    if (this.stopped) {
      record.skipped = 'the run is ending';
      return record;
    }
    if (planned.kind === 'postgres') return this.postgresFault(planned, record);
    const node = await this.aim(planned);
    if (!node) {
      record.skipped = `no node fit (${planned.target}, free of ${planned.kind})`;
      return record;
    }
    const busy = this.busy.get(node.name)!;
    busy.add(planned.kind);
    record.node = node.name;
    record.done = true;
    record.began_at = performance.now();
    try {
      switch (planned.kind) {
        case 'kill':
          await this.killFault(node, planned, record);
          break;
        case 'pause':
          await this.pauseFault(node, planned, record);
          break;
        case 'cut':
          await this.cutFault(node, planned);
          break;
        case 'clock':
          await this.clockFault(node, planned);
          break;
        case 'disk':
          await this.diskFault(node, planned, record);
          break;
      }
    } catch (error) {
      // The harness failed to carry the fault out (not the group failing it): said in the report.
      record.failed = (error as Error).message.slice(0, 500);
    } finally {
      busy.delete(planned.kind);
      record.healed_at = performance.now();
    }
    return record;
  }

  /** The node the fault goes to, among those that fit its target and are free of it (sorted by name). */
  private async aim(planned: PlannedFault): Promise<GroupNode | undefined> {
    const free = (node: GroupNode): boolean => !conflicts(planned.kind, this.busy.get(node.name)!);
    const running = (node: GroupNode): boolean => this.parts.group.isRunning(node) && !this.paused.has(node.name);
    if (planned.target === 'leader') {
      const deadline = performance.now() + LEADER_WAIT_MS;
      while (!this.stopped && performance.now() < deadline) {
        const leader = await this.leader();
        if (leader && free(leader) && running(leader)) return leader;
        await sleep(100);
      }
      return undefined;
    }
    let candidates = [...this.nodes].sort((a, b) => (a.name < b.name ? -1 : 1)).filter(free);
    if (planned.target === 'standby') {
      await Promise.all(this.nodes.map((node) => this.sample(node)));
      candidates = candidates.filter((node) => running(node) && this.latest.get(node.name)?.role === 'standby');
    } else if (planned.kind === 'kill') {
      candidates = candidates.filter(running);
    }
    if (candidates.length === 0) return undefined;
    return candidates[Math.min(candidates.length - 1, Math.floor(planned.pick * candidates.length))];
  }

  private async killFault(node: GroupNode, planned: PlannedFault, record: FaultRecord): Promise<void> {
    const holds = this.heldDown.get(node.name)!;
    const reason = `kill #${planned.index}`;
    holds.add(reason);
    this.killing.add(node.name);
    try {
      await this.parts.group.kill(node);
    } finally {
      this.killing.delete(node.name);
    }
    await sleep(planned.duration_ms);
    holds.delete(reason);
    await this.ensureRunning(node).catch((error: Error) => {
      record.note = `restart failed: ${error.message.slice(0, 300)}`;
    });
  }

  private async pauseFault(node: GroupNode, planned: PlannedFault, record: FaultRecord): Promise<void> {
    const child = node.child;
    if (!child || !this.parts.group.isRunning(node)) {
      record.note = 'not running when the pause came';
      return;
    }
    record.term = this.latest.get(node.name)?.term;
    this.paused.add(node.name);
    child.process.kill('SIGSTOP');
    record.began_at = performance.now();
    await sleep(planned.duration_ms);
    child.process.kill('SIGCONT');
    this.paused.delete(node.name);
  }

  private async cutFault(node: GroupNode, planned: Extract<PlannedFault, { kind: 'cut' }>): Promise<void> {
    const relay = this.parts.relays.get(node.name)!;
    relay.pause();
    await sleep(planned.duration_ms);
    if (planned.heal === 'deliver') relay.resume();
    else relay.reset();
  }

  private async clockFault(node: GroupNode, planned: Extract<PlannedFault, { kind: 'clock' }>): Promise<void> {
    const previous = this.skews.get(node.name);
    this.setSkew(node.name, planned.rate, (previous?.wall_offset_ms ?? 0) + planned.wall_step_ms);
    await sleep(planned.duration_ms);
    this.setSkew(node.name, 1, 0);
  }

  /** From now on the node's clocks run at `rate`, continuing from where they are; its wall clock is set `wallOffsetMs` off. */
  private setSkew(name: string, rate: number, wallOffsetMs: number): void {
    const now = Date.now();
    const previous = this.skews.get(name);
    const skew: ClockSkew = { anchor_ms: now, monotonic_offset_ms: previous ? skewAt(previous, now) : 0, rate, wall_offset_ms: wallOffsetMs };
    this.skews.set(name, skew);
    const file = this.parts.clockFiles.get(name)!;
    fs.writeFileSync(`${file}.tmp`, JSON.stringify(skew));
    fs.renameSync(`${file}.tmp`, file);
  }

  private async diskFault(node: GroupNode, planned: PlannedFault, record: FaultRecord): Promise<void> {
    const disk = this.parts.disks.get(node.name)!;
    const holds = this.heldDown.get(node.name)!;
    const reason = `disk #${planned.index}`;
    holds.add(reason); // a node the full disk stops stays down until the disk is freed
    if (this.parts.group.isRunning(node)) this.filledWhileRunning.add(node.name);
    record.note = disk.fill();
    await sleep(planned.duration_ms);
    disk.free();
    holds.delete(reason);
    if (!this.parts.group.isRunning(node)) record.note += '; the node stopped on the full disk';
    await this.ensureRunning(node).catch(() => undefined);
  }

  private async postgresFault(planned: Extract<PlannedFault, { kind: 'postgres' }>, record: FaultRecord): Promise<FaultRecord> {
    if (this.postgresBusy) {
      record.skipped = 'PostgreSQL is already down';
      return record;
    }
    this.postgresBusy = true;
    record.done = true;
    record.began_at = performance.now();
    try {
      await this.parts.group.postgres.halt(planned.stop);
      await sleep(planned.duration_ms);
      await this.restartPostgres(record);
    } catch (error) {
      record.failed = (error as Error).message.slice(0, 500);
    } finally {
      this.postgresBusy = false;
      record.healed_at = performance.now();
    }
    return record;
  }

  private async restartPostgres(record: FaultRecord): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        await this.parts.group.postgres.restart();
        return;
      } catch (error) {
        if (attempt >= 5) throw error;
        record.note = `restart attempt ${attempt} failed: ${(error as Error).message.slice(0, 200)}`;
        await sleep(1_000);
      }
    }
  }

  /**
   * Heals everything at once, the way TigerBeetle's simulator turns to its liveness mode at the end:
   * every node continued and its clocks real again, every link delivering, PostgreSQL up, disks freed,
   * every node that is down started again.
   */
  async healAll(): Promise<void> {
    for (const node of this.nodes) {
      if (this.paused.delete(node.name)) node.child?.process.kill('SIGCONT');
      this.parts.relays.get(node.name)?.resume();
      this.parts.disks.get(node.name)?.free();
      if (this.skews.has(node.name)) this.setSkew(node.name, 1, 0);
      this.heldDown.get(node.name)?.clear();
    }
    if (!this.parts.group.postgres.running()) await this.parts.group.postgres.restart();
    await Promise.all(this.nodes.map((node) => this.ensureRunning(node)));
  }

  /** Stops watching and following exits (the run is over: what ends now ends on purpose). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.watching = false;
    await this.watcher;
  }
}
