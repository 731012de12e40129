// Drives the balance actors: whenever transactions are queued, applies them a slice at a time on
// setImmediate, so request handling interleaves with queue work and neither starves the other.

import type { LedgerEngine } from '../engine/ledger-engine.js';

/** Queued transactions applied per event-loop turn before yielding to I/O. */
export const QUEUE_SLICE_ITEMS = 2_000;

export class QueueRunner {
  private scheduled = false;
  private stopped = false;

  constructor(private readonly engine: LedgerEngine, private readonly sliceItems = QUEUE_SLICE_ITEMS) {}

  /** Makes sure a slice runs soon if anything is queued. Cheap to call often. */
  kick(): void {
    if (this.scheduled || this.stopped || this.engine.view.queuedCount() === 0) return;
    this.scheduled = true;
    setImmediate(() => this.runSlice());
  }

  stop(): void {
    this.stopped = true;
  }

  /** Runs again after stop(), starting with whatever was queued meanwhile. */
  resume(): void {
    this.stopped = false;
    this.kick();
  }

  private runSlice(): void {
    this.scheduled = false;
    if (this.stopped) return;
    this.engine.run({ op: 'queue.process', items_max: this.sliceItems });
    this.kick();
  }
}
