// Holds: commit or void one (queued, synchronous, or as a dry run), every open hold a bulk request
// made (its batch id in place of a transaction id, as Blnk takes it), and up to 100 independent holds
// in one request with a result per hold. Bulk actions are queued unless skip_queue says otherwise, as in
// Blnk; each item is answered `queued` (QUEUED, or ALREADY_QUEUED when an action is waiting already),
// `succeeded`, or `failed` with a code a client can switch on. Each hold of a bulk action may carry its
// own preconditions (judged in the same decision, failing that item alone), and include_balances=true
// adds to each hold acted on its balances as the action left them.

import type { Router } from '@koa/router';
import type { CommandOf } from '../../engine/commands.js';
import { BULK_HOLD_ACTIONS_MAX, isBatchId, type HoldItemOutcome } from '../../engine/decide-hold-batches.js';
import { rejectionsOf } from '../../engine/operations.js';
import type { Projection } from '../../engine/projection.js';
import type { TransactionRecord } from '../../engine/records.js';
import type { Precondition } from '../../engine/precondition.js';
import type { Rejection } from '../../engine/rejections.js';
import { ApiError, type ErrorCode } from '../api-error.js';
import type { LedgerCore } from '../ports/ledger-core.js';
import { projectionView, rejectionJsonSchema, rejectionView } from '../views/projection-view.js';
import { accepted, projected, respond } from '../respond.js';
import { LIST_SIZE_CODES, refuseListSize, resolveAmount, validatePreconditions } from '../schemas/transaction-commands.js';
import { bulkCommitSchema, bulkVoidSchema, includeBalancesQuery, inflightActionSchema } from '../schemas/transaction-schemas.js';
import { balanceView, resultingBalancesJsonSchema } from '../../wire/views.js';
import { validate } from '../schemas/validation.js';
import { parsePreciseAmount } from '../../wire/amounts.js';
import { z } from 'zod';
import { EXAMPLES } from '../openapi/examples.js';
import { answers, describeRoute } from '../openapi/route-docs.js';
import { projectionJsonSchema } from '../views/projection-view.js';
import { transactionJson, transactionJsonSchema, transactionJsonWith } from '../../wire/transaction-json.js';

const queuedActionSchema = z.object({ transaction_id: z.string(), status: z.literal('INFLIGHT'), queued: z.literal(true) }).loose();
const queuedBatchSchema = z.object({
  transaction_id: z.string(), status: z.literal('INFLIGHT'), queued: z.literal(true), transaction_count: z.number().int(), balances: resultingBalancesJsonSchema.optional(),
});
/** One hold's result in a bulk commit or void, as the code answers it (Blnk's item codes, flat). */
const bulkItemSchema = z.union([
  z.object({ transaction_id: z.string(), status: z.literal('succeeded'), transaction: transactionJsonSchema, balances: resultingBalancesJsonSchema.optional() }),
  z.object({ transaction_id: z.string(), status: z.literal('queued'), code: z.enum(['QUEUED', 'ALREADY_QUEUED']), message: z.string().optional(), balances: resultingBalancesJsonSchema.optional() }),
  z.object({
    transaction_id: z.string(), status: z.literal('failed'), code: z.string(), message: z.string(),
    preconditions: rejectionJsonSchema.shape.preconditions.meta({ description: 'TXN_PRECONDITION_FAILED: every precondition of the item that failed' }),
  }),
]);
const bulkActionSchema = z.object({ succeeded: z.number().int(), failed: z.number().int(), results: z.array(bulkItemSchema) });
const bulkProjectionSchema = z.object({
  dry_run: z.literal(true),
  would_apply: z.boolean(),
  results: z.array(z.union([
    projectionJsonSchema.extend({ transaction_id: z.string() }),
    z.object({ transaction_id: z.string(), dry_run: z.literal(true), would_apply: z.literal(false), operation: z.string(), rejection: z.object({ code: z.string(), message: z.string() }) }),
  ])),
});
const bulkActionExample = {
  succeeded: 0, failed: 1,
  results: [{ transaction_id: 'txn_0196a4c2-6b22-7d3f-a1b2-3c4d5e6f7a03', status: 'failed', code: 'NOT_INFLIGHT', message: 'transaction is not inflight' }],
};
/** Both answers are 200s: one answer of either shape (a status has one schema in the reference). */
const bulkAnswers = answers(200, 'A result per hold (with include_balances=true, each hold acted on with its `balances` as the action left them); or, for a dry run, a projection per hold',
  z.union([bulkActionSchema, bulkProjectionSchema]), bulkActionExample);
