// Which hook deliveries a logged event calls for. Pure: the answer depends only on the event (and its
// seq), so the log itself is the outbox; reading it again after a crash derives the same deliveries with
// the same ids.
//
// Each transaction record in a `transaction.*` event is one change of that transaction, named after its
// status: transaction.queued | scheduled | applied | inflight | void | rejected.
//   - POST_TRANSACTION hooks get the outcomes: applied, inflight, void, rejected.
//   - PRE_TRANSACTION hooks get each transaction once, before its outcome: when it is queued or scheduled
//     (it waits to be applied), or, for one carried out synchronously (skip_queue) and so decided in the
//     same event as its outcome, from that event, delivered ahead of the POST deliveries of that event.
//     Records that are only re-written by an action on them (a hold being committed or voided) and the
//     legs of a split (covered by their parent) do not get a PRE delivery of their own.
// Metadata edits re-log a transaction unchanged in status; they are not transaction changes and call no
// hooks.

import { hash } from 'node:crypto';
import type { LedgerEvent } from '../engine/events.js';
import { PARENT_META_KEY } from '../engine/carry-out.js';
import type { HookType, TransactionRecord, TransactionStatus } from '../engine/records.js';

export interface TransactionChange {
  /** Position of the record in the event's `transactions`. */
  index: number;
  record: TransactionRecord;
  /** The hook types this change is delivered to (PRE first when both). */
  types: HookType[];
}

const EVENT_NAMES: Record<TransactionStatus, string> = {
  QUEUED: 'transaction.queued',
  SCHEDULED: 'transaction.scheduled',
  APPLIED: 'transaction.applied',
  INFLIGHT: 'transaction.inflight',
  VOID: 'transaction.void',
  REJECTED: 'transaction.rejected',
};

export function hookEventName(status: TransactionStatus): string {
  return EVENT_NAMES[status];
}

/**
 * The holds a commit or void of the same event acts on: their records in the event are their new state
 * after that action, not a change of their own (neither a PRE delivery nor a notification).
 */
export function actedOnIn(records: readonly TransactionRecord[]): Set<string> {
  const actedOn = new Set<string>();
  for (const record of records) {
    if (record.action === 'commit' || record.action === 'void') actedOn.add(record.parent_transaction);
  }
  return actedOn;
}

export function transactionChanges(event: LedgerEvent): TransactionChange[] {
  const records = event.transactions;
  if (!records || !event.type.startsWith('transaction.')) return [];
  const actedOn = actedOnIn(records);
  const changes: TransactionChange[] = [];
  records.forEach((record, index) => {
    const types: HookType[] = [];
    if (isWaiting(record.status)) types.push('PRE_TRANSACTION');
    else {
      if (decidedSynchronously(record, actedOn)) types.push('PRE_TRANSACTION');
      types.push('POST_TRANSACTION');
    }
    changes.push({ index, record, types });
  });
  return changes;
}

function isWaiting(status: TransactionStatus): boolean {
  return status === 'QUEUED' || status === 'SCHEDULED';
}

/** An outcome reached without the transaction ever waiting in a queue or for its scheduled time. */
function decidedSynchronously(record: TransactionRecord, actedOn: Set<string>): boolean {
  if (!record.skip_queue) return false;
  if (record.scheduled_for > record.created_at) return false;
  if (actedOn.has(record.transaction_id)) return false;
  const isLeg = record.action === undefined && record.parent_transaction !== ''
    && record.meta_data[PARENT_META_KEY] === record.parent_transaction;
  return !isLeg;
}

/**
 * The id of one delivery, the same on every attempt and after any restart: derived from where the
 * change sits in the log and which hook it goes to, never from a clock or randomness.
 */
export function deliveryEventId(seq: number, change: TransactionChange, hookId: string, type: HookType): string {
  const digest = hash('sha256', `${seq}:${change.index}:${change.record.transaction_id}:${hookId}:${type}`, 'hex');
  return `evt_${digest.slice(0, 32)}`;
}
