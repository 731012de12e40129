// Committing or voiding a hold on request. The hold must be open (or still queued, when the action is
// queued behind it), with no other action waiting for it. Queued, the action becomes a QUEUED child
// transaction in the hold's source mailbox; synchronous, it is carried out at once.

import type { InflightActionCommand } from './commands.js';
import { newTransaction, newTransactionIds, type DecisionScope } from './decision-scope.js';
import { holdActionRefusal, processPending } from './process-pending.js';
import { isSplit, mailboxBalanceOf, type TransactionRecord } from './records.js';
import { reject, type Rejection } from './rejections.js';

export type InflightActionOutcome =
  | { kind: 'done'; transaction: TransactionRecord; hold: TransactionRecord; queued: boolean }
  | { kind: 'rejected'; rejection: Rejection };

export function decideInflightAction(scope: DecisionScope, command: InflightActionCommand): InflightActionOutcome {
  const hold = scope.transaction(command.transaction_id);
  if (!hold) return rejected(reject('TXN_NOT_FOUND', `transaction ${command.transaction_id} not found`));
  const refusal = refusalFor(scope, hold, command);
  if (refusal) return rejected(refusal);
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
  if (!command.skip_queue) return { kind: 'done', transaction: scope.write(child), hold, queued: true };
  const mark = scope.mark();
  const final = processPending(scope, child);
  if (final.status === 'REJECTED') {
    scope.rollback(mark);
    const info = final.rejection as Rejection;
    return rejected(reject(info.code as Rejection['code'], info.message));
  }
  return { kind: 'done', transaction: final, hold: scope.transaction(hold.transaction_id) as TransactionRecord, queued: false };
}

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

function rejected(rejection: Rejection): InflightActionOutcome {
  return { kind: 'rejected', rejection };
}
