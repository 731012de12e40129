// Upgrading a deployment: its ledger moves to a new core process (the version this control plane's code
// reports) in a new directory, with a new deployment_id and instance_id, keeping every write, its core
// secret, its hook delivery progress and its API keys. The request is answered 202 at once; the work
// runs in the background, in two phases (docs/decisions-cloud.md has the reasoning and the figures):
//
// Preparation, while the old core keeps serving:
//   1. the old core writes a snapshot now, and `folio backup` copies it and the log into the new
//      directory (so the new core replays only a short tail, and has no snapshot due right after it
//      takes over);
//   2. the new core starts there as a follower of the old one's log (cutover/log-follower.ts), copying each
//      record byte for byte as it becomes durable, and rebuilding its lookups and query index;
//   3. we wait until it is close behind, its index too, and warm both state hashes.
// Cutover, the only part that pauses writes:
//   4. the deployment's write gate closes (new writes wait) and the writes in flight finish;
//   5. the old core is fenced: it admits no write, stops its queue, timers and hook delivery, flushes its
//      log and reports its last durable seq N and the log checksum at N;
//   6. the follower reaches N; the log checksums and the state hashes of both at N must be equal;
//   7. the follower is promoted (it takes the old core's hook progress and starts its own work), health
//      checked, and the old core is checked to still stand at N;
//   8. the new deployment is recorded ACTIVE and the old one RETIRED in one durable write, the proxy
//      switches, the gate opens (held writes go to the new core), and the old core is stopped.
// Any failure before step 8 abandons the upgrade: the follower is killed and its directory removed, the
// old core unfenced, the gate opened; the old deployment stays ACTIVE and the new one is FAILED.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { NODE_FLAGS } from '../threads/node-flags.js';
import type { CutoverPosition, CutoverStatus } from '../http/ports/cutover-port.js';
import { CLOUD_LIMITS } from './cloud-config.js';
import type { CoreLogger } from './core-process.js';
import { folioEntryFile } from './core-process.js';
import { FOLIO_VERSION } from '../server/version.js';
import type { DeploymentRecord, Deployments, LiveInstance } from './deployments.js';
import type { SupervisedCore } from './supervised-core.js';
import { WriteGate } from './write-gate.js';

/** The follower is close enough to fence the old core when it is at most this many events behind. */
const FOLLOW_LAG_EVENTS_MAX = 2_000;
/** How long preparation may take (copy, follower start, catch-up, index rebuild) before giving up. */
const PREPARE_TIMEOUT_MS = 30 * 60 * 1000;
const CATCH_UP_POLL_MS = 50;
/** How long the old core may take to write the snapshot the copy starts from. */
const SNAPSHOT_TIMEOUT_MS = 10 * 60 * 1000;
/** How long the writes in flight get to finish once the gate is closed. */
const DRAIN_TIMEOUT_MS = 10_000;

export type CutoverStep = 'copied' | 'following' | 'caught_up' | 'fenced' | 'verified' | 'promoted' | 'switched' | 'abandoned';

export interface UpgradeHooks {
  /** Called as the cutover passes each step (tests use it to break things at a chosen moment). */
  onStep?(step: CutoverStep, detail: { newCorePid?: number; oldCorePid?: number; error?: string }): void | Promise<void>;
}

export type UpgradeStart =
  | { kind: 'started'; oldRecord: DeploymentRecord; newRecord: DeploymentRecord; previousVersion: string; done: Promise<void> }
  | { kind: 'skipped'; record: DeploymentRecord; version: string }
  | { kind: 'not_active'; record: DeploymentRecord };

/** Niceness of the two cores' main threads while writes are held: ahead of other work on the machine. */
const PAUSE_NICENESS = -10;

/**
 * Best effort: the pause is mostly the two cores hashing their state, each on its main thread, and on a
 * shared machine other processes take turns on the same CPUs. setpriority on a pid moves that process's
 * main thread only (Linux), which is the one hashing. Without the privilege (root or CAP_SYS_NICE) it
 * changes nothing. Returns the niceness to restore.
 */
