// Request bodies for transactions. Amounts arrive as `precise_amount` (integer or digit string, exact)
// or `amount` (decimal, converted with `precision` and refused if it would need rounding); both may be
// sent only if they agree. Split shares, times and flags are checked here too; the output is the
// engine's command with exact bigints and epoch-millisecond times.

import { z } from 'zod';
import type { BulkCommand, CreateTransactionCommand, ShareCommand } from '../engine/commands.js';
import type { ShareRequest } from '../engine/split-distribution.js';
import { amountToPrecise, DecimalLiteral, parsePreciseAmount, parsePrecision } from './amounts.js';
import {
  currencySchema,
  DESCRIPTION_LENGTH_MAX,
  identifierSchema,
  metaDataSchema,
  normalizeMetaData,
  plainObjectSchema,
  REFERENCE_LENGTH_MAX,
} from './common-schemas.js';
import { parseTimeInput } from './time-input.js';
import { validateThen, type ReportIssue } from './validation.js';

/** Shares per side of a split. */
export const SPLIT_SHARES_MAX = 100;
/** Transactions per bulk request. */
export const BULK_TRANSACTIONS_MAX = 10_000;
/**
 * Legs one request may ask for, all items of a bulk together. A transaction's legs are the child
 * transactions it can produce: one for a plain transfer, at most sources + destinations - 1 for a split
 * (its shares are paired in one walk). Without this bound, 600 splits of 100 x 100 shares (5 MB of JSON)
 * became one event of 120,000 records that held the event loop for seconds.
 */
export const REQUEST_LEGS_MAX = 10_000;

/** The most legs a transaction can produce (see REQUEST_LEGS_MAX). */
export function legCount(command: CreateTransactionCommand): number {
  return (command.sources?.length ?? 1) + (command.destinations?.length ?? 1) - 1;
}

const wholeNumberInput = z.union([z.number(), z.string(), z.bigint()]);
const decimalInput = z.union([z.number(), z.string(), z.bigint(), z.instanceof(DecimalLiteral)]);
export const optionalMetaData = z.union([metaDataSchema, z.null()]).optional().transform((value) => value ?? {});

export const amountFields = {
  amount: decimalInput.optional(),
  precise_amount: wholeNumberInput.optional(),
  precision: wholeNumberInput.optional(),
};

type AmountFields = { amount?: unknown; precise_amount?: unknown; precision?: unknown };

export type ExactAmount =
  | { ok: true; precise_amount: bigint; precision: bigint }
  | { ok: false; field: string; message: string };

/**
 * Resolves the amount fields to exact values, or names the field at fault. `precision` overrides the
 * body's (inflight commits use the hold's); `required: false` lets both amounts be absent (meaning 0).
 */
export function resolveAmount(
  input: AmountFields,
  options: { allowZero?: boolean; required?: boolean; precision?: bigint } = {},
): ExactAmount {
  const fail = (field: string, message: string): ExactAmount => ({ ok: false, field, message });
  const precision = options.precision !== undefined
    ? { ok: true as const, value: options.precision }
    : input.precision === undefined ? { ok: true as const, value: 1n } : parsePrecision(input.precision);
  if (!precision.ok) return fail('precision', precision.message);
  const allowZero = options.allowZero === true;
  const fromPrecise = input.precise_amount === undefined ? undefined : parsePreciseAmount(input.precise_amount, { allowZero });
  const fromAmount = input.amount === undefined ? undefined : amountToPrecise(input.amount, precision.value, { allowZero });
  if (fromPrecise && !fromPrecise.ok) return fail('precise_amount', fromPrecise.message);
  if (fromAmount && !fromAmount.ok) return fail('amount', fromAmount.message);
  if (!fromPrecise && !fromAmount) {
    if (options.required === false) return { ok: true, precise_amount: 0n, precision: precision.value };
    return fail('amount', 'amount or precise_amount is required');
  }
  if (fromPrecise && fromAmount && fromPrecise.value !== fromAmount.value) {
    return fail('amount', 'amount × precision does not equal precise_amount');
  }
  return { ok: true, precise_amount: (fromPrecise ?? fromAmount)!.value as bigint, precision: precision.value };
}

const shareSchema = z.object({
  identifier: identifierSchema,
  distribution: z.string().max(64).optional(),
  precise_distribution: wholeNumberInput.optional(),
});

const PERCENT = /^([0-9]+)(?:\.([0-9]{1,18}))?%$/;

