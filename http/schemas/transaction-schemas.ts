// Request body shapes for transactions, with their bounds: what each field may be, and nothing more.
// Turning a shape into the engine's command (exact amounts, split shares, times, the checks that span
// several fields) is transaction-commands.ts.

import { z } from 'zod';
import { BULK_HOLD_ACTIONS_MAX } from '../../engine/decide-hold-batches.js';
import { PRECONDITION_FIELDS, PRECONDITION_OPERATORS, PRECONDITIONS_MAX } from '../../engine/precondition.js';
import { DecimalLiteral } from '../../wire/amounts.js';
import { ROUNDING_RULES } from '../../engine/exchange-rate.js';
import { currencySchema, DESCRIPTION_LENGTH_MAX, identifierSchema, optionalMetaData, plainObjectSchema, REFERENCE_LENGTH_MAX } from './common-schemas.js';

/** Shares per side of a split. */
export const SPLIT_SHARES_MAX = 100;
/** Transactions per bulk request. */
export const BULK_TRANSACTIONS_MAX = 10_000;
/** Characters of a time field (ISO 8601 or `YYYY-MM-DD hh:mm:ss`). */
const TIME_TEXT_LENGTH_MAX = 64;
/** Characters of an exchange rate's decimal text (its significant digits are bounded on conversion). */
const RATE_TEXT_LENGTH_MAX = 64;

/** A whole amount: a safe integer, a bigint from the lossless parser, or a string of digits (checked on conversion). */
export const wholeNumberInput = z.union([z.number(), z.string(), z.bigint()]);
/** A decimal amount: also a DecimalLiteral, the exact text of a number a double would change. */
export const decimalInput = z.union([z.number(), z.string(), z.bigint(), z.instanceof(DecimalLiteral)]);

export const shareShape = z.object({
  identifier: identifierSchema,
  distribution: z.string().max(64).optional(),
  precise_distribution: wholeNumberInput.optional(),
});

/**
 * A precondition (engine/preconditions.ts): the balance as the legs name one, and a version, a condition
 * on a field, or both (checked on conversion, transaction-commands.ts).
 */
export const preconditionShape = z.object({
  balance_id: identifierSchema,
  version: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
  field: z.enum(PRECONDITION_FIELDS, { message: `must be one of ${PRECONDITION_FIELDS.join(', ')}` }).optional(),
  operator: z.enum(PRECONDITION_OPERATORS, { message: `must be one of ${PRECONDITION_OPERATORS.join(' ')}` }).optional(),
  // An exact integer in the smallest unit, negative allowed (balances go below zero).
  precise_value: wholeNumberInput.optional(),
});
export const preconditionsShape = z.array(preconditionShape).max(PRECONDITIONS_MAX, `at most ${PRECONDITIONS_MAX} preconditions`);

/**
 * The query of a write that can answer with the balances it touched (engine/resulting-balances.ts):
 * `include_balances=true`. Only `true` and `false`: anything else is refused, not read as false.
 */
export const includeBalancesQuery = z.object({
  include_balances: z.enum(['true', 'false'], { message: 'must be true or false' }).optional()
    .meta({ description: 'true: the answer adds `balances`, every balance the write touched as of its own seq' }),
});

/**
 * An exchange's rate (engine/exchange.ts): decimal text (`"1.0845"`), or a pair of whole numbers; its
 * bounds (18 significant digits, 36 digits a part, above zero) are checked on conversion.
 */
export const rateShape = z.union([
  z.string().max(RATE_TEXT_LENGTH_MAX),
  z.object({ numerator: wholeNumberInput, denominator: wholeNumberInput }),
]).meta({ description: 'Destination units per source unit (major units): decimal text of at most 18 significant digits, or {numerator, denominator}' });

