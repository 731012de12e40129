// The projection itself: events in, rows out, as a pure fold. Events carry full records for ledgers,
// identities and transactions, so those are last-write-wins by id; balances are created by events and
// then moved only by postings, so their current amounts are the creation record plus every posting
// since, with the version rising once per event that touches them (as engine/balance-fold.ts counts).
// No engine state is read: the balances it needs come from the index's own rows (or its cache of them).

import type { LedgerEvent, MetadataPatch, Posting } from '../engine/events.js';
import { applyPosting } from '../engine/ledger-state.js';
import { mergeMetaData, metadataTarget } from '../engine/metadata.js';
import type { BalanceRecord, BalanceTotals, IdentityRecord, LedgerRecord, TransactionRecord } from '../engine/records.js';
import type { ExternalRecordsChunk, ReconciliationRecord, ReconciliationResultsChunk } from '../engine/reconciliation-records.js';
import { chunkRows } from './reconciliation-tables.js';

/** Rows one slice of events changes, each keyed by id in order of first appearance. */
export interface RowChanges {
  ledgers: Map<string, LedgerRecord>;
  /** null = deleted. */
  identities: Map<string, IdentityRecord | null>;
  balances: Map<string, BalanceRecord>;
  /**
   * Balances whose row changes beyond its amounts (created, or metadata or identity changed): the rest
   * are written with an upsert that sets the amounts alone (index-schema.ts upsertAmountsSql).
   */
  balanceRecords: Set<string>;
  transactions: Map<string, TransactionRecord>;
  reconciliations: Map<string, ReconciliationRecord>;
  /** Rows appended as they are (uploads and results are written once, keyed by position). */
  externalRecords: ExternalRecordsChunk[];
  reconciliationResults: ReconciliationResultsChunk[];
}

export function emptyChanges(): RowChanges {
  return {
    ledgers: new Map(), identities: new Map(), balances: new Map(), balanceRecords: new Set(), transactions: new Map(), reconciliations: new Map(),
    externalRecords: [], reconciliationResults: [],
  };
}

export function changedRowCount(changes: RowChanges): number {
  return changes.ledgers.size + changes.identities.size + changes.balances.size + changes.transactions.size
    + changes.reconciliations.size + chunkRows({ external: changes.externalRecords, results: changes.reconciliationResults });
}

/** Balance ids an event needs the current state of (beyond those it creates itself). */
export function balancesNeeded(event: LedgerEvent, into: Set<string>): void {
  for (const posting of event.postings ?? []) into.add(posting.balance_id);
  for (const entry of event.balance_meta ?? []) into.add(entry.balance_id);
  for (const entry of event.balance_identities ?? []) into.add(entry.balance_id);
  for (const patch of event.metadata_patches ?? []) {
    if (metadataTarget(patch.entity_id) === 'balance') into.add(patch.entity_id);
  }
}

/**
 * Current rows of the ledgers, identities and transactions an event's metadata patches name: a patch
 * is merged over the record as the index holds it. The projector loads them (patchedRecordsNeeded)
 * before folding; the fold keeps them current as it goes.
 */
export interface PatchedRecords {
  ledgers: Map<string, LedgerRecord>;
  identities: Map<string, IdentityRecord>;
  transactions: Map<string, TransactionRecord>;
}

export function emptyPatchedRecords(): PatchedRecords {
  return { ledgers: new Map(), identities: new Map(), transactions: new Map() };
}

/** Ids of the records other than balances that an event patches, by collection. */
export function patchedRecordsNeeded(event: LedgerEvent, into: { ledgers: Set<string>; identities: Set<string>; transactions: Set<string> }): void {
  for (const patch of event.metadata_patches ?? []) {
    const target = metadataTarget(patch.entity_id);
    if (target === 'ledger') into.ledgers.add(patch.entity_id);
    else if (target === 'identity') into.identities.add(patch.entity_id);
    else if (target === 'transaction') into.transactions.add(patch.entity_id);
  }
}

