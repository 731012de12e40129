// Hooks: register, list (optionally by type), read, replace, delete, and rotate the signing secret. The
// access table limits every one of these to the master key. A hook's signing secret is in the answer to
// its creation and to each rotation, and nowhere else; its URL must be a target hooks may reach.

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
    refuseTarget(core, fields.url);
    const { secret, sealed } = core.hookAdmin.newSigningSecret();
    const { value, seq } = accepted(engine.createHook(fields, sealed));
    await respond(ctx, core, 201, { ...hookView(value), signing_secret: secret }, seq);
  });

  router.post('/hooks/:id/rotate-secret', async (ctx) => {
    const { secret, sealed } = core.hookAdmin.newSigningSecret();
    const { value, seq } = accepted(engine.rotateHookSecret(ctx.params.id as string, sealed));
    await respond(ctx, core, 200, { ...hookView(value), signing_secret: secret }, seq);
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
    refuseTarget(core, fields.url);
    const { value, seq } = accepted(engine.updateHook(ctx.params.id as string, fields));
    await respond(ctx, core, 200, hookView(value), seq);
  });

  router.delete('/hooks/:id', async (ctx) => {
    const { seq } = accepted(engine.deleteHook(ctx.params.id as string));
    // Blnk's answer, which its SDK reads (DeleteHookResp).
    await respond(ctx, core, 200, { message: 'hook deleted successfully' }, seq);
  });
}

function refuseTarget(core: LedgerCore, url: string): void {
  const refusal = core.hookAdmin.targetRefusal(url);
  if (refusal) throw new ApiError('GEN_VALIDATION_ERROR', `invalid request: url: ${refusal}`, { url: refusal });
}
