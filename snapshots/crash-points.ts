// Named places in the snapshot protocol where a test can make the process die on the spot (SIGKILL,
// nothing flushed, no handlers run), to prove that a crash at each step leaves a data directory that
// starts and verifies. Set FOLIO_CRASH_POINT=<name>[#<n>] to die the n-th time (default first) the
// point is reached. Unset, as in production, every check is a no-op.
//
// Snapshot jobs each run in a new worker thread, so the count of times a point was reached lives in a
// shared counter the server hands to every job: "the third snapshot's rename" means the third in the
// process, not the third in one job.
//
// Points: snapshot-chunk (after each body chunk), snapshot-before-fsync, snapshot-before-rename,
// snapshot-before-dir-fsync, prune-file (after each old snapshot removed).

export class CrashPoints {
  private readonly name: string | undefined;
  private readonly occurrence: number;
  /** One shared slot: only one point is armed at a time. */
  private readonly reached: Int32Array;

  constructor(spec: string | undefined, counter: SharedArrayBuffer = newCrashCounter()) {
    this.reached = new Int32Array(counter);
    if (!spec) {
      this.occurrence = 0;
      return;
    }
    const [name, count] = spec.split('#');
    this.name = name;
    this.occurrence = count === undefined ? 1 : Number(count);
  }

  static fromEnvironment(counter?: SharedArrayBuffer): CrashPoints {
    return new CrashPoints(process.env.FOLIO_CRASH_POINT, counter);
  }

  reach(point: string): void {
    if (this.name !== point) return;
    const times = Atomics.add(this.reached, 0, 1) + 1;
    if (times === this.occurrence) process.kill(process.pid, 'SIGKILL');
  }
}

/** A counter to share between the threads that may reach crash points. */
export function newCrashCounter(): SharedArrayBuffer {
  return new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT);
}

export const NO_CRASH_POINTS = new CrashPoints(undefined);
