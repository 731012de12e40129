// Events as bytes, for log records (log-record-codec.ts). Writing the log is on the request path, so the
// records that nearly every event carries (transactions, postings, new balances) have a fixed layout
// written field by field; everything else an event can carry (ledgers, identities, keys, hooks, ...)
// goes into one msgpack blob. Against msgpack for the whole event this takes about a third of the time
// and a little less space, and decoding is faster too.
//
//   event        u8 type, f64 at, u8 parts present, then each part present:
//                  balances      u32 count, each a balance record (balance-codec.ts)
//                  transactions  u32 count, each a transaction record (below)
//                  postings      u32 count, each: balance id, u8 field (bit 0x80: an f64 effective time
//                                follows), amount
//                  rest          u32 length, msgpack of the event's other fields
//                  external records, reconciliation results: chunks of rows (reconciliation-codec.ts)
//   transaction  ids and names (u16 length + UTF-8), precise_amount and precision (amounts), the
//                description (u32 length + UTF-8), u8 status, hash, u8 flags, four f64 times, metadata
//                (u32 length + msgpack, 0 when empty), u8 optional parts present, then batch_id,
//                committed_amount and a msgpack blob of the rest (rejection, shares, legs, action, atomic, preconditions, ...)
//
// Every field of the records and events is named in a table below with `satisfies`, so adding a field
// to one of them is a compile error until this codec knows where it goes: nothing is ever dropped.

import { Packr, Unpackr } from 'msgpackr';
import type { EventType, LedgerEvent, Posting, PostingField } from '../engine/events.js';
import { OPTIONAL_TRANSACTION_FIELDS, type MetaData, type TransactionRecord, type TransactionStatus } from '../engine/records.js';
import { packMeta, readAmount, readBalanceAt, readMeta, skipAmount, writeAmount, writeBalance, writePackedMeta } from './balance-codec.js';
import { ByteReader, ByteWriter } from './byte-writer.js';
import { readExternalRecordChunks, readResultChunks, writeExternalRecordChunks, writeResultChunks } from './reconciliation-codec.js';

const blobPackr = new Packr({ useRecords: false, useBigIntExtension: true });
const blobUnpackr = new Unpackr({ useRecords: false, useBigIntExtension: true });

const EVENT_TYPES: readonly EventType[] = [
  'ledger.created', 'ledger.updated', 'balance.created', 'transaction.queued', 'transaction.scheduled',
  'transaction.applied', 'transaction.inflight', 'transaction.committed', 'transaction.voided',
  'transaction.rejected', 'transaction.bulk', 'identity.created', 'identity.updated', 'identity.deleted',
  'metadata.updated', 'api_key.created', 'api_key.revoked', 'api_key.used', 'hook.created', 'hook.updated',
  'hook.deleted', 'matching_rule.created', 'matching_rule.updated', 'matching_rule.deleted', 'reconciliation.uploaded',
  'reconciliation.started', 'reconciliation.progressed', 'reconciliation.results', 'reconciliation.completed',
  'reconciliation.failed',
  // New types go at the end: an event's code is its place in this list, and old logs keep theirs.
  'balance_monitor.created', 'balance_monitor.updated', 'balance_monitor.deleted', 'balance.identity_updated',
  'system.error', 'period.closed',
];
const EVENT_TYPE_CODE = new Map(EVENT_TYPES.map((type, index) => [type, index]));

/** Where each event field goes: the fixed parts, or the msgpack blob of the rest. */
const EVENT_FIELDS = {
  type: 'fixed', at: 'fixed', balances: 'fixed', transactions: 'fixed', postings: 'fixed',
  ledgers: 'rest', balance_meta: 'rest', metadata_patches: 'rest', identities: 'rest', deleted_identities: 'rest', api_keys: 'rest',
  hooks: 'rest', deleted_hooks: 'rest', matching_rules: 'rest', deleted_matching_rules: 'rest', uploads: 'rest', reconciliations: 'rest',
  external_records: 'fixed', reconciliation_results: 'fixed',
  monitors: 'rest', deleted_monitors: 'rest', monitor_alerts: 'rest', balance_identities: 'rest', batch: 'rest', system_errors: 'rest', lineage: 'rest',
  periods: 'rest',
} as const satisfies Record<keyof LedgerEvent, 'fixed' | 'rest'>;
const REST_EVENT_FIELDS = (Object.keys(EVENT_FIELDS) as Array<keyof LedgerEvent>).filter((field) => EVENT_FIELDS[field] === 'rest');

