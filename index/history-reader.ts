// Reads of the balance history (history-store.ts) with their freshness worked out, on whatever thread
// serves the request: an HTTP worker opens the store itself, so `/at` and `/history` cross to no other
// thread and never wait for SQLite.
//
// The answers are exact as of the seq visible when the request arrived (V), like every read:
//   - once the store's checkpoint C has reached V, from the store;
//   - before that, at once when nothing after C can change the answer. For a balance as of T: T before
//     C's event time (later events are dated at or after it, event times never decreasing along the log,
//     so they count at T only through postings dated back) and no event after C dated a posting back
//     (HistoryProgress.backdated, which the engine's thread moves before anyone can see such an event's
//     seq). For a window of changes: its end before C's event time (changes are listed as recorded).
//     The answer then depends on nothing after C, so it shows nothing a crash could take back: it needs
//     no wait for V to be durable either.
//   - otherwise it waits for the store, at most `wait_ms_max`, then is refused (SRCH_INDEX_BEHIND).

import type { BalanceRecord } from '../engine/records.js';
import { refuse, type Result } from '../engine/result.js';
import fs from 'node:fs';
import type { HistoryProgress } from './history-progress.js';
import { HistoryStore, type ChangePage, type ChangeWindow, type HistoryCheckpoint, type HistoryRead } from './history-store.js';

export const HISTORY_WAIT_MS_MAX = 2_000;

export interface BalanceAtAnswer {
  /** The balance at the moment; undefined when it did not exist then. */
  balance: BalanceRecord | undefined;
  /** Whether the balance exists at all as of the answer (false: unknown, rather than not yet created). */
  exists: boolean;
  /** The seq the store had reached: the answer includes every event up to it. */
  index_seq: number;
}

export interface ChangesAnswer {
  /** Undefined when the balance does not exist. */
  page: ChangePage | undefined;
  index_seq: number;
}

export type HistoryAnswer<T> = Result<T, { code: 'SRCH_INDEX_BEHIND'; message: string }>;

export class BalanceHistoryReader {
  private store: HistoryStore | undefined;

  constructor(private readonly dir: string, private readonly progress: HistoryProgress, private readonly waitMsMax = HISTORY_WAIT_MS_MAX) {}

  /** The balance as it stood at `untilMs`, exact as of `visibleSeq`. */
  balanceAt(balanceId: string, untilMs: number, visibleSeq: number): Promise<HistoryAnswer<BalanceAtAnswer>> {
    return this.whenExact(visibleSeq, (store, transaction, checkpoint, caughtUp) => {
      if (!caughtUp && !(untilMs < checkpoint.at && this.progress.backdated <= checkpoint.seq)) return undefined;
      const exists = store.holds(transaction, balanceId);
      return {
        balance: exists ? store.balanceAsOf(transaction, balanceId, untilMs) : undefined,
        // A balance the store does not hold yet may have been created after its checkpoint.
        exists: exists || !caughtUp,
        index_seq: checkpoint.seq,
      };
    });
  }

  /** A balance's changes inside a window, oldest first, exact as of `visibleSeq`. */
  balanceChanges(balanceId: string, window: ChangeWindow, visibleSeq: number): Promise<HistoryAnswer<ChangesAnswer>> {
    return this.whenExact(visibleSeq, (store, transaction, checkpoint, caughtUp) => {
      // Before the checkpoint has reached the request's seq, only a balance the store holds, and a window
      // ending before the checkpoint's event: a balance created since would exist, with no changes.
      if (!caughtUp && !(window.to_ms < checkpoint.at && store.holds(transaction, balanceId))) return undefined;
      return { page: store.changes(transaction, balanceId, window), index_seq: checkpoint.seq };
    });
  }

  /**
   * Runs `attempt` in one read transaction until it answers (undefined: the store cannot say yet) or the
   * wait runs out. `caughtUp`: the store's checkpoint has reached `visibleSeq`.
   */
  private async whenExact<T>(
    visibleSeq: number,
    attempt: (store: HistoryStore, transaction: HistoryRead, checkpoint: HistoryCheckpoint, caughtUp: boolean) => T | undefined,
  ): Promise<HistoryAnswer<T>> {
    const deadline = performance.now() + this.waitMsMax;
    for (;;) {
      const published = this.progress.checkpoint;
      const store = this.opened();
      let reached = 0;
      if (store) {
        const answer = store.read((transaction) => {
          const checkpoint = store.checkpoint(transaction);
          reached = checkpoint.seq;
          return attempt(store, transaction, checkpoint, checkpoint.seq >= visibleSeq);
        });
        if (answer !== undefined) return { ok: true, value: answer };
      }
      const left = deadline - performance.now();
      if (left <= 0) {
        return refuse({ code: 'SRCH_INDEX_BEHIND', message: `the balance history is ${Math.max(0, visibleSeq - reached)} events behind the log; try again shortly` });
      }
      // Committed meanwhile (published moves after each commit): look again; else wake the follower (it
      // gathers records for a few milliseconds otherwise) and wait for its next commit.
      this.progress.want(visibleSeq);
      if (published <= reached) await this.progress.changedFrom(published, left);
      else await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** Resolves true once the store has applied `seq` (waking its follower), or false after `timeoutMs`. */
  async reached(seq: number, timeoutMs: number): Promise<boolean> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const published = this.progress.checkpoint;
      if (published >= seq) return true;
      const left = deadline - performance.now();
      if (left <= 0) return false;
      this.progress.want(seq);
      await this.progress.changedFrom(published, left);
    }
  }

  /** The store, once its directory exists (the runtime creates it before anything reads). */
  private opened(): HistoryStore | undefined {
    if (!this.store && fs.existsSync(this.dir)) this.store = HistoryStore.open(this.dir);
    return this.store;
  }

  async close(): Promise<void> {
    await this.store?.close();
    this.store = undefined;
  }
}
