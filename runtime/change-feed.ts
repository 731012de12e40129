// The change feed's view of a ledger (http/routes/event-routes.ts): what the log holds as durable (on a
// replicated node, committed by the group), read in order after a cursor one change at a time, each with
// the bytes it takes in the log so that every read stops at its byte budget, and a signal each time more
// becomes durable, fanned out to however many streams are open. Two of them:
//   - ChangeFeed, where HTTP runs on the engine's thread (server.workers 0): it reads the server's own
//     log, and its listeners follow the log's commits (the log's own listeners cannot be removed; a
//     stream's subscription can);
//   - WorkerChangeFeed, in an HTTP worker: it reads the same LMDB environment itself, read-only (lmdb-js
//     shares one environment between the threads of a process, and LMDB readers never wait for the
//     writer), so the engine's thread does nothing per read, neither decoding nor copying. What it may
//     show comes from the engine's side: the durable seq in the state the engine sends at every commit
//     (workers/engine-channel.ts), which is also what wakes its streams. Records up to that seq are never
//     rewritten (a rejoining node drops only records the group never committed, wal/log-rewind.ts), and
//     the log is opened only once the engine serves a ledger, and again for each new one it serves.

import type { ChangeFeedPort, FeedChange } from '../http/routes/event-routes.js';
import type { LmdbLog } from '../wal/lmdb-log.js';
import { LogReader } from '../wal/log-reader.js';
import type { EngineClient } from '../workers/remote-ledger.js';

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

export class WorkerChangeFeed implements ChangeFeedPort {
  private readonly listeners = new Set<() => void>();
  private reader: LogReader | undefined;
  private generation: number;
  private stopWatching: (() => void) | undefined;

  /** Reads the log of `dataDir`, shown up to the durable seq the engine shares with `client`. */
  constructor(private readonly client: EngineClient, private readonly dataDir: string) {
    this.generation = client.state.generation;
    client.onState((state) => {
      if (state.generation === this.generation) return;
      // Another ledger served (a replicated node rejoined): its log is opened afresh on the next read.
      this.generation = state.generation;
      this.closeReader();
      this.tell();
    });
  }

  committedSeq(): number {
    return this.client.durableSeq();
  }

  changesAfter(afterSeq: number): Iterable<FeedChange> {
    const committed = this.client.durableSeq();
    if (committed <= afterSeq) return [];
    this.reader ??= LogReader.open(this.dataDir);
    // A read transaction of its own, so that everything committed by now is visible.
    this.reader.refresh();
    return this.reader.sizedEvents(afterSeq + 1, committed);
  }

  /** Streams wake whenever the durable seq moves (the engine's shared commit counter: no message). */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    this.stopWatching ??= this.client.onDurable(() => this.tell());
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size > 0) return;
      this.stopWatching?.();
      this.stopWatching = undefined;
    };
  }

  private tell(): void {
    for (const listener of this.listeners) listener();
  }

  /** Lets go of the log (the worker is stopping). */
  close(): void {
    this.closeReader();
  }

  private closeReader(): void {
    void this.reader?.close();
    this.reader = undefined;
  }
}
