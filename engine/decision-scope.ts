// What one decision is building: the records it will write, the balances it creates, the postings it
// drafts and the references it claims. A decision may cover many movements (split legs, bulk items,
// queued work applied in one go); the scope lets each step see the ones before it without the state
// being touched, and lets all-or-nothing groups roll back. Turning a scope into an event is the only
// way its contents reach the state.

import { assert } from './assert.js';
import { indicatorKey } from './balance-table.js';
import type { LedgerEvent } from './events.js';
import type { LedgerState } from './ledger-state.js';
import type { ChainPosition, EventLog, IdSource } from './ports.js';
import type { AllocationStrategy } from './fund-allocation.js';
import { LineageDraft } from './lineage-draft.js';
import { PostingDraft } from './posting-draft.js';
import {
  EMPTY_META,
  GENERAL_LEDGER_ID,
  generatedReference,
  type BalanceRecord,
  type MetaData,
  type TransactionRecord,
} from './records.js';
import { reject } from './rejections.js';
import { accept, refuse, type Decided } from './result.js';
import { transactionHash } from './transaction-hash.js';

/** How the server is set to decide: options of the ledger as a whole, fixed while it runs. */
export interface DecisionSettings {
  /**
   * Blnk's `enable_queued_checks`: a transaction must be covered by what its source has available less
   * what is already queued against it (mailboxes.ts keeps those totals). Checked when a transaction
   * joins a queue and when one is carried out at once; one whose turn came was checked against what was
   * queued ahead of it when it joined, and is checked now against the balance as that work left it.
   */
  queued_checks: boolean;
}

export const DEFAULT_DECISION_SETTINGS: DecisionSettings = { queued_checks: false };

export class DecisionScope {
  readonly draft = new PostingDraft();
  readonly created: BalanceRecord[] = [];
  readonly records: TransactionRecord[] = [];
  /** Whole events the decision emits (registry records, a run's results), committed before the drafted one. */
  readonly emitted: LedgerEvent[] = [];
  /** References claimed by records of this decision (reference -> id), which the store does not know yet. */
  private readonly references = new Map<string, string>();
  // Created balances are rare; their indexes are made only when the first one is.
  private createdById: Map<string, BalanceRecord> | undefined;
  private createdByIndicator: Map<string, BalanceRecord> | undefined;

  /**
   * Set while the scope carries out a transaction whose turn came in its mailbox (pending-work.ts): it is
   * itself among the queued amounts, and what waits behind it comes after it, so no queued amount counts.
   */
  carryingQueued = false;
  /** Debits of QUEUED records written in this decision, per balance (made when queued checks need them). */
  private queuedDrafts: Map<string, bigint> | undefined;
  /** The records counted in queuedDrafts, so a rollback takes out exactly those. */
  private countedQueued: Set<TransactionRecord> | undefined;
  /** Lineage moves (decide-lineage.ts), made when a movement touches a balance that tracks lineage. */
  private lineage: LineageDraft | undefined;

  constructor(
    readonly state: LedgerState,
    readonly now: number,
    readonly ids: IdSource,
    readonly settings: DecisionSettings = DEFAULT_DECISION_SETTINGS,
    /** The log the decision will be appended to, for the one decision that names its chain (closing a period). */
    private readonly log?: Pick<EventLog, 'sealNow'>,
  ) {}

  /** Seals the log's checksum chain where it stands now and names the position (engine/closed-periods.ts). */
  sealChain(): ChainPosition {
    assert(this.log, 'this decision scope has no log to seal');
    return this.log.sealNow();
  }

  /**
   * What is already queued against the balance for a funds check: 0 unless the queued checks are on,
   * and 0 for a transaction carried out in its turn; otherwise what waits in the mailboxes and what this
   * decision has queued so far.
   */
  queuedAgainst(balanceId: string): bigint {
    if (!this.settings.queued_checks || this.carryingQueued) return 0n;
    return this.state.mailboxes.queuedDebit(balanceId) + (this.queuedDrafts?.get(balanceId) ?? 0n);
  }

  /** Writes a new QUEUED record, counting what it will take from its sources for later checks in the decision. */
  writeQueued(record: TransactionRecord): TransactionRecord {
    assert(record.status === 'QUEUED', 'writeQueued takes queued records');
    if (this.settings.queued_checks) {
      this.countQueued(record, 1n);
      (this.countedQueued ??= new Set()).add(record);
    }
    return this.write(record);
  }

  private countQueued(record: TransactionRecord, sign: bigint): void {
    const drafts = (this.queuedDrafts ??= new Map<string, bigint>());
    const add = (balanceId: string, amount: bigint): void => {
      drafts.set(balanceId, (drafts.get(balanceId) ?? 0n) + sign * amount);
    };
    if (record.sources) for (const share of record.sources) add(share.balance_id, share.precise_amount);
    else add(record.source, record.precise_amount);
  }

