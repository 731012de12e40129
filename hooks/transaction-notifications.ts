// `transaction.*` and `bulk_transaction.*` for the notification webhook (notifications.ts), as Blnk sends
// them (its transaction webhook after each transaction is recorded, its bulk webhook when an
// asynchronous batch ends).
//
// transaction.<status>: each transaction an event records, named by its status as for hooks
// (hook-deliveries.ts: applied, inflight, void, rejected, scheduled), data the transaction as GET
// /transactions/:id shows it. Two kinds of record are not announced, as Blnk announces neither: one
// waiting in a queue (QUEUED: its outcome is announced when it is carried out), and a hold re-written by
// the commit or void that acts on it in the same event (the commit or void is announced; the hold's new
// state is what that commit or void did). The legs of a split are announced with their parent.
//
// bulk_transaction.applied | inflight | failed: a batch asked for with `run_async` (engine/decide-bulk.ts
// logs how it stood as the event's `batch`), data Blnk's `{batch_id, status, timestamp,
// transaction_count}` or, for a batch cut short, `{batch_id, status: 'failed', timestamp, error}`. Other
// batches are announced item by item only, as in Blnk.

import type { LedgerEvent } from '../engine/events.js';
import { transactionJson } from '../wire/transaction-json.js';
import { timeText } from '../wire/views.js';
import { actedOnIn, hookEventName } from './hook-deliveries.js';
import type { NotificationDraft } from './notification-draft.js';

export function transactionNotifications(event: LedgerEvent): NotificationDraft[] {
  const records = event.transactions;
  if (!records || !event.type.startsWith('transaction.')) return [];
  const actedOn = actedOnIn(records);
  return records
    .filter((record) => record.status !== 'QUEUED' && !actedOn.has(record.transaction_id))
    .map((record) => ({ name: hookEventName(record.status), data: transactionJson(record) }));
}

export function bulkNotifications(event: LedgerEvent): NotificationDraft[] {
  const batch = event.batch;
  if (!batch) return [];
  const data: Record<string, unknown> = { batch_id: batch.batch_id, status: batch.status, timestamp: timeText(event.at) };
  if (batch.status === 'failed') data.error = batch.error ?? '';
  else data.transaction_count = batch.transaction_count;
  return [{ name: `bulk_transaction.${batch.status}`, data }];
}
