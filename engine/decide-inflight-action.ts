// Committing or voiding a hold on request. The hold must be open (or still queued, when the action is
// queued behind it), with no other action waiting for it. Queued, the action becomes a QUEUED child
// transaction in the hold's source mailbox; synchronous, it is carried out at once.

import type { CommandOf, InflightActionCommand } from './commands.js';
import { carryOutNow, holdActionChild, holdActionRefusal } from './carry-out.js';
import type { DecisionScope } from './decision-scope.js';
import type { DryRunnable } from './operation.js';
import type { EventType } from './events.js';
import { involvedIn, projectBalances } from './projection.js';
import { isSplit, mailboxBalanceOf, type BalanceRecord, type TransactionRecord } from './records.js';
import { resultingBalances } from './resulting-balances.js';
import { reject, type Rejection, type RejectionCode } from './rejections.js';
import { accept, refuse, type Decided } from './result.js';

export interface HoldActionResult {
  /** The commit or void child (QUEUED when queued). */
  transaction: TransactionRecord;
  /** The hold as it stands after the action. */
  hold: TransactionRecord;
  queued: boolean;
  /** include_balances: the balances of the hold as the action left them (resulting-balances.ts). */
  balances?: BalanceRecord[];
}

export function decideInflightAction(scope: DecisionScope, command: InflightActionCommand): Decided<HoldActionResult> {
  const hold = scope.transaction(command.transaction_id);
  if (!hold) return refuse(reject('TXN_NOT_FOUND', `transaction ${command.transaction_id} not found`));
  const refusal = refusalFor(scope, hold, command);
  if (refusal) return refuse(refusal);
  const child = holdActionChild(scope, hold, command.action, command.precise_amount, command.skip_queue, command.preconditions);
  if (!command.skip_queue) return accept({ transaction: scope.write(child), hold, queued: true });
  const final = carryOutNow(scope, child);
  if (!final.ok) return final;
  return accept({ transaction: final.value, hold: scope.transaction(hold.transaction_id) as TransactionRecord, queued: false });
}

/** What acting on one hold can refuse with. */
export const HOLD_ACTION_REJECTIONS = [
  'TXN_NOT_FOUND', 'GEN_CONFLICT', 'TXN_PARTIAL_NOT_ALLOWED', 'TXN_NOT_INFLIGHT', 'TXN_ALREADY_VOIDED', 'TXN_ALREADY_COMMITTED',
  'TXN_COMMIT_AMOUNT_EXCEEDED', 'TXN_PRECONDITION_FAILED', 'TXN_EXCHANGE_INEXACT',
] as const satisfies readonly RejectionCode[];

/** Committing or voiding a hold, as the engine runs it. */
export const inflightActionOperation: DryRunnable<CommandOf<'hold.act'>, HoldActionResult> = {
  rejections: [...HOLD_ACTION_REJECTIONS, 'QUEUE_BACKPRESSURE'],
  admission(state, command) {
    const hold = state.transaction(command.transaction_id);
    if (!hold) return { kind: 'none' };
    const balances = [mailboxBalanceOf(hold)];
    if (!command.skip_queue) return { kind: 'join', balances, items: 1 };
    // With an action already queued for the hold this one is refused: nothing to apply first.
    return state.pendingHoldActions.has(hold.transaction_id) ? { kind: 'none' } : { kind: 'drain', balances };
  },
  decide: decideInflightAction,
  eventType: (value) => holdActionEventType(value.transaction.action),
  withBalances: (value, state) => ({ ...value, balances: resultingBalances(value.hold, state) }),
  dryRun: {
    asDryRun: (command) => ({ ...command, skip_queue: true }),
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
  },
};

/** The event a commit or void is logged as. */
export function holdActionEventType(action: TransactionRecord['action']): EventType {
  return action === 'commit' ? 'transaction.committed' : 'transaction.voided';
}

function refusalFor(scope: DecisionScope, hold: TransactionRecord, command: InflightActionCommand): Rejection | undefined {
  const pending = scope.state.pendingHoldActions.get(hold.transaction_id) ?? queuedInScope(scope, hold.transaction_id);
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


/** A commit or void of the hold queued earlier in the same decision (several holds acted on at once). */
function queuedInScope(scope: DecisionScope, holdId: string): string | undefined {
  for (const record of scope.records) {
    if (record.parent_transaction === holdId && record.status === 'QUEUED' && (record.action === 'commit' || record.action === 'void')) {
      return record.transaction_id;
    }
  }
  return undefined;
}
