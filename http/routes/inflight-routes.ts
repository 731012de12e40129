// Holds: commit or void one (queued, synchronous, or as a dry run), and commit or void up to 100
// independent holds in one request with a result per hold. Bulk actions are carried out at once.

import type { Router } from '@koa/router';
import type { InflightActionCommand } from '../../engine/commands.js';
import type { LedgerEngine } from '../../engine/ledger-engine.js';
import { ApiError, fromRejection } from '../api-error.js';
import type { LedgerCore } from '../ledger-core.js';
import { projectionView } from '../projection-view.js';
import { accepted, respond } from '../respond.js';
import { bulkCommitSchema, bulkVoidSchema, inflightActionSchema, resolveAmount } from '../transaction-schemas.js';
import { validate } from '../validation.js';
import { transactionJson } from '../transaction-json.js';
import { transactionView } from '../views.js';

type AmountInput = { amount?: unknown; precise_amount?: unknown };

/** The commit amount in the hold's own precision (0 = everything still held). */
function actionAmount(engine: LedgerEngine, transactionId: string, input: AmountInput): bigint {
  const hold = engine.state.transaction(transactionId);
  if (!hold) throw new ApiError('TXN_NOT_FOUND', `transaction ${transactionId} not found`);
  // precise_amount takes precedence over amount when both are sent.
  const resolved = resolveAmount(
    input.precise_amount !== undefined ? { precise_amount: input.precise_amount } : { amount: input.amount },
    { allowZero: true, required: false, precision: hold.precision },
  );
  if (!resolved.ok) {
    throw new ApiError('GEN_VALIDATION_ERROR', `invalid request: ${resolved.field}: ${resolved.message}`, { [resolved.field]: resolved.message });
  }
  return resolved.precise_amount;
}

export function inflightRoutes(router: Router, core: LedgerCore): void {
  const { engine } = core;

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

  router.post('/transactions/inflight/bulk/commit', async (ctx) => {
    const body = validate(bulkCommitSchema, ctx.request.body);
    const results = body.transactions.map((item) => runAction(engine, 'commit', item.transaction_id, item));
    await respond(ctx, core, 200, { results });
  });

  router.post('/transactions/inflight/bulk/void', async (ctx) => {
    const body = validate(bulkVoidSchema, ctx.request.body);
    const results = body.transaction_ids.map((transactionId) => runAction(engine, 'void', transactionId, {}));
    await respond(ctx, core, 200, { results });
  });
}

/** One item of a bulk action: carried out on its own, so one failure does not stop the others. */
function runAction(engine: LedgerEngine, action: 'commit' | 'void', transactionId: string, input: AmountInput): Record<string, unknown> {
  try {
    const precise = action === 'commit' ? actionAmount(engine, transactionId, input) : 0n;
    const outcome = engine.actOnInflight({ transaction_id: transactionId, action, precise_amount: precise, skip_queue: true });
    if (!outcome.ok) throw fromRejection(outcome.rejection);
    return { transaction_id: transactionId, status: 'success', transaction: transactionView(outcome.value.transaction) };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return { transaction_id: transactionId, status: 'error', error: { code: error.code, message: error.message } };
  }
}