const BULK_DESCRIPTION = 'Each hold may carry `preconditions` (at most 16), judged in the same decision as its action: one that fails refuses that hold alone, '
  + 'reported `failed` with code TXN_PRECONDITION_FAILED and every failed precondition (docs/decisions-beyond.md).';

type AmountInput = { amount?: unknown; precise_amount?: unknown };
type Action = 'commit' | 'void';

/**
 * The commit amount in the hold's own precision. No amount means everything still held (the engine's
 * 0); an amount that is sent must be more than zero, so a client's 0 is never read as "all of it".
 */
function actionAmount(hold: TransactionRecord, input: AmountInput): bigint {
  // precise_amount takes precedence over amount when both are sent.
  const resolved = resolveAmount(
    input.precise_amount !== undefined ? { precise_amount: input.precise_amount } : { amount: input.amount },
    { required: false, precision: hold.precision },
  );
  if (!resolved.ok) {
    const { field, message } = resolved.rejection;
    throw new ApiError('TXN_INVALID_AMOUNT', `invalid request: ${field}: ${message}`, { [field]: message });
  }
  return resolved.value.precise_amount;
}

/**
 * A precise_amount that is sent must be positive, for commit and void alike; checked before the hold
 * is looked up, as Blnk does (its TXN_INVALID_AMOUNT).
 */
function refuseNonPositive(input: AmountInput): void {
  if (input.precise_amount === undefined) return;
  const parsed = parsePreciseAmount(input.precise_amount, { allowZero: true });
  if (parsed.ok && parsed.value > 0n) return;
  const message = parsed.ok ? 'precise_amount must be positive' : `precise_amount ${parsed.rejection.message}`;
  throw new ApiError('TXN_INVALID_AMOUNT', message, { precise_amount: message });
}

