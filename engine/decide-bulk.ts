// Recording many transactions in one request. An atomic batch is decided at once and written as one
// event: every item or none (whatever skip_queue says, since all-or-nothing needs one decision). A
// non-atomic batch is taken in order and stops at the first item that cannot be recorded; the items
// before it stand. Queued items are then applied by their balances' mailboxes like any others.

import type { BulkCommand, CommandOf } from './commands.js';
import type { BatchSummary } from './events.js';
import { CREATE_REJECTIONS, decideCreate, sourcesNamed } from './decide-create.js';
import type { DecisionScope } from './decision-scope.js';
import type { Decision } from './operation.js';
import type { BalanceRecord, TransactionRecord } from './records.js';
import type { Rejection } from './rejections.js';
import { resultingBalances } from './resulting-balances.js';
import { accept, refuse, type Decided } from './result.js';

export type BulkStatus = 'APPLIED' | 'INFLIGHT' | 'QUEUED' | 'PARTIAL';

export interface BulkResult {
  batch_id: string;
  status: BulkStatus;
  transaction_count: number;
  /** A non-atomic batch stopped at this item; the items before it stand. */
  failure?: { index: number; rejection: Rejection };
  /**
   * include_balances: each recorded item, in order, with the balances it touched as the batch left them
   * (one write, one seq: resulting-balances.ts).
   */
  items?: BulkItemBalances[];
}

export interface BulkItemBalances {
  transaction_id: string;
  reference: string;
  status: TransactionRecord['status'];
  balances: BalanceRecord[];
}

export function decideBulk(scope: DecisionScope, command: BulkCommand): Decided<BulkResult> {
  const batchId = scope.ids.next('bulk');
  const immediate = command.atomic || command.skip_queue;
  const items: BulkItemBalances[] | undefined = command.include_balances === true ? [] : undefined;
  for (const [index, item] of command.transactions.entries()) {
    const outcome = decideCreate(
      scope,
      { ...item, inflight: item.inflight || command.inflight, skip_queue: immediate },
      { allowReplay: false, batchId },
    );
    if (outcome.ok) {
      items?.push({ transaction_id: outcome.value.transaction.transaction_id, reference: outcome.value.transaction.reference, status: outcome.value.transaction.status, balances: [] });
      continue;
    }
    if (command.atomic || index === 0) {
      return refuse({ ...outcome.rejection, message: `transaction ${index}: ${outcome.rejection.message}`, item: index });
    }
    return accept({ batch_id: batchId, status: 'PARTIAL', transaction_count: index, failure: { index, rejection: outcome.rejection }, ...(items && { items }) });
  }
  const status: BulkStatus = !immediate ? 'QUEUED' : command.inflight ? 'INFLIGHT' : 'APPLIED';
  return accept({ batch_id: batchId, status, transaction_count: command.transactions.length, ...(items && { items }) });
}

/** Recording a batch, as the engine runs it. */
export const bulkOperation: Decision<CommandOf<'transaction.bulk'>, BulkResult> = {
  rejections: [...CREATE_REJECTIONS, 'QUEUE_BACKPRESSURE'],
  admission(state, command) {
    if (!command.atomic && !command.skip_queue) return { kind: 'join', balances: [], items: command.transactions.length };
    return { kind: 'drain', balances: command.transactions.flatMap((item) => sourcesNamed(state, item)) };
  },
  decide(scope, command) {
    const decided = decideBulk(scope, command);
    // Blnk announces asynchronous batches when their processing ends (bulk_transaction.*); here a batch
    // is decided before it is answered, so how it stands goes into its event.
    if (decided.ok && command.run_async) scope.detail({ batch: batchSummary(command, decided.value) });
    return decided;
  },
  // Its dry run is the items' own, in one scope (the bulk route): each item is answered on its own.
  eventType: () => 'transaction.bulk',
  withBalances(value, state) {
    const items = value.items?.map((item) => {
      const record = state.transaction(item.transaction_id);
      return { ...item, balances: record ? resultingBalances(record, state) : [] };
    });
    return items ? { ...value, items } : value;
  },
};

/**
 * A batch's outcome as Blnk's bulk_transaction.* announces it: applied or inflight whole (queued items
 * included, as Blnk counts them once enqueued), or failed part way.
 */
function batchSummary(command: BulkCommand, value: BulkResult): BatchSummary {
  if (value.failure) {
    const { index, rejection } = value.failure;
    return {
      batch_id: value.batch_id, status: 'failed', transaction_count: value.transaction_count,
      error: `transaction ${index}: ${rejection.message}. Previous transactions were not rolled back.`,
    };
  }
  return { batch_id: value.batch_id, status: command.inflight ? 'inflight' : 'applied', transaction_count: value.transaction_count };
}
