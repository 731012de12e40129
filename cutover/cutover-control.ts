// The ledger's side of a cutover to a new process (the control plane's side is cloud/upgrade.ts; the
// protocol is in docs/decisions-cloud.md). A leader can be fenced: it refuses new writes, waits for the
// writes already admitted, stops its queue runner, timers and hook delivery (saving delivery progress),
// holds its API key use stamps, and flushes its log, after which nothing appends to it and it reports
// where it stopped. A follower (cutover/log-follower.ts) copies a leader's log and appends nothing of its
// own until it is promoted at exactly the position the fenced leader reported; it then takes the
// leader's hook delivery progress and starts working as a leader.

import fs from 'node:fs';
import { cutoverConflict, type CutoverAnswer, type CutoverPort, type CutoverPosition, type CutoverResult, type CutoverStatus, type WriteTicket } from '../http/ports/cutover-port.js';
import { accept } from '../engine/result.js';
import { HookOutboxStore } from '../hooks/outbox-store.js';
import type { LedgerRuntime } from '../runtime/ledger-runtime.js';
import type { LogFollower } from './log-follower.js';

/** How long a fence waits for writes already admitted before it gives up (and unfences). */
export const FENCE_WRITES_WAIT_MS_MAX = 10_000;
const FENCE_POLL_MS = 1;

interface HeldWriter {
  hold(): void;
  release(): void;
}

const COUNTED: WriteTicket = Object.freeze({});

export class CutoverControl implements CutoverPort {
  private _fenced: boolean;
  private writesInFlight = 0;
  private readonly writers: HeldWriter[] = [];
  private fencing: Promise<CutoverResult<CutoverAnswer>> | undefined;

  private constructor(
    private readonly runtime: LedgerRuntime,
    private follower: LogFollower | undefined,
    private readonly leaderDataDir: string | undefined,
  ) {
    this._fenced = follower !== undefined;
  }

  static forLeader(runtime: LedgerRuntime): CutoverControl {
    return new CutoverControl(runtime, undefined, undefined);
  }

  /** A follower is fenced from the start: it takes no writes until it is promoted. */
  static forFollower(runtime: LedgerRuntime, follower: LogFollower, leaderDataDir: string): CutoverControl {
    return new CutoverControl(runtime, follower, leaderDataDir);
  }

  get fenced(): boolean {
    return this._fenced;
  }

  /** Every write here is counted by the count alone: one ticket serves them all. */
  writeStarted(): WriteTicket | undefined {
    if (this._fenced) return undefined;
    this.writesInFlight += 1;
    return COUNTED;
  }

  /**
   * Whether a command may append now: unfenced, or fenced while writes that started before it are still
   * finishing (the fence answers only once they have). For the engine's thread (engine-host.ts), where a
   * worker's view of the fence may be a moment old.
   */
  get appendsAllowed(): boolean {
    return !this._fenced || this.writesInFlight > 0;
  }

  writeEnded(_ticket?: WriteTicket): void {
    this.writesInFlight -= 1;
  }

  holdWhileFenced(writer: HeldWriter): void {
    this.writers.push(writer);
    if (this._fenced) writer.hold();
  }

  fence(): Promise<CutoverResult<CutoverAnswer>> {
    if (this.follower) return Promise.resolve(cutoverConflict('a follower is fenced already'));
    this.fencing ??= this.fenceNow().finally(() => {
      this.fencing = undefined;
    });
    return this.fencing;
  }

  private async fenceNow(): Promise<CutoverResult<CutoverAnswer>> {
    const timings = new Timings();
    this._fenced = true;
    for (const writer of this.writers) writer.hold();
    const deadline = Date.now() + FENCE_WRITES_WAIT_MS_MAX;
    while (this.writesInFlight > 0) {
      if (Date.now() >= deadline) {
        await this.unfence();
        return cutoverConflict(`${this.writesInFlight} writes were still in flight after ${FENCE_WRITES_WAIT_MS_MAX} ms; unfenced`);
      }
      await new Promise((resolve) => setTimeout(resolve, FENCE_POLL_MS));
    }
    timings.mark('writes');
    await this.runtime.pauseWork();
    timings.mark('pause_work');
    await this.runtime.log.flush();
    timings.mark('flush');
    return accept({ ...this.position(), timings_ms: timings.report() });
  }

