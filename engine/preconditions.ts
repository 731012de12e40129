// Preconditions on a transaction: "only if this balance is still at version N", "only if its available
// balance stays at or above X". A caller that read a balance can act on what it read without a lock of
// its own: the conditions are checked inside the decision that applies the transaction, so nothing can
// come between the check and the write. A synchronous request that fails one is refused and nothing is
// written; a queued, scheduled or bulk-queued one is checked when its turn comes and recorded REJECTED.
//
//   version                    compared with the balance's version before the transaction (the version
//                              the state holds when the decision starts: every item of one bulk, one
//                              write, sees the same)
//   field operator precise_value
//                              evaluated on the balance as the transaction would leave it: its stored
//                              totals plus every posting the decision has drafted so far, this
//                              transaction's included (so for an item of a bulk, the items before it too)
//
// A balance is named as the legs name it: an id, or an `@name` looked up in the transaction's currency
// (and, for an exchange, in its destination currency when not found in the first). A name that finds no
// balance fails its precondition (found: null). Every precondition is checked, so a refusal (and a dry
// run) reports each that failed, the first in the message.

import type { DecisionScope } from './decision-scope.js';
import type { Precondition, PreconditionFailure, PreconditionField, PreconditionOperator } from './precondition.js';
import { availableAmount, balanceAmount, inflightAmount, type BalanceRecord, type BalanceTotals } from './records.js';
import { reject, type Rejection } from './rejections.js';

/** The value of a field of a balance's totals. */
function fieldValue(totals: BalanceTotals, field: PreconditionField): bigint {
  switch (field) {
    case 'balance': return balanceAmount(totals);
    case 'available_balance': return availableAmount(totals);
    case 'credit_balance': return totals.credit_balance;
    case 'debit_balance': return totals.debit_balance;
    case 'inflight_balance': return inflightAmount(totals);
    case 'inflight_credit_balance': return totals.inflight_credit_balance;
    case 'inflight_debit_balance': return totals.inflight_debit_balance;
  }
}

function holds(found: bigint, operator: PreconditionOperator, expected: bigint): boolean {
  switch (operator) {
    case '>=': return found >= expected;
    case '<=': return found <= expected;
    case '==': return found === expected;
  }
}

/** The balance a precondition names, as this decision sees it (balances it creates included). */
function namedBalance(scope: DecisionScope, name: string, currencies: readonly string[]): BalanceRecord | undefined {
  if (!name.startsWith('@')) return scope.balance(name);
  for (const currency of currencies) {
    const found = scope.named(name, currency);
    if (found) return found;
  }
  return undefined;
}

/** Every precondition that does not hold now, in the request's order. */
export function preconditionFailures(scope: DecisionScope, preconditions: readonly Precondition[], currencies: readonly string[]): PreconditionFailure[] {
  const failures: PreconditionFailure[] = [];
  preconditions.forEach((precondition, index) => {
    const { version, field, operator, precise_value: expected } = precondition;
    const failure = (failed: PreconditionFailure['field'], comparison: PreconditionOperator, wanted: bigint | number, found: bigint | number | null): void => {
      failures.push({ index, balance_id: precondition.balance_id, field: failed, operator: comparison, expected: wanted, found });
    };
    const balance = namedBalance(scope, precondition.balance_id, currencies);
    if (!balance) {
      // One failure for the missing balance, named by what the precondition asked first.
      if (version !== undefined) failure('version', '==', version, null);
      else failure(field ?? 'balance', operator ?? '==', expected ?? 0n, null);
      return;
    }
    if (version !== undefined && balance.version !== version) failure('version', '==', version, balance.version);
    if (field === undefined || operator === undefined || expected === undefined) return;
    const found = fieldValue(scope.draft.totalsOf(balance), field);
    if (!holds(found, operator, expected)) failure(field, operator, expected, found);
  });
  return failures;
}

/** Why the transaction may not apply (TXN_PRECONDITION_FAILED naming every failure), or undefined. */
export function preconditionRefusal(scope: DecisionScope, preconditions: readonly Precondition[], currencies: readonly string[]): Rejection | undefined {
  const failures = preconditionFailures(scope, preconditions, currencies);
  const first = failures[0];
  if (!first) return undefined;
  const found = first.found === null ? 'no such balance' : `${first.field} ${first.found}`;
  const message = `precondition ${first.index} failed: balance ${first.balance_id} has ${found}, not ${first.operator} ${first.expected}`
    + (failures.length > 1 ? ` (${failures.length} preconditions failed)` : '');
  return { ...reject('TXN_PRECONDITION_FAILED', message), preconditions: failures };
}
