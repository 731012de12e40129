// The engine wired for tests (the one rig every engine-level test uses): the in-memory log and
// transaction store, a clock that only moves when told to, and ids that count up, so every run of a test
// decides exactly the same events. Also small builders for commands (over the engine's own
// transferCommand), senders of the common ones as specs send them (create, commit, voidHold, refund,
// processQueue), and the ledger-wide checks (zero sum, replay) that engine-level tests share.

import type { Test } from 'tap';
import { transferCommand, type CreateTransactionCommand, type RefundCommand, type ShareCommand } from '../../engine/commands.js';
import type { DecisionSettings } from '../../engine/decision-scope.js';
import type { LedgerState } from '../../engine/ledger-state.js';
import { LedgerEngine, type EngineLimits, type Outcome } from '../../engine/ledger-engine.js';
import { MemoryTransactionStore } from '../../lookups/memory-transaction-store.js';
import type { Clock, IdPrefix, IdSource } from '../../engine/ports.js';
import type { BalanceRecord, TransactionRecord } from '../../engine/records.js';
import type { Rejection } from '../../engine/rejections.js';
import { MemoryLog } from '../../wal/memory-log.js';

export const START_MS = Date.UTC(2026, 0, 1, 12, 0, 0);

export class FakeClock implements Clock {
  constructor(public ms = START_MS) {}

  now(): number {
    return this.ms;
  }

  advance(ms = 1): void {
    this.ms += ms;
  }
}

export class CountingIds implements IdSource {
  constructor(public count = 0) {}

  next(prefix: IdPrefix): string {
    this.count += 1;
    return `${prefix}_${String(this.count).padStart(8, '0')}`;
  }
}

export interface EngineRig {
  engine: LedgerEngine;
  log: MemoryLog;
  store: MemoryTransactionStore;
  clock: FakeClock;
  ids: CountingIds;
}

export function engineRig(limits: Partial<EngineLimits> = {}, settings: Partial<DecisionSettings> = {}): EngineRig {
  const log = new MemoryLog();
  const store = new MemoryTransactionStore();
  const clock = new FakeClock();
  const ids = new CountingIds();
  const engine = new LedgerEngine({ clock, ids, log, transactions: store, limits, settings });
  engine.run({ op: 'genesis.ensure' });
  return { engine, log, store, clock, ids };
}

/** A fresh engine built only from `rig`'s log, at the same time and with ids continuing the same count. */
export function replayedRig(rig: EngineRig, limits: Partial<EngineLimits> = {}): EngineRig {
  const log = new MemoryLog();
  const store = new MemoryTransactionStore();
  const clock = new FakeClock(rig.clock.ms);
  const ids = new CountingIds(rig.ids.count);
  const engine = new LedgerEngine({ clock, ids, log, transactions: store, limits });
  for (const { event } of rig.log.read(1)) {
    engine.replay(event);
    log.appendAll([event]);
  }
  return { engine, log, store, clock, ids };
}

/** A share as a client writes it: "left", "<n>%", or a fixed amount in the smallest unit. */
export function share(identifier: string, distribution: string): ShareCommand {
  if (distribution === 'left') return { identifier, distribution, request: { kind: 'left' } };
  if (distribution.endsWith('%')) {
    const [whole, fraction = ''] = distribution.slice(0, -1).split('.');
    return {
      identifier,
      distribution,
      request: { kind: 'percent', numerator: BigInt(`${whole}${fraction}`), denominator: 10n ** BigInt(fraction.length) },
    };
  }
  return { identifier, distribution, request: { kind: 'fixed', amount: BigInt(distribution) } };
}

/** A create command with "nothing special" defaults: 100 USD units at precision 100, queued, no overdraft. */
export function transfer(fields: Partial<CreateTransactionCommand>): CreateTransactionCommand {
  return transferCommand({ source: '', destination: '', precise_amount: 100n, precision: 100n, currency: 'USD', ...fields });
}

/** A synchronous hold of `amount` from `from` to `to`; returns the hold's id. */
export function hold(rig: EngineRig, from: string, to: string, amount: bigint, extra: Partial<CreateTransactionCommand> = {}): string {
  const value = ok(rig.engine.run({ op: 'transaction.create', ...transfer({ source: from, destination: to, precise_amount: amount, inflight: true, skip_queue: true, ...extra }) }));
  return value.transaction.transaction_id;
}

// Commands as specs send them (`.when(commit(holdId, 100n))`) and histories run them (`commit(holdId)(engine)`).

/** A transaction.create of `transfer(fields)`. */
export const create = (fields: Partial<CreateTransactionCommand>) => (engine: LedgerEngine) =>
  engine.run({ op: 'transaction.create', ...transfer(fields) });

/** A commit of `amount` of a hold (0: all that remains), synchronous unless told otherwise. */
export const commit = (holdId: string, amount = 0n, skipQueue = true) => (engine: LedgerEngine) =>
  engine.run({ op: 'hold.act', transaction_id: holdId, action: 'commit', precise_amount: amount, skip_queue: skipQueue });

/** A void of what remains of a hold, synchronous unless told otherwise. */
export const voidHold = (holdId: string, skipQueue = true) => (engine: LedgerEngine) =>
  engine.run({ op: 'hold.act', transaction_id: holdId, action: 'void', precise_amount: 0n, skip_queue: skipQueue });

/** A refund of a transaction, synchronous unless told otherwise. */
export const refund = (transactionId: string, fields: Partial<Omit<RefundCommand, 'transaction_id'>> = {}) => (engine: LedgerEngine) =>
  engine.run({ op: 'transaction.refund', transaction_id: transactionId, skip_queue: true, description: '', meta_data: {}, ...fields });

