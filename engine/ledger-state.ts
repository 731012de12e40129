// The working state and the one function that changes it. `applyEvent` is the whole of the write side's
// mutation logic: it upserts the records an event carries, moves amounts by its postings, and keeps the
// mailboxes in step with transaction statuses. It checks the invariants on every event and uses no clock,
// randomness or I/O, so the log replays to exactly the same state.

import { assert, fail } from './assert.js';
import { BalanceTable, IndicatorIndex } from './balance-table.js';
import { ClosedPeriods } from './closed-period-table.js';
import type { LedgerEvent, MetadataPatch, Posting } from './events.js';
import { mergeMetaData, metadataTarget } from './metadata.js';
import { FundLineage } from './fund-lineage.js';
import { Mailboxes } from './mailboxes.js';
import type { TransactionStore } from './ports.js';
import {
  mailboxBalanceOf,
  type ApiKeyRecord,
  type BalanceRecord,
  type HookRecord,
  type IdentityRecord,
  type LedgerRecord,
  type MonitorRecord,
  type TransactionRecord,
} from './records.js';
import { TimerSchedule } from './timer-schedule.js';
import type { MatchingRuleRecord, ReconciliationRecord, UploadRecord } from './reconciliation-records.js';

export class LedgerState {
  readonly ledgers = new Map<string, LedgerRecord>();
  /** Every balance, hot records and (after a snapshot load) cold ones still in the snapshot's bytes. */
  readonly balances = new BalanceTable();
  /** `indicator` + NUL + `currency` -> balance id; indicators are unique per currency. */
  readonly balanceIdByIndicator = new IndicatorIndex();
  readonly mailboxes = new Mailboxes();
  /** Tagged funds of the balances that track fund lineage (fund-lineage.ts). */
  readonly lineage = new FundLineage();
  /** Holds still open (status INFLIGHT), by id: plain holds, legs of split holds, and split parents. */
  readonly holds = new Map<string, TransactionRecord>();
  /** Transactions waiting for their `scheduled_for` time. */
  readonly scheduled = new Map<string, TransactionRecord>();
  /** Hold id -> the queued commit or void waiting for it (one at a time). */
  readonly pendingHoldActions = new Map<string, string>();
  /** Original id -> the queued refund of it (the refund lock). */
  readonly refundLocks = new Map<string, string>();
  readonly timers = new TimerSchedule();
  readonly identities = new Map<string, IdentityRecord>();
  /** How many balances name each identity (an identity in use cannot be deleted). */
  readonly balancesPerIdentity = new Map<string, number>();
  readonly apiKeys = new Map<string, ApiKeyRecord>();
  readonly hooks = new Map<string, HookRecord>();
  readonly matchingRules = new Map<string, MatchingRuleRecord>();
  /** Upload summaries; their records live in the log and the query index, never in memory. */
  readonly uploads = new Map<string, UploadRecord>();
  /** Reconciliation runs (not dry runs), by id; their results live in the log and the query index. */
  readonly reconciliations = new Map<string, ReconciliationRecord>();
  /** Balance monitors by id, in creation order. */
  readonly monitors = new Map<string, MonitorRecord>();
  /** Balance id -> ids of the monitors watching it. */
  readonly monitorsByBalance = new Map<string, Set<string>>();
  /** Closed periods of ledgers (closed-period-table.ts, closed-periods.ts). */
  readonly periods = new ClosedPeriods();
  /** Time of the latest applied event; decided times never go backwards. */
  lastEventAt = 0;

  constructor(readonly transactions: TransactionStore) {}

  balanceByIndicator(indicator: string, currency: string): BalanceRecord | undefined {
    const id = this.balanceIdByIndicator.find(indicator, currency);
    return id === undefined ? undefined : this.balances.get(id);
  }

  /** A transaction by id: pending ones from memory, all others from the store. */
  transaction(transactionId: string): TransactionRecord | undefined {
    return this.pendingTransaction(transactionId) ?? this.transactions.get(transactionId);
  }

  /** A transaction still waiting for something (queued, an open hold, scheduled), from memory. */
  pendingTransaction(transactionId: string): TransactionRecord | undefined {
    return this.mailboxes.queued(transactionId) ?? this.holds.get(transactionId) ?? this.scheduled.get(transactionId);
  }
}

export interface ApplyOptions {
  /**
   * The caller hands the event over (it was just decoded from the log and nothing else holds it), so
   * the state may keep the event's balance records instead of copying them. Replays of a million new
   * balances allocate a million records fewer.
   */
  owned?: boolean;
}

