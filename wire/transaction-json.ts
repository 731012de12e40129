// The JSON of a transaction, written directly from the record. Transactions are the most frequent
// response by far, and the generic writer, walking objects of many shapes, was a measurable share of
// each request. This writer produces exactly `toJsonText(transactionView(record))` (a unit test holds
// them together), field for field in the same order.

import type { TransactionRecord } from '../engine/records.js';
import { preciseToAmount, preciseToDecimalText } from './amounts.js';
import { jsonString, RawJson, toJsonText } from './json-text.js';
import { timeText, transactionView } from './views.js';

function numberText(value: number): string {
  return Number.isFinite(value) ? String(value) : 'null';
}

export function transactionJsonText(record: TransactionRecord): string {
  let text = '{"transaction_id":' + jsonString(record.transaction_id)
    + ',"parent_transaction":' + jsonString(record.parent_transaction)
    + ',"source":' + jsonString(record.source)
    + ',"destination":' + jsonString(record.destination)
    + ',"reference":' + jsonString(record.reference)
    + ',"currency":' + jsonString(record.currency)
    + ',"amount":' + numberText(preciseToAmount(record.precise_amount, record.precision))
    + ',"amount_string":' + jsonString(preciseToDecimalText(record.precise_amount, record.precision))
    + ',"precise_amount":' + record.precise_amount.toString()
    + ',"precision":' + record.precision.toString()
    + ',"description":' + jsonString(record.description)
    + ',"status":' + jsonString(record.status)
    + ',"hash":' + jsonString(record.hash)
    + ',"allow_overdraft":' + (record.allow_overdraft ? 'true' : 'false')
    + ',"inflight":' + (record.inflight ? 'true' : 'false')
    + ',"skip_queue":' + (record.skip_queue ? 'true' : 'false')
    + ',"created_at":' + jsonString(timeText(record.created_at))
    + ',"scheduled_for":' + jsonString(timeText(record.scheduled_for))
    + ',"inflight_expiry_date":' + jsonString(timeText(record.inflight_expiry_date))
    + ',"inflight_commit_date":' + jsonString(timeText(record.inflight_commit_date))
    + ',"meta_data":' + toJsonText(record.meta_data);
  if (hasOptionalFields(record)) {
    // The rarer fields go through the generic view, so their shapes are defined in one place.
    const view = transactionView(record);
    for (const key of OPTIONAL_KEYS) {
      if (view[key] !== undefined) text += ',"' + key + '":' + toJsonText(view[key]);
    }
  }
  return text + '}';
}

const OPTIONAL_KEYS = ['rejection', 'sources', 'destinations', 'atomic', 'legs', 'batch_id', 'precise_committed_amount'] as const;

function hasOptionalFields(record: TransactionRecord): boolean {
  return record.rejection !== undefined || record.sources !== undefined || record.destinations !== undefined
    || record.atomic !== undefined || record.legs !== undefined || record.batch_id !== undefined
    || (record.inflight && record.committed_amount !== undefined);
}

/** A transaction ready to be embedded in a response. */
export function transactionJson(record: TransactionRecord): RawJson {
  return new RawJson(transactionJsonText(record));
}

/** A list of transactions ready to be embedded in a response. */
export function transactionListJson(records: TransactionRecord[]): RawJson {
  return new RawJson('[' + records.map(transactionJsonText).join(',') + ']');
}
