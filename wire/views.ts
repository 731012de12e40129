// Records as clients see them: times as ISO 8601 (the zero time for "unset"), exact amounts as bigint
// digits, the display `amount` as the double nearest the exact value, derived balance totals filled in.

import {
  availableAmount,
  balanceAmount,
  inflightAmount,
  type BalanceRecord,
  type BalanceTotals,
  type LedgerRecord,
  type MonitorRecord,
  type PeriodRecord,
  type SplitShare,
  type TransactionRecord,
} from '../engine/records.js';
import { z } from 'zod';
import { preciseToAmount, preciseToDecimalText } from './amounts.js';

export const ZERO_TIME = '0001-01-01T00:00:00Z';

/** The last time formatted: records decided in the same millisecond (most, under load) share it. */
let lastTimeMs = 0;
let lastTimeText = ZERO_TIME;

export function timeText(epochMs: number): string {
  if (epochMs === lastTimeMs) return lastTimeText;
  lastTimeText = epochMs === 0 ? ZERO_TIME : goTimeText(new Date(epochMs).toISOString());
  lastTimeMs = epochMs;
  return lastTimeText;
}

/**
 * An ISO 8601 time as Go writes RFC 3339 (Blnk's times): the fraction of a second without trailing
 * zeros, and none at all on a whole second (`2025-02-15T10:30:00Z`, `2025-02-15T10:30:00.12Z`).
 */
function goTimeText(iso: string): string {
  const dot = iso.lastIndexOf('.');
  if (dot < 0) return iso;
  const fraction = iso.slice(dot + 1, -1).replace(/0+$/, '');
  return fraction === '' ? `${iso.slice(0, dot)}Z` : `${iso.slice(0, dot + 1)}${fraction}Z`;
}

/** A time on the wire: RFC 3339 in UTC as Go writes it, ZERO_TIME when unset. */
export const timeTextSchema = z.string().meta({ description: `RFC 3339 time in UTC, fraction of a second without trailing zeros; ${ZERO_TIME} when unset`, example: '2026-05-04T10:20:30.25Z' });
export const metaDataJsonSchema = z.record(z.string(), z.unknown()).meta({ description: 'Free-form metadata (a JSON object)' });

/** What ledgerView renders, for the API reference (http/openapi/). */
export const ledgerJsonSchema = z.object({
  ledger_id: z.string(),
  name: z.string(),
  created_at: timeTextSchema,
  meta_data: metaDataJsonSchema,
}).meta({ id: 'Ledger' });

export function ledgerView(ledger: LedgerRecord): Record<string, unknown> {
  return {
    ledger_id: ledger.ledger_id,
    name: ledger.name,
    created_at: timeText(ledger.created_at),
    meta_data: ledger.meta_data,
  };
}

export const periodJsonSchema = z.object({
  period_id: z.string(),
  ledger_id: z.string(),
  closes_at: timeTextSchema.meta({ description: 'nothing dated at or before this time may move the ledger\'s balances' }),
  sealed_seq: z.number().int().meta({ description: 'the last log seq before the close: the log up to it holds every movement dated in the period' }),
  sealed_hash: z.string().meta({ description: 'checksum (hex) of the log record ending at sealed_seq: the position of the log\'s checksum chain the close seals' }),
  created_at: timeTextSchema,
}).meta({ id: 'Period' });

export function periodView(period: PeriodRecord): Record<string, unknown> {
  return {
    period_id: period.period_id,
    ledger_id: period.ledger_id,
    closes_at: timeText(period.closes_at),
    sealed_seq: period.sealed_seq,
    sealed_hash: period.sealed_hash,
    created_at: timeText(period.created_at),
  };
}

/** The amounts a balance shows, stored and derived, as exact integers in the smallest unit (amountsView). */
const amountsJsonShape = {
  balance: z.bigint(),
  credit_balance: z.bigint(),
  debit_balance: z.bigint(),
  inflight_balance: z.bigint(),
  inflight_credit_balance: z.bigint(),
  inflight_debit_balance: z.bigint(),
  available_balance: z.bigint(),
};

