// An EventLog that keeps events in an array and is "durable" at once: for unit tests and simulations
// of the engine, where the LMDB log's timing would only slow things down.

import type { LedgerEvent, LoggedEvent } from '../engine/events.js';
import type { ChainPosition, EventLog } from '../engine/ports.js';

export class MemoryLog implements EventLog {
  readonly events: LedgerEvent[] = [];

  get appendedSeq(): number {
    return this.events.length;
  }

  appendAll(events: readonly LedgerEvent[]): number {
    for (const event of events) this.events.push(event);
    return this.events.length;
  }

  /** Keeps no checksums: the chain position names the seq alone. */
  sealNow(): ChainPosition {
    return { seq: this.events.length, checksum: '' };
  }

  durable(_seq: number): Promise<void> {
    return Promise.resolve();
  }

  *read(fromSeq = 1, toSeq = Number.MAX_SAFE_INTEGER): Generator<LoggedEvent> {
    const last = Math.min(toSeq, this.events.length);
    for (let seq = Math.max(1, fromSeq); seq <= last; seq += 1) yield { seq, event: this.events[seq - 1] as LedgerEvent };
  }
}
