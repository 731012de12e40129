// Identities: create (under an id the caller chooses, if it does), list, read, replace, delete. An identity
// named by a balance cannot be deleted.

import type { Router } from '@koa/router';
import { ApiError } from '../api-error.js';
import { pageQuerySchema } from '../schemas/common-schemas.js';
import { createIdentitySchema, identitySchema } from '../schemas/identity-schemas.js';
import { identityView } from '../views/identity-view.js';
import type { LedgerCore } from '../ports/ledger-core.js';
import { accepted, respond } from '../respond.js';
import { validate } from '../schemas/validation.js';
import { answeredFilteredList } from './filtered-lists.js';
import { rejectionsOf } from '../../engine/operations.js';
import { z } from 'zod';
import { identityJsonSchema } from '../views/identity-view.js';
import { EXAMPLES } from '../openapi/examples.js';
import { answers, describeRoute } from '../openapi/route-docs.js';

const identityExample = { identity_type: 'individual', first_name: 'Ada', last_name: 'Lovelace', email_address: 'ada@example.com', city: 'London', country: 'GB' };

export function identityRoutes(router: Router, core: LedgerCore): void {
  describeRoute(router, 'POST /identities', {
    tag: 'Identities', summary: 'Create an identity (under the caller\'s `identity_id` when one is given: `idt_` and a UUID)',
    body: createIdentitySchema, bodyExample: identityExample, invalidCode: 'IDT_VALIDATION_ERROR', answers: answers(201, 'The identity', identityJsonSchema, EXAMPLES.identity),
    errors: rejectionsOf('identity.create'),
  });
  router.post('/identities', async (ctx) => {
    const { fields, identity_id } = validate(createIdentitySchema, ctx.request.body, 'IDT_VALIDATION_ERROR');
    const command = identity_id === undefined ? { op: 'identity.create' as const, fields } : { op: 'identity.create' as const, fields, identity_id };
    const { value, seq } = accepted(await core.run(command));
    await respond(ctx, core, 201, identityView(value), seq);
  });

  describeRoute(router, 'GET /identities', { tag: 'Identities', summary: 'List identities, newest first', query: pageQuerySchema, answers: answers(200, 'A page of identities', z.array(identityJsonSchema), [EXAMPLES.identity]) });
  router.get('/identities', async (ctx) => {
    const page = validate(pageQuerySchema, ctx.query);
    if (await answeredFilteredList(ctx, core, 'identities', page)) return;
    await respond(ctx, core, 200, (await core.view.identities(page)).map(identityView));
  });

  describeRoute(router, 'GET /identities/:id', { tag: 'Identities', summary: 'Read an identity', answers: answers(200, 'The identity', identityJsonSchema, EXAMPLES.identity), errors: ['IDT_NOT_FOUND'] });
  router.get('/identities/:id', async (ctx) => {
    const identity = await core.view.identity(ctx.params.id as string);
    if (!identity) throw new ApiError('IDT_NOT_FOUND', `identity ${ctx.params.id} not found`);
    await respond(ctx, core, 200, identityView(identity));
  });

  describeRoute(router, 'PUT /identities/:id', { tag: 'Identities', summary: 'Replace an identity', body: identitySchema, bodyExample: identityExample, invalidCode: 'IDT_VALIDATION_ERROR', answers: answers(200, 'The identity', identityJsonSchema, EXAMPLES.identity), errors: rejectionsOf('identity.update') });
  router.put('/identities/:id', async (ctx) => {
    // An unknown identity is 404 whatever the body, as in Blnk (which looks it up before anything else).
    if (!(await core.view.identity(ctx.params.id as string))) throw new ApiError('IDT_NOT_FOUND', `identity ${ctx.params.id} not found`);
    const fields = validate(identitySchema, ctx.request.body, 'IDT_VALIDATION_ERROR');
    const { value, seq } = accepted(await core.run({ op: 'identity.update', identity_id: ctx.params.id as string, fields }));
    await respond(ctx, core, 200, identityView(value), seq);
  });

  describeRoute(router, 'DELETE /identities/:id', {
    tag: 'Identities', summary: 'Delete an identity no balance names', answers: answers(200, 'Deleted', z.object({ message: z.string() }), { message: 'Identity deleted successfully' }),
    errors: rejectionsOf('identity.delete'),
  });
  router.delete('/identities/:id', async (ctx) => {
    const { seq } = accepted(await core.run({ op: 'identity.delete', identity_id: ctx.params.id as string }));
    await respond(ctx, core, 200, { message: 'Identity deleted successfully' }, seq);
  });
}
