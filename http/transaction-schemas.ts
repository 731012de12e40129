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
  REFERENCE_LENGTH_MAX,
} from './common-schemas.js';
import { parseTimeInput } from './time-input.js';

/** Shares per side of a split. */
export const SPLIT_SHARES_MAX = 100;
/** Transactions per bulk request. */
export const BULK_TRANSACTIONS_MAX = 10_000;

const wholeNumberInput = z.union([z.number(), z.string(), z.bigint()]);
const decimalInput = z.union([z.number(), z.string(), z.bigint(), z.instanceof(DecimalLiteral)]);
export const optionalMetaData = z.union([metaDataSchema, z.null()]).optional().transform((value) => value ?? {});

const timeInput = z.string().max(64).optional().transform((text, context) => {
  if (text === undefined) return 0;
  const parsed = parseTimeInput(text);
  if (parsed.ok) return parsed.epochMs;
  context.addIssue({ code: 'custom', message: parsed.message });
  return z.NEVER;
});

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

/** A share request from its wire form, or a message saying what is wrong with it. */
function shareRequest(share: z.infer<typeof shareSchema>, precision: bigint): ShareCommand | string {
  if (share.precise_distribution !== undefined) {
    const exact = parsePreciseAmount(share.precise_distribution);
    if (!exact.ok) return `precise_distribution ${exact.message}`;
    return { identifier: share.identifier, distribution: exact.value.toString(), request: { kind: 'fixed', amount: exact.value } };
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
  return { identifier: share.identifier, distribution: text, request };
}

const transactionFields = {
  ...amountFields,
  currency: currencySchema,
  source: identifierSchema.optional(),
  destination: identifierSchema.optional(),
  sources: z.array(shareSchema).min(1).max(SPLIT_SHARES_MAX).optional(),
  destinations: z.array(shareSchema).min(1).max(SPLIT_SHARES_MAX).optional(),
  reference: z.string().max(REFERENCE_LENGTH_MAX).optional(),
  description: z.string().max(DESCRIPTION_LENGTH_MAX).optional(),
  meta_data: optionalMetaData,
  allow_overdraft: z.boolean().optional(),
  skip_queue: z.boolean().optional(),
  inflight: z.boolean().optional(),
  inflight_expiry_date: timeInput,
  inflight_commit_date: timeInput,
  scheduled_for: timeInput,
  atomic: z.boolean().optional(),
  dry_run: z.boolean().optional(),
};

type TransactionInput = z.infer<z.ZodObject<typeof transactionFields>>;

/**
 * The checks that look at several fields together. They run even when some field failed its own schema
 * (zod's `when`), so one answer names every bad field; each check therefore guards the types it reads.
 */
function checkTransaction(input: unknown, context: z.RefinementCtx, path: PropertyKey[] = []): void {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return;
  const fields = input as Record<string, unknown>;
  const issue = (message: string, ...at: PropertyKey[]): void => context.addIssue({ code: 'custom', message, path: [...path, ...at] });
  if ((fields.source === undefined) === (fields.sources === undefined)) issue('give exactly one of source and sources', 'source');
  if ((fields.destination === undefined) === (fields.destinations === undefined)) {
    issue('give exactly one of destination and destinations', 'destination');
  }
  const amount = resolveAmount(fields);
  if (!amount.ok) {
    issue(amount.message, amount.field);
    return;
  }
  for (const side of ['sources', 'destinations'] as const) {
    const shares = fields[side];
    if (!Array.isArray(shares)) continue;
    for (const [index, share] of shares.entries()) {
      if (typeof share !== 'object' || share === null) continue;
      const parsed = shareRequest(share as z.infer<typeof shareSchema>, amount.precision);
      if (typeof parsed === 'string') issue(parsed, side, index, 'distribution');
    }
  }
}

const always = { when: () => true };

/** The engine command for input that passed every check above. */
function toCommand(input: TransactionInput): CreateTransactionCommand {
  const amount = resolveAmount(input) as Extract<ExactAmount, { ok: true }>;
  const shares = (list: Array<z.infer<typeof shareSchema>> | undefined): ShareCommand[] | undefined =>
    list?.map((share) => shareRequest(share, amount.precision) as ShareCommand);
  const command: CreateTransactionCommand = {
    source: input.source ?? '',
    destination: input.destination ?? '',
    precise_amount: amount.precise_amount,
    precision: amount.precision,
    currency: input.currency,
    reference: input.reference ?? '',
    description: input.description ?? '',
    meta_data: input.meta_data,
    allow_overdraft: input.allow_overdraft ?? false,
    skip_queue: input.skip_queue ?? false,
    inflight: input.inflight ?? false,
    inflight_expiry_date: input.inflight_expiry_date,
    inflight_commit_date: input.inflight_commit_date,
    scheduled_for: input.scheduled_for,
    atomic: input.atomic ?? false,
  };
  const sources = shares(input.sources);
  const destinations = shares(input.destinations);
  if (sources) command.sources = sources;
  if (destinations) command.destinations = destinations;
  return command;
}

export const createTransactionSchema = z
  .object(transactionFields)
  .superRefine((input, context) => checkTransaction(input, context), always)
  .transform((input) => ({ command: toCommand(input), dry_run: input.dry_run ?? false }));

export const bulkSchema = z
  .object({
    transactions: z.array(z.object(transactionFields)).min(1).max(BULK_TRANSACTIONS_MAX),
    atomic: z.boolean().optional(),
    inflight: z.boolean().optional(),
    skip_queue: z.boolean().optional(),
    dry_run: z.boolean().optional(),
  })
  .superRefine((input, context) => {
    const items: unknown = (input as { transactions?: unknown } | null)?.transactions;
    if (!Array.isArray(items)) return;
    for (const [index, item] of items.entries()) checkTransaction(item, context, ['transactions', index]);
  }, always)
  .transform((input) => {
    const bulk: BulkCommand = {
      transactions: input.transactions.map(toCommand),
      atomic: input.atomic ?? false,
      inflight: input.inflight ?? false,
      skip_queue: input.skip_queue ?? false,
    };
    return { command: bulk, dry_run: input.dry_run ?? false };
  });

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
});

export const bulkVoidSchema = z.object({
  transaction_ids: z.array(identifierSchema).min(1).max(BULK_INFLIGHT_MAX),
});