function raisePriority(pids: Array<number | undefined>): Map<number, number> {
  const previous = new Map<number, number>();
  for (const pid of pids) {
    if (pid === undefined) continue;
    try {
      const niceness = os.getPriority(pid);
      os.setPriority(pid, PAUSE_NICENESS);
      previous.set(pid, niceness);
    } catch {
      // not permitted, or the process is gone: the cutover works the same, only more exposed to other load
    }
  }
  return previous;
}

function restorePriority(previous: Map<number, number>): void {
  for (const [pid, niceness] of previous) {
    try {
      os.setPriority(pid, niceness);
    } catch {
      // gone already
    }
  }
}

function round(milliseconds: number): number {
  return Math.round(milliseconds * 10) / 10;
}

/** Time between marks, by phase. */
class PhaseTimer {
  private last = performance.now();
  private readonly phases: Record<string, number> = {};

  mark(phase: 'drain' | 'fence' | 'verify' | 'promote' | 'switch'): void {
    const now = performance.now();
    this.phases[phase] = round(now - this.last);
    this.last = now;
  }

  report(): Record<'drain' | 'fence' | 'verify' | 'promote' | 'switch', number> {
    return this.phases as Record<'drain' | 'fence' | 'verify' | 'promote' | 'switch', number>;
  }
}

class CutoverAbandoned extends Error {
  override readonly name = 'CutoverAbandoned';
}

export class Upgrades {
  private readonly running = new Set<Promise<void>>();
  private readonly children = new Set<ReturnType<typeof spawn>>();
  /** Deployments whose upgrade has been accepted, from before their UPGRADING status is written. */
  private readonly upgrading = new Set<string>();
  private stopping = false;

  constructor(private readonly deployments: Deployments, private readonly logger: CoreLogger, private readonly hooks: UpgradeHooks = {}) {}

  /** Starts an upgrade (the caller answers 202), or says why not. */
  async start(record: DeploymentRecord, force: boolean): Promise<UpgradeStart> {
    if (record.status !== 'ACTIVE' || this.upgrading.has(record.deployment_id)) return { kind: 'not_active', record };
    if (record.version === FOLIO_VERSION && !force) return { kind: 'skipped', record, version: FOLIO_VERSION };
    const old = this.deployments.instance(record.instance_id);
    if (!old || !old.core.url) return { kind: 'not_active', record };
    this.upgrading.add(record.deployment_id); // before the await: a second request in the meantime is refused
    const now = Date.now();
    const newRecord = this.deployments.newRecord({
      name: record.name, region: record.region, tier: record.tier, user_id: record.user_id, secret_id: record.secret_id, replaces: record.deployment_id,
      rate_limit: record.rate_limit ?? null,
    }, now);
    const oldRecord = this.deployments.changed(record, { status: 'UPGRADING' });
    try {
      await this.deployments.save([oldRecord, newRecord]);
    } catch (error) {
      this.upgrading.delete(record.deployment_id);
      throw error;
    }
    const done = this.run(oldRecord, newRecord, old, now);
    this.running.add(done);
    void done.finally(() => {
      this.running.delete(done);
      this.upgrading.delete(record.deployment_id);
    });
    return { kind: 'started', oldRecord, newRecord, previousVersion: record.version, done };
  }

