// A balance rebuilt from history alone: its creation plus every posting to it, in log order. This is
// how `from_source` reads and point-in-time balances are answered, independently of the running state.
// A posting counts at its effective time (a back-dated transaction's `effective_date`) when it has one,
// else at its event's time; effective times are never later than the event's, so a history up to a
// moment needs the events up to it and the back-dated postings of any event after it. A balance created
// after the moment did not exist then, unless a back-dated posting reaches it at or before the moment.

import type { LedgerEvent, Posting } from './events.js';
import { applyPosting } from './ledger-state.js';
import { mergeMetaData } from './metadata.js';
import type { BalanceRecord } from './records.js';

/**
 * The fold as a value that events are fed to one at a time, so a long history can be read in chunks
 * (runtime/balance-folds.ts) and a fold can start from a known record (a balance snapshot).
 */
export class BalanceFold {
  private balance: BalanceRecord | undefined;
  /** Created after the moment: it counts only once a back-dated posting reaches it. */
  private later: BalanceRecord | undefined;

  constructor(readonly balanceId: string, readonly untilMs = Number.MAX_SAFE_INTEGER, from?: BalanceRecord) {
    if (from) this.balance = { ...from };
  }

  /** The balance as the events fed so far leave it at the moment; undefined when it did not exist then. */
  get result(): BalanceRecord | undefined {
    return this.balance;
  }

  feed(event: LedgerEvent): void {
    if (event.at > this.untilMs) {
      this.feedLater(event);
      return;
    }
    if (!this.balance) {
      const created = event.balances?.find((candidate) => candidate.balance_id === this.balanceId);
      if (created) this.balance = { ...created };
    }
    const balance = this.balance;
    if (!balance) return;
    const meta = event.balance_meta?.find((entry) => entry.balance_id === this.balanceId);
    if (meta) balance.meta_data = meta.meta_data;
    for (const patch of event.metadata_patches ?? []) {
      if (patch.entity_id === this.balanceId) balance.meta_data = mergeMetaData(balance.meta_data, patch.meta_data);
    }
    for (const entry of event.balance_identities ?? []) {
      if (entry.balance_id === this.balanceId) balance.identity_id = entry.identity_id;
    }
    if (event.postings) this.post(balance, event.postings, () => true);
  }

  /** An event after the moment: only its postings dated back to the moment count. */
  private feedLater(event: LedgerEvent): void {
    if (!this.balance && !this.later) {
      const created = event.balances?.find((candidate) => candidate.balance_id === this.balanceId);
      if (created) this.later = { ...created };
    }
    const target = this.balance ?? this.later;
    if (!target || !event.postings) return;
    const untilMs = this.untilMs;
    if (this.post(target, event.postings, (posting) => posting.effective_at !== undefined && posting.effective_at <= untilMs)) {
      this.balance = target;
    }
  }

  /** Applies the balance's postings that count; the version rises once per event that moved it. */
  private post(balance: BalanceRecord, postings: Posting[], counts: (posting: Posting) => boolean): boolean {
    let changed = false;
    for (const posting of postings) {
      if (posting.balance_id !== this.balanceId || !counts(posting)) continue;
      applyPosting(balance, posting);
      changed = true;
    }
    if (changed) balance.version += 1;
    return changed;
  }
}

/**
 * Folds the events into the balance's record as it stood at `untilMs`; undefined when it did not exist
 * then.
 */
export function foldBalance(balanceId: string, events: Iterable<LedgerEvent>, untilMs = Number.MAX_SAFE_INTEGER): BalanceRecord | undefined {
  const fold = new BalanceFold(balanceId, untilMs);
  for (const event of events) fold.feed(event);
  return fold.result;
}
