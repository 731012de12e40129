// Balance monitors: a condition on one amount of one balance (`balance > 100000`, `debit_balance >=
// 5000`, ...), as Blnk has them. A monitor fires when an event makes its condition true that was false
// just before: the alerts an event causes are worked out before the event is applied, from the state it
// is applied to and its own postings, and carried in the event (`monitor_alerts`) with the balance as
// the event leaves it, so the log alone says what fired, replay never re-decides it, and the
// notification webhook (hooks/) reads everything it sends from the event.

import type { LedgerEvent, MonitorAlert } from './events.js';
import type { LedgerState } from './ledger-state.js';
import {
  balanceAmount,
  inflightAmount,
  type BalanceRecord,
  type MonitorCondition,
  type MonitorField,
  type MonitorRecord,
} from './records.js';

export const MONITOR_FIELDS = ['balance', 'credit_balance', 'debit_balance', 'inflight_balance', 'inflight_credit_balance', 'inflight_debit_balance'] as const;
/** Comparisons, as Blnk spells them (`=` and `==` both mean equal). */
export const MONITOR_OPERATORS = ['>', '<', '>=', '<=', '=', '==', '!='] as const;

/** The amount a condition watches. */
export function monitoredAmount(balance: BalanceRecord, field: MonitorField): bigint {
  switch (field) {
    case 'balance': return balanceAmount(balance);
    case 'credit_balance': return balance.credit_balance;
    case 'debit_balance': return balance.debit_balance;
    case 'inflight_balance': return inflightAmount(balance);
    case 'inflight_credit_balance': return balance.inflight_credit_balance;
    case 'inflight_debit_balance': return balance.inflight_debit_balance;
  }
}

export function conditionHolds(balance: BalanceRecord, condition: MonitorCondition): boolean {
  const amount = monitoredAmount(balance, condition.field);
  const target = condition.precise_value;
  switch (condition.operator) {
    case '>': return amount > target;
    case '<': return amount < target;
    case '>=': return amount >= target;
    case '<=': return amount <= target;
    case '=':
    case '==': return amount === target;
    case '!=': return amount !== target;
  }
}

/**
 * The alerts an event causes: for every monitored balance its postings move, each monitor whose
 * condition the event turns from false to true. Nothing is computed when no monitor exists.
 */
export function monitorAlerts(state: LedgerState, event: LedgerEvent): MonitorAlert[] | undefined {
  if (state.monitors.size === 0 || !event.postings) return undefined;
  const after = new Map<string, BalanceRecord>();
  for (const posting of event.postings) {
    if (!state.monitorsByBalance.has(posting.balance_id)) continue;
    let moved = after.get(posting.balance_id);
    if (!moved) {
      const current = state.balances.get(posting.balance_id);
      if (!current) continue;
      after.set(posting.balance_id, (moved = { ...current, version: current.version + 1 }));
    }
    moveBy(moved, posting.field, posting.amount);
  }
  let alerts: MonitorAlert[] | undefined;
  for (const [balanceId, moved] of after) {
    const before = state.balances.get(balanceId) as BalanceRecord;
    for (const monitorId of state.monitorsByBalance.get(balanceId) ?? []) {
      const monitor = state.monitors.get(monitorId) as MonitorRecord;
      if (!conditionHolds(before, monitor.condition) && conditionHolds(moved, monitor.condition)) {
        (alerts ??= []).push({ monitor, balance: moved });
      }
    }
  }
  return alerts;
}

function moveBy(balance: BalanceRecord, field: string, amount: bigint): void {
  if (field === 'credit') balance.credit_balance += amount;
  else if (field === 'debit') balance.debit_balance += amount;
  else if (field === 'inflight_credit') balance.inflight_credit_balance += amount;
  else balance.inflight_debit_balance += amount;
}

/** What a client may send to a monitor: everything but its id and creation time. */
export type MonitorFields = Omit<MonitorRecord, 'monitor_id' | 'created_at'>;
