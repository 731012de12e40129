// Records to index rows and back. A row is an array in the layout's column order (what the writer sends);
// a selected row is an object keyed by column (what the readers get). The round trip is exact: amounts go
// through sortable text, metadata through JSON text, and anything JSON text would bend (integers beyond
// 2^53 inside metadata, split shares, rejections) through the `extra` column as msgpack.

import { Packr, Unpackr } from 'msgpackr';
import {
  availableAmount,
  balanceAmount,
  inflightAmount,
  OPTIONAL_TRANSACTION_FIELDS,
  type BalanceRecord,
  type BalanceTotals,
  type IdentityRecord,
  type LedgerRecord,
  type MetaData,
  type TransactionRecord,
} from '../engine/records.js';
import { amountFromKey, amountKey } from './sortable-amount.js';
import { integerOf } from './field-values.js';
import type { ReconciliationRecord } from '../engine/reconciliation-records.js';
import { toJsonText } from '../engine/exact-json.js';
import type { ExchangeTerms } from '../engine/records.js';
import type { SqlValue } from './sqlite-connection.js';

const packr = new Packr({ useRecords: false, useBigIntExtension: true });
const unpackr = new Unpackr({ useRecords: false, useBigIntExtension: true });

export type SelectedRow = Record<string, SqlValue>;

// ---- metadata as JSON text ----

function containsBigInt(value: unknown): boolean {
  if (typeof value === 'bigint') return true;
  if (typeof value !== 'object' || value === null) return false;
  for (const item of Object.values(value)) if (containsBigInt(item)) return true;
  return false;
}

// ---- the extra column ----

function extraText(extra: Record<string, unknown>): string | null {
  if (Object.keys(extra).length === 0) return null;
  return packr.pack(extra).toString('base64');
}

/** The exchange a transaction row's `extra` holds (engine/exchange.ts), if any: for reconciliation's candidates. */
export function exchangeOfExtra(extra: unknown): ExchangeTerms | undefined {
  if (typeof extra !== 'string') return undefined;
  return (unpackr.unpack(Buffer.from(extra, 'base64')) as { exchange?: ExchangeTerms }).exchange;
}

function readExtra(row: SelectedRow): Record<string, unknown> {
  const text = row.extra;
  return typeof text === 'string' ? (unpackr.unpack(Buffer.from(text, 'base64')) as Record<string, unknown>) : {};
}

/**
 * Metadata goes through `extra` as well only when JSON text could not carry it exactly. Without bigints
 * the native JSON.stringify writes the same text as toJsonText, faster.
 */
function exactMeta(meta: MetaData, extra: Record<string, unknown>): string {
  if (!containsBigInt(meta)) return JSON.stringify(meta);
  extra.meta_data = meta;
  // Bigints as plain digits, so json_extract sees numbers.
  return toJsonText(meta);
}

function readMeta(row: SelectedRow, extra: Record<string, unknown>): MetaData {
  if (extra.meta_data !== undefined) return extra.meta_data as MetaData;
  return JSON.parse(text(row.meta_data)) as MetaData;
}

const text = (value: SqlValue | undefined): string => (typeof value === 'string' ? value : '');
const integer = (value: SqlValue | undefined): number => (typeof value === 'number' ? value : 0);

// ---- ledgers ----

export function ledgerRow(ledger: LedgerRecord): SqlValue[] {
  const extra: Record<string, unknown> = {};
  const meta = exactMeta(ledger.meta_data, extra);
  return [ledger.ledger_id, ledger.name, ledger.created_at, meta, extraText(extra)];
}

export function ledgerFromRow(row: SelectedRow): LedgerRecord {
  const extra = readExtra(row);
  return { ledger_id: text(row.ledger_id), name: text(row.name), created_at: integer(row.created_at), meta_data: readMeta(row, extra) };
}

// ---- balances ----

export function balanceRow(balance: BalanceRecord): SqlValue[] {
  const extra: Record<string, unknown> = {};
  const meta = exactMeta(balance.meta_data, extra);
  // Fund lineage settings (rare) have no column: they ride in `extra`.
  if (balance.track_fund_lineage !== undefined) extra.track_fund_lineage = balance.track_fund_lineage;
  if (balance.allocation_strategy !== undefined) extra.allocation_strategy = balance.allocation_strategy;
  return [
    balance.balance_id, balance.ledger_id, balance.identity_id, balance.indicator, balance.currency,
    amountKey(balanceAmount(balance)), amountKey(balance.credit_balance), amountKey(balance.debit_balance),
    amountKey(inflightAmount(balance)), amountKey(balance.inflight_credit_balance), amountKey(balance.inflight_debit_balance),
    amountKey(availableAmount(balance)), balance.version, balance.created_at, meta, extraText(extra),
  ];
}

export function balanceFromRow(row: SelectedRow): BalanceRecord {
  const extra = readExtra(row);
  const balance: BalanceRecord = {
    balance_id: text(row.balance_id),
    ledger_id: text(row.ledger_id),
    identity_id: text(row.identity_id),
    indicator: text(row.indicator),
    currency: text(row.currency),
    credit_balance: amountFromKey(text(row.credit_balance)),
    debit_balance: amountFromKey(text(row.debit_balance)),
    inflight_credit_balance: amountFromKey(text(row.inflight_credit_balance)),
    inflight_debit_balance: amountFromKey(text(row.inflight_debit_balance)),
    version: integer(row.version),
    created_at: integer(row.created_at),
    meta_data: readMeta(row, extra),
  };
  if (extra.track_fund_lineage === true) balance.track_fund_lineage = true;
  if (extra.allocation_strategy !== undefined) balance.allocation_strategy = extra.allocation_strategy as BalanceRecord['allocation_strategy'];
  return balance;
}

