// An engine for unit tests: the real LedgerEngine over the in-memory log and transaction store, with a
// clock the test moves by hand and ids that count up, so every run decides exactly the same values.
// Also the ledger's global invariants as checks tests can run after any command.

import type { CreateTransactionCommand } from '../../engine/commands.js';
import { LedgerEngine, type EngineLimits } from '../../engine/ledger-engine.js';
import type { LedgerState } from '../../engine/ledger-state.js';
import { MemoryTransactionStore } from '../../lookups/memory-transaction-store.js';
import type { Clock, IdPrefix, IdSource } from '../../engine/ports.js';
import { MemoryLog } from '../../wal/memory-log.js';

export class ManualClock implements Clock {
  constructor(public ms = Date.UTC(2024, 0, 1)) {}

  now(): number {
    return this.ms;
  }

  advance(ms = 1): void {
    this.ms += ms;
  }
}

export class CountingIds implements IdSource {
  private count = 0;

  next(prefix: IdPrefix): string {
    this.count += 1;
    return `${prefix}_${String(this.count).padStart(10, '0')}`;
  }
}

export interface EngineFixture {
  engine: LedgerEngine;
  log: MemoryLog;
  store: MemoryTransactionStore;
  clock: ManualClock;
}

export function openEngine(limits: Partial<EngineLimits> = {}): EngineFixture {
  const log = new MemoryLog();
  const store = new MemoryTransactionStore();
  const clock = new ManualClock();
  const engine = new LedgerEngine({ clock, ids: new CountingIds(), log, transactions: store, limits });
  engine.ensureGenesis();
  return { engine, log, store, clock };
}

/** A transfer command with harmless defaults: 100 USD units, queued, no overdraft, generated reference. */
export function transfer(fields: Partial<CreateTransactionCommand> & Pick<CreateTransactionCommand, 'source' | 'destination'>): CreateTransactionCommand {
  return {
    precise_amount: 100n,
    precision: 100n,
    currency: 'USD',
    reference: '',
    description: '',
    meta_data: {},
    allow_overdraft: false,
    skip_queue: false,
    inflight: false,
    inflight_expiry_date: 0,
    inflight_commit_date: 0,
    scheduled_for: 0,
    atomic: false,
    ...fields,
  };
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
