// The engine: takes commands, decides them against the working state, applies the resulting event and
// appends it to the log, all in one synchronous step. Nothing awaits between decide and apply, so a
// command that touches several balances is atomic in this single-threaded process. Callers wait for the
// log's durability of the returned sequence number before they acknowledge anything.
//
// Operations on transactions (operation.ts) all go through `run`: admitted once (admission.ts), decided
// in a fresh scope, committed as one event. Their dry runs go through `dryRun`: the same decision in a
// scope that is never committed. Queued work and timers are in pending-work.ts.

import { admissionRefusal } from './admission.js';
import { assert } from './assert.js';
import { monitorAlerts, type MonitorFields } from './balance-monitors.js';
import type {
  BulkCommand,
  CreateBalanceCommand,
  CreateLedgerCommand,
  CreateTransactionCommand,
  InflightActionCommand,
  RefundCommand,
  UpdateLedgerCommand,
} from './commands.js';
import { bulkOperation, type BulkResult } from './decide-bulk.js';
import { createOperation, type Created } from './decide-create.js';
import { inflightActionOperation, type HoldActionResult } from './decide-inflight-action.js';
import { refundOperation, type Refunded } from './decide-refund.js';
import {
  decideApiKeysUsed,
  decideCreateApiKey,
  decideCreateHook,
  decideCreateIdentity,
  decideCreateMonitor,
  decideDeleteHook,
  decideDeleteIdentity,
  decideDeleteMonitor,
  decideUpdateMonitor,
  decideMetadata,
  decideRevokeApiKey,
  decideRotateHookSecret,
  decideUpdateHook,
  decideUpdateIdentity,
  metadataSizeRefusal,
  type HookFields,
  type NewApiKey,
  type RegistryDecision,
} from './decide-registry.js';
import {
  decideCompleteReconciliation,
  decideCreateMatchingRule,
  decideDeleteMatchingRule,
  decideFailReconciliation,
  decideReconciliationProgress,
  decideResumeReconciliation,
  decideStartReconciliation,
  decideUpdateMatchingRule,
  decideUpload,
  type RunResults,
  type StartReconciliationCommand,
  type UploadCommand,
} from './decide-reconciliation.js';
import { DecisionScope, newBalance } from './decision-scope.js';
import type { RuleCommand } from './matching-rules.js';
import type { MatchingRuleRecord, ReconciliationRecord, UploadRecord } from './reconciliation-records.js';
import type { LedgerEvent } from './events.js';
import { applyEvent, LedgerState, type ApplyOptions } from './ledger-state.js';
import { mergeMetaData } from './metadata.js';
import type { Operation } from './operation.js';
import { PendingWork, type PendingWorkLimits } from './pending-work.js';
import type { Clock, EventLog, IdSource, TransactionStore } from './ports.js';
import type { Projection } from './projection.js';
import {
  GENERAL_LEDGER_ID,
  type ApiKeyRecord,
  type BalanceRecord,
  type HookRecord,
  type IdentityFields,
  type IdentityRecord,
  type LedgerRecord,
  type MetaData,
  type MonitorRecord,
} from './records.js';
import { reject } from './rejections.js';
import { refuse, type Outcome } from './result.js';

export type { Outcome } from './result.js';
export type { BulkResult } from './decide-bulk.js';
export type TransactionOutcome = Created;
export type InflightActionResult = HoldActionResult;
export type RefundResult = Refunded;

export interface EngineLimits extends PendingWorkLimits {
  /** Queued transactions one balance may hold before new ones are refused with QUEUE_BACKPRESSURE. */
  mailbox_depth_max: number;
  /** Queued transactions across all balances. */
  queued_total_max: number;
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

export class LedgerEngine {
  readonly state: LedgerState;
  readonly limits: EngineLimits;
  private readonly clock: Clock;
  private readonly ids: IdSource;
  private readonly log: EventLog;
  private readonly pending: PendingWork;