export function applyEvent(state: LedgerState, event: LedgerEvent, options: ApplyOptions = {}): void {
  if (event.at < state.lastEventAt) fail(`event time ${event.at} before ${state.lastEventAt}`);
  state.lastEventAt = event.at;
  for (const ledger of event.ledgers ?? []) state.ledgers.set(ledger.ledger_id, ledger);
  for (const identity of event.identities ?? []) state.identities.set(identity.identity_id, identity);
  for (const identityId of event.deleted_identities ?? []) {
    assert((state.balancesPerIdentity.get(identityId) ?? 0) === 0, `identity ${identityId} deleted while in use`);
    state.identities.delete(identityId);
  }
  for (const balance of event.balances ?? []) addBalance(state, options.owned === true ? balance : { ...balance });
  for (const { balance_id, meta_data } of event.balance_meta ?? []) {
    const balance = state.balances.get(balance_id);
    assert(balance, `metadata for unknown balance ${balance_id}`);
    balance.meta_data = meta_data;
  }
  for (const { balance_id, identity_id } of event.balance_identities ?? []) setBalanceIdentity(state, balance_id, identity_id);
  if (event.postings) applyPostings(state, event.postings);
  if (event.lineage) for (const move of event.lineage) state.lineage.apply(move);
  for (const record of event.transactions ?? []) applyTransactionRecord(state, record);
  for (const patch of event.metadata_patches ?? []) applyMetadataPatch(state, patch);
  for (const key of event.api_keys ?? []) state.apiKeys.set(key.api_key_id, key);
  for (const hook of event.hooks ?? []) state.hooks.set(hook.hook_id, hook);
  for (const hookId of event.deleted_hooks ?? []) state.hooks.delete(hookId);
  for (const rule of event.matching_rules ?? []) state.matchingRules.set(rule.rule_id, rule);
  for (const ruleId of event.deleted_matching_rules ?? []) state.matchingRules.delete(ruleId);
  for (const upload of event.uploads ?? []) state.uploads.set(upload.upload_id, upload);
  for (const run of event.reconciliations ?? []) state.reconciliations.set(run.reconciliation_id, run);
  for (const monitor of event.monitors ?? []) setMonitor(state, monitor);
  for (const monitorId of event.deleted_monitors ?? []) deleteMonitor(state, monitorId);
  for (const period of event.periods ?? []) {
    assert(state.ledgers.has(period.ledger_id), `period ${period.period_id} of unknown ledger ${period.ledger_id}`);
    state.periods.add(period);
  }
}

/** Gives a balance to another identity, keeping the count of balances per identity right. */
function setBalanceIdentity(state: LedgerState, balanceId: string, identityId: string): void {
  const balance = state.balances.get(balanceId);
  assert(balance, `identity for unknown balance ${balanceId}`);
  assert(identityId === '' || state.identities.has(identityId), `balance ${balanceId} given to unknown identity ${identityId}`);
  const previous = balance.identity_id;
  if (previous !== '') {
    const left = (state.balancesPerIdentity.get(previous) ?? 1) - 1;
    if (left === 0) state.balancesPerIdentity.delete(previous);
    else state.balancesPerIdentity.set(previous, left);
  }
  if (identityId !== '') state.balancesPerIdentity.set(identityId, (state.balancesPerIdentity.get(identityId) ?? 0) + 1);
  balance.identity_id = identityId;
}

function setMonitor(state: LedgerState, monitor: MonitorRecord): void {
  assert(state.balances.has(monitor.balance_id), `monitor ${monitor.monitor_id} on unknown balance ${monitor.balance_id}`);
  const previous = state.monitors.get(monitor.monitor_id);
  if (previous) unwatch(state, previous);
  state.monitors.set(monitor.monitor_id, monitor);
  let watching = state.monitorsByBalance.get(monitor.balance_id);
  if (!watching) state.monitorsByBalance.set(monitor.balance_id, (watching = new Set()));
  watching.add(monitor.monitor_id);
}

function deleteMonitor(state: LedgerState, monitorId: string): void {
  const monitor = state.monitors.get(monitorId);
  assert(monitor, `deleting unknown monitor ${monitorId}`);
  state.monitors.delete(monitorId);
  unwatch(state, monitor);
}

function unwatch(state: LedgerState, monitor: MonitorRecord): void {
  const watching = state.monitorsByBalance.get(monitor.balance_id);
  watching?.delete(monitor.monitor_id);
  if (watching?.size === 0) state.monitorsByBalance.delete(monitor.balance_id);
}

/** Adds a balance whose record becomes the state's own (applyEvent copies the event's unless it is owned). */
function addBalance(state: LedgerState, balance: BalanceRecord): void {
  if (!state.ledgers.has(balance.ledger_id)) fail(`balance ${balance.balance_id} in unknown ledger`);
  // (add asserts the id is new, set that the indicator is.)
  state.balances.add(balance);
  if (balance.indicator !== '') state.balanceIdByIndicator.add(balance.indicator, balance.currency, balance.balance_id);
  if (balance.identity_id !== '') {
    state.balancesPerIdentity.set(balance.identity_id, (state.balancesPerIdentity.get(balance.identity_id) ?? 0) + 1);
  }
  if (balance.track_fund_lineage) state.lineage.track(balance.balance_id, balance.allocation_strategy ?? 'FIFO');
}

/**
 * Moves amounts. Within one event and one currency, credits must equal debits and inflight credits must
 * equal inflight debits: that is what keeps the sum of all balances at zero. Settled totals only grow;
 * inflight totals may shrink (a hold is released) but never below zero.
 */