export function inflightRoutes(router: Router, core: LedgerCore): void {
  describeRoute(router, 'PUT /transactions/inflight/:id', {
    tag: 'Transactions', summary: 'Commit (all or part) or void a hold, or every open hold of a bulk request (its batch id)', body: inflightActionSchema,
    description: 'A commit or void may carry `preconditions`, judged on the balances as it would leave them; for a batch id, with each of its holds\' '
      + 'actions, one failing refusing them all (docs/decisions-beyond.md).',
    bodyExample: { status: 'commit', amount: 10, skip_queue: true },
    query: includeBalancesQuery,
    answers: answers(200, 'The commit or void transaction; queued: the hold (or batch) with `queued: true`; or a dry run. With include_balances=true it adds `balances`: the hold\'s (or every hold of the batch\'s) balances as the action left them',
      z.union([transactionJsonSchema.extend({ balances: resultingBalancesJsonSchema.optional() }), queuedActionSchema, queuedBatchSchema, projectionJsonSchema]), EXAMPLES.transaction),
    errors: [...rejectionsOf('hold.act'), 'TXN_INVALID_STATUS_ACTION', 'TXN_INVALID_AMOUNT'],
  });
  router.put('/transactions/inflight/:id', async (ctx) => {
    const withBalances = validate(includeBalancesQuery, ctx.query).include_balances === 'true';
    const body = validate(inflightActionSchema, ctx.request.body);
    const action = body.status.trim().toLowerCase();
    if (action !== 'commit' && action !== 'void') {
      throw new ApiError('TXN_INVALID_STATUS_ACTION', `status must be commit or void, not ${JSON.stringify(body.status)}`);
    }
    refuseNonPositive(body);
    const preconditions = validatePreconditions(body.preconditions);
    const transactionId = ctx.params.id as string;
    const hold = await core.view.transaction(transactionId);
    if (!hold && isBatchId(transactionId)) {
      await actOnBatch(ctx, core, transactionId, action, body, preconditions, withBalances);
      return;
    }
    if (!hold) throw new ApiError('TXN_NOT_FOUND', `transaction ${transactionId} not found`);
    const command: CommandOf<'hold.act'> = {
      op: 'hold.act',
      transaction_id: transactionId,
      action,
      precise_amount: action === 'commit' ? actionAmount(hold, body) : 0n,
      skip_queue: body.skip_queue ?? false,
    };
    if (preconditions) command.preconditions = preconditions;
    if (body.dry_run) {
      await respond(ctx, core, 200, projectionView(await projected(core, command)));
      return;
    }
    if (withBalances) command.include_balances = true;
    const { value, seq } = accepted(await core.run(command));
    // Queued: the hold as it stands, marked queued (the action is applied in its turn).
    const balances = value.balances && { balances: value.balances.map(balanceView) };
    const answer = value.queued ? transactionJsonWith(value.hold, { queued: true, ...balances }) : balances ? transactionJsonWith(value.transaction, balances) : transactionJson(value.transaction);
    await respond(ctx, core, 200, answer, seq);
  });

  describeRoute(router, 'POST /transactions/inflight/bulk/commit', {
    tag: 'Transactions', summary: 'Commit up to 100 holds, each on its own, in one event', body: bulkCommitSchema, query: includeBalancesQuery,
    description: BULK_DESCRIPTION,
    bodyExample: { transactions: [{ transaction_id: 'txn_0196a4c2-6b22-7d3f-a1b2-3c4d5e6f7a03' }] },
    answers: bulkAnswers,
    errors: [...rejectionsOf('hold.act_on_many'), ...LIST_SIZE_CODES],
  });
  router.post('/transactions/inflight/bulk/commit', async (ctx) => {
    refuseListSize(ctx.request.body, 'transactions', BULK_HOLD_ACTIONS_MAX);
    const withBalances = validate(includeBalancesQuery, ctx.query).include_balances === 'true';
    const body = validate(bulkCommitSchema, ctx.request.body);
    const items = body.transactions.map((item, index) => ({
      transactionId: item.transaction_id, input: item as AmountInput, preconditions: validatePreconditions(item.preconditions, ['transactions', index]),
    }));
    await respondBulk(ctx, core, 'commit', items, body, withBalances);
  });

  describeRoute(router, 'POST /transactions/inflight/bulk/void', {
    tag: 'Transactions', summary: 'Void up to 100 holds, each on its own, in one event', body: bulkVoidSchema, query: includeBalancesQuery,
    description: `An item of \`transaction_ids\` is a hold's id, or \`{"transaction_id", "preconditions"}\`. ${BULK_DESCRIPTION}`,
    bodyExample: { transaction_ids: ['txn_0196a4c2-6b22-7d3f-a1b2-3c4d5e6f7a03'] },
    answers: bulkAnswers,
    errors: [...rejectionsOf('hold.act_on_many'), ...LIST_SIZE_CODES],
  });
  router.post('/transactions/inflight/bulk/void', async (ctx) => {
    refuseListSize(ctx.request.body, 'transaction_ids', BULK_HOLD_ACTIONS_MAX);
    const withBalances = validate(includeBalancesQuery, ctx.query).include_balances === 'true';
    const body = validate(bulkVoidSchema, ctx.request.body);
    const items = body.transaction_ids.map((item, index) => (typeof item === 'string'
      ? { transactionId: item, input: {} }
      : { transactionId: item.transaction_id, input: {}, preconditions: validatePreconditions(item.preconditions, ['transaction_ids', index]) }));
    await respondBulk(ctx, core, 'void', items, body, withBalances);
  });
}

