// Holds: commit or void one (queued, synchronous, or as a dry run), every open hold a bulk request
// made (its batch id in place of a transaction id, as Blnk takes it), and up to 100 independent holds
// in one request with a result per hold. Bulk actions are queued unless skip_queue says otherwise, as in
// Blnk; each item is answered `queued` (QUEUED, or ALREADY_QUEUED when an action is waiting already),
// `succeeded`, or `failed` with a code a client can switch on.

import type { Router } from '@koa/router';
import type { InflightActionCommand } from '../../engine/commands.js';
import type { LedgerEngine } from '../../engine/ledger-engine.js';
import type { TransactionRecord } from '../../engine/records.js';
import { ApiError, fromRejection, type ErrorCode } from '../api-error.js';
import type { LedgerCore } from '../ledger-core.js';
import { projectionView } from '../projection-view.js';
import { accepted, respond } from '../respond.js';
import { resolveAmount } from '../transaction-commands.js';
import { BULK_INFLIGHT_MAX, bulkCommitSchema, bulkVoidSchema, inflightActionSchema } from '../transaction-schemas.js';
import { validate } from '../validation.js';
import { parsePreciseAmount } from '../../wire/amounts.js';
import { z } from 'zod';
import { EXAMPLES } from '../openapi/examples.js';
import { answers, describeRoute } from '../openapi/route-docs.js';
import { projectionJsonSchema } from '../projection-view.js';
import { transactionJson, transactionJsonSchema, transactionJsonWith } from '../../wire/transaction-json.js';

const HOLD_ERRORS = ['TXN_NOT_FOUND', 'TXN_NOT_INFLIGHT', 'TXN_COMMIT_AMOUNT_EXCEEDED', 'TXN_PARTIAL_NOT_ALLOWED', 'TXN_ALREADY_COMMITTED', 'TXN_ALREADY_VOIDED'] as const;
const queuedActionSchema = z.object({ transaction_id: z.string(), status: z.literal('INFLIGHT'), queued: z.literal(true) });
const bulkActionSchema = z.object({
  dry_run: z.literal(true).optional(),
  results: z.array(z.union([
    z.object({ transaction_id: z.string(), status: z.literal('success'), transaction: transactionJsonSchema }),
    z.object({ transaction_id: z.string(), status: z.literal('error'), error: z.object({ code: z.string(), message: z.string() }) }),
    projectionJsonSchema.extend({ transaction_id: z.string() }),
  ])),
});
const bulkActionExample = { results: [{ transaction_id: 'txn_0196a4c2-6b22-7d3f-a1b2-3c4d5e6f7a03', status: 'error', error: { code: 'TXN_NOT_INFLIGHT', message: 'transaction is not inflight' } }] };

type AmountInput = { amount?: unknown; precise_amount?: unknown };
type Action = 'commit' | 'void';

/** Ids of bulk requests (batch ids); a hold action on one acts on every open hold of that batch. */
const BATCH_ID_PREFIX = 'bulk_';

/**
 * The commit amount in the hold's own precision. No amount means everything still held (the engine's
 * 0); an amount that is sent must be more than zero, so a client's 0 is never read as "all of it".
 */
function actionAmount(engine: LedgerEngine, transactionId: string, input: AmountInput): bigint {
  const hold = engine.state.transaction(transactionId);
  if (!hold) throw new ApiError('TXN_NOT_FOUND', `transaction ${transactionId} not found`);
  // precise_amount takes precedence over amount when both are sent.
  const resolved = resolveAmount(
    input.precise_amount !== undefined ? { precise_amount: input.precise_amount } : { amount: input.amount },
    { required: false, precision: hold.precision },
  );
  if (!resolved.ok) {
    throw new ApiError('TXN_INVALID_AMOUNT', `invalid request: ${resolved.field}: ${resolved.message}`, { [resolved.field]: resolved.message });
  }
  return resolved.precise_amount;
}

/**
 * A precise_amount that is sent must be positive, for commit and void alike; checked before the hold
 * is looked up, as Blnk does (its TXN_INVALID_AMOUNT).
 */
function refuseNonPositive(input: AmountInput): void {
  if (input.precise_amount === undefined) return;
  const parsed = parsePreciseAmount(input.precise_amount, { allowZero: true });
  if (parsed.ok && parsed.value > 0n) return;
  const message = parsed.ok ? 'precise_amount must be positive' : `precise_amount ${parsed.message}`;
  throw new ApiError('TXN_INVALID_AMOUNT', message, { precise_amount: message });
}