function applyPostings(state: LedgerState, postings: Posting[]): void {
  const netByCurrency = new Map<string, { settled: bigint; inflight: bigint }>();
  const touched = new Set<BalanceRecord>();
  for (const posting of postings) {
    const balance = state.balances.get(posting.balance_id);
    if (!balance) fail(`posting to unknown balance ${posting.balance_id}`);
    let net = netByCurrency.get(balance.currency);
    if (!net) netByCurrency.set(balance.currency, (net = { settled: 0n, inflight: 0n }));
    applyPosting(balance, posting);
    if (posting.field === 'credit') net.settled += posting.amount;
    else if (posting.field === 'debit') net.settled -= posting.amount;
    else if (posting.field === 'inflight_credit') net.inflight += posting.amount;
    else net.inflight -= posting.amount;
    touched.add(balance);
  }
  for (const [currency, net] of netByCurrency) {
    if (net.settled !== 0n || net.inflight !== 0n) fail(`postings in ${currency} do not balance`);
  }
  for (const balance of touched) balance.version += 1;
}

/** Moves one amount of one balance, refusing moves that no valid event makes. */
export function applyPosting(balance: BalanceRecord, posting: Posting): void {
  switch (posting.field) {
    case 'credit':
      assert(posting.amount >= 0n, 'negative credit posting');
      balance.credit_balance += posting.amount;
      return;
    case 'debit':
      assert(posting.amount >= 0n, 'negative debit posting');
      balance.debit_balance += posting.amount;
      return;
    case 'inflight_credit':
      balance.inflight_credit_balance += posting.amount;
      if (balance.inflight_credit_balance < 0n) fail(`inflight credit of ${balance.balance_id} below zero`);
      return;
    case 'inflight_debit':
      balance.inflight_debit_balance += posting.amount;
      if (balance.inflight_debit_balance < 0n) fail(`inflight debit of ${balance.balance_id} below zero`);
      return;
  }
}

/**
 * Keeps the working state in step with a transaction's status: QUEUED records wait in their source's
 * mailbox, INFLIGHT ones are open holds (with their expiry and auto-commit timers), SCHEDULED ones wait
 * for their time, and queued actions lock their parent until they leave the queue.
 */
/** Merges a logged metadata patch into the record its id names, which must exist. */
function applyMetadataPatch(state: LedgerState, { entity_id: id, meta_data: patch }: MetadataPatch): void {
  const target = metadataTarget(id);
  switch (target) {
    case 'ledger': {
      const ledger = state.ledgers.get(id);
      assert(ledger, `metadata patch for unknown ledger ${id}`);
      state.ledgers.set(id, { ...ledger, meta_data: mergeMetaData(ledger.meta_data, patch) });
      return;
    }
    case 'balance': {
      const balance = state.balances.get(id);
      assert(balance, `metadata patch for unknown balance ${id}`);
      balance.meta_data = mergeMetaData(balance.meta_data, patch);
      return;
    }
    case 'identity': {
      const identity = state.identities.get(id);
      assert(identity, `metadata patch for unknown identity ${id}`);
      state.identities.set(id, { ...identity, meta_data: mergeMetaData(identity.meta_data, patch) });
      return;
    }
    case 'transaction': {
      // A pending transaction lives in the state (and snapshots); a settled one only in the store.
      const pending = state.pendingTransaction(id);
      if (pending) applyTransactionRecord(state, { ...pending, meta_data: mergeMetaData(pending.meta_data, patch) }, true);
      else state.transactions.patchMetaData(id, patch);
      return;
    }
    default:
      fail(`metadata patch for ${id}, which carries no metadata`);
  }
}

function applyTransactionRecord(state: LedgerState, record: TransactionRecord, patched = false): void {
  const id = record.transaction_id;
  const queued = record.status === 'QUEUED';
  const wasQueued = state.mailboxes.isQueued(id);
  if (wasQueued && !queued) state.mailboxes.remove(mailboxBalanceOf(record), id);
  if (!wasQueued && queued) state.mailboxes.enqueue(mailboxBalanceOf(record), record);
  if (wasQueued && queued) state.mailboxes.update(mailboxBalanceOf(record), record);
  if (record.action !== undefined) trackPendingAction(state, record, queued);

  if (record.status === 'INFLIGHT') {
    if (!state.holds.has(id)) {
      if (record.inflight_expiry_date > 0) state.timers.add(record.inflight_expiry_date, id, 'expire');
      if (record.inflight_commit_date > 0) state.timers.add(record.inflight_commit_date, id, 'auto_commit');
    }
    state.holds.set(id, record);
  } else state.holds.delete(id);

  if (record.status === 'SCHEDULED') {
    if (!state.scheduled.has(id)) state.timers.add(record.scheduled_for, id, 'scheduled');
    state.scheduled.set(id, record);
  } else state.scheduled.delete(id);

  state.transactions.put(record, patched);
}

function trackPendingAction(state: LedgerState, record: TransactionRecord, queued: boolean): void {
  const locks = record.action === 'refund' ? state.refundLocks : state.pendingHoldActions;
  if (queued) locks.set(record.parent_transaction, record.transaction_id);
  else if (locks.get(record.parent_transaction) === record.transaction_id) locks.delete(record.parent_transaction);
}
