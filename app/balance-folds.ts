// A balance as it stood at a moment, or as its whole history gives it (`from_source`): the one fold of
// engine/balance-fold.ts over the log, driven off the request path. The log is read in chunks with a
// turn of the event loop between them, so a long history does not stall other requests (a fold over
// 50,000 transfers once held GET /health for about a second); each chunk is folded from the state the
// previous one reached, handed over as a creation record (foldBalance copies it and carries on, version
// included). Folds are bounded: at most `concurrent_max` run at once, at most `waiting_max` wait, and
// any more are refused (QUEUE_BACKPRESSURE) rather than queued without end.

import PQueue from 'p-queue';
import { foldBalance } from '../engine/balance-fold.js';
import type { LedgerEvent, LoggedEvent } from '../engine/events.js';
import type { BalanceRecord } from '../engine/records.js';
import type { FoldAnswer } from '../http/ledger-core.js';

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
  async at(balanceId: string, untilMs: number, toSeq: number): Promise<FoldAnswer> {
    if (this.queue.size >= this.limits.waiting_max) {
      return { ok: false, code: 'QUEUE_BACKPRESSURE', message: `${this.queue.size + this.queue.pending} balance histories are being folded; try again shortly` };
    }
    const balance = await this.queue.add(() => this.fold(balanceId, untilMs, toSeq));
    return { ok: true, balance };
  }

  private async fold(balanceId: string, untilMs: number, toSeq: number): Promise<BalanceRecord | undefined> {
    const events = this.source.read(1, toSeq)[Symbol.iterator]();
    let balance: BalanceRecord | undefined;
    let reachedAt = 0;
    try {
      for (;;) {
        const chunk: LedgerEvent[] = balance ? [{ type: 'balance.created', at: reachedAt, balances: [balance] }] : [];
        let finished = false;
        while (chunk.length < this.limits.chunk_events) {
          const next = events.next();
          if (next.done) {
            finished = true;
            break;
          }
          const event = next.value.event;
          // Event times never decrease along the log, so the first later event ends the history.
          if (event.at > untilMs) {
            finished = true;
            break;
          }
          chunk.push(event);
          reachedAt = event.at;
        }
        balance = foldBalance(balanceId, chunk, untilMs) ?? balance;
        if (finished) return balance;
        await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      events.return?.();
    }
  }
}
