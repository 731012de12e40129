// Balances: create, list (with Blnk's query-string filters), read (live, with `?include=identity,ledger`
// and `?with_queued=true`, or rebuilt from the log), its fund lineage, give to an identity, and find an
// internal balance by name.

import { foldedBalance } from './balance-history-routes.js';
import type { Router } from '@koa/router';
import { z } from 'zod';
import { ApiError } from '../api-error.js';
import { IDENTIFIER_LENGTH_MAX, strictPageQuerySchema } from '../schemas/common-schemas.js';
import { createBalanceSchema } from '../schemas/ledger-schemas.js';
import type { LedgerCore } from '../ports/ledger-core.js';
import { accepted, respond } from '../respond.js';
import { validate } from '../schemas/validation.js';
import type { BalanceRecord } from '../../engine/records.js';
import { rejectionsOf } from '../../engine/operations.js';
import { identityView } from '../views/identity-view.js';
import { EXAMPLES } from '../openapi/examples.js';
import { answers, describeRoute } from '../openapi/route-docs.js';
import { balanceJsonSchema, balanceView, ledgerView } from '../../wire/views.js';
import { balanceLineageJsonSchema, balanceLineageView } from '../../wire/lineage-views.js';
import { answeredFilteredList } from './filtered-lists.js';

export const balanceQuerySchema = z.object({
  from_source: z.enum(['true', 'false']).optional(),
  /** Blnk's `with_queued`: `true` adds what is queued against and for the balance; anything else does not. */
  with_queued: z.string().max(16).optional(),
});

/** A balance as `with_queued=true` shows it: with what queued transactions will take from it and give to it. */
const queuedBalanceJsonSchema = balanceJsonSchema.extend({
  queued_debit_balance: z.bigint().optional().meta({ description: 'with_queued=true: what transactions waiting in mailboxes will take from the balance' }),
  queued_credit_balance: z.bigint().optional().meta({ description: 'with_queued=true: what transactions waiting in mailboxes will give to the balance' }),
});

/** Blnk's PUT /balances/:id/identity: the identity the balance now belongs to. */
export const balanceIdentitySchema = z.object({
  identity_id: z.string({ message: 'identity_id is required' }).trim().min(1, 'identity_id is required').max(IDENTIFIER_LENGTH_MAX),
});

/** What `?include=` may add to a balance: its identity and its ledger, as Blnk embeds them. */
type Include = 'identity' | 'ledger';

/** `?include=identity&include=ledger` or `?include=identity,ledger`; other names are ignored, as in Blnk. */
function includesOf(raw: string | string[] | undefined): Set<Include> {
  const names = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).flatMap((value) => value.split(','));
  const includes = new Set<Include>();
  for (const name of names) {
    const trimmed = name.trim().toLowerCase();
    if (trimmed === 'identity' || trimmed === 'ledger') includes.add(trimmed);
  }
  return includes;
}

/** The balance with the records it names embedded when asked for (absent when it names none). */
async function withIncludes(core: LedgerCore, balance: BalanceRecord, includes: Set<Include>): Promise<Record<string, unknown>> {
  const view = balanceView(balance);
  if (includes.has('identity') && balance.identity_id !== '') {
    const identity = await core.view.identity(balance.identity_id);
    if (identity) view.identity = identityView(identity);
  }
  if (includes.has('ledger')) {
    const ledger = await core.view.ledger(balance.ledger_id);
    if (ledger) view.ledger = ledgerView(ledger);
  }
  return view;
}

