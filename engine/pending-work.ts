// Work the engine does on its own rather than on request: queued transactions whose turn has come, and
// timers (holds that expire or commit themselves, scheduled transactions falling due). Each item is
// carried out with the same code a synchronous request uses (carry-out.ts) and committed as one event.

import { assert } from './assert.js';
import { carryOut, eventTypeFor } from './carry-out.js';
import type { InflightActionCommand } from './commands.js';
import type { DecisionScope } from './decision-scope.js';
import type { LedgerEvent } from './events.js';
import type { LedgerState } from './ledger-state.js';
import { mailboxBalanceOf, sourceBalancesOf, type TransactionRecord } from './records.js';
import type { Outcome } from './result.js';

export interface PendingWorkLimits {
  /** Timers fired per call of fireDueTimers, so a backlog after downtime is worked off in slices. */
  timers_per_slice_max: number;
}

export interface PendingWorkParts {
  state: LedgerState;
  limits: PendingWorkLimits;
  scope: () => DecisionScope;
  /** Applies and logs events as one log record. */
  commit: (events: LedgerEvent[]) => number;
  /** Commits or voids a hold synchronously (the engine's run of the inflight operation). */
  actOnHold: (command: InflightActionCommand) => Outcome<unknown>;
}

export class PendingWork {
  constructor(private readonly parts: PendingWorkParts) {}

  /**
   * Applies up to `itemsMax` queued transactions, one per balance per turn around the ring of balances
   * with waiting work. Returns how many were carried out.
   */
  processQueued(itemsMax: number): number {
    let processed = 0;
    while (processed < itemsMax) {
      const balanceId = this.parts.state.mailboxes.nextReady();
      if (balanceId === undefined) break;
      this.applyHead(balanceId);
      processed += 1;
    }
    return processed;
  }

  /**
   * Carries out now every queued transaction recorded at or before `cutoff`, with whatever is queued
   * ahead of it in its balance's mailbox (order is kept). Returns how many of those old ones there were.
   */
  recoverQueued(cutoff: number): number {
    const stale = new Map<string, number>();
    for (const [balanceId, record] of this.parts.state.mailboxes.all()) {
      if (record.created_at <= cutoff) stale.set(balanceId, (stale.get(balanceId) ?? 0) + 1);
    }
    let recovered = 0;
    for (const [balanceId, count] of stale) {
      // The old ones are at the head of the mailbox (it is in arrival order): carry out that many.
      for (let index = 0; index < count && this.parts.state.mailboxes.head(balanceId); index += 1) {
        this.applyHead(balanceId);
        recovered += 1;
      }
    }
    return recovered;
  }

  /** Applies everything the balances have queued, in order. */
  drain(balanceIds: Iterable<string>): void {
    for (const balanceId of balanceIds) {
      while (this.parts.state.mailboxes.head(balanceId)) this.applyHead(balanceId);
    }
  }

  /**
   * Fires the timers due by `now`: holds expire (void) or commit themselves, scheduled transactions are
   * carried out. A timer whose transaction has moved on since it was set is dropped. Returns how many
   * fired.
   */
  fireDueTimers(now: number): number {
    const { state } = this.parts;
    let fired = 0;
    while (fired < this.parts.limits.timers_per_slice_max) {
      const timer = state.timers.popDue(now);
      if (!timer) break;
      if (timer.kind === 'scheduled') {
        const record = state.scheduled.get(timer.transactionId);
        if (!record) continue;
        this.drain(sourceBalancesOf(record));
        this.carryOutAndCommit(record);
      } else {
        const hold = state.holds.get(timer.transactionId);
        if (!hold) continue;
        this.drain([mailboxBalanceOf(hold)]);
        if (!state.holds.has(hold.transaction_id)) continue;
        // No amount: a timer commits or voids whatever the hold still holds.
        const outcome = this.parts.actOnHold({
          transaction_id: hold.transaction_id,
          action: timer.kind === 'expire' ? 'void' : 'commit',
          precise_amount: 0n,
          skip_queue: true,
        });
        assert(outcome.ok, `timer on open hold ${hold.transaction_id} was refused`);
      }
      fired += 1;
    }
    return fired;
  }

  private applyHead(balanceId: string): void {
    const head = this.parts.state.mailboxes.head(balanceId);
    assert(head, `mailbox ${balanceId} is empty`);
    this.carryOutAndCommit(head, true);
  }

  private carryOutAndCommit(record: TransactionRecord, fromQueue = false): void {
    const scope = this.parts.scope();
    scope.carryingQueued = fromQueue;
    const final = carryOut(scope, record);
    this.parts.commit([scope.toEvent(eventTypeFor(final))]);
  }
}