const STATUSES: readonly TransactionStatus[] = ['QUEUED', 'APPLIED', 'INFLIGHT', 'VOID', 'REJECTED', 'SCHEDULED'];
const STATUS_CODE = new Map(STATUSES.map((status, index) => [status, index]));
const POSTING_FIELDS: readonly PostingField[] = ['credit', 'debit', 'inflight_credit', 'inflight_debit'];
const POSTING_FIELD_CODE = new Map(POSTING_FIELDS.map((field, index) => [field, index]));
/** Set on a posting's field code when an f64 effective time follows it (logs before it never set it). */
const POSTING_EFFECTIVE_AT = 0x80;

/** Where each transaction field goes: fixed layout, its own optional slot, or the optional blob. */
const TRANSACTION_FIELDS = {
  transaction_id: 'fixed', parent_transaction: 'fixed', source: 'fixed', destination: 'fixed', reference: 'fixed',
  currency: 'fixed', precise_amount: 'fixed', precision: 'fixed', description: 'fixed', status: 'fixed', hash: 'fixed',
  allow_overdraft: 'fixed', inflight: 'fixed', skip_queue: 'fixed', created_at: 'fixed', inflight_expiry_date: 'fixed',
  inflight_commit_date: 'fixed', scheduled_for: 'fixed', meta_data: 'fixed',
  batch_id: 'slot', committed_amount: 'slot',
  rejection: 'blob', sources: 'blob', destinations: 'blob', atomic: 'blob', legs: 'blob', action: 'blob', effective_date: 'blob',
  overdraft_limit: 'blob', preconditions: 'blob', fund_allocation: 'blob', lineage_provider: 'blob',
  exchange: 'blob',
} as const satisfies Record<keyof TransactionRecord, 'fixed' | 'slot' | 'blob'>;
// Read back in the order a new record gets them (the slots come first in that order too), so decoded
// records keep their key order.
const BLOB_TRANSACTION_FIELDS = OPTIONAL_TRANSACTION_FIELDS.filter((field) => TRANSACTION_FIELDS[field] === 'blob');

const PART_BALANCES = 1;
const PART_TRANSACTIONS = 2;
const PART_POSTINGS = 4;
const PART_REST = 8;
const PART_EXTERNAL_RECORDS = 16;
const PART_RECONCILIATION_RESULTS = 32;

const FLAG_ALLOW_OVERDRAFT = 1;
const FLAG_INFLIGHT = 2;
const FLAG_SKIP_QUEUE = 4;

const OPTIONAL_BATCH_ID = 1;
const OPTIONAL_COMMITTED = 2;
const OPTIONAL_BLOB = 4;

export function writeEvent(out: ByteWriter, event: LedgerEvent): void {
  const code = EVENT_TYPE_CODE.get(event.type);
  if (code === undefined) throw new Error(`no code for event type ${event.type}`);
  out.u8(code);
  out.f64(event.at);
  const rest = restOf(event);
  let parts = 0;
  if (event.balances) parts |= PART_BALANCES;
  if (event.transactions) parts |= PART_TRANSACTIONS;
  if (event.postings) parts |= PART_POSTINGS;
  if (rest) parts |= PART_REST;
  if (event.external_records) parts |= PART_EXTERNAL_RECORDS;
  if (event.reconciliation_results) parts |= PART_RECONCILIATION_RESULTS;
  out.u8(parts);
  if (event.balances) {
    out.u32(event.balances.length);
    for (const balance of event.balances) writeBalance(out, balance);
  }
  if (event.transactions) {
    out.u32(event.transactions.length);
    const lastMeta: PackedMeta = { meta: undefined, packed: undefined };
    for (const record of event.transactions) writeTransaction(out, record, lastMeta);
  }
  if (event.postings) {
    out.u32(event.postings.length);
    for (const posting of event.postings) {
      out.shortString(posting.balance_id);
      const field = POSTING_FIELD_CODE.get(posting.field) as number;
      if (posting.effective_at === undefined) out.u8(field);
      else {
        out.u8(field | POSTING_EFFECTIVE_AT);
        out.f64(posting.effective_at);
      }
      writeAmount(out, posting.amount);
    }
  }
  if (rest) writeBlob(out, rest);
  if (event.external_records) writeExternalRecordChunks(out, event.external_records);
  if (event.reconciliation_results) writeResultChunks(out, event.reconciliation_results);
}

