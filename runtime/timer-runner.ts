// Fires the engine's timers (hold expiry and auto-commit, scheduled transactions) as they fall due. A
// light poll every TIMER_POLL_MS is enough: timers need not be more precise than that, and polling
// keeps one code path for timers set at any moment, including those that came due while the server
// was down (the first poll runs at once).

import type { Clock } from '../engine/ports.js';
import type { LedgerEngine } from '../engine/ledger-engine.js';

export const TIMER_POLL_MS = 100;

export class TimerRunner {
  private interval: NodeJS.Timeout | undefined;
  private running = false;

  constructor(private readonly engine: LedgerEngine, private readonly clock: Clock, private readonly afterFire: () => void) {}

  start(): void {
    this.interval = setInterval(() => this.tick(), TIMER_POLL_MS);
    this.interval.unref();
    this.tick();
  }

  stop(): void {
    clearInterval(this.interval);
    this.interval = undefined;
  }

  /** Fires what is due, a slice at a time, yielding between slices so requests keep flowing. */
  tick(): void {
    if (this.running || this.interval === undefined) return;
    const next = this.engine.view.nextTimerAt();
    if (next === undefined || next > this.clock.now()) return;
    this.running = true;
    const fired = this.engine.run({ op: 'timers.fire' });
    this.running = false;
    if (fired.ok && fired.value > 0) this.afterFire();
    setImmediate(() => this.tick());
  }
}
