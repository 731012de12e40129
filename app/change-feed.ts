// The change feed's view of a ledger (http/routes/event-routes.ts): what the log holds as durable (on a
// replicated node, committed by the group), read in order after a cursor, and a signal each time more
// becomes durable, fanned out to however many streams are open (the log's own listeners cannot be
// removed; a stream's subscription can).

import type { LoggedEvent } from '../engine/events.js';
import type { ChangeFeedPort } from '../http/routes/event-routes.js';
import type { LmdbLog } from '../wal/lmdb-log.js';

export class ChangeFeed implements ChangeFeedPort {
  private readonly listeners = new Set<() => void>();

  constructor(private readonly log: LmdbLog) {
    log.onCommit(() => {
      for (const listener of this.listeners) listener();
    });
  }

  committedSeq(): number {
    return this.log.durableSeq;
  }

  read(afterSeq: number, limit: number): LoggedEvent[] {
    const last = Math.min(this.log.durableSeq, afterSeq + limit);
    if (last <= afterSeq) return [];
    return [...this.log.read(afterSeq + 1, last)];
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
