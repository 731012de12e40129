// The JSON of a transaction, written directly from the record: the one way a transaction is rendered,
// in responses, hook payloads and search hits alike. Transactions are the most frequent response by far,
// and the generic writer, walking objects of many shapes, was a measurable share of each request.
// Others embed it as RawJson (toJsonText writes it as it is).

import type { ExchangeTerms } from '../engine/exchange.js';
import { FUND_ALLOCATION_KEY } from '../engine/fund-lineage.js';
import type { SplitShare, TransactionRecord } from '../engine/records.js';
import { preciseToAmount, preciseToDecimalText } from './amounts.js';
import { jsonString, RawJson, toJsonText } from './json-text.js';
import { z } from 'zod';
import { metaDataJsonSchema, timeText, timeTextSchema } from './views.js';

const shareJsonSchema = z.object({ identifier: z.string(), distribution: z.string(), precise_amount: z.bigint() });

/** What transactionJsonText writes, for the API reference (http/openapi/): keep the two in step. */
export const transactionJsonSchema = z.object({
  transaction_id: z.string(),
  parent_transaction: z.string(),
  source: z.string(),
  destination: z.string(),
  reference: z.string(),
  currency: z.string(),
  amount: z.number().nullable().meta({ description: 'For display only: the double nearest the exact amount' }),
  amount_string: z.string().meta({ description: 'The exact amount as decimal text' }),
  precise_amount: z.bigint().meta({ description: 'The exact amount in the smallest unit' }),
  precision: z.bigint().meta({ description: 'Smallest units per unit (100 for cents)' }),
  description: z.string(),
  status: z.enum(['QUEUED', 'APPLIED', 'INFLIGHT', 'VOID', 'REJECTED', 'SCHEDULED']),
  hash: z.string(),
  allow_overdraft: z.boolean(),
  overdraft_limit: z.number().meta({ description: 'How far below zero the source may go, in major units like amount; 0 for none' }),
  inflight: z.boolean(),
  skip_queue: z.boolean(),
  created_at: timeTextSchema,
  scheduled_for: timeTextSchema,
  /** Blnk's effective_date: the date the client gave, else when the transaction was recorded. */
  effective_date: timeTextSchema,
  inflight_expiry_date: timeTextSchema,
  inflight_commit_date: timeTextSchema,
  meta_data: metaDataJsonSchema,
  rejection: z.object({ code: z.string(), reason: z.string(), message: z.string() }).optional(),
  sources: z.array(shareJsonSchema).optional(),
  destinations: z.array(shareJsonSchema).optional(),
  atomic: z.boolean().optional(),
  legs: z.array(z.string()).optional(),
  batch_id: z.string().optional(),
  precise_committed_amount: z.bigint().optional(),
  preconditions: z.array(z.object({
    balance_id: z.string(),
    version: z.number().int().optional(),
    field: z.string().optional(),
    operator: z.string().optional(),
    precise_value: z.bigint().optional(),
  })).optional().meta({ description: 'What had to hold when the transaction was carried out, as the request gave it' }),
  // An exchange between currencies (engine/exchange.ts): present only on one.
  rate: z.string().optional().meta({ description: 'An exchange: destination units per source unit, as the request gave it (decimal text, or numerator/denominator)' }),
  destination_currency: z.string().optional(),
  destination_amount: z.number().nullable().optional().meta({ description: 'For display only: the double nearest the exact destination amount' }),
  destination_amount_string: z.string().optional().meta({ description: 'The exact destination amount as decimal text' }),
  destination_precise_amount: z.bigint().optional().meta({ description: 'The destination amount in its smallest unit (a commit or void of an exchange hold: its part)' }),
  destination_precision: z.bigint().optional(),
  rounding: z.enum(['down', 'half_even', 'up']).optional().meta({ description: 'The rule the destination amount was rounded by, when the request named one' }),
}).meta({ id: 'Transaction' });

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
    + ',"overdraft_limit":' + (record.overdraft_limit === undefined ? '0' : numberText(preciseToAmount(record.overdraft_limit, record.precision)))
    + ',"inflight":' + (record.inflight ? 'true' : 'false')
    + ',"skip_queue":' + (record.skip_queue ? 'true' : 'false')
    + ',"created_at":' + jsonString(timeText(record.created_at))
    + ',"scheduled_for":' + jsonString(timeText(record.scheduled_for))
    + ',"inflight_expiry_date":' + jsonString(timeText(record.inflight_expiry_date))
    + ',"inflight_commit_date":' + jsonString(timeText(record.inflight_commit_date))
    // Blnk's effective_date: the date the client gave, else when it was recorded.
    + ',"effective_date":' + jsonString(timeText(record.effective_date ?? record.created_at))
    + ',"meta_data":' + metaDataText(record);
  if (record.rejection) {
    const { code, reason, message } = record.rejection;
    text += ',"rejection":{"code":' + jsonString(code) + ',"reason":' + jsonString(reason) + ',"message":' + jsonString(message) + '}';
  }
  if (record.sources) text += ',"sources":' + sharesText(record.sources);
  if (record.destinations) text += ',"destinations":' + sharesText(record.destinations);
  if (record.atomic !== undefined) text += ',"atomic":' + (record.atomic ? 'true' : 'false');
  if (record.legs) text += ',"legs":[' + record.legs.map(jsonString).join(',') + ']';
  if (record.batch_id !== undefined) text += ',"batch_id":' + jsonString(record.batch_id);
  if (record.inflight && record.committed_amount !== undefined) text += ',"precise_committed_amount":' + record.committed_amount.toString();
  if (record.preconditions) text += ',"preconditions":' + toJsonText(record.preconditions);
  if (record.exchange) text += exchangeText(record.exchange);
  return text + '}';
}

