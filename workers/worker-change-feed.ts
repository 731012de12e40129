// The change feed's view of a ledger (http/routes/event-routes.ts) in an HTTP worker: it reads the
// server's LMDB log itself, read-only (lmdb-js shares one environment between the threads of a process,
// and LMDB readers never wait for the writer), so the engine's thread does nothing per read, neither
// decoding nor copying. What it may show comes from the engine's side: the durable seq it shares in
// memory (engine-channel.ts SharedSeqs), whose commit counter is also what wakes its streams. Records up
// to that seq are never rewritten (a rejoining node drops only records the group never committed,
// wal/log-rewind.ts), and the log is opened only once the engine serves a ledger, and again for each new
// one it serves. Where HTTP runs on the engine's thread, runtime/change-feed.ts reads the log directly.

import type { ChangeFeedPort, FeedChange } from '../http/routes/event-routes.js';
import { LogReader } from '../wal/log-reader.js';
import type { EngineClient } from './remote-ledger.js';

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