/**
 * A share request from its wire form, or a message saying what is wrong with it. The share may be raw
 * input whose shape failed (finishTransaction runs on it too), so no field's type is taken for granted.
 */
function shareRequest(share: Record<string, unknown>, precision: bigint): ShareCommand | string {
  const identifier = typeof share.identifier === 'string' ? share.identifier : '';
  if (share.precise_distribution !== undefined) {
    const exact = parsePreciseAmount(share.precise_distribution);
    if (!exact.ok) return `precise_distribution ${exact.message}`;
    return { identifier, distribution: exact.value.toString(), request: { kind: 'fixed', amount: exact.value } };
  }
  if (share.distribution !== undefined && typeof share.distribution !== 'string') {
    return 'distribution must be a string: an amount, a percentage like 25% or "left"';
  }
  const text = (share.distribution ?? '').trim();
  if (text === '') return 'distribution is required';
  let request: ShareRequest;
  const percent = PERCENT.exec(text);
  if (text.toLowerCase() === 'left') request = { kind: 'left' };
  else if (percent) {
    const fraction = percent[2] ?? '';
    request = { kind: 'percent', numerator: BigInt((percent[1] as string) + fraction), denominator: 10n ** BigInt(fraction.length) };
  } else {
    const fixed = amountToPrecise(text, precision);
    if (!fixed.ok) return `distribution must be an amount, a percentage like 25% or "left" (${fixed.message})`;
    request = { kind: 'fixed', amount: fixed.value };
  }
  return { identifier, distribution: text, request };
}

/** Shapes only: conversions and cross-field checks happen in `finishTransaction`, outside zod. */
const transactionFields = {
  amount: z.unknown().optional(),
  precise_amount: z.unknown().optional(),
  precision: z.unknown().optional(),
  currency: currencySchema,
  source: identifierSchema.optional(),
  destination: identifierSchema.optional(),
  sources: z.array(shareSchema).min(1).max(SPLIT_SHARES_MAX).optional(),
  destinations: z.array(shareSchema).min(1).max(SPLIT_SHARES_MAX).optional(),
  reference: z.string().max(REFERENCE_LENGTH_MAX).optional(),
  description: z.string().max(DESCRIPTION_LENGTH_MAX).optional(),
  meta_data: plainObjectSchema.nullable().optional(),
  allow_overdraft: z.boolean().optional(),
  skip_queue: z.boolean().optional(),
  inflight: z.boolean().optional(),
  inflight_expiry_date: z.string().max(64).optional(),
  inflight_commit_date: z.string().max(64).optional(),
  scheduled_for: z.string().max(64).optional(),
  atomic: z.boolean().optional(),
  dry_run: z.boolean().optional(),
};

const transactionSchema = z.object(transactionFields);
type TransactionInput = z.output<typeof transactionSchema>;

const TIME_FIELDS = ['inflight_expiry_date', 'inflight_commit_date', 'scheduled_for'] as const;

/**
 * The checks that look at several fields together and the conversions to exact values. They run on the
 * raw input too when some field failed its shape, so one answer names every bad field; hence every
 * read is guarded. Returns the command when nothing was wrong.
 */