/**
 * Commit or void every open hold a bulk request made, all of them or none, in one event (the engine's
 * hold.act_on_batch). Amounts are refused: each hold is committed whole, as a split hold is.
 * Synchronous: the first child transaction; queued: the batch, marked queued; either with `balances`
 * (every hold's) when asked.
 */
async function actOnBatch(
  ctx: Parameters<Parameters<Router['put']>[1]>[0],
  core: LedgerCore,
  batchId: string,
  action: Action,
  body: AmountInput & { skip_queue?: boolean; dry_run?: boolean },
  preconditions: Precondition[] | undefined,
  withBalances: boolean,
): Promise<void> {
  if (action === 'commit' && (body.amount !== undefined || body.precise_amount !== undefined)) {
    throw new ApiError('TXN_PARTIAL_NOT_ALLOWED', 'the holds of a batch are committed whole; commit them one by one for partial amounts');
  }
  const command: CommandOf<'hold.act_on_batch'> = { op: 'hold.act_on_batch', batch_id: batchId, action, skip_queue: body.skip_queue ?? false };
  if (preconditions) command.preconditions = preconditions;
  if (body.dry_run) {
    await respond(ctx, core, 200, projectionView(await projected(core, command)));
    return;
  }
  if (withBalances) command.include_balances = true;
  const { value, seq } = accepted(await core.run(command));
  const balances = value.balances && { balances: value.balances.map(balanceView) };
  const answer = value.queued
    ? { transaction_id: batchId, status: 'INFLIGHT', queued: true, transaction_count: value.transactions.length, ...balances }
    : balances ? transactionJsonWith(value.transactions[0] as TransactionRecord, balances) : transactionJson(value.transactions[0] as TransactionRecord);
  await respond(ctx, core, 200, answer, seq);
}

interface BulkItem {
  transactionId: string;
  input: AmountInput;
  preconditions?: Precondition[];
}

/** What each failure of a bulk item is called in Blnk's per-item results. */
const ITEM_CODES: Partial<Record<ErrorCode, string>> = {
  TXN_NOT_FOUND: 'NOT_FOUND',
  TXN_ALREADY_VOIDED: 'ALREADY_VOIDED',
  TXN_ALREADY_COMMITTED: 'ALREADY_COMMITTED',
  TXN_NOT_INFLIGHT: 'NOT_INFLIGHT',
  TXN_COMMIT_AMOUNT_EXCEEDED: 'INVALID_AMOUNT',
  TXN_INVALID_AMOUNT: 'INVALID_AMOUNT',
  TXN_PARTIAL_NOT_ALLOWED: 'INVALID_AMOUNT',
  GEN_CONFLICT: 'LOCKED',
};

function itemCode(code: ErrorCode): string {
  return ITEM_CODES[code] ?? code;
}

/** An item's own input resolved to a commit amount, or the refusal to report for it. */
type ResolvedItem = { transaction_id: string; ok: true; precise_amount: bigint; preconditions?: Precondition[] } | { transaction_id: string; ok: false; error: ApiError };

async function resolveItems(core: LedgerCore, action: Action, items: BulkItem[]): Promise<ResolvedItem[]> {
  const resolved: ResolvedItem[] = [];
  for (const { transactionId, input, preconditions } of items) {
    try {
      const hold = action === 'commit' ? await core.view.transaction(transactionId) : undefined;
      if (action === 'commit' && !hold) throw new ApiError('TXN_NOT_FOUND', `transaction ${transactionId} not found`);
      const item: ResolvedItem = { transaction_id: transactionId, ok: true, precise_amount: hold ? actionAmount(hold, input) : 0n };
      if (preconditions) item.preconditions = preconditions;
      resolved.push(item);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      resolved.push({ transaction_id: transactionId, ok: false, error });
    }
  }
  return resolved;
}

