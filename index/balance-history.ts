// A balance as it stood at a moment: engine/balance-fold.ts's foldBalance over the log up to that time,
// so it is by construction the same fold `from_source` reads use. The log is read in chunks with a
// turn of the event loop between them, so a long history does not stall other requests. Each chunk
// is folded from the state the previous chunk reached, handed over as a creation record: foldBalance
// copies it and carries on, version included.

import { foldBalance } from '../engine/balance-fold.js';
import type { LedgerEvent } from '../engine/events.js';
import type { BalanceRecord } from '../engine/records.js';
import type { LogSource } from './projector.js';

/** Events folded per turn of the event loop. */
export const HISTORY_CHUNK_EVENTS = 1_000;

export async function balanceAt(source: LogSource, balanceId: string, untilMs: number, toSeq: number): Promise<BalanceRecord | undefined> {
  const events = source.read(1, toSeq)[Symbol.iterator]();
  let balance: BalanceRecord | undefined;
  let reachedAt = 0;
  try {
    for (;;) {
      const chunk: LedgerEvent[] = balance ? [{ type: 'balance.created', at: reachedAt, balances: [balance] }] : [];
      let finished = false;
      while (chunk.length < HISTORY_CHUNK_EVENTS) {
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