  /** Abandons what is running (the control plane is stopping) and waits for it. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const child of this.children) child.kill('SIGKILL');
    await Promise.allSettled([...this.running]);
  }

  private async run(oldRecord: DeploymentRecord, newRecord: DeploymentRecord, old: LiveInstance, startedAt: number): Promise<void> {
    const newDir = this.deployments.absoluteDataDir(newRecord);
    let follower: SupervisedCore | undefined;
    let fenced = false;
    let priorities = new Map<number, number>();
    try {
      await old.core.client(SNAPSHOT_TIMEOUT_MS).snapshotNow().catch((error: Error) => {
        this.logger.warn({ deployment: oldRecord.deployment_id, err: error.message }, 'no fresh snapshot before the copy; the new core replays a longer tail');
      });
      await this.copy(this.deployments.absoluteDataDir(oldRecord), newDir);
      await this.step('copied', { oldCorePid: old.core.pid });
      follower = this.deployments.coreFor(newRecord, this.deployments.absoluteDataDir(oldRecord));
      await follower.start();
      await this.step('following', { newCorePid: follower.pid, oldCorePid: old.core.pid });
      await this.catchUp(old.core, follower);
      await this.step('caught_up', { newCorePid: follower.pid, oldCorePid: old.core.pid });

      priorities = raisePriority([old.core.pid, follower.pid]);
      const pauseStarted = performance.now();
      const pausedAt = Date.now();
      const phases = new PhaseTimer();
      old.gate.close();
      if (!(await old.gate.drained(DRAIN_TIMEOUT_MS))) throw new CutoverAbandoned(`writes in flight did not finish within ${DRAIN_TIMEOUT_MS} ms`);
      phases.mark('drain');
      fenced = true;
      const fenceAnswer = await old.core.client().fence();
      const position: CutoverPosition = { seq: fenceAnswer.seq, log_checksum: fenceAnswer.log_checksum };
      phases.mark('fence');
      await this.step('fenced', { newCorePid: follower.pid, oldCorePid: old.core.pid });
      const verified = await this.verify(old.core, follower, position);
      phases.mark('verify');
      await this.step('verified', { newCorePid: follower.pid, oldCorePid: old.core.pid });
      const promoted = await follower.client().promote(position);
      follower.promoted();
      phases.mark('promote');
      await this.step('promoted', { newCorePid: follower.pid, oldCorePid: old.core.pid });
      const [health, oldNow] = await Promise.all([follower.client(CLOUD_LIMITS.health_timeout_ms).health(), old.core.client().status()]);
      if (oldNow.appended_seq !== position.seq) throw new CutoverAbandoned(`the old core moved past seq ${position.seq} while fenced (now ${oldNow.appended_seq})`);
      if (this.stopping) throw new CutoverAbandoned('the control plane is stopping');

      const successor: LiveInstance = { deploymentId: newRecord.deployment_id, instanceId: newRecord.instance_id, core: follower, gate: new WriteGate() };
      const newActive = this.deployments.changed(newRecord, { status: 'ACTIVE', version: health.version });
      await this.deployments.save([newActive, this.deployments.changed(oldRecord, { status: 'RETIRED', replaced_by: newRecord.deployment_id })]);
      this.deployments.expose(successor);
      this.deployments.withdraw(old.instanceId);
      old.successor = successor;
      old.gate.open();
      phases.mark('switch');
      const writePauseMs = performance.now() - pauseStarted;
      restorePriority(priorities);
      // Recorded after the switch so that writing it is not part of the pause it measures.
      await this.deployments.save([{
        ...newActive,
        cutover: {
          ...position, state_hash: verified.stateHash, paused_at: pausedAt, write_pause_ms: round(writePauseMs), pause_phases_ms: phases.report(), total_ms: Date.now() - startedAt,
          core_timings_ms: { fence: fenceAnswer.timings_ms ?? {}, verify_old: verified.oldTimings, verify_new: verified.newTimings, promote: promoted.timings_ms ?? {} },
        },
      }]).catch((error: Error) => this.logger.warn({ err: error.message }, 'cannot record the cutover figures'));
      await this.step('switched', { newCorePid: follower.pid, oldCorePid: old.core.pid });
      this.logger.warn({ deployment: oldRecord.deployment_id, to: newRecord.deployment_id, seq: position.seq, write_pause_ms: writePauseMs }, 'upgrade switched over');
      await old.core.stop();
    } catch (error) {
      restorePriority(priorities);
      await this.abandon(oldRecord, newRecord, old, follower, fenced, error as Error);
    }
  }

  private async step(step: CutoverStep, detail: { newCorePid?: number; oldCorePid?: number; error?: string }): Promise<void> {
    await this.hooks.onStep?.(step, detail);
  }

  /** `folio backup`: the old core's newest snapshot and a consistent copy of its log. */
  private async copy(fromDir: string, toDir: string): Promise<void> {
    const child = spawn(process.execPath, [...NODE_FLAGS, folioEntryFile(), 'backup', '--data', fromDir, '--out', toDir], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    this.children.add(child);
    let stderr = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (text: string) => {
      stderr = (stderr + text).slice(-4000);
    });
    const code = await new Promise<number | string>((resolve) => {
      child.on('exit', (exitCode, signal) => resolve(exitCode ?? signal ?? 'unknown'));
      child.on('error', () => resolve('spawn failed'));
    });
    this.children.delete(child);
    if (code !== 0) throw new CutoverAbandoned(`copying the ledger failed (${code}): ${stderr.trim()}`);
  }

