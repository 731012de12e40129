// Holds proxied writes to one deployment while its ledger moves to a new process. Open, it only counts
// the writes in flight. Closed, new writes wait (at most cutover_hold_ms, at most
// cutover_held_writes_max of them) for it to open again; the upgrade closes it, waits for the writes in
// flight to finish, fences the old core, and opens it after the switch, when the held writes go to the
// new core (or back to the old one if the cutover was abandoned). A write that waits too long is
// answered 503 with Retry-After by the proxy: it was never forwarded, so a retry is safe.

import { CLOUD_LIMITS } from './cloud-config.js';

export type Admission = 'admitted' | 'timed_out' | 'full';

export class WriteGate {
  private closed = false;
  private inFlight = 0;
  private readonly waiting = new Set<() => void>();
  private readonly drainWaiters = new Set<() => void>();

  get isClosed(): boolean {
    return this.closed;
  }

  /** Admits a write now if the gate is open (the common case, without a promise). */
  tryAdmit(): boolean {
    if (this.closed) return false;
    this.inFlight += 1;
    return true;
  }

  async admit(): Promise<Admission> {
    if (this.closed) {
      if (this.waiting.size >= CLOUD_LIMITS.cutover_held_writes_max) return 'full';
      const opened = await new Promise<boolean>((resolve) => {
        const release = (): void => {
          clearTimeout(timer);
          resolve(true);
        };
        const timer = setTimeout(() => {
          this.waiting.delete(release);
          resolve(false);
        }, CLOUD_LIMITS.cutover_hold_ms);
        this.waiting.add(release);
      });
      if (!opened) return 'timed_out';
    }
    this.inFlight += 1;
    return 'admitted';
  }

  done(): void {
    this.inFlight -= 1;
    if (this.inFlight === 0) for (const waiter of this.drainWaiters) waiter();
  }

  close(): void {
    this.closed = true;
  }

  /** Resolves true once no admitted write is in flight, false after `timeoutMs`. */
  drained(timeoutMs: number): Promise<boolean> {
    if (this.inFlight === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = (): void => {
        clearTimeout(timer);
        this.drainWaiters.delete(waiter);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.drainWaiters.delete(waiter);
        resolve(false);
      }, timeoutMs);
      this.drainWaiters.add(waiter);
    });
  }

  open(): void {
    this.closed = false;
    for (const release of this.waiting) release();
    this.waiting.clear();
  }
}
