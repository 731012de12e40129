// Hooks: register, list (optionally by type), read, replace, delete, and rotate the signing secret. The
// access table limits every one of these to the master key. A hook's signing secret is in the answer to
// its creation and to each rotation, and nowhere else; its URL must be a target hooks may reach.

import type { Router } from '@koa/router';
import { ApiError } from '../api-error.js';
import { hookSchema, listHooksQuerySchema } from '../access-schemas.js';
import { hookJsonSchema, hookView } from '../access-views.js';
import { z } from 'zod';
import { rejectionsOf } from '../../engine/operations.js';
import { EXAMPLES } from '../openapi/examples.js';
import { answers, describeRoute } from '../openapi/route-docs.js';
import type { LedgerCore } from '../ledger-core.js';
import { accepted, respond } from '../respond.js';
import { validate } from '../validation.js';

const hookWithSecretSchema = hookJsonSchema.extend({ signing_secret: z.string().meta({ description: 'Shown in this answer only' }) });
const hookWithSecretExample = { ...(EXAMPLES.hook as object), signing_secret: 'whsec_3f9c0a7d1e5b4c2a8f6d0e9b7a1c3d5e' };
const hookBodyExample = { name: 'ledger events', url: 'https://hooks.example.com/folio', type: 'POST_TRANSACTION', active: true, timeout: 10, retry_count: 3 };

export function hookRoutes(router: Router, core: LedgerCore): void {
  describeRoute(router, 'POST /hooks', { tag: 'Hooks', summary: 'Register a hook', body: hookSchema, bodyExample: hookBodyExample, answers: answers(201, 'The hook and its signing secret', hookWithSecretSchema, hookWithSecretExample) });
  router.post('/hooks', async (ctx) => {
    const fields = validate(hookSchema, ctx.request.body);
    refuseTarget(core, fields.url);
    const { secret, sealed } = await core.hookAdmin.newSigningSecret();
    const { value, seq } = accepted(await core.run({ op: 'hook.create', fields, signing_secret_sealed: sealed }));
    await respond(ctx, core, 201, { ...hookView(value), signing_secret: secret }, seq);
  });

  describeRoute(router, 'POST /hooks/:id/rotate-secret', { tag: 'Hooks', summary: "Replace a hook's signing secret", answers: answers(200, 'The hook and its new signing secret', hookWithSecretSchema, hookWithSecretExample), errors: rejectionsOf('hook.rotate_secret') });
  router.post('/hooks/:id/rotate-secret', async (ctx) => {
    const { secret, sealed } = await core.hookAdmin.newSigningSecret();
    const { value, seq } = accepted(await core.run({ op: 'hook.rotate_secret', hook_id: ctx.params.id as string, signing_secret_sealed: sealed }));
    await respond(ctx, core, 200, { ...hookView(value), signing_secret: secret }, seq);
  });

  describeRoute(router, 'GET /hooks', { tag: 'Hooks', summary: 'List hooks', query: listHooksQuerySchema, answers: answers(200, 'The hooks', z.array(hookJsonSchema), [EXAMPLES.hook]) });
  router.get('/hooks', async (ctx) => {
    const { type } = validate(listHooksQuerySchema, ctx.query);
    const hooks = await core.view.hooks(type);
    await respond(ctx, core, 200, hooks.map(hookView));
  });

  describeRoute(router, 'GET /hooks/:id', { tag: 'Hooks', summary: 'Read a hook', answers: answers(200, 'The hook', hookJsonSchema, EXAMPLES.hook), errors: ['HOOK_NOT_FOUND'] });
  router.get('/hooks/:id', async (ctx) => {
    const hook = await core.view.hook(ctx.params.id as string);
    if (!hook) throw new ApiError('HOOK_NOT_FOUND', `hook ${ctx.params.id} not found`);
    await respond(ctx, core, 200, hookView(hook));
  });

  describeRoute(router, 'PUT /hooks/:id', { tag: 'Hooks', summary: 'Replace a hook', body: hookSchema, bodyExample: hookBodyExample, answers: answers(200, 'The hook', hookJsonSchema, EXAMPLES.hook), errors: rejectionsOf('hook.update') });
  router.put('/hooks/:id', async (ctx) => {
    const fields = validate(hookSchema, ctx.request.body);
    refuseTarget(core, fields.url);
    const { value, seq } = accepted(await core.run({ op: 'hook.update', hook_id: ctx.params.id as string, fields }));
    await respond(ctx, core, 200, hookView(value), seq);
  });

  describeRoute(router, 'DELETE /hooks/:id', {
    tag: 'Hooks', summary: 'Delete a hook', answers: answers(200, 'Deleted', z.object({ message: z.string() }), { message: 'hook deleted successfully' }),
    errors: rejectionsOf('hook.delete'),
  });
  router.delete('/hooks/:id', async (ctx) => {
    const { seq } = accepted(await core.run({ op: 'hook.delete', hook_id: ctx.params.id as string }));
    // Blnk's answer, which its SDK reads (DeleteHookResp).
    await respond(ctx, core, 200, { message: 'hook deleted successfully' }, seq);
  });
}

function refuseTarget(core: LedgerCore, url: string): void {
  const refusal = core.hookAdmin.targetRefusal(url);
  if (refusal) throw new ApiError('GEN_VALIDATION_ERROR', `invalid request: url: ${refusal}`, { url: refusal });
}
