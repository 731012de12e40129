// A balance rebuilt from history alone: its creation plus every posting to it, in log order. This is
// how `from_source` reads and point-in-time balances are answered, independently of the running state.

import type { LedgerEvent } from './events.js';
import { applyPosting } from './ledger-state.js';
import { mergeMetaData } from './metadata.js';
import type { BalanceRecord } from './records.js';

/**
 * Folds the events into the balance's record. Events after `untilMs` (by decided time) are ignored;
 * undefined when the balance was not created in the events read.
 */
export function foldBalance(balanceId: string, events: Iterable<LedgerEvent>, untilMs = Number.MAX_SAFE_INTEGER): BalanceRecord | undefined {
  let balance: BalanceRecord | undefined;
  for (const event of events) {
    if (event.at > untilMs) break;
    if (!balance) {
      const created = event.balances?.find((candidate) => candidate.balance_id === balanceId);
      if (created) balance = { ...created };
    }
    if (!balance) continue;
    const meta = event.balance_meta?.find((entry) => entry.balance_id === balanceId);
    if (meta) balance.meta_data = meta.meta_data;
    for (const patch of event.metadata_patches ?? []) {
      if (patch.entity_id === balanceId) balance.meta_data = mergeMetaData(balance.meta_data, patch.meta_data);
    }
    if (!event.postings) continue;
    let changed = false;
    for (const posting of event.postings) {
      if (posting.balance_id !== balanceId) continue;
      applyPosting(balance, posting);
      changed = true;
    }
    if (changed) balance.version += 1;
  }
  return balance;
}