function restOf(event: LedgerEvent): Record<string, unknown> | undefined {
  let rest: Record<string, unknown> | undefined;
  for (const field of REST_EVENT_FIELDS) {
    const value = event[field];
    if (value !== undefined) (rest ??= {})[field] = value;
  }
  return rest;
}

function writeBlob(out: ByteWriter, value: unknown): void {
  const packed = blobPackr.pack(value);
  out.u32(packed.length);
  out.raw(packed);
}

function readBlob<T>(input: ByteReader): T {
  const length = input.u32();
  return blobUnpackr.unpack(input.bytes(length)) as T;
}

/**
 * The metadata object last packed while one event's transactions were written, and its bytes. The legs
 * of a split share one metadata object (engine/carry-out.ts), so it is packed once per split instead of
 * once per leg; the bytes are the same either way. Kept for one synchronous write only, during which
 * nothing can change the object.
 */
interface PackedMeta {
  meta: MetaData | undefined;
  packed: Buffer | undefined;
}

export function writeTransaction(out: ByteWriter, record: TransactionRecord, lastMeta?: PackedMeta): void {
  out.shortString(record.transaction_id);
  out.shortString(record.parent_transaction);
  out.shortString(record.source);
  out.shortString(record.destination);
  out.shortString(record.reference);
  out.shortString(record.currency);
  writeAmount(out, record.precise_amount);
  writeAmount(out, record.precision);
  out.longString(record.description);
  out.u8(STATUS_CODE.get(record.status) as number);
  out.shortString(record.hash);
  out.u8((record.allow_overdraft ? FLAG_ALLOW_OVERDRAFT : 0) | (record.inflight ? FLAG_INFLIGHT : 0) | (record.skip_queue ? FLAG_SKIP_QUEUE : 0));
  out.f64(record.created_at);
  out.f64(record.inflight_expiry_date);
  out.f64(record.inflight_commit_date);
  out.f64(record.scheduled_for);
  if (!lastMeta) writePackedMeta(out, packMeta(record.meta_data));
  else {
    if (lastMeta.meta !== record.meta_data) {
      lastMeta.meta = record.meta_data;
      lastMeta.packed = packMeta(record.meta_data);
    }
    writePackedMeta(out, lastMeta.packed);
  }
  let blob: Record<string, unknown> | undefined;
  for (const field of BLOB_TRANSACTION_FIELDS) {
    if (record[field] !== undefined) (blob ??= {})[field] = record[field];
  }
  const optional = (record.batch_id !== undefined ? OPTIONAL_BATCH_ID : 0)
    | (record.committed_amount !== undefined ? OPTIONAL_COMMITTED : 0)
    | (blob ? OPTIONAL_BLOB : 0);
  out.u8(optional);
  if (record.batch_id !== undefined) out.shortString(record.batch_id);
  if (record.committed_amount !== undefined) writeAmount(out, record.committed_amount);
  if (blob) writeBlob(out, blob);
}

