// The closed periods of every ledger, as the working state keeps them (engine/closed-periods.ts says what
// closing does): per ledger, its periods in the order they were closed, each closing later than the one
// before, so the moment a ledger is closed through is the last one's `closes_at`.

import { assert } from './assert.js';
import type { BalanceRecord, PeriodRecord } from './records.js';
import { reject, type Rejection } from './rejections.js';

/** The closed periods of every ledger, in the order they were closed. */
export class ClosedPeriods {
  private readonly byLedger = new Map<string, PeriodRecord[]>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** The `closes_at` of the ledger's last closed period, 0 when it has none. */
  closedThrough(ledgerId: string): number {
    const periods = this.byLedger.get(ledgerId);
    return periods ? (periods[periods.length - 1] as PeriodRecord).closes_at : 0;
  }

  /** The ledger's closed periods, oldest first. */
  of(ledgerId: string): readonly PeriodRecord[] {
    return this.byLedger.get(ledgerId) ?? [];
  }

  /** The closed period a moment of a ledger falls in, if any. */
  containing(ledgerId: string, at: number): PeriodRecord | undefined {
    return this.of(ledgerId).find((period) => at <= period.closes_at);
  }

  /** Every closed period, ledger by ledger, each ledger's oldest first (the order restoring applies them in). */
  *all(): Iterable<PeriodRecord> {
    for (const periods of this.byLedger.values()) yield* periods;
  }

  /**
   * Why a movement dated `at` (a transaction's effective date; 0 for none) may not touch these balances:
   * the ledger of one of them is closed through `at` or later. `balance` finds a balance by id, those the
   * decision creates included (they are in the general ledger). O(1) per balance, and nothing at all for
   * an undated movement or when no ledger has a closed period.
   */
  refusal(balance: (balanceId: string) => BalanceRecord | undefined, balanceIds: readonly string[], at: number): Rejection | undefined {
    if (at === 0 || this.count === 0) return undefined;
    for (const balanceId of balanceIds) {
      const ledgerId = balance(balanceId)?.ledger_id;
      if (ledgerId === undefined || at > this.closedThrough(ledgerId)) continue;
      const period = this.containing(ledgerId, at) as PeriodRecord;
      return reject(
        'TXN_PERIOD_CLOSED',
        `effective_date ${new Date(at).toISOString()} falls in period ${period.period_id} of ledger ${ledgerId}, closed through ${new Date(period.closes_at).toISOString()}`,
      );
    }
    return undefined;
  }

  add(period: PeriodRecord): void {
    const periods = this.byLedger.get(period.ledger_id);
    assert(!periods || period.closes_at > (periods[periods.length - 1] as PeriodRecord).closes_at, `period ${period.period_id} does not close after the last one`);
    if (periods) periods.push(period);
    else this.byLedger.set(period.ledger_id, [period]);
    this.count += 1;
  }
}
