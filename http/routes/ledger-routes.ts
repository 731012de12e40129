// Ledgers: create, list (with Blnk's query-string filters), read, update.

import type { Router } from '@koa/router';
import { z } from 'zod';
import { EXAMPLES } from '../openapi/examples.js';
import { answers, describeRoute } from '../openapi/route-docs.js';
import { ledgerJsonSchema } from '../../wire/views.js';
import { ApiError } from '../api-error.js';
import { strictPageQuerySchema } from '../schemas/common-schemas.js';
import { createLedgerSchema, updateLedgerSchema } from '../schemas/ledger-schemas.js';
import type { LedgerCore } from '../ports/ledger-core.js';
import { accepted, respond } from '../respond.js';
import { validate } from '../schemas/validation.js';
import { ledgerView } from '../../wire/views.js';
import { answeredFilteredList } from './filtered-lists.js';
import { rejectionsOf } from '../../engine/operations.js';

export function ledgerRoutes(router: Router, core: LedgerCore): void {
  describeRoute(router, 'POST /ledgers', {
    tag: 'Ledgers', summary: 'Create a ledger', body: createLedgerSchema, bodyExample: { name: 'Customer wallets', meta_data: { region: 'eu' } },
    answers: answers(201, 'The ledger', ledgerJsonSchema, EXAMPLES.ledger),
  });
  router.post('/ledgers', async (ctx) => {
    const command = validate(createLedgerSchema, ctx.request.body);
    const { value, seq } = accepted(await core.run({ op: 'ledger.create', ...command }));
    await respond(ctx, core, 201, ledgerView(value), seq);
  });

  describeRoute(router, 'GET /ledgers', { tag: 'Ledgers', summary: 'List ledgers, newest first', query: strictPageQuerySchema, answers: answers(200, 'A page of ledgers', z.array(ledgerJsonSchema), [EXAMPLES.ledger]) });
  router.get('/ledgers', async (ctx) => {
    const page = validate(strictPageQuerySchema, ctx.query);
    if (await answeredFilteredList(ctx, core, 'ledgers', page)) return;
    const ledgers = await core.view.ledgers(page);
    await respond(ctx, core, 200, ledgers.map(ledgerView));
  });

  describeRoute(router, 'GET /ledgers/:id', { tag: 'Ledgers', summary: 'Read a ledger', answers: answers(200, 'The ledger', ledgerJsonSchema, EXAMPLES.ledger), errors: ['LGR_NOT_FOUND'] });
  router.get('/ledgers/:id', async (ctx) => {
    const ledger = await core.view.ledger(ctx.params.id as string);
    if (!ledger) throw new ApiError('LGR_NOT_FOUND', `ledger ${ctx.params.id} not found`);
    await respond(ctx, core, 200, ledgerView(ledger));
  });

  describeRoute(router, 'PUT /ledgers/:id', {
    tag: 'Ledgers', summary: 'Rename a ledger or replace its metadata', body: updateLedgerSchema, bodyExample: { name: 'Wallets' },
    answers: answers(200, 'The updated ledger', ledgerJsonSchema, EXAMPLES.ledger), errors: rejectionsOf('ledger.update'),
  });
  router.put('/ledgers/:id', async (ctx) => {
    const update = validate(updateLedgerSchema, ctx.request.body);
    const { value, seq } = accepted(await core.run({ op: 'ledger.update', ledger_id: ctx.params.id as string, ...update }));
    await respond(ctx, core, 200, ledgerView(value), seq);
  });
}