/** A turn of the queue runner (never refused): up to `itemsMax` queued transactions carried out. */
export const processQueue = (itemsMax = 100) => (engine: LedgerEngine) => engine.run({ op: 'queue.process', items_max: itemsMax });

export function ok<T>(outcome: Outcome<T>): T {
  if (!outcome.ok) throw new Error(`expected success, got ${outcome.rejection.code}: ${outcome.rejection.message}`);
  return outcome.value;
}

export function refusal<T>(outcome: Outcome<T>): Rejection {
  if (outcome.ok) throw new Error('expected a rejection, the command succeeded');
  return outcome.rejection;
}

/** Gives `@name` money from `@world` (which may go negative) and returns the balance id. */
export function fund(rig: EngineRig, name: string, amount: bigint, currency = 'USD'): string {
  const value = ok(rig.engine.run({ op: 'transaction.create', ...transfer({
    source: '@world', destination: name, precise_amount: amount, currency, allow_overdraft: true, skip_queue: true,
  }) }));
  if (value.transaction.status !== 'APPLIED') throw new Error(`funding ${name} did not apply`);
  return value.transaction.destination;
}

/** The balance named `@name` (created on first use), or by id. */
export function balance(rig: EngineRig, nameOrId: string, currency = 'USD'): BalanceRecord {
  const found = nameOrId.startsWith('@')
    ? rig.engine.state.balanceByIndicator(nameOrId, currency)
    : rig.engine.state.balances.get(nameOrId);
  if (!found) throw new Error(`no balance ${nameOrId}`);
  return found;
}

/** Settled amount (credit - debit), inflight debit, inflight credit, available, as plain numbers for t.same. */
export function amountsOf(record: BalanceRecord): { balance: bigint; inflight_debit: bigint; inflight_credit: bigint; available: bigint } {
  const settled = record.credit_balance - record.debit_balance;
  return {
    balance: settled,
    inflight_debit: record.inflight_debit_balance,
    inflight_credit: record.inflight_credit_balance,
    available: settled - record.inflight_debit_balance,
  };
}

export function txn(rig: EngineRig, transactionId: string): TransactionRecord {
  const record = rig.engine.state.transaction(transactionId);
  if (!record) throw new Error(`no transaction ${transactionId}`);
  return record;
}

/** For every currency: settled amounts and inflight amounts each sum to zero over all balances. */
export function checkZeroSum(t: Test, rig: EngineRig): void {
  const sums = new Map<string, { settled: bigint; inflight: bigint }>();
  for (const record of rig.engine.state.balances.values()) {
    const sum = sums.get(record.currency) ?? { settled: 0n, inflight: 0n };
    sum.settled += record.credit_balance - record.debit_balance;
    sum.inflight += record.inflight_credit_balance - record.inflight_debit_balance;
    sums.set(record.currency, sum);
  }
  for (const [currency, sum] of sums) {
    t.equal(sum.settled, 0n, `${currency}: settled balances sum to zero`);
    t.equal(sum.inflight, 0n, `${currency}: inflight balances sum to zero`);
  }
}

/** Replaying the log into a fresh engine gives the same balances, records and pending work. */
export function checkReplay(t: Test, rig: EngineRig): EngineRig {
  const copy = replayedRig(rig);
  const state = rig.engine.state;
  const replayed = copy.engine.state;
  t.same([...replayed.balances.entries()], [...state.balances.entries()], 'replay: same balances');
  t.same([...copy.store.byId.entries()], [...rig.store.byId.entries()], 'replay: same transaction records');
  t.same([...replayed.holds.keys()].sort(), [...state.holds.keys()].sort(), 'replay: same open holds');
  t.same([...replayed.scheduled.keys()].sort(), [...state.scheduled.keys()].sort(), 'replay: same scheduled transactions');
  t.same([...replayed.pendingHoldActions.entries()].sort(), [...state.pendingHoldActions.entries()].sort(), 'replay: same queued hold actions');
  t.same([...replayed.refundLocks.entries()].sort(), [...state.refundLocks.entries()].sort(), 'replay: same refund locks');
  t.same([...replayed.mailboxes.all()].map(([id, record]) => [id, record.transaction_id]),
    [...state.mailboxes.all()].map(([id, record]) => [id, record.transaction_id]), 'replay: same mailboxes in the same order');
  return copy;
}

/** Violations of "for every currency the sum of all balances is zero" (settled and inflight). */
export function zeroSumViolations(state: LedgerState): string[] {
  const sums = new Map<string, { settled: bigint; inflight: bigint }>();
  for (const balance of state.balances.values()) {
    const sum = sums.get(balance.currency) ?? { settled: 0n, inflight: 0n };
    sum.settled += balance.credit_balance - balance.debit_balance;
    sum.inflight += balance.inflight_credit_balance - balance.inflight_debit_balance;
    sums.set(balance.currency, sum);
  }
  const violations: string[] = [];
  for (const [currency, sum] of sums) {
    if (sum.settled !== 0n || sum.inflight !== 0n) violations.push(`${currency}: settled ${sum.settled}, inflight ${sum.inflight}`);
  }
  return violations;
}

/** The balances as plain comparable values, for before/after and replay comparisons. */
export function balanceAmounts(state: LedgerState): Record<string, string> {
  const amounts: Record<string, string> = {};
  for (const balance of state.balances.values()) {
    amounts[balance.balance_id] = [
      balance.currency, balance.credit_balance, balance.debit_balance,
      balance.inflight_credit_balance, balance.inflight_debit_balance, balance.version,
    ].join(' ');
  }
  return amounts;
}