async function respondBulk(
  ctx: Parameters<Parameters<Router['post']>[1]>[0],
  core: LedgerCore,
  action: Action,
  items: BulkItem[],
  body: { skip_queue?: boolean; dry_run?: boolean },
  withBalances: boolean,
): Promise<void> {
  const resolved = await resolveItems(core, action, items);
  if (body.dry_run) {
    await respond(ctx, core, 200, await projectBulk(core, action, resolved));
    return;
  }
  const skipQueue = body.skip_queue ?? false;
  const valid = resolved.flatMap((item) => (item.ok ? [holdItem(item)] : []));
  const command: CommandOf<'hold.act_on_many'> = { op: 'hold.act_on_many', action, items: valid, skip_queue: skipQueue };
  if (withBalances) command.include_balances = true;
  const { value, seq } = accepted(await core.run(command));
  const outcomes = value.items[Symbol.iterator]();
  const results = resolved.map((item) => {
    if (!item.ok) return failedItem(item.transaction_id, item.error.code, item.error.message);
    const outcome = outcomes.next().value as HoldItemOutcome;
    if (outcome.ok) {
      const balances = outcome.balances && { balances: outcome.balances.map(balanceView) };
      if (!skipQueue) return { transaction_id: item.transaction_id, status: 'queued', code: 'QUEUED', ...balances };
      return { transaction_id: item.transaction_id, status: 'succeeded', transaction: transactionJson(outcome.transaction), ...balances };
    }
    if (!skipQueue && outcome.rejection.code === 'GEN_CONFLICT') {
      return { transaction_id: item.transaction_id, status: 'queued', code: 'ALREADY_QUEUED', message: 'a commit or void is already queued for this transaction' };
    }
    return failedItem(item.transaction_id, outcome.rejection.code, outcome.rejection.message, outcome.rejection);
  });
  const failed = results.filter((result) => result.status === 'failed').length;
  await respond(ctx, core, 200, { succeeded: results.length - failed, failed, results }, seq);
}

function failedItem(transactionId: string, code: ErrorCode, message: string, rejection?: Rejection): Record<string, unknown> {
  const failed: Record<string, unknown> = { transaction_id: transactionId, status: 'failed', code: itemCode(code), message };
  // TXN_PRECONDITION_FAILED: every precondition that failed, as a dry run's rejection lists them.
  if (rejection?.preconditions) failed.preconditions = rejectionView(rejection).preconditions;
  return failed;
}

/** A resolved item as the engine's bulk action takes it. */
function holdItem(item: Extract<ResolvedItem, { ok: true }>): CommandOf<'hold.act_on_many'>['items'][number] {
  const held: CommandOf<'hold.act_on_many'>['items'][number] = { transaction_id: item.transaction_id, precise_amount: item.precise_amount };
  if (item.preconditions) held.preconditions = item.preconditions;
  return held;
}

/**
 * A bulk commit or void as a dry run, projected item by item in one scope. An item whose own input is
 * refused (unknown hold, bad amount) cannot be projected; it is answered as a projection that would
 * not apply, with the refusal as its rejection.
 */
async function projectBulk(core: LedgerCore, action: Action, items: ResolvedItem[]): Promise<Record<string, unknown>> {
  const commands: Array<CommandOf<'hold.act'>> = [];
  for (const item of items) {
    if (!item.ok) continue;
    const command: CommandOf<'hold.act'> = { op: 'hold.act', transaction_id: item.transaction_id, action, precise_amount: item.precise_amount, skip_queue: true };
    if (item.preconditions) command.preconditions = item.preconditions;
    commands.push(command);
  }
  const projections = (await core.dryRun(commands)).projections[Symbol.iterator]();
  const results = items.map((item) => {
    if (!item.ok) {
      return {
        transaction_id: item.transaction_id, dry_run: true, would_apply: false, operation: action,
        rejection: { code: item.error.code, message: item.error.message },
      };
    }
    return { transaction_id: item.transaction_id, ...projectionView(projections.next().value as Projection) };
  });
  return { dry_run: true, would_apply: results.every((result) => result.would_apply === true), results };
}