  /** Waits until the follower (and its index) is close behind the old core, then warms both hashes. */
  private async catchUp(old: SupervisedCore, follower: SupervisedCore): Promise<void> {
    const deadline = Date.now() + PREPARE_TIMEOUT_MS;
    for (;;) {
      if (this.stopping) throw new CutoverAbandoned('the control plane is stopping');
      const [leader, copy] = await Promise.all([old.client().status(), follower.client().status()]);
      if (copy.follow_error) throw new CutoverAbandoned(`the new core stopped following: ${copy.follow_error}`);
      const behind = leader.durable_seq - copy.seq;
      const indexBehind = copy.index_seq === undefined ? 0 : copy.seq - copy.index_seq;
      if (behind <= FOLLOW_LAG_EVENTS_MAX && indexBehind <= FOLLOW_LAG_EVENTS_MAX) break;
      if (Date.now() >= deadline) throw new CutoverAbandoned(`the new core was still ${behind} events behind after ${PREPARE_TIMEOUT_MS} ms`);
      await new Promise((resolve) => setTimeout(resolve, CATCH_UP_POLL_MS));
    }
    // The first state hash of a process pays for sorting and paging in its balances; pay it now, not in the pause.
    await Promise.all([old.client().status({ stateHash: true }), follower.client().status({ stateHash: true })]);
  }

  /** Both at N with the same log checksum and state hash; returns the hash and where each side's time went. */
  private async verify(old: SupervisedCore, follower: SupervisedCore, position: CutoverPosition): Promise<{ stateHash: string; oldTimings: Record<string, number>; newTimings: Record<string, number> }> {
    const [leader, copy]: [CutoverStatus, CutoverStatus] = await Promise.all([
      old.client().status({ atSeq: position.seq, stateHash: true }),
      follower.client().status({ atSeq: position.seq, stateHash: true }),
    ]);
    if (leader.log_checksum !== position.log_checksum || copy.log_checksum !== position.log_checksum) {
      throw new CutoverAbandoned(`log checksums at seq ${position.seq} differ: old ${leader.log_checksum}, new ${copy.log_checksum}`);
    }
    if (!leader.state_hash || leader.state_hash !== copy.state_hash) {
      throw new CutoverAbandoned(`state hashes at seq ${position.seq} differ: old ${leader.state_hash}, new ${copy.state_hash}`);
    }
    return { stateHash: leader.state_hash, oldTimings: leader.timings_ms ?? {}, newTimings: copy.timings_ms ?? {} };
  }

  private async abandon(oldRecord: DeploymentRecord, newRecord: DeploymentRecord, old: LiveInstance, follower: SupervisedCore | undefined, fenced: boolean, error: Error): Promise<void> {
    this.logger.warn({ deployment: oldRecord.deployment_id, err: error.message }, 'upgrade abandoned; the old core stays ACTIVE');
    if (follower) await follower.stop().catch(() => undefined);
    if (fenced) {
      await old.core.client().unfence().catch((unfenceError: Error) => {
        // A core that cannot be unfenced is restarted: a fresh process is never fenced.
        this.logger.warn({ deployment: oldRecord.deployment_id, err: unfenceError.message }, 'cannot unfence the old core; restarting it');
        void old.core.restartNow();
      });
    }
    old.gate.open();
    fs.rmSync(this.deployments.absoluteDataDir(newRecord), { recursive: true, force: true });
    await this.deployments.save([
      this.deployments.changed(oldRecord, { status: 'ACTIVE' }),
      this.deployments.changed(newRecord, { status: 'FAILED', problem: `upgrade abandoned: ${error.message.slice(0, 500)}` }),
    ]).catch((saveError: Error) => this.logger.warn({ err: saveError.message }, 'cannot record an abandoned upgrade'));
    await this.step('abandoned', { error: error.message });
  }
}
