// Folds durable events into the balance history (history-store.ts): for each event, in log order, the
// running totals of every balance it created or moved, the record of every balance it created or whose
// metadata or identity it changed, and what its back-dated postings moved. A balance's state is its
// creation record plus every posting since, its version rising once per event that moves it, exactly as
// engine/balance-fold.ts counts, so the history cannot disagree with the fold. No engine state is read:
// a balance not kept in memory is read back from the store's own last entries (its amounts; its record
// only when an event changes its metadata or identity).
//
// A batch of events becomes one LMDB transaction with the checkpoint, so after a crash the store is
// exactly as of some seq and resumes from there. Balances touched by a batch stay in memory until it is
// committed (their entries are not in the store before that); past `balances_cached_max` the oldest
// kept are dropped between batches (first in, first out: moving an entry to the end of a large Map on
// every use made V8 rebuild the Map over and over, half the thread's time at 100,000 balances) and read
// back when needed.

import type { LoggedEvent } from '../engine/events.js';
import { applyPosting } from '../engine/ledger-state.js';
import { mergeMetaData, metadataTarget } from '../engine/metadata.js';
import type { BalanceRecord, BalanceTotals } from '../engine/records.js';
import { amountsEntry, backdatedEntry, emptyBatch, HistoryMismatchError, recordEntry, type BalanceAmounts, type HistoryBatch, type HistoryCheckpoint, type HistoryStore } from './history-store.js';

export interface HistoryFollowerLimits {
  /** Balances whose current state is kept in memory between batches. */
  balances_cached_max: number;
  /**
   * Test only (0 everywhere else): a pause before each batch (runtime/history-worker.ts), so tests can hold
   * the history behind the log and check what readers do meanwhile (test/balance-history-fresh.int.test.ts).
   */
  batch_pause_ms: number;
}

export const DEFAULT_HISTORY_FOLLOWER_LIMITS: HistoryFollowerLimits = { balances_cached_max: 50_000, batch_pause_ms: 0 };

/** What one event did to balances: the entries it gets. */
interface EventChanges {
  created: Set<string>;
  moved: Set<string>;
  /** Balances whose metadata or identity changed (not created by the event). */
  records: Set<string>;
  /** Per balance and effective time, what back-dated postings moved. */
  backdated: Map<string, Map<number, BalanceTotals>>;
}

/**
 * What the follower keeps of a balance: its amounts (what nearly every event changes), and its record
 * (identity, metadata, fixed fields) once an event needed it: a balance read back from the store is
 * read back by its last amounts alone, one seek.
 */
interface Tracked {
  amounts: BalanceAmounts;
  record: BalanceRecord | undefined;
}

export class HistoryFollower {
  private readonly balances = new Map<string, Tracked>();
  /** Balances whose record the current batch holds in memory (let go once it is committed). */
  private recordsHeld: string[] = [];
  private readonly limits: HistoryFollowerLimits;
  private _checkpoint: HistoryCheckpoint;

  constructor(private readonly store: HistoryStore, limits: Partial<HistoryFollowerLimits> = {}) {
    this.limits = { ...DEFAULT_HISTORY_FOLLOWER_LIMITS, ...limits };
    store.initialize();
    this._checkpoint = store.checkpoint();
  }

  get checkpoint(): HistoryCheckpoint {
    return this._checkpoint;
  }

  /**
   * Folds `events` (the log's, in order, starting right after the checkpoint) and commits their entries
   * with the new checkpoint. Throws HistoryMismatchError, with nothing written, when an event names a
   * balance the store does not hold (the store and the log disagree: it must start over).
   */
  async apply(events: Iterable<LoggedEvent>): Promise<void> {
    const batch = emptyBatch(this._checkpoint);
    try {
      for (const { seq, event } of events) {
        if (seq !== batch.checkpoint.seq + 1) throw new Error(`the balance history expected seq ${batch.checkpoint.seq + 1}, not ${seq}`);
        this.fold(seq, event, batch);
        batch.checkpoint = { seq, at: event.at };
      }
      if (batch.checkpoint.seq === this._checkpoint.seq) return;
      this.store.write(batch);
    } catch (error) {
      // The cached balances may hold changes that never reached the store.
      this.balances.clear();
      this.recordsHeld = [];
      throw error;
    }
    this._checkpoint = batch.checkpoint;
    // Records are needed again only when an event changes a balance's metadata or identity (rarely):
    // read back then, rather than kept for every balance created.
    for (const balanceId of this.recordsHeld) {
      const tracked = this.balances.get(balanceId);
      if (tracked) tracked.record = undefined;
    }
    this.recordsHeld = [];
    this.trimCache();
  }

  /** Forgets every cached balance and rereads the checkpoint (after the store was reset). */
  restart(): void {
    this.balances.clear();
    this.recordsHeld = [];
    this._checkpoint = this.store.checkpoint();
  }

