// The engine: takes commands, decides them against the working state, applies the resulting event and
// appends it to the log, all in one synchronous step. Nothing awaits between decide and apply, so a
// command that touches several balances is atomic in this single-threaded process. Callers wait for the
// log's durability of the returned sequence number before they acknowledge anything.

import { assert } from './assert.js';
import type { CreateBalanceCommand, CreateLedgerCommand, CreateTransactionCommand, UpdateLedgerCommand } from './commands.js';
import {
  decideCreateTransaction,
  decideQueuedTransaction,
  newBalance,
  type DecideContext,
} from './decide-transaction.js';
import type { LedgerEvent } from './events.js';
import { applyEvent, LedgerState } from './ledger-state.js';
import type { Clock, EventLog, IdSource, TransactionStore } from './ports.js';
import { GENERAL_LEDGER_ID, type BalanceRecord, type LedgerRecord, type TransactionRecord } from './records.js';
import { reject, type Rejection } from './rejections.js';

export interface EngineLimits {
  /** Queued transactions one balance may hold before new ones are refused with QUEUE_BACKPRESSURE. */
  mailbox_depth_max: number;
  /** Queued transactions across all balances. */
  queued_total_max: number;
}

export const DEFAULT_ENGINE_LIMITS: EngineLimits = {
  mailbox_depth_max: 10_000,
  queued_total_max: 1_000_000,
};

export interface EngineDependencies {
  clock: Clock;
  ids: IdSource;
  log: EventLog;
  transactions: TransactionStore;
  limits?: Partial<EngineLimits>;
}

/** A decided command: the value to answer with and the log position to wait for before answering. */
export type Outcome<T> = { ok: true; value: T; seq: number } | { ok: false; rejection: Rejection };

export interface TransactionOutcome {
  transaction: TransactionRecord;
  /** False when the request repeated an earlier one with the same reference (idempotent retry). */
  created: boolean;
}

export class LedgerEngine {
  readonly state: LedgerState;
  readonly limits: EngineLimits;
  private readonly clock: Clock;
  private readonly ids: IdSource;
  private readonly log: EventLog;

  constructor(dependencies: EngineDependencies) {
    this.clock = dependencies.clock;
    this.ids = dependencies.ids;
    this.log = dependencies.log;
    this.limits = { ...DEFAULT_ENGINE_LIMITS, ...dependencies.limits };
    this.state = new LedgerState(dependencies.transactions);
  }

  /** Applies an event read back from the log (start-up replay); nothing is appended. */
  replay(event: LedgerEvent): void {
    applyEvent(this.state, event);
  }

  /** Creates the general ledger on a fresh log, so it exists from the first request on. */
  ensureGenesis(): number {
    if (this.state.ledgers.has(GENERAL_LEDGER_ID)) return this.log.appendedSeq;
    const now = this.now();
    const ledger: LedgerRecord = { ledger_id: GENERAL_LEDGER_ID, name: 'General Ledger', created_at: now, meta_data: {} };
    return this.commit({ type: 'ledger.created', at: now, ledgers: [ledger] });
  }

  createLedger(command: CreateLedgerCommand): Outcome<LedgerRecord> {
    const now = this.now();
    const ledger: LedgerRecord = { ledger_id: this.ids.next('ldg'), name: command.name, created_at: now, meta_data: command.meta_data };
    return this.accepted(ledger, { type: 'ledger.created', at: now, ledgers: [ledger] });
  }

  updateLedger(command: UpdateLedgerCommand): Outcome<LedgerRecord> {
    const current = this.state.ledgers.get(command.ledger_id);
    if (!current) return { ok: false, rejection: reject('LDG_NOT_FOUND', `ledger ${command.ledger_id} not found`) };
    const ledger: LedgerRecord = {
      ...current,
      name: command.name ?? current.name,
      meta_data: command.meta_data ? { ...current.meta_data, ...command.meta_data } : current.meta_data,
    };
    return this.accepted(ledger, { type: 'ledger.updated', at: this.now(), ledgers: [ledger] });
  }