export class ProjectionError extends Error {
  override readonly name = 'ProjectionError';
}

/**
 * What one event has done to balances so far. The parts of a cut event share it, so a balance's version
 * rises once per event however the event was cut.
 */
export interface EventProgress {
  /** Balances a posting of the event moved. */
  moved: Set<string>;
}

export function newEventProgress(): EventProgress {
  return { moved: new Set() };
}

/**
 * Applies one event, or one part of an event too large for a slice (see splitEvent). `balances` holds
 * the current state of every balance the event touches (the fold updates those objects in place); a
 * missing one means the index and the log disagree. `progress` collects what the event has done to
 * balances so far (see EventProgress).
 */
export function foldEvent(
  event: LedgerEvent,
  balances: Map<string, BalanceRecord>,
  changes: RowChanges,
  progress: EventProgress = newEventProgress(),
  patched: PatchedRecords = emptyPatchedRecords(),
): void {
  for (const ledger of event.ledgers ?? []) changes.ledgers.set(ledger.ledger_id, ledger);
  for (const identity of event.identities ?? []) changes.identities.set(identity.identity_id, identity);
  for (const identityId of event.deleted_identities ?? []) changes.identities.set(identityId, null);
  for (const created of event.balances ?? []) {
    const balance = { ...created };
    balances.set(balance.balance_id, balance);
    changes.balances.set(balance.balance_id, balance);
    changes.balanceRecords.add(balance.balance_id);
  }
  for (const { balance_id, meta_data } of event.balance_meta ?? []) {
    const balance = current(balances, balance_id);
    balance.meta_data = meta_data;
    changes.balances.set(balance_id, balance);
    changes.balanceRecords.add(balance_id);
  }
  for (const posting of event.postings ?? []) {
    const balance = current(balances, posting.balance_id);
    applyPosting(balance, posting);
    if (!progress.moved.has(balance.balance_id)) {
      progress.moved.add(balance.balance_id);
      balance.version += 1;
    }
    changes.balances.set(balance.balance_id, balance);
  }
  for (const record of event.transactions ?? []) changes.transactions.set(record.transaction_id, record);
  for (const patch of event.metadata_patches ?? []) foldPatch(patch, balances, changes, patched);
  for (const chunk of event.external_records ?? []) changes.externalRecords.push(chunk);
  for (const run of event.reconciliations ?? []) changes.reconciliations.set(run.reconciliation_id, run);
  for (const chunk of event.reconciliation_results ?? []) changes.reconciliationResults.push(chunk);
  for (const { balance_id, identity_id } of event.balance_identities ?? []) {
    const balance = current(balances, balance_id);
    balance.identity_id = identity_id;
    changes.balances.set(balance_id, balance);
    changes.balanceRecords.add(balance_id);
  }
}

function foldPatch(
  { entity_id: id, meta_data: patch }: MetadataPatch,
  balances: Map<string, BalanceRecord>,
  changes: RowChanges,
  patched: PatchedRecords,
): void {
  const missing = (): never => {
    throw new ProjectionError(`a metadata patch names ${id}, which the index does not hold`);
  };
  switch (metadataTarget(id)) {
    case 'balance': {
      const balance = current(balances, id);
      balance.meta_data = mergeMetaData(balance.meta_data, patch);
      changes.balances.set(id, balance);
      changes.balanceRecords.add(id);
      return;
    }
    case 'ledger': {
      const ledger = changes.ledgers.get(id) ?? patched.ledgers.get(id) ?? missing();
      const merged = { ...ledger, meta_data: mergeMetaData(ledger.meta_data, patch) };
      changes.ledgers.set(id, merged);
      patched.ledgers.set(id, merged);
      return;
    }
    case 'identity': {
      const identity = changes.identities.get(id) ?? patched.identities.get(id) ?? missing();
      const merged = { ...identity, meta_data: mergeMetaData(identity.meta_data, patch) };
      changes.identities.set(id, merged);
      patched.identities.set(id, merged);
      return;
    }
    case 'transaction': {
      const record = changes.transactions.get(id) ?? patched.transactions.get(id) ?? missing();
      const merged = { ...record, meta_data: mergeMetaData(record.meta_data, patch) };
      changes.transactions.set(id, merged);
      patched.transactions.set(id, merged);
      return;
    }
    default:
      missing();
  }
}

