// Hooks: register, list (optionally by type), read, replace, delete, rotate the signing secret, and read
// a hook's recent deliveries. The access table limits every one of these to the master key. A hook's
// signing secret is in the answer to its creation and to each rotation, and nowhere else; its URL must be
// a target hooks may reach. Deliveries are what this node's dispatcher followed since it started
// (hooks/delivery-history.ts, in memory, the newest DELIVERIES_LIMIT_MAX per hook): on a replicated
// group, the leader delivers.

import type { Router } from '@koa/router';
import { ApiError } from '../api-error.js';
import { hookSchema, listHooksQuerySchema } from '../access/access-schemas.js';
import { hookJsonSchema, hookView } from '../access/access-views.js';
import { z } from 'zod';
import { rejectionsOf } from '../../engine/operations.js';
import { EXAMPLES } from '../openapi/examples.js';
import { answers, describeRoute } from '../openapi/route-docs.js';
import type { LedgerCore } from '../ports/ledger-core.js';
import { accepted, respond } from '../respond.js';
import { validate } from '../schemas/validation.js';
import { nonNegativeInteger } from '../schemas/common-schemas.js';
import { timeText, timeTextSchema } from '../../wire/views.js';
import type { HookDelivery } from '../ports/ledger-core.js';

/** Deliveries a hook's history answers with: by default, and at most (what the history keeps per hook). */
export const DELIVERIES_LIMIT_DEFAULT = 50;
export const DELIVERIES_LIMIT_MAX = 100;

export const deliveriesQuerySchema = z.object({
  limit: nonNegativeInteger(DELIVERIES_LIMIT_DEFAULT, DELIVERIES_LIMIT_MAX).pipe(z.number().min(1)),
});

const deliverySchema = z.object({
  event_id: z.string().meta({ description: 'X-Event-ID of the delivery, the same on every attempt' }),
  event: z.string().meta({ description: 'transaction.applied, transaction.inflight, ...' }),
  transaction_id: z.string(),
  hook_type: z.enum(['PRE_TRANSACTION', 'POST_TRANSACTION']),
  seq: z.number().int().meta({ description: 'The log seq of the change delivered' }),
  status: z.enum(['pending', 'retrying', 'delivered', 'failed', 'dropped'])
    .meta({ description: 'pending: not tried yet; retrying: failed, tried again at next_attempt_at; failed: given up after its retries; dropped: the hook was deleted or deactivated first' }),
  attempts: z.number().int().meta({ description: 'Attempts made: the first and its retries' }),
  retries: z.number().int().meta({ description: 'Attempts after the first' }),
  last_attempt_at: timeTextSchema,
  next_attempt_at: timeTextSchema,
  last_failure: z.string().meta({ description: 'Why the last attempt failed (`status 500`, `ETIMEDOUT`, ...); empty when it did not' }),
});
const deliveriesSchema = z.object({
  hook_id: z.string(),
  since: timeTextSchema.meta({ description: 'When this node began following deliveries: earlier ones are not listed' }),
  deliveries: z.array(deliverySchema),
});

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

  describeRoute(router, 'GET /hooks/:id/deliveries', {
    tag: 'Hooks', summary: "A hook's recent deliveries, newest first, with their status and attempts (as this node followed them since it started)",
    query: deliveriesQuerySchema,
    answers: answers(200, 'The deliveries', deliveriesSchema, {
      hook_id: 'hook_0196a4c2-5a10-7b2e-8c31-6d4f2a9b7e09', since: '2026-05-04T12:00:00Z',
      deliveries: [{
        event_id: 'evt_3f9c0a7d1e5b4c2a8f6d0e9b7a1c3d5e', event: 'transaction.applied', transaction_id: 'txn_0196a4c2-5a10-7b2e-8c31-6d4f2a9b7e05',
        hook_type: 'POST_TRANSACTION', seq: 120, status: 'retrying', attempts: 2, retries: 1, last_attempt_at: '2026-05-04T12:00:03Z',
        next_attempt_at: '2026-05-04T12:00:05Z', last_failure: 'status 503',
      }],
    }),
    errors: ['HOOK_NOT_FOUND'],
  });
  router.get('/hooks/:id/deliveries', async (ctx) => {
    const { limit } = validate(deliveriesQuerySchema, ctx.query);
    const hookId = ctx.params.id as string;
    if (!(await core.view.hook(hookId))) throw new ApiError('HOOK_NOT_FOUND', `hook ${hookId} not found`);
    const { since, deliveries } = await core.hookAdmin.recentDeliveries(hookId, limit);
    await respond(ctx, core, 200, { hook_id: hookId, since: timeText(since), deliveries: deliveries.map(deliveryView) });
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

function deliveryView(delivery: HookDelivery): Record<string, unknown> {
  return {
    ...delivery,
    retries: Math.max(0, delivery.attempts - 1),
    last_attempt_at: timeText(delivery.last_attempt_at),
    next_attempt_at: timeText(delivery.next_attempt_at),
  };
}

function refuseTarget(core: LedgerCore, url: string): void {
  const refusal = core.hookAdmin.targetRefusal(url);
  if (refusal) throw new ApiError('GEN_VALIDATION_ERROR', `invalid request: url: ${refusal}`, { url: refusal });
}