function finishTransaction(parsed: TransactionInput | undefined, raw: unknown, report: ReportIssue, path: PropertyKey[] = []): CreateTransactionCommand | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  const fields = raw as Record<string, unknown>;
  const issue = (message: string, ...at: PropertyKey[]): void => report([...path, ...at], message);
  let failed = false;
  const fail = (message: string, ...at: PropertyKey[]): void => {
    failed = true;
    issue(message, ...at);
  };
  if ((fields.source === undefined) === (fields.sources === undefined)) fail('give exactly one of source and sources', 'source');
  if ((fields.destination === undefined) === (fields.destinations === undefined)) {
    fail('give exactly one of destination and destinations', 'destination');
  }
  const amount = resolveAmount(fields);
  if (!amount.ok) fail(amount.message, amount.field);
  const times = { inflight_expiry_date: 0, inflight_commit_date: 0, scheduled_for: 0 };
  for (const field of TIME_FIELDS) {
    const text = fields[field];
    if (typeof text !== 'string') continue;
    const time = parseTimeInput(text);
    if (time.ok) times[field] = time.epochMs;
    else fail(time.message, field);
  }
  let metaData: Record<string, unknown> = {};
  if (typeof fields.meta_data === 'object' && fields.meta_data !== null && !Array.isArray(fields.meta_data)) {
    const normalized = normalizeMetaData(fields.meta_data as Record<string, unknown>);
    if (typeof normalized === 'string') fail(normalized, 'meta_data');
    else metaData = normalized;
  }
  const shares: Partial<Record<'sources' | 'destinations', ShareCommand[]>> = {};
  if (amount.ok) {
    for (const side of ['sources', 'destinations'] as const) {
      const list = fields[side];
      if (!Array.isArray(list)) continue;
      const commands: ShareCommand[] = [];
      for (const [index, share] of list.entries()) {
        if (typeof share !== 'object' || share === null) continue;
        const request = shareRequest(share as Record<string, unknown>, amount.precision);
        if (typeof request === 'string') fail(request, side, index, 'distribution');
        else commands.push(request);
      }
      shares[side] = commands;
    }
  }
  if (failed || !parsed || !amount.ok) return undefined;
  const command: CreateTransactionCommand = {
    source: parsed.source ?? '',
    destination: parsed.destination ?? '',
    precise_amount: amount.precise_amount,
    precision: amount.precision,
    currency: parsed.currency,
    reference: parsed.reference ?? '',
    description: parsed.description ?? '',
    meta_data: metaData,
    allow_overdraft: parsed.allow_overdraft ?? false,
    skip_queue: parsed.skip_queue ?? false,
    inflight: parsed.inflight ?? false,
    ...times,
    atomic: parsed.atomic ?? false,
  };
  if (shares.sources) command.sources = shares.sources;
  if (shares.destinations) command.destinations = shares.destinations;
  return command;
}

export interface ValidatedTransaction {
  command: CreateTransactionCommand;
  dry_run: boolean;
}

export function validateTransaction(input: unknown): ValidatedTransaction {
  return validateThen(transactionSchema, input, (parsed, raw, report) => {
    const command = finishTransaction(parsed, raw, report);
    return command && { command, dry_run: parsed?.dry_run ?? false };
  });
}

const bulkShape = z.object({
  transactions: z.array(transactionSchema).min(1).max(BULK_TRANSACTIONS_MAX),
  atomic: z.boolean().optional(),
  inflight: z.boolean().optional(),
  skip_queue: z.boolean().optional(),
  dry_run: z.boolean().optional(),
});

export interface ValidatedBulk {
  command: BulkCommand;
  dry_run: boolean;
}

export function validateBulk(input: unknown): ValidatedBulk {
  return validateThen(bulkShape, input, (parsed, raw, report) => {
    const items = (raw as { transactions?: unknown } | null)?.transactions;
    if (!Array.isArray(items)) return undefined;
    const transactions: CreateTransactionCommand[] = [];
    for (const [index, item] of items.entries()) {
      const command = finishTransaction(parsed?.transactions[index], item, report, ['transactions', index]);
      if (command) transactions.push(command);
    }
    if (!parsed || transactions.length !== items.length) return undefined;
    const legs = transactions.reduce((total, command) => total + legCount(command), 0);
    if (legs > REQUEST_LEGS_MAX) {
      report(['transactions'], `the batch asks for ${legs} legs; at most ${REQUEST_LEGS_MAX} in one request (a split counts sources + destinations - 1)`);
      return undefined;
    }
    return {
      command: {
        transactions,
        atomic: parsed.atomic ?? false,
        inflight: parsed.inflight ?? false,
        skip_queue: parsed.skip_queue ?? false,
      },
      dry_run: parsed.dry_run ?? false,
    };
  });
}

/** Inflight commit/void body; `status` is checked by the route first (it has its own error code). */
export const inflightActionSchema = z.object({
  status: z.string(),
  amount: decimalInput.optional(),
  precise_amount: wholeNumberInput.optional(),
  skip_queue: z.boolean().optional(),
  dry_run: z.boolean().optional(),
});

export const refundSchema = z.object({
  skip_queue: z.boolean().optional(),
  dry_run: z.boolean().optional(),
  description: z.string().max(DESCRIPTION_LENGTH_MAX).optional(),
  meta_data: optionalMetaData,
});

export const BULK_INFLIGHT_MAX = 100;

export const bulkCommitSchema = z.object({
  transactions: z.array(z.object({
    transaction_id: identifierSchema,
    amount: decimalInput.optional(),
    precise_amount: wholeNumberInput.optional(),
  })).min(1).max(BULK_INFLIGHT_MAX),
  dry_run: z.boolean().optional(),
});

export const bulkVoidSchema = z.object({
  transaction_ids: z.array(identifierSchema).min(1).max(BULK_INFLIGHT_MAX),
  dry_run: z.boolean().optional(),
});