  createBalance(command: CreateBalanceCommand): Outcome<BalanceRecord> {
    if (!this.state.ledgers.has(command.ledger_id)) {
      return { ok: false, rejection: reject('LDG_NOT_FOUND', `ledger ${command.ledger_id} not found`) };
    }
    if (command.indicator !== '' && this.state.balanceByIndicator(command.indicator, command.currency)) {
      return {
        ok: false,
        rejection: reject('BAL_DUPLICATE_INDICATOR', `a ${command.currency} balance named ${command.indicator} exists`),
      };
    }
    const now = this.now();
    const balance = newBalance(
      this.ids.next('bln'), command.ledger_id, command.currency, command.indicator, command.identity_id,
      command.meta_data, now,
    );
    return this.accepted(balance, { type: 'balance.created', at: now, balances: [balance] });
  }

  createTransaction(command: CreateTransactionCommand): Outcome<TransactionOutcome> {
    const sourceId = this.existingBalanceId(command.source, command.currency);
    if (!command.skip_queue) {
      const refusal = this.queueRefusal(sourceId);
      if (refusal) return { ok: false, rejection: refusal };
    } else if (sourceId !== undefined) {
      // A synchronous transaction still goes after whatever its source already has queued.
      this.drainMailbox(sourceId);
    }
    const decision = decideCreateTransaction(this.state, command, this.context());
    switch (decision.kind) {
      case 'rejected':
        return { ok: false, rejection: decision.rejection };
      case 'existing':
        return { ok: true, value: { transaction: decision.transaction, created: false }, seq: this.log.appendedSeq };
      case 'event': {
        const seq = this.commit(decision.event);
        return { ok: true, value: { transaction: decision.transaction, created: true }, seq };
      }
    }
  }

  /**
   * Applies up to `itemsMax` queued transactions, one per balance per turn around the ring of balances
   * with waiting work. Returns how many were applied or rejected.
   */
  processQueued(itemsMax: number): number {
    let processed = 0;
    while (processed < itemsMax) {
      const balanceId = this.state.mailboxes.nextReady();
      if (balanceId === undefined) break;
      this.applyHead(balanceId);
      processed += 1;
      this.state.mailboxes.requeue(balanceId);
    }
    return processed;
  }

  get queuedCount(): number {
    return this.state.mailboxes.size;
  }

  /** Applies everything a balance has queued, in order. */
  drainMailbox(balanceId: string): void {
    while (this.state.mailboxes.head(balanceId)) this.applyHead(balanceId);
  }

  private applyHead(balanceId: string): void {
    const head = this.state.mailboxes.head(balanceId);
    assert(head, `mailbox ${balanceId} is empty`);
    this.commit(decideQueuedTransaction(this.state, head, this.now()));
  }

  private existingBalanceId(name: string, currency: string): string | undefined {
    if (!name.startsWith('@')) return name;
    return this.state.balanceByIndicator(name, currency)?.balance_id;
  }

  private queueRefusal(sourceId: string | undefined): Rejection | undefined {
    if (this.state.mailboxes.size >= this.limits.queued_total_max) {
      return reject('QUEUE_BACKPRESSURE', `${this.state.mailboxes.size} transactions are queued; try again shortly`);
    }
    if (sourceId !== undefined && this.state.mailboxes.depth(sourceId) >= this.limits.mailbox_depth_max) {
      return reject('QUEUE_BACKPRESSURE', `balance ${sourceId} has ${this.limits.mailbox_depth_max} transactions queued`);
    }
    return undefined;
  }

  private accepted<T>(value: T, event: LedgerEvent): Outcome<T> {
    return { ok: true, value, seq: this.commit(event) };
  }

  /** Apply, then log, in the same turn. An invariant failure here is a bug: it propagates and is fatal. */
  private commit(event: LedgerEvent): number {
    applyEvent(this.state, event);
    return this.log.append(event);
  }

  private context(): DecideContext {
    return { now: this.now(), ids: this.ids };
  }

  /** The clock's time, never earlier than the last event: replayed logs stay ordered after a clock step back. */
  private now(): number {
    return Math.max(this.clock.now(), this.state.lastEventAt);
  }
}
