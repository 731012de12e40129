// Committing or voiding a hold on request. The hold must be open (or still queued, when the action is
// queued behind it), with no other action waiting for it. Queued, the action becomes a QUEUED child
// transaction in the hold's source mailbox; synchronous, it is carried out at once.

import type { InflightActionCommand } from './commands.js';
import { carryOut, holdActionRefusal } from './carry-out.js';
import { newTransaction, newTransactionIds, type DecisionScope } from './decision-scope.js';
import type { Operation } from './operation.js';
import { involvedIn, projectBalances } from './projection.js';
import { isSplit, mailboxBalanceOf, type TransactionRecord } from './records.js';
import { reject, type Rejection } from './rejections.js';
import { accept, refuse, type Decided } from './result.js';

export interface HoldActionResult {
  /** The commit or void child (QUEUED when queued). */
  transaction: TransactionRecord;
  /** The hold as it stands after the action. */
  hold: TransactionRecord;
  queued: boolean;
}

export function decideInflightAction(scope: DecisionScope, command: InflightActionCommand): Decided<HoldActionResult> {
  const hold = scope.transaction(command.transaction_id);
  if (!hold) return refuse(reject('TXN_NOT_FOUND', `transaction ${command.transaction_id} not found`));
  const refusal = refusalFor(scope, hold, command);
  if (refusal) return refuse(refusal);
  const child = newTransaction({
    ...newTransactionIds(scope.ids),
    parent_transaction: hold.transaction_id,
    source: mailboxBalanceOf(hold),
    destination: hold.destination,
    currency: hold.currency,
    precise_amount: command.action === 'commit' ? command.precise_amount : 0n,
    precision: hold.precision,
    description: hold.description,
    meta_data: hold.meta_data,
    action: command.action,
    skip_queue: command.skip_queue,
  }, scope.now);
  if (!command.skip_queue) return accept({ transaction: scope.write(child), hold, queued: true });
  const mark = scope.mark();
  const final = carryOut(scope, child);
  if (final.rejection) {
    scope.rollback(mark);
    return refuse(final.rejection);
  }
  return accept({ transaction: final, hold: scope.transaction(hold.transaction_id) as TransactionRecord, queued: false });
}

/** Committing or voiding a hold, as the engine runs it. */
export const inflightActionOperation: Operation<InflightActionCommand, HoldActionResult> = {
  admission(state, command) {
    const hold = state.transaction(command.transaction_id);
    if (!hold) return { kind: 'none' };
    const balances = [mailboxBalanceOf(hold)];
    if (!command.skip_queue) return { kind: 'join', balances, items: 1 };
    // With an action already queued for the hold this one is refused: nothing to apply first.
    return state.pendingHoldActions.has(hold.transaction_id) ? { kind: 'none' } : { kind: 'drain', balances };
  },
  decide: decideInflightAction,
  asDryRun: (command) => ({ ...command, skip_queue: true }),
  eventType: (value) => (value.transaction.action === 'commit' ? 'transaction.committed' : 'transaction.voided'),
  project(scope, command, decided, currentFrom) {
    if (!decided.ok) {
      const hold = scope.transaction(command.transaction_id);
      const balances = hold ? projectBalances(scope, involvedIn(scope, [hold]), currentFrom) : [];
      return { operation: command.action, would_apply: false, rejection: decided.rejection, transaction: hold, balances };
    }
    return {
      operation: command.action,
      would_apply: true,
      status: decided.value.transaction.status,
      transaction: decided.value.transaction,
      balances: projectBalances(scope, involvedIn(scope, [decided.value.hold]), currentFrom),
    };
  },
};

function refusalFor(scope: DecisionScope, hold: TransactionRecord, command: InflightActionCommand): Rejection | undefined {
  const pending = scope.state.pendingHoldActions.get(hold.transaction_id);
  if (pending !== undefined) {
    return reject('GEN_CONFLICT', `a commit or void of ${hold.transaction_id} is already queued (${pending})`);
  }
  if (isSplit(hold) && command.action === 'commit' && command.precise_amount !== 0n) {
    return reject('TXN_PARTIAL_NOT_ALLOWED', 'a split hold is committed whole; commit its legs one by one for partial amounts');
  }
  // Queued behind a hold that is itself still queued: the mailbox keeps them in order.
  if (!command.skip_queue && hold.inflight && hold.status === 'QUEUED') return undefined;
  return holdActionRefusal(hold, command.action, command.precise_amount);
}

