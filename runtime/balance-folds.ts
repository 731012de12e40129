// A balance as it stood at a moment, or as its whole history gives it (`from_source`): the one fold of
// engine/balance-fold.ts over the log, driven off the request path. The log is read in chunks with a
// turn of the event loop between them, so a long history does not stall other requests (a fold over
// 50,000 transfers once held GET /health for about a second); the fold is fed event by event and keeps
// its state between chunks. A fold may start from a balance snapshot (the record at a seq) instead of
// the beginning of the log. Folds are bounded: at most `concurrent_max` run at once, at most `waiting_max` wait, and
// any more are refused (QUEUE_BACKPRESSURE) rather than queued without end.

import PQueue from 'p-queue';
import { BalanceFold } from '../engine/balance-fold.js';
import { STATEMENT_MOVEMENTS_MAX, StatementFold } from '../engine/balance-statement.js';
import type { LoggedEvent } from '../engine/events.js';
import type { BalanceRecord } from '../engine/records.js';
import type { FoldAnswer, StatementAnswer } from '../http/ports/ledger-core.js';
import { accept, refuse } from '../engine/result.js';

/** The log as a fold reads it. */
export interface HistorySource {
  read(fromSeq: number, toSeq?: number): Iterable<LoggedEvent>;
}

export interface BalanceFoldLimits {
  /** Folds running at once. */
  concurrent_max: number;
  /** Folds waiting for a turn; beyond it new ones are refused. */
  waiting_max: number;
  /** Events folded per turn of the event loop. */
  chunk_events: number;
}

/** Where a fold may start instead of the log's beginning: the balance as it stood right after `seq`. */
export interface FoldStart {
  seq: number;
  /** Absent: the balance did not exist at `seq`. */
  balance?: BalanceRecord;
}

export const DEFAULT_BALANCE_FOLD_LIMITS: BalanceFoldLimits = { concurrent_max: 2, waiting_max: 16, chunk_events: 1_000 };


export class BalanceFolds {
  private readonly limits: BalanceFoldLimits;
  private readonly queue: PQueue;

  constructor(private readonly source: HistorySource, limits: Partial<BalanceFoldLimits> = {}) {
    this.limits = { ...DEFAULT_BALANCE_FOLD_LIMITS, ...limits };
    this.queue = new PQueue({ concurrency: this.limits.concurrent_max });
  }

  /**
   * The balance folded from its creation through every event up to `untilMs` (by decided time), reading
   * no further than `toSeq`; undefined when it did not exist by then.
   */
  async at(balanceId: string, untilMs: number, toSeq: number, from?: FoldStart): Promise<FoldAnswer> {
    if (this.queue.size >= this.limits.waiting_max) {
      return refuse({ code: 'QUEUE_BACKPRESSURE', message: `${this.queue.size + this.queue.pending} balance histories are being folded; try again shortly` });
    }
    const balance = await this.queue.add(() => this.fold(balanceId, untilMs, toSeq, from));
    return accept({ balance, from_source: from === undefined });
  }

  /**
   * A balance's statement for [fromMs, toMs] (engine/balance-statement.ts), folded from the log's
   * beginning through `toSeq` under the same bounds as the other folds; its movements from `offset`, at
   * most `limit`.
   */
  async statement(balanceId: string, fromMs: number, toMs: number, toSeq: number, offset: number, limit: number): Promise<StatementAnswer> {
    if (this.queue.size >= this.limits.waiting_max) {
      return refuse({ code: 'QUEUE_BACKPRESSURE', message: `${this.queue.size + this.queue.pending} balance histories are being folded; try again shortly` });
    }
    const fold = new StatementFold(balanceId, fromMs, toMs);
    await this.queue.add(() => this.feedAll(toSeq, (seq, event) => fold.feed(seq, event)));
    if (fold.tooLong) {
      return refuse({ code: 'BAL_STATEMENT_TOO_LONG', message: `more than ${STATEMENT_MOVEMENTS_MAX} movements in the window; ask for a shorter one` });
    }
    return accept(fold.page(offset, limit));
  }

  /** Feeds every event of the log through `toSeq`, in chunks with a turn of the event loop between them. */
  private async feedAll(toSeq: number, feed: (seq: number, event: LoggedEvent['event']) => void): Promise<void> {
    const events = this.source.read(1, toSeq)[Symbol.iterator]();
    try {
      for (;;) {
        for (let count = 0; count < this.limits.chunk_events; count += 1) {
          const next = events.next();
          if (next.done) return;
          feed(next.value.seq, next.value.event);
        }
        await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      events.return?.();
    }
  }

  private async fold(balanceId: string, untilMs: number, toSeq: number, from?: FoldStart): Promise<BalanceRecord | undefined> {
    const fold = new BalanceFold(balanceId, untilMs, from?.balance);
    const startSeq = from?.seq ?? 0;
    const events = this.source.read(startSeq + 1, toSeq)[Symbol.iterator]();
    try {
      for (;;) {
        for (let count = 0; count < this.limits.chunk_events; count += 1) {
          const next = events.next();
          if (next.done) return fold.result;
          // Reading starts at the log record holding the first seq asked for, which may begin earlier.
          if (next.value.seq <= startSeq) continue;
          // Events after the moment still count for their back-dated postings (effective_date), so the
          // history is read to the end.
          fold.feed(next.value.event);
        }
        await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      events.return?.();
    }
  }
}