  async unfence(): Promise<CutoverResult<CutoverAnswer>> {
    if (this.follower) return cutoverConflict('a follower is unfenced only by promotion');
    await this.fencing?.catch(() => undefined);
    this._fenced = false;
    for (const writer of this.writers) writer.release();
    await this.runtime.startWork();
    return accept(this.position());
  }

  async status(options: { atSeq?: number; waitMs: number; stateHash: boolean }): Promise<CutoverResult<CutoverStatus>> {
    const timings = new Timings();
    if (options.atSeq !== undefined && this.follower) {
      const reached = await this.follower.reached(options.atSeq, options.waitMs);
      if (!reached) return cutoverConflict(`the follower did not reach seq ${options.atSeq}: ${this.follower.failure?.message ?? 'timed out'}`);
    }
    const { log } = this.runtime;
    if (options.atSeq !== undefined && log.appendedSeq !== options.atSeq) {
      return cutoverConflict(`this ledger stands at seq ${log.appendedSeq}, not ${options.atSeq}`);
    }
    const status: CutoverStatus = {
      role: this.follower ? 'follower' : 'leader',
      fenced: this._fenced,
      ...this.position(),
      appended_seq: log.appendedSeq,
      durable_seq: log.durableSeq,
    };
    if (this.runtime.query) status.index_seq = this.runtime.query.checkpointSeq;
    if (this.follower) {
      status.leader_seq = this.follower.leaderSeq();
      if (this.follower.failure) status.follow_error = this.follower.failure.message;
    }
    timings.mark('reach');
    if (options.stateHash) {
      status.state_hash = this.runtime.stateHash();
      timings.mark('state_hash');
    }
    status.timings_ms = timings.report();
    return accept(status);
  }

  async promote(expected: CutoverPosition): Promise<CutoverResult<CutoverStatus>> {
    const follower = this.follower;
    if (!follower || !this.leaderDataDir) return cutoverConflict('only a follower can be promoted');
    const reached = await follower.reached(expected.seq, 0);
    const here = this.position();
    if (!reached || here.seq !== expected.seq || here.log_checksum !== expected.log_checksum) {
      return cutoverConflict(`this follower stands at seq ${here.seq} (${here.log_checksum}), not at seq ${expected.seq} (${expected.log_checksum})`);
    }
    const timings = new Timings();
    await follower.stop();
    this.follower = undefined;
    await this.runtime.log.flush();
    timings.mark('stop_following');
    await copyHookProgress(this.leaderDataDir, this.runtime.dataDir);
    timings.mark('hook_progress');
    this._fenced = false;
    for (const writer of this.writers) writer.release();
    await this.runtime.startWork();
    timings.mark('start_work');
    const status = await this.status({ waitMs: 0, stateHash: false });
    return status.ok ? accept({ ...status.value, timings_ms: timings.report() }) : status;
  }

  /** Stops following (at shutdown). */
  async close(): Promise<void> {
    await this.follower?.stop();
  }

  /** The last appended seq and the checksum of the record ending there (the same once flushed). */
  private position(): CutoverPosition {
    const { log } = this.runtime;
    return { seq: log.appendedSeq, log_checksum: log.lastRecordChecksum.toString('hex') };
  }
}

/** Milliseconds between marks, by name. */
class Timings {
  private last = performance.now();
  private readonly marks: Record<string, number> = {};

  mark(name: string): void {
    const now = performance.now();
    this.marks[name] = Math.round((now - this.last) * 10) / 10;
    this.last = now;
  }

  report(): Record<string, number> {
    return this.marks;
  }
}

/**
 * Hook delivery carries over: the fenced leader closed its data/hooks with its progress saved, and the
 * follower, which never opened its own, takes a copy. Without it the new process would start delivery
 * at the end of the log and skip whatever the old one had not delivered yet.
 */
async function copyHookProgress(leaderDataDir: string, dataDir: string): Promise<void> {
  const source = HookOutboxStore.directoryIn(leaderDataDir);
  if (!fs.existsSync(source)) return;
  await HookOutboxStore.copyEnvironment(source, HookOutboxStore.directoryIn(dataDir));
}