  constructor(dependencies: EngineDependencies) {
    this.clock = dependencies.clock;
    this.ids = dependencies.ids;
    this.log = dependencies.log;
    this.limits = { ...DEFAULT_ENGINE_LIMITS, ...dependencies.limits };
    this.state = new LedgerState(dependencies.transactions);
    this.pending = new PendingWork({
      state: this.state,
      limits: this.limits,
      scope: () => this.scope(),
      commit: (event) => this.commit(event),
      actOnHold: (command) => this.actOnInflight(command),
    });
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

  // ---- running operations on transactions ----

  /** Admits, decides and commits one operation (see operation.ts). */
  run<C, T>(operation: Operation<C, T>, command: C): Outcome<T> {
    const refusal = admissionRefusal(operation.admission(this.state, command), this.state, this.limits, this.pending);
    if (refusal) return refuse(refusal);
    const scope = this.scope();
    const decided = operation.decide(scope, command);
    if (!decided.ok) return decided;
    const seq = scope.isEmpty() ? this.log.appendedSeq : this.commit({ ...scope.toEvent(operation.eventType(decided.value)), ...operation.eventDetails?.(command, decided.value) });
    return { ok: true, value: decided.value, seq };
  }

  /**
   * Dry runs of operations, one after the other in one scope that is never committed: a later one sees
   * what the earlier ones would have done. Nothing is drained, queued or written.
   */
  dryRun<C, T>(operation: Operation<C, T>, commands: C[]): Projection[] {
    const scope = this.scope();
    return commands.map((command) => {
      const currentFrom = scope.draft.postings.length;
      const decided = operation.decide(scope, operation.asDryRun(command));
      return operation.project(scope, command, decided, currentFrom);
    });
  }

  createTransaction(command: CreateTransactionCommand): Outcome<Created> {
    return this.run(createOperation, command);
  }

  projectTransaction(command: CreateTransactionCommand): Projection {
    return this.dryRun(createOperation, [command])[0] as Projection;
  }

  actOnInflight(command: InflightActionCommand): Outcome<HoldActionResult> {
    return this.run(inflightActionOperation, command);
  }

  projectInflightAction(command: InflightActionCommand): Projection {
    return this.dryRun(inflightActionOperation, [command])[0] as Projection;
  }

  /** A bulk commit or void as a dry run: the items in order in one scope (see dryRun). */
  projectInflightActions(commands: InflightActionCommand[]): Projection[] {
    return this.dryRun(inflightActionOperation, commands);
  }

  refund(command: RefundCommand): Outcome<Refunded> {
    return this.run(refundOperation, command);
  }

  projectRefund(command: RefundCommand): Projection {
    return this.dryRun(refundOperation, [command])[0] as Projection;
  }

  createBulk(command: BulkCommand): Outcome<BulkResult> {
    return this.run(bulkOperation, command);
  }

  projectBulk(command: BulkCommand): Projection {
    return this.dryRun(bulkOperation, [command])[0] as Projection;
  }

  // ---- queued work and timers (pending-work.ts) ----

  /** Applies up to `itemsMax` queued transactions, round-robin across balances; returns how many. */
  processQueued(itemsMax: number): number {
    return this.pending.processQueued(itemsMax);
  }

  /**
   * Carries out at once the queued transactions that have waited since `cutoff` or longer (Blnk's
   * POST /transactions/recover); returns how many.
   */
  recoverQueued(cutoff: number): number {
    return this.pending.recoverQueued(cutoff);
  }

  /** The engine's time now (never before the last event). */
  currentTime(): number {
    return this.now();
  }

  get queuedCount(): number {
    return this.state.mailboxes.size;
  }

  /** When the next timer falls due (epoch ms), if any is set. */
  nextTimerAt(): number | undefined {
    return this.state.timers.nextAt();
  }

  /** Fires the timers due by now (holds expire or commit, schedules fall due); returns how many fired. */
  fireDueTimers(): number {
    return this.pending.fireDueTimers(this.now());
  }

  // ---- ledgers and balances ----

  createLedger(command: CreateLedgerCommand): Outcome<LedgerRecord> {
    const now = this.now();
    const ledger: LedgerRecord = { ledger_id: this.ids.next('ldg'), name: command.name, created_at: now, meta_data: command.meta_data };
    return this.accepted(ledger, { type: 'ledger.created', at: now, ledgers: [ledger] });
  }

  updateLedger(command: UpdateLedgerCommand): Outcome<LedgerRecord> {
    const current = this.state.ledgers.get(command.ledger_id);
    if (!current) return refuse(reject('LGR_NOT_FOUND', `ledger ${command.ledger_id} not found`));
    const renamed: LedgerRecord = { ...current, name: command.name ?? current.name };
    const event: LedgerEvent = { type: 'ledger.updated', at: this.now(), ledgers: [renamed] };
    if (!command.meta_data) return this.accepted(renamed, event);
    // The name goes in the record, the metadata as a patch (metadata.ts: the log keeps patches).
    const ledger = { ...renamed, meta_data: mergeMetaData(current.meta_data, command.meta_data) };
    const refusal = metadataSizeRefusal(ledger.meta_data);
    if (refusal) return refuse(refusal);
    event.metadata_patches = [{ entity_id: ledger.ledger_id, meta_data: command.meta_data }];
    return this.accepted(ledger, event);
  }

  createBalance(command: CreateBalanceCommand): Outcome<BalanceRecord> {
    if (!this.state.ledgers.has(command.ledger_id)) {
      return refuse(reject('LGR_NOT_FOUND', `ledger ${command.ledger_id} not found`));
    }
    if (command.identity_id !== '' && !this.state.identities.has(command.identity_id)) {
      return refuse(reject('IDT_NOT_FOUND', `identity ${command.identity_id} not found`));
    }
    if (command.indicator !== '' && this.state.balanceByIndicator(command.indicator, command.currency)) {
      return refuse(reject('BAL_DUPLICATE_INDICATOR', `a ${command.currency} balance named ${command.indicator} exists`));
    }
    const now = this.now();
    const balance = newBalance(
      this.ids.next('bln'), command.ledger_id, command.currency, command.indicator, command.identity_id,
      command.meta_data, now,
    );
    return this.accepted(balance, { type: 'balance.created', at: now, balances: [balance] });
  }

  /** Gives a balance to an identity (Blnk's PUT /balances/:id/identity). */
  updateBalanceIdentity(balanceId: string, identityId: string): Outcome<BalanceRecord> {
    const balance = this.state.balances.get(balanceId);
    if (!balance) return refuse(reject('BAL_NOT_FOUND', `balance ${balanceId} not found`));
    if (!this.state.identities.has(identityId)) return refuse(reject('IDT_NOT_FOUND', `identity ${identityId} not found`));
    const event: LedgerEvent = { type: 'balance.identity_updated', at: this.now(), balance_identities: [{ balance_id: balanceId, identity_id: identityId }] };
    const seq = this.commit(event);
    return { ok: true, value: this.state.balances.get(balanceId) as BalanceRecord, seq };
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

  /**
   * Records failures of the server's own work after it was acknowledged (a hook given up, an index
   * stuck on an event), so the notification webhook announces each as Blnk's system.error, once it is
   * durable; returns its seq. The state does not change.
   */
  recordSystemErrors(messages: string[]): number {
    assert(messages.length > 0, 'recordSystemErrors needs a message');
    return this.commit({ type: 'system.error', at: this.now(), system_errors: messages.map((message) => ({ message })) });
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

  // ---- reconciliation (matching happens in reconciliation/, outside the engine) ----

  createMatchingRule(command: RuleCommand): Outcome<MatchingRuleRecord> {
    return this.registry(decideCreateMatchingRule(command, this.now(), this.ids));
  }

  updateMatchingRule(ruleId: string, command: RuleCommand): Outcome<MatchingRuleRecord> {
    return this.registry(decideUpdateMatchingRule(this.state, ruleId, command, this.now()));
  }

  deleteMatchingRule(ruleId: string): Outcome<MatchingRuleRecord> {
    return this.registry(decideDeleteMatchingRule(this.state, ruleId, this.now()));
  }

  uploadExternalRecords(command: UploadCommand): Outcome<UploadRecord> {
    return this.registry(decideUpload(command, this.now(), this.ids));
  }

  startReconciliation(command: StartReconciliationCommand): Outcome<ReconciliationRecord> {
    return this.registry(decideStartReconciliation(this.state, command, this.now(), this.ids));
  }

  reconciliationProgress(reconciliationId: string, processed: number): Outcome<ReconciliationRecord> {
    return this.registry(decideReconciliationProgress(this.state, reconciliationId, processed, this.now()));
  }

  resumeReconciliation(reconciliationId: string): Outcome<ReconciliationRecord> {
    return this.registry(decideResumeReconciliation(this.state, reconciliationId, this.now()));
  }

  failReconciliation(reconciliationId: string, reason: string): Outcome<ReconciliationRecord> {
    return this.registry(decideFailReconciliation(this.state, reconciliationId, reason, this.now()));
  }

  /**
   * Records a run's results and marks, then its completion: several events committed in this one turn,
   * so they share one log record and a crash keeps all of them or none.
   */
  completeReconciliation(reconciliationId: string, results: RunResults): Outcome<ReconciliationRecord> {
    const decision = decideCompleteReconciliation(this.state, reconciliationId, results, this.now());
    if (!decision.ok) return decision;
    let seq = this.log.appendedSeq;
    for (const event of decision.value.events) seq = this.commit(event);
    return { ok: true, value: decision.value.record, seq };
  }

  // ---- balance monitors ----

  createMonitor(fields: MonitorFields): Outcome<MonitorRecord> {
    return this.registry(decideCreateMonitor(this.state, fields, this.now(), this.ids));
  }

  updateMonitor(monitorId: string, fields: MonitorFields): Outcome<MonitorRecord> {
    return this.registry(decideUpdateMonitor(this.state, monitorId, fields, this.now()));
  }

  deleteMonitor(monitorId: string): Outcome<MonitorRecord> {
    return this.registry(decideDeleteMonitor(this.state, monitorId, this.now()));
  }

  private registry<T>(decision: RegistryDecision<T>): Outcome<T> {
    if (!decision.ok) return decision;
    return { ok: true, value: decision.value.record, seq: this.commit(decision.value.event) };
  }

  private accepted<T>(value: T, event: LedgerEvent): Outcome<T> {
    return { ok: true, value, seq: this.commit(event) };
  }

  /**
   * Apply, then log, in the same turn. An invariant failure here is a bug: it propagates and is fatal.
   * The monitors the event fires are decided first, against the state it is applied to, and logged in it.
   */
  private commit(event: LedgerEvent): number {
    const alerts = monitorAlerts(this.state, event);
    if (alerts) event.monitor_alerts = alerts;
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
