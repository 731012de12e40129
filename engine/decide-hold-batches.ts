// Acting on many holds in one operation, decided in one scope and committed as one event:
//   - a bulk request's batch id in place of a hold's id (Blnk takes it on PUT /transactions/inflight/:id):
//     every open hold that batch made, all or none; a hold with an action already queued is left to it;
//     the action's preconditions are judged once every hold is acted on, in the same decision (one
//     failing refuses them all), or, queued, go with each hold's action and are judged in its turn;
//   - up to BULK_HOLD_ACTIONS_MAX holds named one by one (the bulk commit and void routes): each decided on
//     its own, a refused one rolled back and reported, the rest committed together.
// Each hold is acted on with the single-hold decision (decide-inflight-action.ts), so the rules are the
// same (a named hold's own preconditions included, judged in the same decision); one event means a crash
// keeps all of what was acknowledged or none of it.

import type { BatchHoldActionCommand, CommandOf, InflightActionCommand, ManyHoldActionsCommand } from './commands.js';
import { decideInflightAction, HOLD_ACTION_REJECTIONS, holdActionEventType } from './decide-inflight-action.js';
import type { DecisionScope } from './decision-scope.js';
import type { LedgerState } from './ledger-state.js';
import type { Decision, DryRunnable } from './operation.js';
import { involvedIn, projectBalances } from './projection.js';
import { mailboxBalanceOf, type BalanceRecord, type TransactionRecord } from './records.js';
import type { Precondition } from './precondition.js';
import { resultingBalances } from './resulting-balances.js';
import { preconditionRefusal } from './preconditions.js';
import { reject, type Rejection } from './rejections.js';
import { accept, refuse, type Decided } from './result.js';

/** Holds one bulk commit or void request may name. */
export const BULK_HOLD_ACTIONS_MAX = 100;

/** Ids of bulk requests start with this (the 'bulk' prefix of engine/ports.ts IdPrefix); a hold action on one acts on its batch. */
const BATCH_ID_PREFIX = 'bulk_';

/** Whether an id names a bulk request's batch rather than a transaction. */
export function isBatchId(id: string): boolean {
  return id.startsWith(BATCH_ID_PREFIX);
}

export interface BatchActionResult {
  batch_id: string;
  /** The commit or void children (QUEUED when queued), one per hold acted on, in hold order. */
  transactions: TransactionRecord[];
  queued: boolean;
  /** include_balances: every balance of the holds acted on, each once, as the action left them. */
  balances?: BalanceRecord[];
}

/** Open top-level holds a bulk request recorded (split legs close with their parent). */
function openHoldsOf(state: LedgerState, batchId: string): TransactionRecord[] {
  const holds: TransactionRecord[] = [];
  for (const hold of state.holds.values()) {
    if (hold.batch_id === batchId && hold.parent_transaction === '') holds.push(hold);
  }
  return holds;
}

/** The holds of a batch an action would now act on: open ones without an action already queued. */
function actionableHoldsOf(state: LedgerState, batchId: string): TransactionRecord[] {
  return openHoldsOf(state, batchId).filter((hold) => !state.pendingHoldActions.has(hold.transaction_id));
}

export function decideBatchAction(scope: DecisionScope, command: BatchHoldActionCommand): Decided<BatchActionResult> {
  const open = openHoldsOf(scope.state, command.batch_id);
  if (open.length === 0) return refuse(reject('TXN_NOT_FOUND', `no open inflight transaction of batch ${command.batch_id}`));
  const holds = open.filter((hold) => !scope.state.pendingHoldActions.has(hold.transaction_id));
  if (holds.length === 0) return refuse(reject('GEN_CONFLICT', `a commit or void is already queued for every open hold of batch ${command.batch_id}`));
  const transactions: TransactionRecord[] = [];
  for (const hold of holds) {
    const queuedPreconditions = command.skip_queue ? undefined : command.preconditions;
    const decided = decideInflightAction(scope, holdCommand(hold.transaction_id, command.action, 0n, command.skip_queue, queuedPreconditions));
    // All or none: the caller named the batch, so one refused hold refuses the whole action.
    if (!decided.ok) return refuse({ ...decided.rejection, message: `hold ${hold.transaction_id} of batch ${command.batch_id}: ${decided.rejection.message}` });
    transactions.push(decided.value.transaction);
  }
  if (command.skip_queue && command.preconditions) {
    // On the balances as the whole action leaves them; the scope is dropped with the refusal.
    const refusal = preconditionRefusal(scope, command.preconditions, [...new Set(holds.map((hold) => hold.currency))]);
    if (refusal) return refuse({ ...refusal, message: `batch ${command.batch_id}: ${refusal.message}` });
  }
  return accept({ batch_id: command.batch_id, transactions, queued: !command.skip_queue });
}

