// Balances: create, list, read (live or rebuilt from the log), and find an internal balance by name.

import { foldedBalance } from './balance-history-routes.js';
import type { Router } from '@koa/router';
import { z } from 'zod';
import { ApiError } from '../api-error.js';
import { pageQuerySchema } from '../common-schemas.js';
import { createBalanceSchema } from '../ledger-schemas.js';
import type { LedgerCore } from '../ledger-core.js';
import { accepted, respond } from '../respond.js';
import { validate } from '../validation.js';
import { EXAMPLES } from '../openapi/examples.js';
import { answers, describeRoute } from '../openapi/route-docs.js';
import { balanceJsonSchema, balanceView } from '../../wire/views.js';

export const balanceQuerySchema = z.object({
  from_source: z.enum(['true', 'false']).optional(),
});

export function balanceRoutes(router: Router, core: LedgerCore): void {
  const { engine } = core;

  describeRoute(router, 'POST /balances', {
    tag: 'Balances', summary: 'Create a balance', body: createBalanceSchema,
    bodyExample: { ledger_id: 'ldg_0196a4c2-57e1-7c1e-9d5a-2f1e0b6c9a01', currency: 'USD', meta_data: { customer: 'c-77' } },
    answers: answers(201, 'The balance', balanceJsonSchema, EXAMPLES.balance), errors: ['LDG_NOT_FOUND', 'BAL_DUPLICATE_INDICATOR', 'IDT_NOT_FOUND'],
  });
  router.post('/balances', async (ctx) => {
    const command = validate(createBalanceSchema, ctx.request.body);
    const { value, seq } = accepted(engine.createBalance(command));
    await respond(ctx, core, 201, balanceView(value), seq);
  });

  describeRoute(router, 'GET /balances', { tag: 'Balances', summary: 'List balances, newest first', query: pageQuerySchema, answers: answers(200, 'A page of balances', z.array(balanceJsonSchema), [EXAMPLES.balance]) });
  router.get('/balances', async (ctx) => {
    const page = validate(pageQuerySchema, ctx.query);
    const balances = engine.state.balances.newestFirst(page.offset, page.limit);
    await respond(ctx, core, 200, balances.map(balanceView));
  });

  describeRoute(router, 'GET /balances/indicator/:indicator/currency/:currency', {
    tag: 'Balances', summary: 'Find a balance by indicator and currency', params: { indicator: 'e.g. `@world`' },
    answers: answers(200, 'The balance', balanceJsonSchema, EXAMPLES.balance), errors: ['BAL_NOT_FOUND'],
  });
  router.get('/balances/indicator/:indicator/currency/:currency', async (ctx) => {
    const { indicator, currency } = ctx.params as { indicator: string; currency: string };
    const balance = engine.state.balanceByIndicator(indicator, currency);
    if (!balance) throw new ApiError('BAL_NOT_FOUND', `no ${currency} balance named ${indicator}`);
    await respond(ctx, core, 200, balanceView(balance));
  });

  describeRoute(router, 'GET /balances/:id', {
    tag: 'Balances', summary: 'Read a balance (live, or rebuilt from the log with from_source=true)', query: balanceQuerySchema,
    answers: answers(200, 'The balance; with from_source=true, `{balance}` folded from the log', z.union([balanceJsonSchema, z.object({ balance: balanceJsonSchema })]), EXAMPLES.balance),
    errors: ['BAL_NOT_FOUND', 'QUEUE_BACKPRESSURE'],
  });
  router.get('/balances/:id', async (ctx) => {
    const query = validate(balanceQuerySchema, ctx.query);
    const balanceId = ctx.params.id as string;
    if (query.from_source === 'true') {
      const seq = core.visibleSeq();
      await core.durable(seq);
      const rebuilt = foldedBalance(await core.balanceHistory(balanceId, Number.MAX_SAFE_INTEGER, seq));
      if (!rebuilt) throw new ApiError('BAL_NOT_FOUND', `balance ${balanceId} not found`);
      await respond(ctx, core, 200, { balance: balanceView(rebuilt) }, seq);
      return;
    }
    const balance = engine.state.balances.get(balanceId);
    if (!balance) throw new ApiError('BAL_NOT_FOUND', `balance ${balanceId} not found`);
    await respond(ctx, core, 200, balanceView(balance));
  });
}
