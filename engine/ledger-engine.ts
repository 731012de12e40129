// The engine: takes commands, decides them against the working state, applies the resulting event and
// appends it to the log, all in one synchronous step. Nothing awaits between decide and apply, so a
// command that touches several balances is atomic in this single-threaded process. Callers wait for the
// log's durability of the returned sequence number before they acknowledge anything.
//
// Every public command has a `project*` twin for dry runs: the same decision, never committed.

import { assert } from './assert.js';
import type {
  BulkCommand,
  CreateBalanceCommand,
  CreateLedgerCommand,
  CreateTransactionCommand,
  InflightActionCommand,
  RefundCommand,
  UpdateLedgerCommand,
} from './commands.js';
import { decideBulk, type BulkStatus } from './decide-bulk.js';
import { decideCreate } from './decide-create.js';
import { decideInflightAction } from './decide-inflight-action.js';
import { decideRefund } from './decide-refund.js';
import {
  decideApiKeysUsed,
  decideCreateApiKey,
  decideCreateHook,
  decideCreateIdentity,
  decideDeleteHook,
  decideRotateHookSecret,
  decideDeleteIdentity,
  decideMetadata,
  decideRevokeApiKey,
  decideUpdateHook,
  decideUpdateIdentity,
  metadataSizeRefusal,
  type HookFields,
  type NewApiKey,
  type RegistryDecision,
} from './decide-registry.js';
import { DecisionScope, newBalance } from './decision-scope.js';
import type { EventType, LedgerEvent } from './events.js';
import { applyEvent, LedgerState, type ApplyOptions } from './ledger-state.js';
import { mergeMetaData } from './metadata.js';
import type { Clock, EventLog, IdSource, TransactionStore } from './ports.js';
import { processPending } from './process-pending.js';
import {
  involvedIn,
  projectBalances,
  type InvolvedBalance,
  type Projection,
  type ProjectionLeg,
} from './projection.js';
import {
  GENERAL_LEDGER_ID,
  isSplit,
  mailboxBalanceOf,
  type ApiKeyRecord,
  type BalanceRecord,
  type HookRecord,
  type IdentityFields,
  type IdentityRecord,
  type LedgerRecord,
  type MetaData,
  type TransactionRecord,
} from './records.js';
import { reject, type Rejection } from './rejections.js';

export interface EngineLimits {
  /** Queued transactions one balance may hold before new ones are refused with QUEUE_BACKPRESSURE. */
  mailbox_depth_max: number;
  /** Queued transactions across all balances. */
  queued_total_max: number;
  /** Timers fired per call of fireDueTimers, so a backlog after downtime is worked off in slices. */
  timers_per_slice_max: number;
}