function exchangeText(exchange: ExchangeTerms): string {
  const amount = exchange.destination_precise_amount;
  const precision = exchange.destination_precision;
  let text = ',"rate":' + jsonString(exchange.rate)
    + ',"destination_currency":' + jsonString(exchange.destination_currency)
    + ',"destination_amount":' + numberText(preciseToAmount(amount, precision))
    + ',"destination_amount_string":' + jsonString(preciseToDecimalText(amount, precision))
    + ',"destination_precise_amount":' + amount.toString()
    + ',"destination_precision":' + precision.toString();
  if (exchange.rounding !== undefined) text += ',"rounding":' + jsonString(exchange.rounding);
  return text;
}

/**
 * The metadata as Blnk shows it: with the engine's fund allocation under BLNK_FUND_ALLOCATION on a debit
 * of a balance that tracks lineage (in place of anything a client wrote under that key).
 */
function metaDataText(record: TransactionRecord): string {
  if (!record.fund_allocation) return toJsonText(record.meta_data);
  const allocation = record.fund_allocation.map((share) => ({ provider: share.provider, amount: share.amount }));
  return toJsonText({ ...record.meta_data, [FUND_ALLOCATION_KEY]: allocation });
}

function sharesText(shares: SplitShare[]): string {
  return '[' + shares.map((share) => '{"identifier":' + jsonString(share.identifier) + ',"distribution":' + jsonString(share.distribution)
    + ',"precise_amount":' + share.precise_amount.toString() + '}').join(',') + ']';
}

/** A transaction ready to be embedded in a response. */
export function transactionJson(record: TransactionRecord): RawJson {
  return new RawJson(transactionJsonText(record));
}

/**
 * A transaction with fields of the answer's own after its own (Blnk's queued hold action answers the
 * hold with `queued: true`). The extra fields must not be fields of a transaction.
 */
export function transactionJsonWith(record: TransactionRecord, extra: Record<string, unknown>): RawJson {
  const text = transactionJsonText(record);
  const more = toJsonText(extra);
  return new RawJson(more === '{}' ? text : text.slice(0, -1) + ',' + more.slice(1));
}

/** A list of transactions ready to be embedded in a response. */
export function transactionListJson(records: TransactionRecord[]): RawJson {
  return new RawJson('[' + records.map(transactionJsonText).join(',') + ']');
}