export function inflightRoutes(router: Router, core: LedgerCore): void {
  const { engine } = core;

  describeRoute(router, 'PUT /transactions/inflight/:id', {
    tag: 'Transactions', summary: 'Commit (all or part) or void a hold', body: inflightActionSchema, bodyExample: { status: 'commit', amount: 10, skip_queue: true },
    answers: answers(200, 'The commit or void transaction; queued: the hold with `queued: true`; or a dry run', z.union([transactionJsonSchema, queuedActionSchema, projectionJsonSchema]), EXAMPLES.transaction),
    errors: [...HOLD_ERRORS, 'TXN_INVALID_STATUS_ACTION'],
  });
  router.put('/transactions/inflight/:id', async (ctx) => {
    const body = validate(inflightActionSchema, ctx.request.body);
    const action = body.status.trim().toLowerCase();
    if (action !== 'commit' && action !== 'void') {
      throw new ApiError('TXN_INVALID_STATUS_ACTION', `status must be commit or void, not ${JSON.stringify(body.status)}`);
    }
    refuseNonPositive(body);
    const transactionId = ctx.params.id as string;
    if (transactionId.startsWith(BATCH_ID_PREFIX) && !engine.state.transaction(transactionId)) {
      await actOnBatch(ctx, core, transactionId, action, body);
      return;
    }
    if (!engine.state.transaction(transactionId)) throw new ApiError('TXN_NOT_FOUND', `transaction ${transactionId} not found`);
    const command: InflightActionCommand = {
      transaction_id: transactionId,
      action,
      precise_amount: action === 'commit' ? actionAmount(engine, transactionId, body) : 0n,
      skip_queue: body.skip_queue ?? false,
    };
    if (body.dry_run) {
      await respond(ctx, core, 200, projectionView(engine.projectInflightAction(command)));
      return;
    }
    const { value, seq } = accepted(engine.actOnInflight(command));
    // Queued: the hold as it stands, marked queued (the action is applied in its turn).
    const answer = value.queued ? transactionJsonWith(value.hold, { queued: true }) : transactionJson(value.transaction);
    await respond(ctx, core, 200, answer, seq);
  });

  describeRoute(router, 'POST /transactions/inflight/bulk/commit', {
    tag: 'Transactions', summary: 'Commit up to 100 holds, each on its own', body: bulkCommitSchema,
    bodyExample: { transactions: [{ transaction_id: 'txn_0196a4c2-6b22-7d3f-a1b2-3c4d5e6f7a03' }] },
    answers: answers(200, 'A result per hold', bulkActionSchema, bulkActionExample),
  });
  router.post('/transactions/inflight/bulk/commit', async (ctx) => {
    refuseBulkSize(ctx.request.body, 'transactions');
    const body = validate(bulkCommitSchema, ctx.request.body);
    const items = body.transactions.map((item) => ({ transactionId: item.transaction_id, input: item as AmountInput }));
    await respondBulk(ctx, core, 'commit', items, body);
  });

  describeRoute(router, 'POST /transactions/inflight/bulk/void', {
    tag: 'Transactions', summary: 'Void up to 100 holds, each on its own', body: bulkVoidSchema,
    bodyExample: { transaction_ids: ['txn_0196a4c2-6b22-7d3f-a1b2-3c4d5e6f7a03'] },
    answers: answers(200, 'A result per hold', bulkActionSchema, bulkActionExample),
  });
  router.post('/transactions/inflight/bulk/void', async (ctx) => {
    refuseBulkSize(ctx.request.body, 'transaction_ids');
    const body = validate(bulkVoidSchema, ctx.request.body);
    const items = body.transaction_ids.map((transactionId) => ({ transactionId, input: {} }));
    await respondBulk(ctx, core, 'void', items, body);
  });
}

/** An empty (or missing) list and one over the limit have codes of their own, checked first. */
function refuseBulkSize(body: unknown, field: 'transactions' | 'transaction_ids'): void {
  const list = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[field] : undefined;
  if (list === undefined || list === null || (Array.isArray(list) && list.length === 0)) {
    throw new ApiError('TXN_BULK_EMPTY', `${field} cannot be empty`, { [field]: 'must not be empty' });
  }
  if (Array.isArray(list) && list.length > BULK_INFLIGHT_MAX) {
    throw new ApiError('TXN_BULK_LIMIT_EXCEEDED', `too many ${field}; max is ${BULK_INFLIGHT_MAX}`, { [field]: `at most ${BULK_INFLIGHT_MAX}` });
  }
}

/**
 * Commit or void every open hold a bulk request made, each on its own (a hold closed since is left
 * alone). Amounts are refused: each hold is committed whole, as a split hold is. Synchronous: the
 * first child transaction; queued: the batch, marked queued.
 */
