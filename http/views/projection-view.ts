// Dry-run projections on the wire: integers as strings (they may exceed what a double holds), display
// amounts as numbers, and for every balance involved its six amounts now (`current_*`) and after the
// operation (`resulting_*`), and the fund allocation a debit of a balance that tracks lineage would make.
// Rejections inside a dry run are part of the answer, not errors.

import type { BalanceAmounts, BalanceProjection, Projection } from '../../engine/projection.js';
import { z } from 'zod';
import { preciseToAmount } from '../../wire/amounts.js';
import type { Rejection } from '../../engine/rejections.js';

const AMOUNT_NAMES = ['balance', 'available', 'credit_balance', 'debit_balance', 'inflight_debit_balance', 'inflight_credit_balance'] as const;
const integerText = z.string().regex(/^-?[0-9]+$/);
const projectedBalanceSchema = z.object({
  balance_id: z.string(),
  role: z.string(),
  currency: z.string(),
  ...Object.fromEntries(AMOUNT_NAMES.flatMap((name) => [[`current_${name}`, integerText], [`resulting_${name}`, integerText]])),
});

/** A refusal inside an answer (a dry run's, a bulk's failed item): its code, and the preconditions that failed. */
export const rejectionJsonSchema = z.object({
  code: z.string(), reason: z.string(), message: z.string(),
  preconditions: z.array(z.object({
    index: z.number().int(), balance_id: z.string(), field: z.string(), operator: z.string(), expected: integerText, found: integerText.nullable(),
  })).optional().meta({ description: 'TXN_PRECONDITION_FAILED: every precondition that failed (or would fail)' }),
});

/** A refusal as rejectionJsonSchema shows it (amounts as integer text). */
export function rejectionView(rejection: Rejection): z.input<typeof rejectionJsonSchema> {
  const { code, reason, message, preconditions } = rejection;
  if (!preconditions) return { code, reason, message };
  return {
    code, reason, message,
    preconditions: preconditions.map((failure) => ({ ...failure, expected: String(failure.expected), found: failure.found === null ? null : String(failure.found) })),
  };
}

/** What projectionView renders (a dry run's answer), for the API reference (openapi/). */
export const projectionJsonSchema = z.object({
  dry_run: z.literal(true),
  would_apply: z.boolean(),
  operation: z.string(),
  status: z.string().optional(),
  rejection: rejectionJsonSchema.optional(),
  reference: z.string().optional(),
  currency: z.string().optional(),
  amount: z.number().optional(),
  precise_amount: integerText.optional(),
  precision: z.bigint().optional(),
  legs: z.array(z.object({ identifier: z.string(), role: z.string(), precise_amount: integerText, amount: z.number() })).optional(),
  fund_allocation: z.array(z.object({ provider: z.string(), precise_amount: integerText })).optional()
    .meta({ description: 'A debit of a balance that tracks fund lineage: the tagged funds it would draw on' }),
  notes: z.array(z.string()).optional(),
  transaction_count: z.number().int().optional(),
  failed_index: z.number().int().optional(),
  balances: z.array(projectedBalanceSchema),
}).meta({ id: 'DryRun' });

/** A bulk dry run (Blnk's BulkTransactionPreview, with Folio's batch summary fields beside it). */
export const bulkPreviewJsonSchema = z.object({
  dry_run: z.literal(true),
  would_apply: z.boolean(),
  cumulative: z.boolean(),
  atomic: z.boolean(),
  operation: z.literal('bulk'),
  status: z.enum(['APPLIED', 'INFLIGHT', 'QUEUED']).optional(),
  transaction_count: z.number().int(),
  failed_index: z.number().int().optional(),
  rejection: rejectionJsonSchema.optional(),
  results: z.array(projectionJsonSchema),
  balances: z.array(projectedBalanceSchema).optional(),
  notes: z.array(z.string()).optional(),
}).meta({ id: 'BulkDryRun' });

export interface ProjectionFallback {
  reference: string;
  currency: string;
  precise_amount: bigint;
  precision: bigint;
}

export function projectionView(projection: Projection, fallback?: ProjectionFallback): Record<string, unknown> {
  const view: Record<string, unknown> = {
    dry_run: true,
    would_apply: projection.would_apply,
    operation: projection.operation,
  };
  if (projection.status !== undefined && projection.would_apply) view.status = projection.status;
  if (projection.rejection) view.rejection = rejectionView(projection.rejection);
  const subject = projection.transaction ?? fallback;
  if (subject) {
    view.reference = subject.reference;
    view.currency = subject.currency;
    view.amount = preciseToAmount(subject.precise_amount, subject.precision);
    view.precise_amount = subject.precise_amount.toString();
    view.precision = subject.precision;
  }
  if (projection.legs) {
    const precision = subject?.precision ?? 1n;
    view.legs = projection.legs.map((leg) => ({
      identifier: leg.identifier,
      role: leg.role,
      precise_amount: leg.precise_amount.toString(),
      amount: preciseToAmount(leg.precise_amount, precision),
    }));
  }
  const allocation = projection.transaction?.fund_allocation;
  if (allocation) view.fund_allocation = allocation.map((share) => ({ provider: share.provider, precise_amount: share.amount.toString() }));
  if (projection.notes) view.notes = projection.notes;
  if (projection.transaction_count !== undefined) view.transaction_count = projection.transaction_count;
  if (projection.failed_index !== undefined) view.failed_index = projection.failed_index;
  view.balances = projection.balances.map(balanceProjectionView);
  return view;
}

/** One balance of a projection: its six amounts now and after. */
export function balanceProjectionView(balance: BalanceProjection): Record<string, unknown> {
  return {
    balance_id: balance.balance_id,
    role: balance.role,
    currency: balance.currency,
    ...amountFields('current', balance.current),
    ...amountFields('resulting', balance.resulting),
  };
}

function amountFields(prefix: string, amounts: BalanceAmounts): Record<string, string> {
  return {
    [`${prefix}_balance`]: amounts.balance.toString(),
    [`${prefix}_available`]: amounts.available.toString(),
    [`${prefix}_credit_balance`]: amounts.credit_balance.toString(),
    [`${prefix}_debit_balance`]: amounts.debit_balance.toString(),
    [`${prefix}_inflight_debit_balance`]: amounts.inflight_debit_balance.toString(),
    [`${prefix}_inflight_credit_balance`]: amounts.inflight_credit_balance.toString(),
  };
}