/** The rows an event changes, counted as a slice counts them. */
export function eventRows(event: LedgerEvent): number {
  return 1 + (event.transactions?.length ?? 0) + (event.postings?.length ?? 0) / 2 + (event.metadata_patches?.length ?? 0)
    + chunkRows({ external: event.external_records, results: event.reconciliation_results });
}

/**
 * What splitEvent does with each field of an event: every part carries the header; the folded lists
 * are cut, in the order foldEvent applies them; the rest the index does not fold. A field added to
 * LedgerEvent is a compile error here until it is placed.
 */
const EVENT_PARTS = {
  type: 'header', at: 'header',
  ledgers: 1, identities: 2, deleted_identities: 3, balances: 4, balance_meta: 5, postings: 6, transactions: 7, metadata_patches: 8,
  external_records: 9, reconciliations: 10, reconciliation_results: 11,
  api_keys: 'unfolded', hooks: 'unfolded', deleted_hooks: 'unfolded', matching_rules: 'unfolded', deleted_matching_rules: 'unfolded',
  uploads: 'unfolded',
  balance_identities: 12,
  monitors: 'unfolded', deleted_monitors: 'unfolded', monitor_alerts: 'unfolded', batch: 'unfolded', system_errors: 'unfolded', lineage: 'unfolded',
  periods: 'unfolded',
} as const satisfies Record<keyof LedgerEvent, 'header' | 'unfolded' | number>;
const PART_FIELDS = (Object.keys(EVENT_PARTS) as Array<keyof LedgerEvent>)
  .filter((field) => typeof EVENT_PARTS[field] === 'number')
  .sort((a, b) => (EVENT_PARTS[a] as number) - (EVENT_PARTS[b] as number));

/**
 * Cuts an event into parts of at most `rowsMax` rows each, in fold order, so a projector folds and
 * writes a huge event a slice at a time instead of holding all its rows at once. Folding the parts in
 * order with one shared EventProgress gives the same rows as folding the whole event. An item is a
 * row, except a chunk of reconciliation rows, which weighs the rows it holds (and is never cut).
 */
export function splitEvent(event: LedgerEvent, rowsMax: number): LedgerEvent[] {
  const parts: LedgerEvent[] = [];
  let part: LedgerEvent = { type: event.type, at: event.at };
  let rows = 0;
  for (const field of PART_FIELDS) {
    const list = event[field] as unknown[] | undefined;
    for (const item of list ?? []) {
      const weight = itemRows(field, item);
      if (rows > 0 && rows + weight > rowsMax) {
        parts.push(part);
        part = { type: event.type, at: event.at };
        rows = 0;
      }
      const lists = part as unknown as Record<string, unknown[] | undefined>;
      (lists[field] ??= []).push(item);
      rows += weight;
    }
  }
  parts.push(part);
  return parts;
}

function itemRows(field: keyof LedgerEvent, item: unknown): number {
  if (field === 'external_records') return Math.max(1, (item as ExternalRecordsChunk).records.length);
  if (field === 'reconciliation_results') {
    const chunk = item as ReconciliationResultsChunk;
    return Math.max(1, chunk.matches.length + chunk.unmatched.length);
  }
  return 1;
}

function current(balances: Map<string, BalanceRecord>, balanceId: string): BalanceRecord {
  const balance = balances.get(balanceId);
  if (!balance) throw new ProjectionError(`event touches balance ${balanceId}, which the index does not hold`);
  return balance;
}
