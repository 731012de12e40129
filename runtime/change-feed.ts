// The change feed's view of a ledger (http/routes/event-routes.ts) where HTTP runs on the engine's thread
// (server.workers 0): what the log holds as durable (on a replicated node, committed by the group), read
// in order after a cursor one change at a time, each with the bytes it takes in the log so that every
// read stops at its byte budget, and a signal each time more becomes durable, fanned out to however many
// streams are open (the log's own listeners cannot be removed; a stream's subscription can). In an HTTP
// worker the feed reads the log itself (workers/worker-change-feed.ts).

import type { ChangeFeedPort, FeedChange } from '../http/routes/event-routes.js';
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

  changesAfter(afterSeq: number): Iterable<FeedChange> {
    return this.log.sizedEvents(afterSeq + 1, this.log.durableSeq);
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
