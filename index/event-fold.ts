// The projection itself: events in, rows out, as a pure fold. Events carry full records for ledgers,
// identities and transactions, so those are last-write-wins by id; balances are created by events and
// then moved only by postings, so their current amounts are the creation record plus every posting
// since, with the version rising once per event that touches them (as engine/balance-fold.ts counts).
// No engine state is read: the balances it needs come from the index's own rows (or its cache of them).

import type { LedgerEvent } from '../engine/events.js';
import { applyPosting } from '../engine/ledger-state.js';
import type { BalanceRecord, IdentityRecord, LedgerRecord, TransactionRecord } from '../engine/records.js';

/** Rows one slice of events changes, each keyed by id in order of first appearance. */
export interface RowChanges {
  ledgers: Map<string, LedgerRecord>;
  /** null = deleted. */
  identities: Map<string, IdentityRecord | null>;
  balances: Map<string, BalanceRecord>;
  transactions: Map<string, TransactionRecord>;
}

export function emptyChanges(): RowChanges {
  return { ledgers: new Map(), identities: new Map(), balances: new Map(), transactions: new Map() };
}

export function changedRowCount(changes: RowChanges): number {
  return changes.ledgers.size + changes.identities.size + changes.balances.size + changes.transactions.size;
}

/** Balance ids an event needs the current state of (beyond those it creates itself). */
export function balancesNeeded(event: LedgerEvent, into: Set<string>): void {
  for (const posting of event.postings ?? []) into.add(posting.balance_id);
  for (const entry of event.balance_meta ?? []) into.add(entry.balance_id);
}

export class ProjectionError extends Error {
  override readonly name = 'ProjectionError';
}

/**
 * Applies one event. `balances` holds the current state of every balance the event touches (the fold
 * updates those objects in place); a missing one means the index and the log disagree.
 */
export function foldEvent(event: LedgerEvent, balances: Map<string, BalanceRecord>, changes: RowChanges): void {
  for (const ledger of event.ledgers ?? []) changes.ledgers.set(ledger.ledger_id, ledger);
  for (const identity of event.identities ?? []) changes.identities.set(identity.identity_id, identity);
  for (const identityId of event.deleted_identities ?? []) changes.identities.set(identityId, null);
  for (const created of event.balances ?? []) {
    const balance = { ...created };
    balances.set(balance.balance_id, balance);
    changes.balances.set(balance.balance_id, balance);
  }
  for (const { balance_id, meta_data } of event.balance_meta ?? []) {
    const balance = current(balances, balance_id);
    balance.meta_data = meta_data;
    changes.balances.set(balance_id, balance);
  }
  if (event.postings && event.postings.length > 0) {
    const touched = new Set<BalanceRecord>();
    for (const posting of event.postings) {
      const balance = current(balances, posting.balance_id);
      applyPosting(balance, posting);
      touched.add(balance);
    }
    for (const balance of touched) {
      balance.version += 1;
      changes.balances.set(balance.balance_id, balance);
    }
  }
  for (const record of event.transactions ?? []) changes.transactions.set(record.transaction_id, record);
}

function current(balances: Map<string, BalanceRecord>, balanceId: string): BalanceRecord {
  const balance = balances.get(balanceId);
  if (!balance) throw new ProjectionError(`event touches balance ${balanceId}, which the index does not hold`);
  return balance;
}