  /** A balance by id, including those this decision creates. */
  balance(balanceId: string): BalanceRecord | undefined {
    return this.state.balances.get(balanceId) ?? this.createdById?.get(balanceId);
  }

  /**
   * A balance named by id must exist in the transaction's currency; an `@name` is looked up in the
   * general ledger by name and currency and, when absent, created as part of this decision.
   */
  resolve(name: string, currency: string): Decided<BalanceRecord> {
    if (!name.startsWith('@')) {
      const balance = this.state.balances.get(name);
      if (!balance) return refuse(reject('BAL_NOT_FOUND', `balance ${name} not found`));
      if (balance.currency !== currency) {
        return refuse(reject('TXN_CURRENCY_MISMATCH', `balance ${name} holds ${balance.currency}, not ${currency}`));
      }
      return accept(balance);
    }
    const existing = this.state.balanceByIndicator(name, currency) ?? this.createdByIndicator?.get(indicatorKey(name, currency));
    if (existing) return accept(existing);
    const balance = newBalance(this.ids.next('bln'), GENERAL_LEDGER_ID, currency, name, '', EMPTY_META, this.now);
    this.created.push(balance);
    (this.createdById ??= new Map()).set(balance.balance_id, balance);
    (this.createdByIndicator ??= new Map()).set(indicatorKey(name, currency), balance);
    return accept(balance);
  }

  /** The balance an `@name` names in a currency, if there is one (none is created). */
  named(name: string, currency: string): BalanceRecord | undefined {
    return this.state.balanceByIndicator(name, currency) ?? this.createdByIndicator?.get(indicatorKey(name, currency));
  }

  /** The newest version of a transaction, counting records written earlier in this decision. */
  transaction(transactionId: string): TransactionRecord | undefined {
    for (let index = this.records.length - 1; index >= 0; index -= 1) {
      const record = this.records[index] as TransactionRecord;
      if (record.transaction_id === transactionId) return record;
    }
    return this.state.transaction(transactionId);
  }

  /** The id of the transaction holding a reference, in this decision or in the store. */
  referenceTaken(reference: string): string | undefined {
    return this.references.get(reference) ?? this.state.transactions.idForReference(reference);
  }

  write(record: TransactionRecord): TransactionRecord {
    this.records.push(record);
    this.references.set(record.reference, record.transaction_id);
    return record;
  }

  /** The lineage moves this decision drafts, made on first use. */
  lineageDraft(): LineageDraft {
    return (this.lineage ??= new LineageDraft(this.state.lineage));
  }

  /** A position to roll back to when a group inside the decision fails as a whole. */
  mark(): ScopeMark {
    return { records: this.records.length, postings: this.draft.mark(), created: this.created.length, lineage: this.lineage?.mark() ?? 0 };
  }

  rollback(mark: ScopeMark): void {
    this.lineage?.rollback(mark.lineage);
    for (const record of this.records.splice(mark.records)) {
      if (this.references.get(record.reference) === record.transaction_id) this.references.delete(record.reference);
      if (this.countedQueued?.delete(record)) this.countQueued(record, -1n);
    }
    this.draft.rollback(mark.postings);
    for (const balance of this.created.splice(mark.created)) {
      this.createdById?.delete(balance.balance_id);
      this.createdByIndicator?.delete(indicatorKey(balance.indicator, balance.currency));
    }
  }

  /** Fields of the drafted event beyond its records and postings (a batch's summary, say). */
  private details: Partial<LedgerEvent> | undefined;

  /** Adds fields to the drafted event (records.ts and events.ts say which a decision may set). */
  detail(fields: Partial<LedgerEvent>): void {
    this.details = { ...this.details, ...fields };
  }

  /** Adds a whole event to what the decision commits. */
  emit(event: LedgerEvent): void {
    this.emitted.push(event);
  }

  /** Whether the decision drafted nothing of transactions or balances. */
  isEmpty(): boolean {
    return this.records.length === 0 && this.created.length === 0;
  }

  /** Every event the decision commits, in order: the emitted ones, then the drafted one (named `type`). */
  toEvents(type: LedgerEvent['type'] | undefined): LedgerEvent[] {
    if (this.isEmpty()) return this.emitted;
    assert(type !== undefined, 'a decision drafted records but its operation names no event type');
    return [...this.emitted, this.toEvent(type)];
  }

