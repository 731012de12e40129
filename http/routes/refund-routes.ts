// Refunds: POST /refund-transaction/:id with an optional body (queued by default, synchronous with
// skip_queue, or a dry run with notes).

import type { Router } from '@koa/router';
import { ApiError } from '../api-error.js';
import type { LedgerCore } from '../ledger-core.js';
import { projectionView } from '../projection-view.js';
import { accepted, respond } from '../respond.js';
import { refundSchema } from '../transaction-schemas.js';
import { validate } from '../validation.js';
import { EXAMPLES } from '../openapi/examples.js';
import { describeRoute } from '../openapi/route-docs.js';
import { projectionJsonSchema } from '../projection-view.js';
import { transactionJson, transactionJsonSchema } from '../../wire/transaction-json.js';

export function refundRoutes(router: Router, core: LedgerCore): void {
  const { engine } = core;

  describeRoute(router, 'POST /refund-transaction/:id', {
    tag: 'Transactions', summary: 'Refund a transaction (the reverse movement)', body: refundSchema, bodyRequired: false, bodyExample: { skip_queue: true, description: 'returned goods' },
    answers: [
      { status: 201, description: 'The refund transaction', schema: transactionJsonSchema, example: EXAMPLES.transaction },
      { status: 200, description: 'A dry run', schema: projectionJsonSchema },
    ],
    errors: ['TXN_NOT_FOUND', 'TXN_NOT_REFUNDABLE', 'TXN_INSUFFICIENT_FUNDS', 'META_TOO_LARGE'],
  });
  router.post('/refund-transaction/:id', async (ctx) => {
    const body = validate(refundSchema, ctx.request.body ?? {});
    const command = {
      transaction_id: ctx.params.id as string,
      skip_queue: body.skip_queue ?? false,
      description: body.description ?? '',
      meta_data: body.meta_data,
    };
    if (body.dry_run) {
      // An unknown original is a missing resource, not a projected rejection (as for commits and voids).
      if (!engine.state.transaction(command.transaction_id)) {
        throw new ApiError('TXN_NOT_FOUND', `transaction ${command.transaction_id} not found`);
      }
      await respond(ctx, core, 200, projectionView(engine.projectRefund(command)));
      return;
    }
    const { value, seq } = accepted(engine.refund(command));
    await respond(ctx, core, 201, transactionJson(value.transaction), seq);
  });
}