export const batchActionOperation: DryRunnable<CommandOf<'hold.act_on_batch'>, BatchActionResult> = {
  rejections: [...HOLD_ACTION_REJECTIONS, 'QUEUE_BACKPRESSURE'],
  admission(state, command) {
    const holds = actionableHoldsOf(state, command.batch_id);
    const balances = holds.map(mailboxBalanceOf);
    return command.skip_queue ? { kind: 'drain', balances } : { kind: 'join', balances, items: holds.length };
  },
  decide: decideBatchAction,
  eventType: (value) => holdActionEventType(value.transactions[0]?.action),
  withBalances(value, state) {
    const balances = new Map<string, BalanceRecord>();
    for (const child of value.transactions) {
      const hold = state.transaction(child.parent_transaction);
      if (hold) for (const balance of resultingBalances(hold, state)) balances.set(balance.balance_id, balance);
    }
    return { ...value, balances: [...balances.values()] };
  },
  dryRun: {
    asDryRun: (command) => ({ ...command, skip_queue: true }),
    project(scope, command, decided, currentFrom) {
      const holds = openHoldsOf(scope.state, command.batch_id);
      const balances = projectBalances(scope, involvedIn(scope, holds.map((hold) => scope.transaction(hold.transaction_id) ?? hold)), currentFrom);
      if (!decided.ok) return { operation: command.action, would_apply: false, rejection: decided.rejection, transaction_count: 0, balances };
      return { operation: command.action, would_apply: true, status: decided.value.transactions[0]?.status, transaction_count: decided.value.transactions.length, balances };
    },
  },
};

/** One hold's outcome in a bulk action: its child transaction, or why it was refused. */
export type HoldItemOutcome =
  | { transaction_id: string; ok: true; transaction: TransactionRecord; balances?: BalanceRecord[] }
  | { transaction_id: string; ok: false; rejection: Rejection };

export interface ManyActionsResult {
  items: HoldItemOutcome[];
  queued: boolean;
}

export function decideManyActions(scope: DecisionScope, command: ManyHoldActionsCommand): Decided<ManyActionsResult> {
  const items: HoldItemOutcome[] = [];
  // In order, each seeing what the ones before it did: a hold named twice is already closed (or has an
  // action queued) the second time, as if the requests had come one after the other.
  for (const item of command.items) {
    const mark = scope.mark();
    const decided = decideInflightAction(scope, holdCommand(item.transaction_id, command.action, item.precise_amount, command.skip_queue, item.preconditions));
    if (decided.ok) {
      items.push({ transaction_id: item.transaction_id, ok: true, transaction: decided.value.transaction });
    } else {
      scope.rollback(mark);
      items.push({ transaction_id: item.transaction_id, ok: false, rejection: decided.rejection });
    }
  }
  return accept({ items, queued: !command.skip_queue });
}

export const manyActionsOperation: Decision<CommandOf<'hold.act_on_many'>, ManyActionsResult> = {
  rejections: ['QUEUE_BACKPRESSURE'],
  admission(state, command) {
    const balances: string[] = [];
    for (const item of command.items) {
      const hold = state.transaction(item.transaction_id);
      if (hold && !(command.skip_queue && state.pendingHoldActions.has(hold.transaction_id))) balances.push(mailboxBalanceOf(hold));
    }
    return command.skip_queue ? { kind: 'drain', balances } : { kind: 'join', balances, items: balances.length };
  },
  decide: decideManyActions,
  // Its dry run is the single-hold one over each item in one scope (LedgerEngine.dryRun), which
  // answers per hold as the route does.
  eventType: (value) => holdActionEventType(value.items.find((item) => item.ok)?.transaction.action),
  // Each hold acted on: its balances as the whole action (one event, one seq) left them.
  withBalances(value, state) {
    const items = value.items.map((item): HoldItemOutcome => {
      if (!item.ok) return item;
      const hold = state.transaction(item.transaction_id);
      return { ...item, balances: hold ? resultingBalances(hold, state) : [] };
    });
    return { ...value, items };
  },
};

function holdCommand(transactionId: string, action: 'commit' | 'void', preciseAmount: bigint, skipQueue: boolean, preconditions?: Precondition[]): InflightActionCommand {
  const command: InflightActionCommand = { transaction_id: transactionId, action, precise_amount: action === 'commit' ? preciseAmount : 0n, skip_queue: skipQueue };
  if (preconditions) command.preconditions = preconditions;
  return command;
}
