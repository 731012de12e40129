// A follower: a ledger that copies another ledger's log, record by record and byte for byte, while that
// one keeps serving. It reads the leader's data/wal read-only (LMDB lets a second process read while
// the first writes), and hands each record to LedgerRuntime.copyRecord, which applies its events as
// start-up replay does and appends the very same bytes (the one path a replicated standby's records take
// too), so the two chains of checksums are identical and the follower's lookups, index and durable seq advance exactly as the leader's did.
// It polls every FOLLOW_POLL_MS for records after its own last one and copies at most
// FOLLOW_RECORDS_PER_TURN_MAX per turn, pausing while its own log or lookups are behind. A record that
// fails its checksum or does not chain on stops following with the reason kept for the status route.

import { LogReader } from '../wal/log-reader.js';
import type { LedgerRuntime } from '../runtime/ledger-runtime.js';

export const FOLLOW_POLL_MS = 2;
export const FOLLOW_RECORDS_PER_TURN_MAX = 64;

export class LogFollower {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private _failure: Error | undefined;
  private readonly reachedWaiters = new Set<() => void>();
  /** The seq this ledger stood at after the last record copied: anything else means it appended on its own. */
  private copiedSeq: number;

  private constructor(private readonly runtime: LedgerRuntime, private readonly reader: LogReader) {
    this.copiedSeq = runtime.log.appendedSeq;
  }

  /** Starts following the log in `<leaderDataDir>/wal` from this ledger's own last record on. */
  static start(runtime: LedgerRuntime, leaderDataDir: string): LogFollower {
    const follower = new LogFollower(runtime, LogReader.open(leaderDataDir));
    follower.poll();
    return follower;
  }

  /** The last seq of the leader's log now (decodes its last record, so only for status reports). */
  leaderSeq(): number {
    if (this.stopped) return this.runtime.log.appendedSeq;
    this.reader.refresh();
    return this.reader.endSeq();
  }

  get failure(): Error | undefined {
    return this._failure;
  }

  /** Resolves once this ledger has applied `seq` (true), or after `timeoutMs` or a failure (false). */
  async reached(seq: number, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.runtime.log.appendedSeq < seq) {
      if (this._failure || this.stopped || Date.now() >= deadline) return false;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.max(1, deadline - Date.now()));
        const waiter = (): void => done();
        function done(): void {
          clearTimeout(timer);
          resolve();
        }
        this.reachedWaiters.add(waiter);
      });
    }
    return true;
  }

  /** Stops following and closes the leader's log. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.timer);
    this.wakeWaiters();
    await this.reader.close();
  }

  private poll(): void {
    this.timer = undefined;
    if (this.stopped) return;
    let copied = 0;
    try {
      if (this.runtime.overloaded() === undefined) copied = this.copyRecords();
    } catch (error) {
      this._failure = error as Error;
      this.wakeWaiters();
      return;
    }
    if (copied > 0) this.wakeWaiters();
    if (copied === FOLLOW_RECORDS_PER_TURN_MAX) setImmediate(() => this.poll());
    else this.timer = setTimeout(() => this.poll(), FOLLOW_POLL_MS);
  }

  private copyRecords(): number {
    const { log } = this.runtime;
    if (log.appendedSeq !== this.copiedSeq) {
      throw new Error(`this ledger appended events of its own (seq ${this.copiedSeq} -> ${log.appendedSeq}); it can no longer follow`);
    }
    this.reader.refresh();
    let copied = 0;
    while (copied < FOLLOW_RECORDS_PER_TURN_MAX) {
      const key = log.appendedSeq + 1;
      const stored = this.reader.rawRecord(key);
      if (!stored) break;
      this.copiedSeq = this.runtime.copyRecord(Buffer.from(stored)).last_seq;
      copied += 1;
    }
    return copied;
  }

  private wakeWaiters(): void {
    for (const waiter of this.reachedWaiters) waiter();
    this.reachedWaiters.clear();
  }
}