  private fold(seq: number, event: LoggedEvent['event'], batch: HistoryBatch): void {
    const changes: EventChanges = { created: new Set(), moved: new Set(), records: new Set(), backdated: new Map() };
    for (const created of event.balances ?? []) {
      const { credit_balance, debit_balance, inflight_credit_balance, inflight_debit_balance, version } = created;
      this.balances.set(created.balance_id, { amounts: { credit_balance, debit_balance, inflight_credit_balance, inflight_debit_balance, version }, record: { ...created } });
      this.recordsHeld.push(created.balance_id);
      changes.created.add(created.balance_id);
    }
    for (const { balance_id, meta_data } of event.balance_meta ?? []) {
      this.record(balance_id, seq).meta_data = meta_data;
      changes.records.add(balance_id);
    }
    for (const posting of event.postings ?? []) {
      const { amounts } = this.tracked(posting.balance_id, seq);
      applyPosting(amounts as BalanceRecord, posting);
      if (posting.effective_at !== undefined && posting.effective_at < event.at) {
        let byTime = changes.backdated.get(posting.balance_id);
        if (!byTime) changes.backdated.set(posting.balance_id, (byTime = new Map()));
        let change = byTime.get(posting.effective_at);
        if (!change) byTime.set(posting.effective_at, (change = { credit_balance: 0n, debit_balance: 0n, inflight_credit_balance: 0n, inflight_debit_balance: 0n }));
        change[`${posting.field}_balance`] += posting.amount;
      }
      if (!changes.moved.has(posting.balance_id)) {
        changes.moved.add(posting.balance_id);
        amounts.version += 1;
      }
    }
    for (const patch of event.metadata_patches ?? []) {
      if (metadataTarget(patch.entity_id) !== 'balance') continue;
      const record = this.record(patch.entity_id, seq);
      record.meta_data = mergeMetaData(record.meta_data, patch.meta_data);
      changes.records.add(patch.entity_id);
    }
    for (const { balance_id, identity_id } of event.balance_identities ?? []) {
      this.record(balance_id, seq).identity_id = identity_id;
      changes.records.add(balance_id);
    }
    const at = event.at;
    for (const balanceId of changes.created) batch.amounts.push([[balanceId, at, seq], amountsEntry(this.cached(balanceId).amounts)]);
    for (const balanceId of changes.moved) {
      if (!changes.created.has(balanceId)) batch.amounts.push([[balanceId, at, seq], amountsEntry(this.cached(balanceId).amounts)]);
    }
    for (const balanceId of changes.created) batch.records.push([[balanceId, at, seq], this.recordEntryOf(balanceId)]);
    for (const balanceId of changes.records) {
      if (!changes.created.has(balanceId)) batch.records.push([[balanceId, at, seq], this.recordEntryOf(balanceId)]);
    }
    for (const [balanceId, byTime] of changes.backdated) {
      for (const [effectiveAt, change] of byTime) batch.backdated.push([[balanceId, at, seq, effectiveAt], backdatedEntry(change)]);
    }
  }

  /** A records entry: the record with the amounts of the moment. */
  private recordEntryOf(balanceId: string): Buffer {
    const { amounts, record } = this.cached(balanceId);
    return recordEntry({ ...(record as BalanceRecord), ...amounts });
  }

  /** The balance as kept, from memory or else the store's last amounts; one neither holds means a mismatch. */
  private tracked(balanceId: string, seq: number): Tracked {
    const cached = this.balances.get(balanceId);
    if (cached) return cached;
    const amounts = this.store.currentAmounts(balanceId);
    if (!amounts) throw new HistoryMismatchError(`the event at seq ${seq} names balance ${balanceId}, which the balance history does not hold`);
    const tracked: Tracked = { amounts, record: undefined };
    this.balances.set(balanceId, tracked);
    return tracked;
  }

  /** The balance's record, read back from the store the first time an event needs it. */
  private record(balanceId: string, seq: number): BalanceRecord {
    const tracked = this.tracked(balanceId, seq);
    if (!tracked.record) {
      tracked.record = this.store.currentRecord(balanceId);
      if (!tracked.record) throw new HistoryMismatchError(`the event at seq ${seq} names balance ${balanceId}, whose record the balance history does not hold`);
      this.recordsHeld.push(balanceId);
    }
    return tracked.record;
  }

  private cached(balanceId: string): Tracked {
    return this.balances.get(balanceId) as Tracked;
  }

  /** Forgets the balances kept longest once there are too many; they are read back on need. */
  private trimCache(): void {
    let excess = this.balances.size - this.limits.balances_cached_max;
    if (excess <= 0) return;
    excess += Math.floor(this.limits.balances_cached_max / 4);
    for (const balanceId of this.balances.keys()) {
      if (excess-- <= 0) break;
      this.balances.delete(balanceId);
    }
  }
}
