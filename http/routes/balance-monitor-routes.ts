// Balance monitors, Blnk's six routes: create, read, list all, list a balance's, replace, delete. A
// monitor fires `balance.monitor` to the server's notification webhook when a change to its balance
// makes its condition true (engine/balance-monitors.ts, hooks/monitor-notifications.ts).

import type { Router } from '@koa/router';
import { z } from 'zod';
import { ApiError } from '../api-error.js';
import type { LedgerCore } from '../ports/ledger-core.js';
import { monitorSchema } from '../schemas/monitor-schemas.js';
import { accepted, respond } from '../respond.js';
import { validate } from '../schemas/validation.js';
import { monitorJsonSchema, monitorView } from '../../wire/views.js';
import { answers, describeRoute } from '../openapi/route-docs.js';
import { rejectionsOf } from '../../engine/operations.js';

const messageSchema = z.object({ message: z.string() });
const monitorExample = { balance_id: 'bln_0196a4c2-5a10-7b2e-8c31-6d4f2a9b7e02', condition: { field: 'debit_balance', operator: '>', value: 1000.5, precision: 100 }, description: 'Large spend' };

export function balanceMonitorRoutes(router: Router, core: LedgerCore): void {
  describeRoute(router, 'POST /balance-monitors', {
    tag: 'Balance monitors', summary: 'Watch a balance: balance.monitor goes to the notification webhook when the condition becomes true',
    body: monitorSchema, bodyExample: monitorExample, answers: answers(201, 'The monitor', monitorJsonSchema), errors: rejectionsOf('monitor.create'),
  });
  router.post('/balance-monitors', async (ctx) => {
    const fields = validate(monitorSchema, ctx.request.body);
    const { value, seq } = accepted(await core.run({ op: 'monitor.create', fields }));
    await respond(ctx, core, 201, monitorView(value), seq);
  });

  describeRoute(router, 'GET /balance-monitors', { tag: 'Balance monitors', summary: 'List every monitor', answers: answers(200, 'The monitors', z.array(monitorJsonSchema)) });
  router.get('/balance-monitors', async (ctx) => {
    await respond(ctx, core, 200, (await core.view.monitors()).map(monitorView));
  });

  describeRoute(router, 'GET /balance-monitors/balances/:balance_id', { tag: 'Balance monitors', summary: "List a balance's monitors", answers: answers(200, 'The monitors', z.array(monitorJsonSchema)) });
  router.get('/balance-monitors/balances/:balance_id', async (ctx) => {
    const monitors = await core.view.monitors(ctx.params.balance_id as string);
    await respond(ctx, core, 200, monitors.map(monitorView));
  });

  describeRoute(router, 'GET /balance-monitors/:id', { tag: 'Balance monitors', summary: 'Read a monitor', answers: answers(200, 'The monitor', monitorJsonSchema), errors: ['BAL_MONITOR_NOT_FOUND'] });
  router.get('/balance-monitors/:id', async (ctx) => {
    const monitor = await core.view.monitor(ctx.params.id as string);
    if (!monitor) throw new ApiError('BAL_MONITOR_NOT_FOUND', `Monitor with ID '${ctx.params.id}' not found`);
    await respond(ctx, core, 200, monitorView(monitor));
  });

  describeRoute(router, 'PUT /balance-monitors/:id', {
    tag: 'Balance monitors', summary: 'Replace a monitor', body: monitorSchema, bodyExample: monitorExample,
    answers: answers(200, 'The monitor', monitorJsonSchema.extend({ message: z.string() })), errors: rejectionsOf('monitor.update'),
  });
  router.put('/balance-monitors/:id', async (ctx) => {
    // An unknown monitor is 404 whatever the body.
    if (!(await core.view.monitor(ctx.params.id as string))) {
      throw new ApiError('BAL_MONITOR_NOT_FOUND', `Monitor with ID '${ctx.params.id}' not found`);
    }
    const fields = validate(monitorSchema, ctx.request.body);
    const { value, seq } = accepted(await core.run({ op: 'monitor.update', monitor_id: ctx.params.id as string, fields }));
    await respond(ctx, core, 200, { message: 'BalanceMonitor updated successfully', ...monitorView(value) }, seq);
  });

  describeRoute(router, 'DELETE /balance-monitors/:id', { tag: 'Balance monitors', summary: 'Delete a monitor', answers: answers(200, 'Deleted', messageSchema), errors: rejectionsOf('monitor.delete') });
  router.delete('/balance-monitors/:id', async (ctx) => {
    const { seq } = accepted(await core.run({ op: 'monitor.delete', monitor_id: ctx.params.id as string }));
    await respond(ctx, core, 200, { message: 'BalanceMonitor deleted successfully' }, seq);
  });
}