async function actOnBatch(
  ctx: Parameters<Parameters<Router['put']>[1]>[0],
  core: LedgerCore,
  batchId: string,
  action: Action,
  body: AmountInput & { skip_queue?: boolean; dry_run?: boolean },
): Promise<void> {
  const { engine } = core;
  const open = openHoldsOfBatch(engine, batchId);
  if (open.length === 0) throw new ApiError('TXN_NOT_FOUND', `no open inflight transaction of batch ${batchId}`);
  // Holds with an action already waiting are left to it.
  const holds = open.filter((hold) => !engine.state.pendingHoldActions.has(hold.transaction_id));
  if (holds.length === 0) throw new ApiError('GEN_CONFLICT', `a commit or void is already queued for every open hold of batch ${batchId}`);
  if (action === 'commit' && (body.amount !== undefined || body.precise_amount !== undefined)) {
    throw new ApiError('TXN_PARTIAL_NOT_ALLOWED', 'the holds of a batch are committed whole; commit them one by one for partial amounts');
  }
  const skipQueue = body.skip_queue ?? false;
  const commands = holds.map((hold): InflightActionCommand => ({ transaction_id: hold.transaction_id, action, precise_amount: 0n, skip_queue: skipQueue }));
  if (body.dry_run) {
    await respond(ctx, core, 200, { dry_run: true, results: engine.projectInflightActions(commands).map((projection) => projectionView(projection)) });
    return;
  }
  let first: TransactionRecord | undefined;
  let seq = core.visibleSeq();
  for (const command of commands) {
    const outcome = accepted(engine.actOnInflight(command));
    first ??= outcome.value.transaction;
    seq = outcome.seq;
  }
  const answer = skipQueue
    ? transactionJson(first as TransactionRecord)
    : { transaction_id: batchId, status: 'INFLIGHT', queued: true, transaction_count: commands.length };
  await respond(ctx, core, 200, answer, seq);
}

/** Open top-level holds recorded by one bulk request (split legs close with their parent). */
function openHoldsOfBatch(engine: LedgerEngine, batchId: string): TransactionRecord[] {
  const holds: TransactionRecord[] = [];
  for (const hold of engine.state.holds.values()) {
    if (hold.batch_id === batchId && hold.parent_transaction === '') holds.push(hold);
  }
  return holds;
}

interface BulkItem {
  transactionId: string;
  input: AmountInput;
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
  QUEUE_BACKPRESSURE: 'QUEUE_BACKPRESSURE',
};

function itemCode(code: ErrorCode): string {
  return ITEM_CODES[code] ?? code;
}

async function respondBulk(
  ctx: Parameters<Parameters<Router['post']>[1]>[0],
  core: LedgerCore,
  action: Action,
  items: BulkItem[],
  body: { skip_queue?: boolean; dry_run?: boolean },
): Promise<void> {
  if (body.dry_run) {
    await respond(ctx, core, 200, projectBulk(core.engine, action, items));
    return;
  }
  const skipQueue = body.skip_queue ?? false;
  const results = items.map((item) => runItem(core.engine, action, item, skipQueue));
  const failed = results.filter((result) => result.status === 'failed').length;
  await respond(ctx, core, 200, { succeeded: results.length - failed, failed, results });
}

/** One item of a bulk action, carried out (or queued) on its own: one failure does not stop the others. */
function runItem(engine: LedgerEngine, action: Action, item: BulkItem, skipQueue: boolean): Record<string, unknown> {
  const { transactionId } = item;
  try {
    const precise = action === 'commit' ? actionAmount(engine, transactionId, item.input) : 0n;
    const outcome = engine.actOnInflight({ transaction_id: transactionId, action, precise_amount: precise, skip_queue: skipQueue });
    if (!outcome.ok) throw fromRejection(outcome.rejection);
    if (!skipQueue) return { transaction_id: transactionId, status: 'queued', code: 'QUEUED' };
    return { transaction_id: transactionId, status: 'succeeded', transaction: transactionJson(outcome.value.transaction) };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    if (!skipQueue && error.code === 'GEN_CONFLICT') {
      return { transaction_id: transactionId, status: 'queued', code: 'ALREADY_QUEUED', message: 'a commit or void is already queued for this transaction' };
    }
    return { transaction_id: transactionId, status: 'failed', code: itemCode(error.code), message: error.message };
  }
}

/**
 * A bulk commit or void as a dry run, projected item by item in one scope. An item whose own input is
 * refused (unknown hold, bad amount) cannot be projected; it is answered as a projection that would
 * not apply, with the refusal as its rejection.
 */
function projectBulk(engine: LedgerEngine, action: Action, items: BulkItem[]): Record<string, unknown> {
  const results: Array<Record<string, unknown>> = new Array(items.length);
  const commands: InflightActionCommand[] = [];
  const positions: number[] = [];
  items.forEach((item, index) => {
    try {
      const precise = action === 'commit' ? actionAmount(engine, item.transactionId, item.input) : 0n;
      commands.push({ transaction_id: item.transactionId, action, precise_amount: precise, skip_queue: true });
      positions.push(index);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      results[index] = {
        transaction_id: item.transactionId, dry_run: true, would_apply: false, operation: action,
        rejection: { code: error.code, message: error.message },
      };
    }
  });
  engine.projectInflightActions(commands).forEach((projection, at) => {
    const index = positions[at] as number;
    results[index] = { transaction_id: items[index]!.transactionId, ...projectionView(projection) };
  });
  return { dry_run: true, would_apply: results.every((result) => result.would_apply === true), results };
}
