// Refunds: POST /refund-transaction/:id with an optional body (queued by default, synchronous with
// skip_queue, or a dry run with notes).

import type { Router } from '@koa/router';
import { ApiError } from '../api-error.js';
import type { LedgerCore } from '../ports/ledger-core.js';
import { projectionView } from '../views/projection-view.js';
import { accepted, projected, respond } from '../respond.js';
import { rejectionsOf } from '../../engine/operations.js';
import { refundSchema } from '../schemas/transaction-schemas.js';
import { validate } from '../schemas/validation.js';
import { EXAMPLES } from '../openapi/examples.js';
import { describeRoute } from '../openapi/route-docs.js';
import { projectionJsonSchema } from '../views/projection-view.js';
import { transactionJson, transactionJsonSchema } from '../../wire/transaction-json.js';
import { amountToPrecise } from '../../wire/amounts.js';
import type { RefundCommand } from '../../engine/commands.js';

/** The refund's limit in the smallest unit of the original (whose precision never changes once recorded). */
function refundOverdraftLimit(limit: unknown, precision: bigint): bigint {
  if (limit === undefined || limit === null) return 0n;
  const precise = amountToPrecise(limit, precision, { allowZero: true });
  if (!precise.ok) throw new ApiError('GEN_MALFORMED_REQUEST', `overdraft_limit ${precise.rejection.message}`, { overdraft_limit: precise.rejection.message });
  return precise.value;
}

export function refundRoutes(router: Router, core: LedgerCore): void {
  describeRoute(router, 'POST /refund-transaction/:id', {
    tag: 'Transactions', summary: 'Refund a transaction (the reverse movement)', body: refundSchema, bodyRequired: false, bodyExample: { skip_queue: true, description: 'returned goods' },
    answers: [
      { status: 201, description: 'The refund transaction', schema: transactionJsonSchema, example: EXAMPLES.transaction },
      { status: 200, description: 'A dry run', schema: projectionJsonSchema },
    ],
    errors: [...rejectionsOf('transaction.refund'), 'GEN_MALFORMED_REQUEST'],
  });
  router.post('/refund-transaction/:id', async (ctx) => {
    // A body Blnk's binder cannot read (a field of the wrong type) is malformed there, as ../shared/spec/decisions.md has it.
    const body = validate(refundSchema, ctx.request.body ?? {}, 'GEN_MALFORMED_REQUEST');
    const transactionId = ctx.params.id as string;
    const command: RefundCommand = {
      transaction_id: transactionId,
      skip_queue: body.skip_queue ?? false,
      description: body.description ?? '',
      meta_data: body.meta_data,
      allow_overdraft: body.allow_overdraft ?? false,
      overdraft_limit: refundOverdraftLimit(body.overdraft_limit, (await core.view.transaction(transactionId))?.precision ?? 1n),
    };
    if (body.dry_run) {
      // An unknown original is a missing resource, not a projected rejection (as for commits and voids).
      if (!(await core.view.transaction(command.transaction_id))) {
        throw new ApiError('TXN_NOT_FOUND', `transaction ${command.transaction_id} not found`);
      }
      await respond(ctx, core, 200, projectionView(await projected(core, { op: 'transaction.refund', ...command })));
      return;
    }
    const { value, seq } = accepted(await core.run({ op: 'transaction.refund', ...command }));
    await respond(ctx, core, 201, transactionJson(value.transaction), seq);
  });
}
