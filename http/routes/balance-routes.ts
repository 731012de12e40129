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
import { balanceView } from '../../wire/views.js';

const balanceQuerySchema = z.object({
  from_source: z.enum(['true', 'false']).optional(),
});

export function balanceRoutes(router: Router, core: LedgerCore): void {
  const { engine } = core;

  router.post('/balances', async (ctx) => {
    const command = validate(createBalanceSchema, ctx.request.body);
    const { value, seq } = accepted(engine.createBalance(command));
    await respond(ctx, core, 201, balanceView(value), seq);
  });

  router.get('/balances', async (ctx) => {
    const page = validate(pageQuerySchema, ctx.query);
    const balances = engine.state.balances.newestFirst(page.offset, page.limit);
    await respond(ctx, core, 200, balances.map(balanceView));
  });

  router.get('/balances/indicator/:indicator/currency/:currency', async (ctx) => {
    const { indicator, currency } = ctx.params as { indicator: string; currency: string };
    const balance = engine.state.balanceByIndicator(indicator, currency);
    if (!balance) throw new ApiError('BAL_NOT_FOUND', `no ${currency} balance named ${indicator}`);
    await respond(ctx, core, 200, balanceView(balance));
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
