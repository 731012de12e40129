// Records failures of the server's own work after it was acknowledged (a hook delivery given up, the
// query index stuck on an event) as `system.error` events, which the notification webhook announces as
// Blnk's system.error (hooks/system-notifications.ts): in the log, they are delivered at least once,
// after any restart, with the webhook's retries.
//
// Bounded, since a dead receiver can give up many deliveries in a burst: reports are gathered and
// logged once a second, at most SYSTEM_ERRORS_PER_MINUTE_MAX a minute; those beyond are counted and
// the next event that is logged says how many were left out. Only a ledger that does its own work
// records anything (a follower, or a fenced leader, appends nothing of its own): reports made meanwhile
// are dropped (the server's log lines still have them).

export const SYSTEM_ERRORS_PER_MINUTE_MAX = 10;
const FLUSH_INTERVAL_MS = 1_000;
const MESSAGE_LENGTH_MAX = 1_000;

export interface SystemErrorRecorder {
  /** Logs the messages as one system.error event. */
  record(messages: string[]): void;
  /** Whether this ledger appends work of its own now. */
  working(): boolean;
  now(): number;
}

export class SystemErrorReporter {
  private pending: string[] = [];
  private left_out = 0;
  /** Start times of the reports logged in the last minute. */
  private recent: number[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly recorder: SystemErrorRecorder) {}

  report(message: string): void {
    if (!this.recorder.working()) return;
    const now = this.recorder.now();
    this.recent = this.recent.filter((at) => at > now - 60_000);
    if (this.recent.length >= SYSTEM_ERRORS_PER_MINUTE_MAX) {
      this.left_out += 1;
    } else {
      this.recent.push(now);
      this.pending.push(message.length > MESSAGE_LENGTH_MAX ? `${message.slice(0, MESSAGE_LENGTH_MAX)}...` : message);
    }
    this.schedule(FLUSH_INTERVAL_MS);
  }

  /** Logs what was gathered (called by the timer, and before the server stops). */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.recorder.working()) {
      this.pending = [];
      return;
    }
    if (this.left_out > 0) {
      const now = this.recorder.now();
      this.recent = this.recent.filter((at) => at > now - 60_000);
      if (this.pending.length > 0 || this.recent.length < SYSTEM_ERRORS_PER_MINUTE_MAX) {
        if (this.pending.length === 0) this.recent.push(now);
        this.pending.push(`${this.left_out} more system errors were not announced (at most ${SYSTEM_ERRORS_PER_MINUTE_MAX} a minute); the server's log has them`);
        this.left_out = 0;
      } else {
        // The count goes out once the minute has room again.
        this.schedule(Math.max(FLUSH_INTERVAL_MS, (this.recent[0] as number) + 60_000 - now));
      }
    }
    if (this.pending.length === 0) return;
    const messages = this.pending;
    this.pending = [];
    this.recorder.record(messages);
  }

  private schedule(delayMs: number): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, delayMs).unref();
  }
}
