// Request bodies for transactions. Amounts arrive as `precise_amount` (integer or digit string, exact)
// or `amount` (decimal, converted with `precision` and refused if it would need rounding); both may be
// sent only if they agree. The output is the engine's command with exact bigints.

import { z } from 'zod';
import type { CreateTransactionCommand } from '../engine/commands.js';
import { amountToPrecise, DecimalLiteral, parsePreciseAmount, parsePrecision } from './amounts.js';
import {
  currencySchema,
  DESCRIPTION_LENGTH_MAX,
  identifierSchema,
  metaDataSchema,
  REFERENCE_LENGTH_MAX,
} from './common-schemas.js';

const wholeNumberInput = z.union([z.number(), z.string(), z.bigint()]);
const decimalInput = z.union([z.number(), z.string(), z.bigint(), z.instanceof(DecimalLiteral)]);
const optionalMetaData = z.union([metaDataSchema, z.null()]).optional().transform((value) => value ?? {});

export const amountFields = {
  amount: decimalInput.optional(),
  precise_amount: wholeNumberInput.optional(),
  precision: wholeNumberInput.optional(),
};

type AmountFields = { amount?: unknown; precise_amount?: unknown; precision?: unknown };

/** Resolves the amount fields to exact values, reporting problems on the field that caused them. */
export function exactAmount(
  input: AmountFields,
  context: z.RefinementCtx,
): { precise_amount: bigint; precision: bigint } | undefined {
  const precision = input.precision === undefined ? { ok: true as const, value: 1n } : parsePrecision(input.precision);
  if (!precision.ok) {
    context.addIssue({ code: 'custom', message: precision.message, path: ['precision'] });
    return undefined;
  }
  const fromPrecise = input.precise_amount === undefined ? undefined : parsePreciseAmount(input.precise_amount);
  const fromAmount = input.amount === undefined ? undefined : amountToPrecise(input.amount, precision.value);
  if (fromPrecise && !fromPrecise.ok) {
    context.addIssue({ code: 'custom', message: fromPrecise.message, path: ['precise_amount'] });
    return undefined;
  }
  if (fromAmount && !fromAmount.ok) {
    context.addIssue({ code: 'custom', message: fromAmount.message, path: ['amount'] });
    return undefined;
  }
  if (!fromPrecise && !fromAmount) {
    context.addIssue({ code: 'custom', message: 'amount or precise_amount is required', path: ['amount'] });
    return undefined;
  }
  if (fromPrecise && fromAmount && fromPrecise.value !== fromAmount.value) {
    context.addIssue({ code: 'custom', message: 'amount × precision does not equal precise_amount', path: ['amount'] });
    return undefined;
  }
  return { precise_amount: (fromPrecise ?? fromAmount)!.value as bigint, precision: precision.value };
}

export const createTransactionSchema = z
  .object({
    ...amountFields,
    currency: currencySchema,
    source: identifierSchema,
    destination: identifierSchema,
    reference: z.string().max(REFERENCE_LENGTH_MAX).optional(),
    description: z.string().max(DESCRIPTION_LENGTH_MAX).optional(),
    meta_data: optionalMetaData,
    allow_overdraft: z.boolean().optional(),
    skip_queue: z.boolean().optional(),
  })
  .transform((input, context): CreateTransactionCommand => {
    const exact = exactAmount(input, context);
    if (!exact) return z.NEVER;
    return {
      source: input.source,
      destination: input.destination,
      precise_amount: exact.precise_amount,
      precision: exact.precision,
      currency: input.currency,
      reference: input.reference ?? '',
      description: input.description ?? '',
      meta_data: input.meta_data,
      allow_overdraft: input.allow_overdraft ?? false,
      skip_queue: input.skip_queue ?? false,
    };
  });
