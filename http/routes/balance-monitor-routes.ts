// Balance monitors, Blnk's six routes: create, read, list all, list a balance's, replace, delete. A
// monitor fires `balance.monitor` to the server's notification webhook when a change to its balance
// makes its condition true (engine/balance-monitors.ts, hooks/monitor-notifications.ts).

import type { Router } from '@koa/router';
import { ApiError } from '../api-error.js';
import type { LedgerCore } from '../ledger-core.js';
import { monitorSchema } from '../monitor-schemas.js';
import { accepted, respond } from '../respond.js';
import { validate } from '../validation.js';
import { monitorView } from '../../wire/views.js';

export function balanceMonitorRoutes(router: Router, core: LedgerCore): void {
  const { engine } = core;

  router.post('/balance-monitors', async (ctx) => {
    const fields = validate(monitorSchema, ctx.request.body);
    const { value, seq } = accepted(engine.createMonitor(fields));
    await respond(ctx, core, 201, monitorView(value), seq);
  });

  router.get('/balance-monitors', async (ctx) => {
    await respond(ctx, core, 200, [...engine.state.monitors.values()].map(monitorView));
  });

  router.get('/balance-monitors/balances/:balance_id', async (ctx) => {
    const ids = engine.state.monitorsByBalance.get(ctx.params.balance_id as string) ?? new Set<string>();
    const monitors = [...engine.state.monitors.values()].filter((monitor) => ids.has(monitor.monitor_id));
    await respond(ctx, core, 200, monitors.map(monitorView));
  });

  router.get('/balance-monitors/:id', async (ctx) => {
    const monitor = engine.state.monitors.get(ctx.params.id as string);
    if (!monitor) throw new ApiError('BAL_MONITOR_NOT_FOUND', `Monitor with ID '${ctx.params.id}' not found`);
    await respond(ctx, core, 200, monitorView(monitor));
  });

  router.put('/balance-monitors/:id', async (ctx) => {
    // An unknown monitor is 404 whatever the body.
    if (!engine.state.monitors.has(ctx.params.id as string)) {
      throw new ApiError('BAL_MONITOR_NOT_FOUND', `Monitor with ID '${ctx.params.id}' not found`);
    }
    const fields = validate(monitorSchema, ctx.request.body);
    const { value, seq } = accepted(engine.updateMonitor(ctx.params.id as string, fields));
    await respond(ctx, core, 200, { message: 'BalanceMonitor updated successfully', ...monitorView(value) }, seq);
  });

  router.delete('/balance-monitors/:id', async (ctx) => {
    const { seq } = accepted(engine.deleteMonitor(ctx.params.id as string));
    await respond(ctx, core, 200, { message: 'BalanceMonitor deleted successfully' }, seq);
  });
}
