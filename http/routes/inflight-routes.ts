// Holds: commit or void one (queued, synchronous, or as a dry run), and commit or void up to 100
// independent holds in one request with a result per hold. Bulk actions are carried out at once.

import type { Router } from '@koa/router';
import type { InflightActionCommand } from '../../engine/commands.js';
import type { LedgerEngine } from '../../engine/ledger-engine.js';
import { ApiError, fromRejection } from '../api-error.js';
import type { LedgerCore } from '../ledger-core.js';
import { projectionView } from '../projection-view.js';
import { accepted, respond } from '../respond.js';
import { resolveAmount } from '../transaction-commands.js';
import { bulkCommitSchema, bulkVoidSchema, inflightActionSchema } from '../transaction-schemas.js';
import { validate } from '../validation.js';
import { z } from 'zod';
import { EXAMPLES } from '../openapi/examples.js';
import { answers, describeRoute } from '../openapi/route-docs.js';
import { projectionJsonSchema } from '../projection-view.js';
import { transactionJson, transactionJsonSchema } from '../../wire/transaction-json.js';

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
    throw new ApiError('GEN_VALIDATION_ERROR', `invalid request: ${resolved.field}: ${resolved.message}`, { [resolved.field]: resolved.message });
  }
  return resolved.precise_amount;
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
    const transactionId = ctx.params.id as string;
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
    const answer = value.queued
      ? { transaction_id: value.hold.transaction_id, status: 'INFLIGHT', queued: true }
      : transactionJson(value.transaction);
    await respond(ctx, core, 200, answer, seq);
  });

  describeRoute(router, 'POST /transactions/inflight/bulk/commit', {
    tag: 'Transactions', summary: 'Commit up to 100 holds, each on its own', body: bulkCommitSchema,
    bodyExample: { transactions: [{ transaction_id: 'txn_0196a4c2-6b22-7d3f-a1b2-3c4d5e6f7a03' }] },
    answers: answers(200, 'A result per hold', bulkActionSchema, bulkActionExample),
  });
  router.post('/transactions/inflight/bulk/commit', async (ctx) => {
    const body = validate(bulkCommitSchema, ctx.request.body);
    const items = body.transactions.map((item) => ({ transactionId: item.transaction_id, input: item }));
    await respond(ctx, core, 200, bulkActions(engine, 'commit', items, body.dry_run ?? false));
  });

  describeRoute(router, 'POST /transactions/inflight/bulk/void', {
    tag: 'Transactions', summary: 'Void up to 100 holds, each on its own', body: bulkVoidSchema,
    bodyExample: { transaction_ids: ['txn_0196a4c2-6b22-7d3f-a1b2-3c4d5e6f7a03'] },
    answers: answers(200, 'A result per hold', bulkActionSchema, bulkActionExample),
  });
  router.post('/transactions/inflight/bulk/void', async (ctx) => {
    const body = validate(bulkVoidSchema, ctx.request.body);
    const items = body.transaction_ids.map((transactionId) => ({ transactionId, input: {} }));
    await respond(ctx, core, 200, bulkActions(engine, 'void', items, body.dry_run ?? false));
  });
}

/** A bulk commit or void: carried out item by item, or as a dry run projected item by item. */
function bulkActions(
  engine: LedgerEngine,
  action: 'commit' | 'void',
  items: Array<{ transactionId: string; input: AmountInput }>,
  dryRun: boolean,
): Record<string, unknown> {
  if (!dryRun) return { results: items.map((item) => runAction(engine, action, item.transactionId, item.input)) };
  // An item whose own input is refused (unknown hold, bad amount) cannot be projected; it is answered
  // as the real run would answer it, and the others are projected in order.
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
      results[index] = { transaction_id: item.transactionId, status: 'error', error: { code: error.code, message: error.message } };
    }
  });
  engine.projectInflightActions(commands).forEach((projection, at) => {
    const index = positions[at] as number;
    results[index] = { transaction_id: items[index]!.transactionId, ...projectionView(projection) };
  });
  return { dry_run: true, results };
}

/** One item of a bulk action: carried out on its own, so one failure does not stop the others. */
function runAction(engine: LedgerEngine, action: 'commit' | 'void', transactionId: string, input: AmountInput): Record<string, unknown> {
  try {
    const precise = action === 'commit' ? actionAmount(engine, transactionId, input) : 0n;
    const outcome = engine.actOnInflight({ transaction_id: transactionId, action, precise_amount: precise, skip_queue: true });
    if (!outcome.ok) throw fromRejection(outcome.rejection);
    return { transaction_id: transactionId, status: 'success', transaction: transactionJson(outcome.value.transaction) };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return { transaction_id: transactionId, status: 'error', error: { code: error.code, message: error.message } };
  }
}