/** What balanceView renders. */
export const balanceJsonSchema = z.object({
  balance_id: z.string(),
  ledger_id: z.string(),
  identity_id: z.string(),
  indicator: z.string(),
  currency: z.string(),
  ...amountsJsonShape,
  version: z.number().int(),
  created_at: timeTextSchema,
  meta_data: metaDataJsonSchema,
  track_fund_lineage: z.boolean().meta({ description: 'Whether the balance follows its tagged funds (GET /balances/:id/lineage)' }),
  allocation_strategy: z.enum(['FIFO', 'LIFO', 'PROPORTIONAL']).meta({ description: 'How debits draw on tagged funds; FIFO unless set' }),
}).meta({ id: 'Balance' });

/** The stored totals and the amounts derived from them, in the order every balance answer shows them. */
function amountsView(totals: BalanceTotals): Record<string, bigint> {
  return {
    balance: balanceAmount(totals),
    credit_balance: totals.credit_balance,
    debit_balance: totals.debit_balance,
    inflight_balance: inflightAmount(totals),
    inflight_credit_balance: totals.inflight_credit_balance,
    inflight_debit_balance: totals.inflight_debit_balance,
    available_balance: availableAmount(totals),
  };
}

/** A balance's totals after one change (GET /balances/:id/history). */
export function balanceChangeView(change: BalanceTotals & { at: number; version: number }): Record<string, unknown> {
  return {
    at: timeText(change.at),
    version: change.version,
    ...amountsView(change),
  };
}

/** What balanceChangeView renders. */
export const balanceChangeJsonSchema = z.object({
  at: timeTextSchema,
  version: z.number().int(),
  ...amountsJsonShape,
}).meta({ id: 'BalanceChange' });

/** include_balances: the balances a write touched, as it left them (engine/resulting-balances.ts). */
export const resultingBalancesJsonSchema = z.array(balanceJsonSchema)
  .meta({ description: 'With include_balances=true: every balance the write touched, as of the write\'s own seq' });

export function balanceView(balance: BalanceRecord): Record<string, unknown> {
  return {
    balance_id: balance.balance_id,
    ledger_id: balance.ledger_id,
    identity_id: balance.identity_id,
    indicator: balance.indicator,
    currency: balance.currency,
    ...amountsView(balance),
    version: balance.version,
    created_at: timeText(balance.created_at),
    meta_data: balance.meta_data,
    // As Blnk shows every balance: whether it tracks lineage, and its strategy (FIFO by default).
    track_fund_lineage: balance.track_fund_lineage === true,
    allocation_strategy: balance.allocation_strategy ?? 'FIFO',
  };
}


/** What monitorView renders, for the API reference: the exact amounts are JSON integers of any size. */
export const monitorJsonSchema = z.object({
  monitor_id: z.string(),
  balance_id: z.string(),
  description: z.string(),
  call_back_url: z.string(),
  condition: z.object({ field: z.string(), operator: z.string(), value: z.number(), precision: z.bigint(), precise_value: z.bigint() }),
  created_at: timeTextSchema,
}).meta({ id: 'BalanceMonitor' });

/**
 * A balance monitor as Blnk shows one: the condition with its `value` in the units of its precision (a
 * display number), `precision`, and the exact `precise_value`.
 */
export function monitorView(monitor: MonitorRecord): Record<string, unknown> {
  const { field, operator, precise_value, precision } = monitor.condition;
  return {
    monitor_id: monitor.monitor_id,
    balance_id: monitor.balance_id,
    description: monitor.description,
    call_back_url: monitor.call_back_url,
    created_at: timeText(monitor.created_at),
    condition: { field, operator, value: preciseToAmount(precise_value, precision), precision, precise_value },
  };
}