export const DEFAULT_ENGINE_LIMITS: EngineLimits = {
  mailbox_depth_max: 10_000,
  queued_total_max: 1_000_000,
  timers_per_slice_max: 1_000,
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

export interface InflightActionResult {
  /** The commit or void child (QUEUED when queued). */
  transaction: TransactionRecord;
  /** The hold as it stands after the action. */
  hold: TransactionRecord;
  queued: boolean;
}

export interface RefundResult {
  transaction: TransactionRecord;
  notes: string[];
}

export interface BulkResult {
  batch_id: string;
  status: BulkStatus;
  transaction_count: number;
  failure?: { index: number; rejection: Rejection };
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

  /**
   * Applies an event read back from the log (start-up replay); nothing is appended. `owned` when the
   * event was just decoded and nothing else holds it (see ApplyOptions); an in-memory log's events are
   * shared and must not be.
   */
  replay(event: LedgerEvent, options: ApplyOptions = {}): void {
    applyEvent(this.state, event, options);
  }

  /** Creates the general ledger on a fresh log, so it exists from the first request on. */
  ensureGenesis(): number {
    if (this.state.ledgers.has(GENERAL_LEDGER_ID)) return this.log.appendedSeq;
    const now = this.now();
    const ledger: LedgerRecord = { ledger_id: GENERAL_LEDGER_ID, name: 'General Ledger', created_at: now, meta_data: {} };
    return this.commit({ type: 'ledger.created', at: now, ledgers: [ledger] });
  }

  // ---- ledgers and balances ----

  createLedger(command: CreateLedgerCommand): Outcome<LedgerRecord> {
    const now = this.now();
    const ledger: LedgerRecord = { ledger_id: this.ids.next('ldg'), name: command.name, created_at: now, meta_data: command.meta_data };
    return this.accepted(ledger, { type: 'ledger.created', at: now, ledgers: [ledger] });
  }

  updateLedger(command: UpdateLedgerCommand): Outcome<LedgerRecord> {
    const current = this.state.ledgers.get(command.ledger_id);
    if (!current) return refused(reject('LDG_NOT_FOUND', `ledger ${command.ledger_id} not found`));
    const renamed: LedgerRecord = { ...current, name: command.name ?? current.name };
    const event: LedgerEvent = { type: 'ledger.updated', at: this.now(), ledgers: [renamed] };
    if (!command.meta_data) return this.accepted(renamed, event);
    // The name goes in the record, the metadata as a patch (metadata.ts: the log keeps patches).
    const ledger = { ...renamed, meta_data: mergeMetaData(current.meta_data, command.meta_data) };
    const refusal = metadataSizeRefusal(ledger.meta_data);
    if (refusal) return refused(refusal);
    event.metadata_patches = [{ entity_id: ledger.ledger_id, meta_data: command.meta_data }];
    return this.accepted(ledger, event);
  }

  createBalance(command: CreateBalanceCommand): Outcome<BalanceRecord> {
    if (!this.state.ledgers.has(command.ledger_id)) {
      return refused(reject('LDG_NOT_FOUND', `ledger ${command.ledger_id} not found`));
    }
    if (command.identity_id !== '' && !this.state.identities.has(command.identity_id)) {
      return refused(reject('IDT_NOT_FOUND', `identity ${command.identity_id} not found`));
    }
    if (command.indicator !== '' && this.state.balanceByIndicator(command.indicator, command.currency)) {
      return refused(reject('BAL_DUPLICATE_INDICATOR', `a ${command.currency} balance named ${command.indicator} exists`));
    }
    const now = this.now();
    const balance = newBalance(
      this.ids.next('bln'), command.ledger_id, command.currency, command.indicator, command.identity_id,
      command.meta_data, now,
    );
    return this.accepted(balance, { type: 'balance.created', at: now, balances: [balance] });
  }

  // ---- identities, metadata, API keys, hooks ----

  createIdentity(fields: IdentityFields): Outcome<IdentityRecord> {
    return this.registry(decideCreateIdentity(fields, this.now(), this.ids));
  }

  updateIdentity(identityId: string, fields: IdentityFields): Outcome<IdentityRecord> {
    return this.registry(decideUpdateIdentity(this.state, identityId, fields, this.now()));
  }

  deleteIdentity(identityId: string): Outcome<IdentityRecord> {
    return this.registry(decideDeleteIdentity(this.state, identityId, this.now()));
  }

  updateMetadata(entityId: string, metaData: MetaData): Outcome<MetaData> {
    return this.registry(decideMetadata(this.state, entityId, metaData, this.now()));
  }

  createApiKey(fields: NewApiKey): Outcome<ApiKeyRecord> {
    return this.registry(decideCreateApiKey(fields, this.ids.next('key'), this.now()));
  }

  revokeApiKey(apiKeyId: string): Outcome<ApiKeyRecord> {
    return this.registry(decideRevokeApiKey(this.state, apiKeyId, this.now()));
  }

  /** Records gathered last-use times of API keys in one event; returns its seq, if anything changed. */
  recordApiKeysUsed(usedAt: Map<string, number>): number | undefined {
    const event = decideApiKeysUsed(this.state, usedAt, this.now());
    return event ? this.commit(event) : undefined;
  }

  createHook(fields: HookFields, signingSecretSealed: string): Outcome<HookRecord> {
    return this.registry(decideCreateHook(fields, signingSecretSealed, this.now(), this.ids));
  }

  rotateHookSecret(hookId: string, signingSecretSealed: string): Outcome<HookRecord> {
    return this.registry(decideRotateHookSecret(this.state, hookId, signingSecretSealed, this.now()));
  }

  updateHook(hookId: string, fields: HookFields): Outcome<HookRecord> {
    return this.registry(decideUpdateHook(this.state, hookId, fields, this.now()));
  }

  deleteHook(hookId: string): Outcome<HookRecord> {
    return this.registry(decideDeleteHook(this.state, hookId, this.now()));
  }

  private registry<T>(decision: RegistryDecision<T>): Outcome<T> {
    if (!decision.ok) return refused(decision.rejection);
    return { ok: true, value: decision.value, seq: this.commit(decision.event) };
  }

  // ---- transactions ----

  createTransaction(command: CreateTransactionCommand): Outcome<TransactionOutcome> {
    // A reused reference is answered from what exists (replay or conflict): it queues nothing.
    const reusesReference = command.reference !== '' && this.state.transactions.idForReference(command.reference) !== undefined;
    if (command.skip_queue) this.drain(this.sourcesNamed(command));
    else if (!reusesReference) {
      const refusal = this.queueRefusal(this.sourcesNamed(command), 1);
      if (refusal) return refused(refusal);
    }
    const scope = this.scope();
    const outcome = decideCreate(scope, command, { allowReplay: true });
    switch (outcome.kind) {
      case 'rejected':
        return refused(outcome.rejection);
      case 'existing':
        return { ok: true, value: { transaction: outcome.transaction, created: false }, seq: this.log.appendedSeq };
      case 'new':
        return {
          ok: true,
          value: { transaction: outcome.transaction, created: true },
          seq: this.commit(scope.toEvent(eventTypeFor(outcome.transaction))),
        };
    }
  }

  projectTransaction(command: CreateTransactionCommand): Projection {
    const scope = this.scope();
    const outcome = decideCreate(scope, { ...command, skip_queue: true, scheduled_for: 0 }, { allowReplay: false });
    if (outcome.kind !== 'new') {
      const rejection = outcome.kind === 'rejected' ? outcome.rejection : reject('TXN_DUPLICATE_REFERENCE', 'reference in use');
      return { operation: 'create', would_apply: false, rejection, legs: legsOf(command), balances: this.probeBalances([command]) };
    }
    const transaction = outcome.transaction;
    return {
      operation: 'create',
      would_apply: true,
      status: transaction.status,
      transaction,
      legs: legsOf(command, transaction),
      balances: projectBalances(scope, involvedIn(scope, [transaction])),
    };
  }

  actOnInflight(command: InflightActionCommand): Outcome<InflightActionResult> {
    const hold = this.state.transaction(command.transaction_id);
    if (hold && command.skip_queue && !this.state.pendingHoldActions.has(hold.transaction_id)) this.drain([mailboxBalanceOf(hold)]);
    if (hold && !command.skip_queue) {
      const refusal = this.queueRefusal([mailboxBalanceOf(hold)], 1);
      if (refusal) return refused(refusal);
    }
    const scope = this.scope();
    const outcome = decideInflightAction(scope, command);
    if (outcome.kind === 'rejected') return refused(outcome.rejection);
    const seq = this.commit(scope.toEvent(command.action === 'commit' ? 'transaction.committed' : 'transaction.voided'));
    return { ok: true, value: { transaction: outcome.transaction, hold: outcome.hold, queued: outcome.queued }, seq };
  }

  projectInflightAction(command: InflightActionCommand): Projection {
    const scope = this.scope();
    const hold = this.state.transaction(command.transaction_id);
    const outcome = decideInflightAction(scope, { ...command, skip_queue: true });
    const base = { operation: command.action } as const;
    if (outcome.kind === 'rejected') {
      return { ...base, would_apply: false, rejection: outcome.rejection, transaction: hold, balances: hold ? projectBalances(scope, involvedIn(scope, [hold])) : [] };
    }
    return {
      ...base,
      would_apply: true,
      status: outcome.transaction.status,
      transaction: outcome.transaction,
      balances: projectBalances(scope, involvedIn(scope, [outcome.hold])),
    };
  }

  /**
   * Dry run of several actions on holds, as a bulk commit or void would carry them out: one after the
   * other in one scope, so a later item sees what the earlier ones would have done (a hold committed
   * by item 1 is already committed for item 2). Each projection's `current` amounts are those after the
   * items before it, its `resulting` ones after it. Nothing is committed.
   */
  projectInflightActions(commands: InflightActionCommand[]): Projection[] {
    const scope = this.scope();
    return commands.map((command) => {
      const postingsBefore = scope.draft.postings.length;
      const hold = scope.transaction(command.transaction_id);
      const outcome = decideInflightAction(scope, { ...command, skip_queue: true });
      const base = { operation: command.action } as const;
      if (outcome.kind === 'rejected') {
        const balances = hold ? projectBalances(scope, involvedIn(scope, [hold]), postingsBefore) : [];
        return { ...base, would_apply: false, rejection: outcome.rejection, transaction: hold, balances };
      }
      return {
        ...base,
        would_apply: true,
        status: outcome.transaction.status,
        transaction: outcome.transaction,
        balances: projectBalances(scope, involvedIn(scope, [outcome.hold]), postingsBefore),
      };
    });
  }

  refund(command: RefundCommand): Outcome<RefundResult> {
    const original = this.state.transaction(command.transaction_id);
    if (original && command.skip_queue && !this.state.refundLocks.has(original.transaction_id)) {
      this.drain(refundSources(this.state, original));
    }
    if (!command.skip_queue && original) {
      const refusal = this.queueRefusal(refundSources(this.state, original), 1);
      if (refusal) return refused(refusal);
    }
    const scope = this.scope();
    const outcome = decideRefund(scope, command);
    if (outcome.kind === 'rejected') return refused(outcome.rejection);
    const seq = this.commit(scope.toEvent(eventTypeFor(outcome.transaction)));
    return { ok: true, value: { transaction: outcome.transaction, notes: outcome.notes }, seq };
  }

  projectRefund(command: RefundCommand): Projection {
    const scope = this.scope();
    const outcome = decideRefund(scope, { ...command, skip_queue: true });
    if (outcome.kind === 'rejected') {
      const original = this.state.transaction(command.transaction_id);
      const reversed = original ? [{ ...original, source: original.destination, destination: original.source }] : [];
      return { operation: 'refund', would_apply: false, rejection: outcome.rejection, notes: [], balances: projectBalances(scope, involvedIn(scope, reversed)) };
    }
    return {
      operation: 'refund',
      would_apply: true,
      status: outcome.transaction.status,
      transaction: outcome.transaction,
      notes: outcome.notes,
      balances: projectBalances(scope, involvedIn(scope, [outcome.transaction])),
    };
  }

  createBulk(command: BulkCommand): Outcome<BulkResult> {
    const immediate = command.atomic || command.skip_queue;
    const sources = command.transactions.flatMap((item) => this.sourcesNamed(item));
    if (immediate) this.drain(sources);
    else {
      const refusal = this.queueRefusal([], command.transactions.length);
      if (refusal) return refused(refusal);
    }
    const batchId = this.ids.next('bulk');
    const scope = this.scope();
    const outcome = decideBulk(scope, command, batchId);
    if (outcome.kind === 'rejected') return refused(indexed(outcome.rejection, outcome.index));
    const seq = scope.isEmpty() ? this.log.appendedSeq : this.commit(scope.toEvent('transaction.bulk'));
    const value: BulkResult = { batch_id: batchId, status: outcome.status, transaction_count: outcome.count };
    if (outcome.failure) value.failure = outcome.failure;
    return { ok: true, value, seq };
  }

  projectBulk(command: BulkCommand): Projection {
    const scope = this.scope();
    const outcome = decideBulk(scope, { ...command, skip_queue: true }, 'bulk_dry_run');
    const records = scope.records;
    if (outcome.kind === 'rejected') {
      return {
        operation: 'bulk', would_apply: false, rejection: outcome.rejection, failed_index: outcome.index,
        transaction_count: 0, balances: this.probeBalances(command.transactions),
      };
    }
    const projection: Projection = {
      operation: 'bulk',
      would_apply: outcome.failure === undefined,
      status: outcome.status,
      transaction_count: outcome.count,
      balances: projectBalances(scope, involvedIn(scope, records)),
    };
    if (outcome.failure) {
      projection.rejection = outcome.failure.rejection;
      projection.failed_index = outcome.failure.index;
    }
    return projection;
  }

  // ---- queued work and timers ----

  /**
   * Applies up to `itemsMax` queued transactions, one per balance per turn around the ring of balances
   * with waiting work. Returns how many were carried out.
   */
  processQueued(itemsMax: number): number {
    let processed = 0;
    while (processed < itemsMax) {
      const balanceId = this.state.mailboxes.nextReady();
      if (balanceId === undefined) break;
      this.applyHead(balanceId);
      processed += 1;
    }
    return processed;
  }

  get queuedCount(): number {
    return this.state.mailboxes.size;
  }

  /** When the next timer falls due (epoch ms), if any is set. */
  nextTimerAt(): number | undefined {
    return this.state.timers.nextAt();
  }

  /**
   * Fires the timers due by now: holds expire (void) or commit themselves, scheduled transactions are
   * carried out. A timer whose transaction has moved on since it was set is dropped. Returns how many
   * fired.
   */
  fireDueTimers(): number {
    let fired = 0;
    const now = this.now();
    while (fired < this.limits.timers_per_slice_max) {
      const timer = this.state.timers.popDue(now);
      if (!timer) break;
      if (timer.kind === 'scheduled') {
        const record = this.state.scheduled.get(timer.transactionId);
        if (!record) continue;
        this.drain(sourcesOfRecord(record));
        const scope = this.scope();
        const final = processPending(scope, record);
        this.commit(scope.toEvent(eventTypeFor(final)));
      } else {
        const hold = this.state.holds.get(timer.transactionId);
        if (!hold) continue;
        this.drain([mailboxBalanceOf(hold)]);
        if (!this.state.holds.has(hold.transaction_id)) continue;
        const outcome = this.actOnInflight({
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

  /** Applies everything the balances have queued, in order. */
  drain(balanceIds: Iterable<string>): void {
    for (const balanceId of balanceIds) {
      while (this.state.mailboxes.head(balanceId)) this.applyHead(balanceId);
    }
  }

  private applyHead(balanceId: string): void {
    const head = this.state.mailboxes.head(balanceId);
    assert(head, `mailbox ${balanceId} is empty`);
    const scope = this.scope();
    const final = processPending(scope, head);
    this.commit(scope.toEvent(eventTypeFor(final)));
  }

  /** Ids of the existing balances a command takes money from (mailboxes it must follow or join). */
  private sourcesNamed(command: CreateTransactionCommand): string[] {
    const names = command.sources ? command.sources.map((share) => share.identifier) : [command.source];
    const ids: string[] = [];
    for (const name of names) {
      const id = name.startsWith('@') ? this.state.balanceByIndicator(name, command.currency)?.balance_id : name;
      if (id !== undefined && this.state.balances.has(id)) ids.push(id);
    }
    return ids;
  }

  private queueRefusal(sourceIds: string[], items: number): Rejection | undefined {
    if (this.state.mailboxes.size + items > this.limits.queued_total_max) {
      return reject('QUEUE_BACKPRESSURE', `${this.state.mailboxes.size} transactions are queued; try again shortly`);
    }
    for (const sourceId of sourceIds) {
      if (this.state.mailboxes.depth(sourceId) >= this.limits.mailbox_depth_max) {
        return reject('QUEUE_BACKPRESSURE', `balance ${sourceId} has ${this.limits.mailbox_depth_max} transactions queued`);
      }
    }
    return undefined;
  }

  /** Balances a rejected dry run would have involved, resolved without creating anything real. */
  private probeBalances(commands: CreateTransactionCommand[]): ReturnType<typeof projectBalances> {
    const probe = this.scope();
    const involved: InvolvedBalance[] = [];
    for (const command of commands) {
      const names: Array<[string, 'source' | 'destination']> = [
        ...(command.sources ?? [{ identifier: command.source }]).map((share) => [share.identifier, 'source'] as [string, 'source']),
        ...(command.destinations ?? [{ identifier: command.destination }]).map((share) => [share.identifier, 'destination'] as [string, 'destination']),
      ];
      for (const [name, role] of names) {
        if (name === '') continue;
        const balance = probe.resolve(name, command.currency);
        if ('code' in balance) continue;
        involved.push({ balance, role, created: !this.state.balances.has(balance.balance_id) });
      }
    }
    return projectBalances(probe, involved);
  }

  private accepted<T>(value: T, event: LedgerEvent): Outcome<T> {
    return { ok: true, value, seq: this.commit(event) };
  }

  /** Apply, then log, in the same turn. An invariant failure here is a bug: it propagates and is fatal. */
  private commit(event: LedgerEvent): number {
    applyEvent(this.state, event);
    return this.log.append(event);
  }

  private scope(): DecisionScope {
    return new DecisionScope(this.state, this.now(), this.ids);
  }

  /** The clock's time, never earlier than the last event: replayed logs stay ordered after a clock step back. */
  private now(): number {
    return Math.max(this.clock.now(), this.state.lastEventAt);
  }
}

function refused<T>(rejection: Rejection): Outcome<T> {
  return { ok: false, rejection };
}

function indexed(rejection: Rejection, index: number): Rejection {
  return { ...rejection, message: `transaction ${index}: ${rejection.message}` };
}

/** Names the event after what happened to the main transaction, which is what hooks and logs care about. */
function eventTypeFor(record: TransactionRecord): EventType {
  switch (record.status) {
    case 'QUEUED': return 'transaction.queued';
    case 'SCHEDULED': return 'transaction.scheduled';
    case 'INFLIGHT': return 'transaction.inflight';
    case 'VOID': return 'transaction.voided';
    case 'REJECTED': return 'transaction.rejected';
    case 'APPLIED': return 'transaction.applied';
  }
}

function sourcesOfRecord(record: TransactionRecord): string[] {
  if (record.sources) return record.sources.map((share) => share.balance_id);
  return [record.source];
}

/** The balances a refund of `original` takes money from: what it paid into. */
function refundSources(state: LedgerState, original: TransactionRecord): string[] {
  if (!isSplit(original)) return original.destination === '' ? [] : [original.destination];
  const destinations = new Set<string>();
  for (const legId of original.legs ?? []) {
    const leg = state.transaction(legId);
    if (leg) destinations.add(leg.destination);
  }
  return [...destinations];
}

/** The shares of a split as projection legs, with their computed amounts when known. */
function legsOf(command: CreateTransactionCommand, record?: TransactionRecord): ProjectionLeg[] | undefined {
  if (!command.sources && !command.destinations) return undefined;
  const legs: ProjectionLeg[] = [];
  for (const share of record?.sources ?? []) legs.push({ identifier: share.identifier, role: 'source', precise_amount: share.precise_amount });
  for (const share of record?.destinations ?? []) legs.push({ identifier: share.identifier, role: 'destination', precise_amount: share.precise_amount });
  return legs;
}