export function readTransaction(input: ByteReader): TransactionRecord {
  const transactionId = input.shortString();
  const parentTransaction = input.shortString();
  const source = input.shortString();
  const destination = input.shortString();
  const reference = input.shortString();
  const currency = input.shortString();
  const preciseAmount = readAmount(input);
  const precision = readAmount(input);
  const description = input.longString();
  const status = STATUSES[input.u8()];
  if (status === undefined) throw new Error('unknown transaction status code');
  const hash = input.shortString();
  const flags = input.u8();
  const createdAt = input.f64();
  const inflightExpiryDate = input.f64();
  const inflightCommitDate = input.f64();
  const scheduledFor = input.f64();
  const metaData = readMeta(input);
  // The key order of a freshly recorded transaction (decision-scope.ts: newTransaction).
  const record: TransactionRecord = {
    parent_transaction: parentTransaction,
    description,
    status,
    allow_overdraft: (flags & FLAG_ALLOW_OVERDRAFT) !== 0,
    inflight: (flags & FLAG_INFLIGHT) !== 0,
    skip_queue: (flags & FLAG_SKIP_QUEUE) !== 0,
    created_at: createdAt,
    inflight_expiry_date: inflightExpiryDate,
    inflight_commit_date: inflightCommitDate,
    scheduled_for: scheduledFor,
    meta_data: metaData,
    transaction_id: transactionId,
    source,
    destination,
    reference,
    currency,
    precise_amount: preciseAmount,
    precision,
    hash,
  };
  const optional = input.u8();
  if (optional & OPTIONAL_BATCH_ID) record.batch_id = input.shortString();
  if (optional & OPTIONAL_COMMITTED) record.committed_amount = readAmount(input);
  if (optional & OPTIONAL_BLOB) Object.assign(record, readBlob<Partial<TransactionRecord>>(input));
  return record;
}

/**
 * Moves past one transaction record without building it, for readers that follow balances alone (the
 * balance history, index/history-follower.ts): the record's strings and metadata are most of an
 * event's bytes and most of the time spent decoding it.
 */
export function skipTransaction(input: ByteReader): void {
  // transaction_id, parent_transaction, source, destination, reference, currency
  for (let field = 0; field < 6; field += 1) skipBytes(input, input.u16());
  skipAmount(input); // precise_amount
  skipAmount(input); // precision
  skipBytes(input, input.u32()); // description
  skipBytes(input, 1); // status
  skipBytes(input, input.u16()); // hash
  skipBytes(input, 1 + 4 * 8); // flags, four times
  skipBytes(input, input.u32()); // metadata
  const optional = input.u8();
  if (optional & OPTIONAL_BATCH_ID) skipBytes(input, input.u16());
  if (optional & OPTIONAL_COMMITTED) skipAmount(input);
  if (optional & OPTIONAL_BLOB) skipBytes(input, input.u32());
}

/** `length` read first, then added: `input.position += input.u16()` would add it to the position before the read. */
function skipBytes(input: ByteReader, length: number): void {
  input.position += length;
}

/** What readEvent builds: everything (the default), or the event without its transaction records. */
export interface EventReadOptions {
  transactions?: boolean;
}

export function readEvent(input: ByteReader, options?: EventReadOptions): LedgerEvent {
  const type = EVENT_TYPES[input.u8()];
  if (type === undefined) throw new Error('unknown event type code');
  const event: LedgerEvent = { type, at: input.f64() };
  const parts = input.u8();
  if (parts & PART_BALANCES) {
    const count = input.u32();
    const balances = new Array(count);
    for (let index = 0; index < count; index += 1) balances[index] = readBalanceAt(input);
    event.balances = balances;
  }
  if (parts & PART_TRANSACTIONS && options?.transactions === false) {
    const count = input.u32();
    for (let index = 0; index < count; index += 1) skipTransaction(input);
  } else if (parts & PART_TRANSACTIONS) {
    const count = input.u32();
    const transactions = new Array(count);
    for (let index = 0; index < count; index += 1) transactions[index] = readTransaction(input);
    event.transactions = transactions;
  }
  if (parts & PART_POSTINGS) {
    const count = input.u32();
    const postings: Posting[] = new Array(count);
    for (let index = 0; index < count; index += 1) {
      const balanceId = input.shortString();
      const code = input.u8();
      const field = POSTING_FIELDS[code & ~POSTING_EFFECTIVE_AT];
      if (field === undefined) throw new Error('unknown posting field code');
      if (code & POSTING_EFFECTIVE_AT) {
        const effectiveAt = input.f64();
        postings[index] = { balance_id: balanceId, field, amount: readAmount(input), effective_at: effectiveAt };
      } else postings[index] = { balance_id: balanceId, field, amount: readAmount(input) };
    }
    event.postings = postings;
  }
  if (parts & PART_REST) Object.assign(event, readBlob<Partial<LedgerEvent>>(input));
  if (parts & PART_EXTERNAL_RECORDS) event.external_records = readExternalRecordChunks(input);
  if (parts & PART_RECONCILIATION_RESULTS) event.reconciliation_results = readResultChunks(input);
  return event;
}