// ---- transactions ----

/** Fields of a transaction record that have no column of their own. */
const TRANSACTION_EXTRAS = OPTIONAL_TRANSACTION_FIELDS.filter((field) => field !== 'batch_id');

export function transactionRow(record: TransactionRecord): SqlValue[] {
  const extra: Record<string, unknown> = {};
  for (const field of TRANSACTION_EXTRAS) if (record[field] !== undefined) extra[field] = record[field];
  const meta = exactMeta(record.meta_data, extra);
  return [
    record.transaction_id, record.parent_transaction, record.source, record.destination, record.reference,
    record.currency, amountKey(record.precise_amount), amountKey(record.precision), record.description,
    record.status, record.hash, record.allow_overdraft ? 1 : 0, record.inflight ? 1 : 0, record.skip_queue ? 1 : 0,
    record.created_at, record.scheduled_for, record.inflight_expiry_date, record.inflight_commit_date,
    record.batch_id ?? '', meta, extraText(extra),
  ];
}

export function transactionFromRow(row: SelectedRow): TransactionRecord {
  const extra = readExtra(row);
  const record: TransactionRecord = {
    transaction_id: text(row.transaction_id),
    parent_transaction: text(row.parent_transaction),
    source: text(row.source),
    destination: text(row.destination),
    reference: text(row.reference),
    currency: text(row.currency),
    precise_amount: amountFromKey(text(row.precise_amount)),
    precision: amountFromKey(text(row.precision)),
    description: text(row.description),
    status: text(row.status) as TransactionRecord['status'],
    hash: text(row.hash),
    allow_overdraft: row.allow_overdraft === 1,
    inflight: row.inflight === 1,
    skip_queue: row.skip_queue === 1,
    created_at: integer(row.created_at),
    inflight_expiry_date: integer(row.inflight_expiry_date),
    inflight_commit_date: integer(row.inflight_commit_date),
    scheduled_for: integer(row.scheduled_for),
    meta_data: readMeta(row, extra),
  };
  for (const field of TRANSACTION_EXTRAS) {
    if (extra[field] !== undefined) (record as unknown as Record<string, unknown>)[field] = extra[field];
  }
  const batchId = text(row.batch_id);
  if (batchId !== '') record.batch_id = batchId;
  return record;
}

// ---- identities ----

const IDENTITY_TEXT_FIELDS = [
  'identity_type', 'organization_name', 'first_name', 'last_name', 'other_names', 'gender',
] as const;
const IDENTITY_CONTACT_FIELDS = [
  'email_address', 'phone_number', 'nationality', 'category', 'street', 'city', 'state', 'country', 'post_code',
] as const;

export function identityRow(identity: IdentityRecord): SqlValue[] {
  const extra: Record<string, unknown> = {};
  const meta = exactMeta(identity.meta_data, extra);
  return [
    identity.identity_id,
    ...IDENTITY_TEXT_FIELDS.map((field) => identity[field]),
    identity.dob,
    ...IDENTITY_CONTACT_FIELDS.map((field) => identity[field]),
    identity.created_at, meta, extraText(extra),
  ];
}

export function identityFromRow(row: SelectedRow): IdentityRecord {
  const extra = readExtra(row);
  const identity: Record<string, unknown> = { identity_id: text(row.identity_id) };
  for (const field of IDENTITY_TEXT_FIELDS) identity[field] = text(row[field]);
  identity.dob = integer(row.dob);
  for (const field of IDENTITY_CONTACT_FIELDS) identity[field] = text(row[field]);
  identity.meta_data = readMeta(row, extra);
  identity.created_at = integer(row.created_at);
  return identity as unknown as IdentityRecord;
}

// ---- reconciliations ----

export function reconciliationRow(run: ReconciliationRecord): SqlValue[] {
  return [
    run.reconciliation_id, run.upload_id, run.source, run.strategy, run.grouping_criteria, JSON.stringify(run.matching_rule_ids),
    run.is_dry_run ? 1 : 0, run.status, run.started_at, run.completed_at, run.matched_transactions, run.unmatched_transactions,
    run.processed_count, run.total_count, run.failure_reason, run.attempts,
  ];
}

export function reconciliationFromRow(row: SelectedRow): ReconciliationRecord {
  return {
    reconciliation_id: text(row.reconciliation_id),
    upload_id: text(row.upload_id),
    source: text(row.source),
    strategy: text(row.strategy) as ReconciliationRecord['strategy'],
    grouping_criteria: text(row.grouping_criteria),
    matching_rule_ids: JSON.parse(text(row.matching_rule_ids) || '[]') as string[],
    is_dry_run: row.is_dry_run === 1,
    status: text(row.status) as ReconciliationRecord['status'],
    started_at: integer(row.started_at),
    completed_at: integer(row.completed_at),
    matched_transactions: integer(row.matched_transactions),
    unmatched_transactions: integer(row.unmatched_transactions),
    processed_count: integer(row.processed_count),
    total_count: integer(row.total_count),
    failure_reason: text(row.failure_reason),
    attempts: integer(row.attempts),
  };
}