export const transactionShape = z.object({
  amount: decimalInput.optional(),
  precise_amount: wholeNumberInput.optional(),
  precision: wholeNumberInput.optional(),
  currency: currencySchema,
  source: identifierSchema.optional(),
  destination: identifierSchema.optional(),
  sources: z.array(shareShape).min(1).max(SPLIT_SHARES_MAX).optional(),
  destinations: z.array(shareShape).min(1).max(SPLIT_SHARES_MAX).optional(),
  reference: z.string().max(REFERENCE_LENGTH_MAX).optional(),
  // Required, as Blnk requires it (its validation.Required: not empty).
  description: z.string({ message: 'description is required' }).min(1, 'cannot be blank').max(DESCRIPTION_LENGTH_MAX),
  // Metadata is normalized (and its limits checked) on conversion, where it is named if refused.
  meta_data: plainObjectSchema.nullable().optional(),
  allow_overdraft: z.boolean().optional(),
  // Blnk's floor under the source, in major units like `amount` (null as Go reads it: none).
  overdraft_limit: decimalInput.nullable().optional(),
  skip_queue: z.boolean().optional(),
  inflight: z.boolean().optional(),
  inflight_expiry_date: z.string().max(TIME_TEXT_LENGTH_MAX).optional(),
  inflight_commit_date: z.string().max(TIME_TEXT_LENGTH_MAX).optional(),
  scheduled_for: z.string().max(TIME_TEXT_LENGTH_MAX).optional(),
  effective_date: z.string().max(TIME_TEXT_LENGTH_MAX).optional(),
  atomic: z.boolean().optional(),
  preconditions: preconditionsShape.optional(),
  // An exchange between currencies (engine/exchange.ts): all four, or none but rounding.
  rate: rateShape.optional(),
  destination_currency: currencySchema.optional(),
  destination_precision: wholeNumberInput.optional(),
  rounding: z.enum(ROUNDING_RULES, { message: `must be one of ${ROUNDING_RULES.join(', ')}` }).optional(),
  dry_run: z.boolean().optional(),
});
export type TransactionShape = z.output<typeof transactionShape>;

export const bulkShape = z.object({
  transactions: z.array(transactionShape).min(1).max(BULK_TRANSACTIONS_MAX),
  atomic: z.boolean().optional(),
  inflight: z.boolean().optional(),
  skip_queue: z.boolean().optional(),
  run_async: z.boolean().optional(),
  dry_run: z.boolean().optional(),
});

/** Inflight commit/void body; `status` is checked by the route first (it has its own error code). */
export const inflightActionSchema = z.object({
  status: z.string(),
  amount: decimalInput.optional(),
  precise_amount: wholeNumberInput.optional(),
  skip_queue: z.boolean().optional(),
  preconditions: preconditionsShape.optional(),
  dry_run: z.boolean().optional(),
});

export const refundSchema = z.object({
  skip_queue: z.boolean().optional(),
  dry_run: z.boolean().optional(),
  description: z.string().max(DESCRIPTION_LENGTH_MAX).optional(),
  meta_data: optionalMetaData.transform((value) => value ?? {}),
  // The refund's own overdraft terms (none are inherited; docs/decisions-blnk.md), the limit in major
  // units at the original's precision.
  allow_overdraft: z.boolean().optional(),
  overdraft_limit: decimalInput.nullable().optional(),
});

export const bulkCommitSchema = z.object({
  transactions: z.array(z.object({
    transaction_id: identifierSchema,
    amount: decimalInput.optional(),
    precise_amount: wholeNumberInput.optional(),
    preconditions: preconditionsShape.optional(),
  })).min(1).max(BULK_HOLD_ACTIONS_MAX),
  skip_queue: z.boolean().optional(),
  dry_run: z.boolean().optional(),
});

export const bulkVoidSchema = z.object({
  // Blnk's bare ids; or, for a hold whose void carries preconditions, the id with them.
  transaction_ids: z.array(z.union([identifierSchema, z.object({ transaction_id: identifierSchema, preconditions: preconditionsShape.optional() })]))
    .min(1).max(BULK_HOLD_ACTIONS_MAX),
  skip_queue: z.boolean().optional(),
  dry_run: z.boolean().optional(),
});
