// Closed periods of a ledger (engine/closed-periods.ts): POST /ledgers/:id/periods closes the ledger's
// books through `closes_at` (earlier than now, later than its last closed period), GET lists its closed
// periods oldest first. After a close, a transaction dated at or before `closes_at` that touches one of
// the ledger's balances is refused 409 TXN_PERIOD_CLOSED; the period names the position of the log's
// checksum chain it seals (docs/decisions-periods.md).

import type { Router } from '@koa/router';
import { z } from 'zod';
import { rejectionsOf } from '../../engine/operations.js';
import type { PeriodRecord } from '../../engine/records.js';
import { periodJsonSchema, periodView } from '../../wire/views.js';
import { ApiError } from '../api-error.js';
import { answers, describeRoute } from '../openapi/route-docs.js';
import type { LedgerCore } from '../ports/ledger-core.js';
import { accepted, respond } from '../respond.js';
import { closePeriodSchema } from '../schemas/ledger-schemas.js';
import { validate } from '../schemas/validation.js';

const PERIOD_EXAMPLE: PeriodRecord = {
  period_id: 'prd_0196a4c2-7e31-7a40-9c5d-3b2a1f0e9d08',
  ledger_id: 'ldg_0196a4c2-5a10-7b2e-8c31-6d4f2a9b7e01',
  closes_at: Date.UTC(2026, 3, 30, 23, 59, 59, 999),
  sealed_seq: 48_213,
  sealed_hash: '9f2c1e0a7b3d4c5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6',
  created_at: Date.UTC(2026, 4, 2, 9),
};

export function periodRoutes(router: Router, core: LedgerCore): void {
  describeRoute(router, 'POST /ledgers/:id/periods', {
    tag: 'Ledgers', summary: 'Close the ledger\'s period through closes_at: nothing dated at or before it may move the ledger\'s balances any more',
    body: closePeriodSchema, bodyExample: { closes_at: '2026-04-30T23:59:59.999Z' },
    answers: answers(201, 'The closed period, with the position of the log\'s checksum chain it seals', periodJsonSchema, periodView(PERIOD_EXAMPLE)),
    errors: [...rejectionsOf('period.close'), 'GEN_VALIDATION_ERROR'],
  });
  router.post('/ledgers/:id/periods', async (ctx) => {
    const { closes_at } = validate(closePeriodSchema, ctx.request.body);
    const { value, seq } = accepted(await core.run({ op: 'period.close', ledger_id: ctx.params.id as string, closes_at }));
    await respond(ctx, core, 201, periodView(value), seq);
  });

  describeRoute(router, 'GET /ledgers/:id/periods', {
    tag: 'Ledgers', summary: 'The ledger\'s closed periods, oldest first',
    answers: answers(200, 'The closed periods', z.array(periodJsonSchema), [periodView(PERIOD_EXAMPLE)]), errors: ['LGR_NOT_FOUND'],
  });
  router.get('/ledgers/:id/periods', async (ctx) => {
    const ledgerId = ctx.params.id as string;
    if (!(await core.view.ledger(ledgerId))) throw new ApiError('LGR_NOT_FOUND', `ledger ${ledgerId} not found`);
    const periods = await core.view.periods(ledgerId);
    await respond(ctx, core, 200, periods.map(periodView));
  });
}