  toEvent(type: LedgerEvent['type']): LedgerEvent {
    const event: LedgerEvent = { type, at: this.now, ...this.details };
    if (this.created.length > 0) event.balances = this.created;
    if (this.records.length > 0) event.transactions = this.records;
    if (this.draft.postings.length > 0) event.postings = this.draft.postings;
    if (this.lineage && this.lineage.moves.length > 0) event.lineage = this.lineage.moves;
    return event;
  }
}

/** Where a scope stood, to roll back to. */
export interface ScopeMark {
  records: number;
  postings: number;
  created: number;
  lineage: number;
}

/** Whether and how a new balance tracks fund lineage (absent: it does not, and allocates FIFO). */
export interface BalanceLineageSettings {
  track_fund_lineage: boolean;
  allocation_strategy: AllocationStrategy;
}

export function newBalance(
  balanceId: string,
  ledgerId: string,
  currency: string,
  indicator: string,
  identityId: string,
  metaData: MetaData,
  now: number,
  lineage?: BalanceLineageSettings,
): BalanceRecord {
  const balance: BalanceRecord = {
    balance_id: balanceId,
    ledger_id: ledgerId,
    identity_id: identityId,
    indicator,
    currency,
    credit_balance: 0n,
    debit_balance: 0n,
    inflight_credit_balance: 0n,
    inflight_debit_balance: 0n,
    version: 0,
    created_at: now,
    meta_data: metaData,
  };
  // Kept only when they differ from the defaults, in this order (codec/balance-codec.ts reads them back so).
  if (lineage?.track_fund_lineage) balance.track_fund_lineage = true;
  if (lineage && lineage.allocation_strategy !== 'FIFO') balance.allocation_strategy = lineage.allocation_strategy;
  return balance;
}

/** A new transaction id and the reference generated from it. */
export function newTransactionIds(ids: IdSource): { transaction_id: string; reference: string } {
  const transactionId = ids.next('txn');
  return { transaction_id: transactionId, reference: generatedReference(transactionId) };
}

/**
 * A new transaction record with its hash; everything not given takes its "none" value. Fields come in
 * one fixed order whatever order the caller names them in, and an optional field given as undefined is
 * left out, so a record read back from the log (codec/event-codec.ts) is the same object, key for key.
 */
export function newTransaction(
  fields: Pick<TransactionRecord, 'transaction_id' | 'source' | 'destination' | 'reference' | 'currency' | 'precise_amount' | 'precision'>
    & Partial<TransactionRecord>,
  now: number,
): TransactionRecord {
  const record: TransactionRecord = {
    parent_transaction: fields.parent_transaction ?? '',
    description: fields.description ?? '',
    status: fields.status ?? 'QUEUED',
    allow_overdraft: fields.allow_overdraft ?? false,
    inflight: fields.inflight ?? false,
    skip_queue: fields.skip_queue ?? false,
    created_at: fields.created_at ?? now,
    inflight_expiry_date: fields.inflight_expiry_date ?? 0,
    inflight_commit_date: fields.inflight_commit_date ?? 0,
    scheduled_for: fields.scheduled_for ?? 0,
    meta_data: fields.meta_data ?? EMPTY_META,
    transaction_id: fields.transaction_id,
    source: fields.source,
    destination: fields.destination,
    reference: fields.reference,
    currency: fields.currency,
    precise_amount: fields.precise_amount,
    precision: fields.precision,
    hash: transactionHash(fields),
  };
  // In OPTIONAL_TRANSACTION_FIELDS' order, written out: a loop over the names made every read a keyed
  // lookup on callers' objects of many shapes, a tenth of a bulk item's time on the engine's thread
  // (test/decision-scope.unit.test.ts holds the two lists together).
  if (fields.batch_id !== undefined) record.batch_id = fields.batch_id;
  if (fields.committed_amount !== undefined) record.committed_amount = fields.committed_amount;
  if (fields.rejection !== undefined) record.rejection = fields.rejection;
  if (fields.sources !== undefined) record.sources = fields.sources;
  if (fields.destinations !== undefined) record.destinations = fields.destinations;
  if (fields.atomic !== undefined) record.atomic = fields.atomic;
  if (fields.legs !== undefined) record.legs = fields.legs;
  if (fields.action !== undefined) record.action = fields.action;
  if (fields.effective_date !== undefined) record.effective_date = fields.effective_date;
  if (fields.overdraft_limit !== undefined) record.overdraft_limit = fields.overdraft_limit;
  if (fields.preconditions !== undefined) record.preconditions = fields.preconditions;
  if (fields.fund_allocation !== undefined) record.fund_allocation = fields.fund_allocation;
  if (fields.lineage_provider !== undefined) record.lineage_provider = fields.lineage_provider;
  if (fields.exchange !== undefined) record.exchange = fields.exchange;
  return record;
}
