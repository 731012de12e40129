// Identities: create, list, read, replace, delete. An identity named by a balance cannot be deleted.

import type { Router } from '@koa/router';
import { ApiError } from '../api-error.js';
import { pageQuerySchema } from '../common-schemas.js';
import { identitySchema } from '../identity-schemas.js';
import { identityView } from '../identity-view.js';
import type { LedgerCore } from '../ledger-core.js';
import { accepted, respond } from '../respond.js';
import { validate } from '../validation.js';
import { newestFirst } from './paging.js';
import { z } from 'zod';
import { identityJsonSchema } from '../identity-view.js';
import { EXAMPLES } from '../openapi/examples.js';
import { answers, describeRoute } from '../openapi/route-docs.js';

const identityExample = { identity_type: 'individual', first_name: 'Ada', last_name: 'Lovelace', email_address: 'ada@example.com', city: 'London', country: 'GB' };

export function identityRoutes(router: Router, core: LedgerCore): void {
  const { engine } = core;

  describeRoute(router, 'POST /identities', { tag: 'Identities', summary: 'Create an identity', body: identitySchema, bodyExample: identityExample, answers: answers(201, 'The identity', identityJsonSchema, EXAMPLES.identity) });
  router.post('/identities', async (ctx) => {
    const fields = validate(identitySchema, ctx.request.body);
    const { value, seq } = accepted(engine.createIdentity(fields));
    await respond(ctx, core, 201, identityView(value), seq);
  });

  describeRoute(router, 'GET /identities', { tag: 'Identities', summary: 'List identities, newest first', query: pageQuerySchema, answers: answers(200, 'A page of identities', z.array(identityJsonSchema), [EXAMPLES.identity]) });
  router.get('/identities', async (ctx) => {
    const page = validate(pageQuerySchema, ctx.query);
    await respond(ctx, core, 200, newestFirst(engine.state.identities, page.offset, page.limit).map(identityView));
  });

  describeRoute(router, 'GET /identities/:id', { tag: 'Identities', summary: 'Read an identity', answers: answers(200, 'The identity', identityJsonSchema, EXAMPLES.identity), errors: ['IDT_NOT_FOUND'] });
  router.get('/identities/:id', async (ctx) => {
    const identity = engine.state.identities.get(ctx.params.id as string);
    if (!identity) throw new ApiError('IDT_NOT_FOUND', `identity ${ctx.params.id} not found`);
    await respond(ctx, core, 200, identityView(identity));
  });

  describeRoute(router, 'PUT /identities/:id', { tag: 'Identities', summary: 'Replace an identity', body: identitySchema, bodyExample: identityExample, answers: answers(200, 'The identity', identityJsonSchema, EXAMPLES.identity), errors: ['IDT_NOT_FOUND'] });
  router.put('/identities/:id', async (ctx) => {
    const fields = validate(identitySchema, ctx.request.body);
    const { value, seq } = accepted(engine.updateIdentity(ctx.params.id as string, fields));
    await respond(ctx, core, 200, identityView(value), seq);
  });

  describeRoute(router, 'DELETE /identities/:id', {
    tag: 'Identities', summary: 'Delete an identity no balance names', answers: answers(200, 'Deleted', z.object({ message: z.string() }), { message: 'Identity deleted successfully' }),
    errors: ['IDT_NOT_FOUND', 'GEN_CONFLICT'],
  });
  router.delete('/identities/:id', async (ctx) => {
    const { seq } = accepted(engine.deleteIdentity(ctx.params.id as string));
    await respond(ctx, core, 200, { message: 'Identity deleted successfully' }, seq);
  });
}
