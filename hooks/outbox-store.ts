// The delivery side of the hook outbox, in its own small LMDB environment (data/hooks). The deliveries
// themselves are not stored: they are derived from the log, where they were committed together with
// their transactions. Stored here is how far delivery has got:
//   - the cursor: every delivery derived from events up to `low_seq` is finished (delivered or given
//     up), and the hooks as registered at `low_seq`, to pick up the log from there;
//   - finished deliveries after the cursor, by (seq, event id), so a restart does not repeat them.
// Finished deliveries are noted in memory and written together with the cursor in one commit, at most
// once a second (see HookDispatcher), so this environment's fsyncs never crowd the log's. A crash loses
// at most the last second of notes, which only repeats those deliveries; repeats are allowed (receivers
// dedupe by X-Event-ID).

import { open, type Database, type RootDatabase } from 'lmdb';
import fs from 'node:fs';
import path from 'node:path';
import type { HookRecord } from '../engine/records.js';
import { commitFailureCause, handleLmdbOrphanRejections } from '../threads/lmdb-commit-failure.js';

export interface OutboxCursor {
  low_seq: number;
  hooks: HookRecord[];
}

const CURSOR_KEY = 'cursor';
const MAP_BYTES = 256 * 1024 ** 2;

export class HookOutboxStore {
  private readonly env: RootDatabase;
  private readonly meta: Database<OutboxCursor, string>;
  private readonly finished: Database<true, [number, string]>;
  /** The newest write not awaited where it was made; closing waits for it (writes commit in order). */
  private lastWrite: Promise<unknown> = Promise.resolve();
  private readonly saveListeners: Array<(cursor: OutboxCursor) => void> = [];

  private constructor(dir: string) {
    this.env = open({ path: dir, maxDbs: 4, mapSize: MAP_BYTES });
    this.meta = this.env.openDB<OutboxCursor, string>({ name: 'meta', encoding: 'msgpack' });
    this.finished = this.env.openDB<true, [number, string]>({ name: 'finished', encoding: 'msgpack' });
  }

  static open(dir: string): HookOutboxStore {
    handleLmdbOrphanRejections();
    return new HookOutboxStore(dir);
  }

  static directoryIn(dataDir: string): string {
    return path.join(dataDir, 'hooks');
  }

  /**
   * A consistent copy of the environment at `fromDir` (closed by its owner, or not) into `toDir`, which
   * must not hold one yet: how a ledger moved to a new process keeps its delivery progress.
   */
  static async copyEnvironment(fromDir: string, toDir: string): Promise<void> {
    const source = open({ path: fromDir, readOnly: true, maxDbs: 4, mapSize: MAP_BYTES });
    try {
      fs.mkdirSync(toDir, { recursive: true });
      await source.backup(toDir, false);
    } finally {
      await source.close();
    }
  }

  readCursor(): OutboxCursor | undefined {
    return this.meta.get(CURSOR_KEY);
  }

  isFinished(seq: number, eventId: string): boolean {
    return this.finished.doesExist([seq, eventId]);
  }

  /** The highest seq with a finished delivery recorded, 0 when none. */
  highestFinishedSeq(): number {
    for (const key of this.finished.getKeys({ reverse: true, limit: 1 })) return key[0];
    return 0;
  }

  /**
   * Writes the cursor and the deliveries finished after it, and drops the records the cursor now
   * covers, in one commit (lmdb-js commits the writes of one event turn together).
   */
  async save(cursor: OutboxCursor, finished: ReadonlyArray<{ seq: number; eventId: string }>): Promise<void> {
    const writes: Array<Promise<unknown>> = [];
    for (const key of this.finished.getKeys({ end: [cursor.low_seq + 1] })) writes.push(this.finished.remove(key));
    for (const { seq, eventId } of finished) {
      if (seq > cursor.low_seq) writes.push(this.finished.put([seq, eventId], true));
    }
    writes.push(this.meta.put(CURSOR_KEY, cursor));
    this.lastWrite = Promise.all(writes);
    try {
      await this.lastWrite;
    } catch (error) {
      throw await commitFailureCause(error); // its commitError handled, or it would end the process
    }
    for (const listener of this.saveListeners) listener(cursor);
  }

  /**
   * Called with each cursor once it is saved (or reset): a replicated leader publishes it, so the node
   * that takes over resumes delivery there instead of at the end of the log.
   */
  onSave(listener: (cursor: OutboxCursor) => void): void {
    this.saveListeners.push(listener);
  }

  async reset(cursor: OutboxCursor): Promise<void> {
    await this.env.transaction(() => {
      this.finished.clearSync();
      void this.meta.put(CURSOR_KEY, cursor);
    });
    for (const listener of this.saveListeners) listener(cursor);
  }

  async close(): Promise<void> {
    await this.lastWrite;
    await this.env.close();
  }
}
