// Named places in the snapshot protocol where a test can make the process die on the spot (SIGKILL,
// nothing flushed, no handlers run), to prove that a crash at each step leaves a data directory that
// starts and verifies. Set FOLIO_CRASH_POINT=<name>[#<n>] to die the n-th time (default first) the
// point is reached. Unset, as in production, every check is a no-op.
//
// Points: snapshot-chunk (after each body chunk), snapshot-before-fsync, snapshot-before-rename,
// snapshot-before-dir-fsync, prune-file (after each old snapshot removed).

export class CrashPoints {
  private readonly name: string | undefined;
  private readonly occurrence: number;
  private readonly reached = new Map<string, number>();

  constructor(spec: string | undefined) {
    if (!spec) {
      this.occurrence = 0;
      return;
    }
    const [name, count] = spec.split('#');
    this.name = name;
    this.occurrence = count === undefined ? 1 : Number(count);
  }

  static fromEnvironment(): CrashPoints {
    return new CrashPoints(process.env.FOLIO_CRASH_POINT);
  }

  reach(point: string): void {
    if (this.name !== point) return;
    const times = (this.reached.get(point) ?? 0) + 1;
    this.reached.set(point, times);
    if (times === this.occurrence) process.kill(process.pid, 'SIGKILL');
  }
}

export const NO_CRASH_POINTS = new CrashPoints(undefined);
