// Hooks: register, list (optionally by type), read, replace and delete. The access table limits every
// one of these to the master key.

import type { Router } from '@koa/router';
import { ApiError } from '../api-error.js';
import { hookSchema, listHooksQuerySchema } from '../access-schemas.js';
import { hookView } from '../access-views.js';
import type { LedgerCore } from '../ledger-core.js';
import { accepted, respond } from '../respond.js';
import { validate } from '../validation.js';

export function hookRoutes(router: Router, core: LedgerCore): void {
  const { engine } = core;

  router.post('/hooks', async (ctx) => {
    const fields = validate(hookSchema, ctx.request.body);
    const { value, seq } = accepted(engine.createHook(fields));
    await respond(ctx, core, 201, hookView(value), seq);
  });

  router.get('/hooks', async (ctx) => {
    const { type } = validate(listHooksQuerySchema, ctx.query);
    const hooks = [...engine.state.hooks.values()].filter((hook) => type === undefined || hook.type === type);
    await respond(ctx, core, 200, hooks.map(hookView));
  });

  router.get('/hooks/:id', async (ctx) => {
    const hook = engine.state.hooks.get(ctx.params.id as string);
    if (!hook) throw new ApiError('HOOK_NOT_FOUND', `hook ${ctx.params.id} not found`);
    await respond(ctx, core, 200, hookView(hook));
  });

  router.put('/hooks/:id', async (ctx) => {
    const fields = validate(hookSchema, ctx.request.body);
    const { value, seq } = accepted(engine.updateHook(ctx.params.id as string, fields));
    await respond(ctx, core, 200, hookView(value), seq);
  });

  router.delete('/hooks/:id', async (ctx) => {
    const { seq } = accepted(engine.deleteHook(ctx.params.id as string));
    await core.durable(seq);
    ctx.status = 204;
  });
}
