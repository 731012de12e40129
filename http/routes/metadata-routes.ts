// POST /:id/metadata: merges keys into the metadata of a ledger, balance, transaction or identity; the
// id's prefix says which. Registered after every other route, because its first path segment is a
// parameter: routes with a fixed first segment are matched before it.

import type { Router } from '@koa/router';
import { metadataUpdateSchema } from '../schemas/identity-schemas.js';
import type { LedgerCore } from '../ports/ledger-core.js';
import { accepted, respond } from '../respond.js';
import { validate } from '../schemas/validation.js';
import { z } from 'zod';
import { rejectionsOf } from '../../engine/operations.js';
import { describeRoute, answers } from '../openapi/route-docs.js';

export function metadataRoutes(router: Router, core: LedgerCore): void {
  describeRoute(router, 'POST /:id/metadata', {
    tag: 'Metadata', summary: 'Merge keys into the metadata of a ledger, balance, transaction or identity', params: { id: 'The record id; its prefix (ldg_, bln_, txn_, idt_) says which kind' },
    body: metadataUpdateSchema, bodyExample: { meta_data: { tier: 'gold' } },
    answers: answers(201, 'The merged metadata', z.object({ meta_data: z.record(z.string(), z.unknown()) }), { meta_data: { region: 'eu', tier: 'gold' } }),
    errors: rejectionsOf('metadata.update'),
  });
  router.post('/:id/metadata', async (ctx) => {
    const body = validate(metadataUpdateSchema, ctx.request.body);
    const { value, seq } = accepted(await core.run({ op: 'metadata.update', entity_id: ctx.params.id as string, meta_data: body.meta_data }));
    await respond(ctx, core, 201, { meta_data: value }, seq);
  });
}