export function balanceRoutes(router: Router, core: LedgerCore): void {
  describeRoute(router, 'POST /balances', {
    tag: 'Balances', summary: 'Create a balance', body: createBalanceSchema,
    bodyExample: { ledger_id: 'ldg_0196a4c2-57e1-7c1e-9d5a-2f1e0b6c9a01', currency: 'USD', meta_data: { customer: 'c-77' } },
    answers: answers(201, 'The balance', balanceJsonSchema, EXAMPLES.balance), errors: rejectionsOf('balance.create'),
  });
  router.post('/balances', async (ctx) => {
    const command = validate(createBalanceSchema, ctx.request.body);
    const { value, seq } = accepted(await core.run({ op: 'balance.create', ...command }));
    await respond(ctx, core, 201, balanceView(value), seq);
  });

  describeRoute(router, 'GET /balances', { tag: 'Balances', summary: 'List balances, newest first', query: strictPageQuerySchema, answers: answers(200, 'A page of balances', z.array(balanceJsonSchema), [EXAMPLES.balance]) });
  router.get('/balances', async (ctx) => {
    const page = validate(strictPageQuerySchema, ctx.query);
    if (await answeredFilteredList(ctx, core, 'balances', page)) return;
    const balances = await core.view.balances(page);
    await respond(ctx, core, 200, balances.map(balanceView));
  });

  describeRoute(router, 'PUT /balances/:id/identity', {
    tag: 'Balances', summary: 'Give a balance to an identity', body: balanceIdentitySchema,
    answers: answers(200, 'Done', z.object({ message: z.string() }), { message: 'Balance identity updated successfully' }), errors: rejectionsOf('balance.set_identity'),
  });
  router.put('/balances/:id/identity', async (ctx) => {
    const { identity_id } = validate(balanceIdentitySchema, ctx.request.body ?? {});
    const { seq } = accepted(await core.run({ op: 'balance.set_identity', balance_id: ctx.params.id as string, identity_id }));
    await respond(ctx, core, 200, { message: 'Balance identity updated successfully' }, seq);
  });

  describeRoute(router, 'GET /balances/:id/lineage', {
    tag: 'Balances', summary: 'Fund lineage: a balance\'s tagged funds by provider (received, spent, available)',
    answers: answers(200, 'The providers\' funds', balanceLineageJsonSchema, EXAMPLES.balanceLineage), errors: ['BAL_NOT_FOUND', 'GEN_BAD_REQUEST'],
  });
  router.get('/balances/:id/lineage', async (ctx) => {
    const balanceId = ctx.params.id as string;
    if (!(await core.view.balanceExists(balanceId))) throw new ApiError('BAL_NOT_FOUND', `Balance with ID '${balanceId}' not found`);
    const tracked = await core.view.fundLineage(balanceId);
    // Blnk answers 400 for a balance that does not track lineage (api/errors.go "Lineage").
    if (!tracked) throw new ApiError('GEN_BAD_REQUEST', `balance ${balanceId} does not have fund lineage tracking enabled`);
    await respond(ctx, core, 200, balanceLineageView(tracked));
  });

  describeRoute(router, 'GET /balances/indicator/:indicator/currency/:currency', {
    tag: 'Balances', summary: 'Find a balance by indicator and currency', params: { indicator: 'e.g. `@world`' },
    answers: answers(200, 'The balance', balanceJsonSchema, EXAMPLES.balance), errors: ['BAL_NOT_FOUND'],
  });
  router.get('/balances/indicator/:indicator/currency/:currency', async (ctx) => {
    const { indicator, currency } = ctx.params as { indicator: string; currency: string };
    const balance = await core.view.balanceByIndicator(indicator, currency);
    if (!balance) throw new ApiError('BAL_NOT_FOUND', `no ${currency} balance named ${indicator}`);
    await respond(ctx, core, 200, balanceView(balance));
  });

  describeRoute(router, 'GET /balances/:id', {
    tag: 'Balances', summary: 'Read a balance (live, with what is queued against and for it with with_queued=true, or rebuilt from the log with from_source=true)', query: balanceQuerySchema,
    answers: answers(200, 'The balance; with from_source=true, `{balance}` folded from the log', z.union([queuedBalanceJsonSchema, z.object({ balance: balanceJsonSchema })]), EXAMPLES.balance),
    errors: ['BAL_NOT_FOUND', 'QUEUE_BACKPRESSURE'],
  });
  router.get('/balances/:id', async (ctx) => {
    const query = validate(balanceQuerySchema, ctx.query);
    const balanceId = ctx.params.id as string;
    if (query.from_source === 'true') {
      const seq = core.visibleSeq();
      await core.durable(seq);
      const rebuilt = foldedBalance(await core.balanceHistory(balanceId, Number.MAX_SAFE_INTEGER, seq));
      if (!rebuilt) throw new ApiError('BAL_NOT_FOUND', `balance ${balanceId} not found`);
      await respond(ctx, core, 200, { balance: balanceView(rebuilt) }, seq);
      return;
    }
    const balance = await core.view.balance(balanceId);
    if (!balance) throw new ApiError('BAL_NOT_FOUND', `balance ${balanceId} not found`);
    const view = await withIncludes(core, balance, includesOf(ctx.query.include));
    if (query.with_queued === 'true') Object.assign(view, await core.view.queuedAmounts(balanceId));
    await respond(ctx, core, 200, view);
  });
}
