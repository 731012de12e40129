// A balance's statement: GET /balances/:id/statement?from=&to=&limit=&offset= answers the opening balance
// (everything settled before `from`), the closing balance (through `to`), the totals of credits and
// debits in between, and each movement in the window (transaction, reference, when it counts, signed
// amount, balance after it), paged with Blnk's limit/offset. Folded from the log, exact
// (engine/balance-statement.ts). JSON by default; CSV with `format=csv` or `Accept: text/csv`. When the
// window ends inside a closed period of the balance's ledger, `sealed_by` names the period: nothing can
// change the statement any more, and it is a function of the log up to the period's seal
// (docs/decisions-periods.md).

import type { Router } from '@koa/router';
import { z } from 'zod';
import type { StatementMovement, StatementPage } from '../../engine/balance-statement.js';
import { timeText, timeTextSchema } from '../../wire/views.js';
import { ApiError, BACKPRESSURE_RETRY_AFTER_SECONDS } from '../api-error.js';
import { asJson } from '../openapi/examples.js';
import { answers, describeRoute } from '../openapi/route-docs.js';
import type { LedgerCore } from '../ports/ledger-core.js';
import { SEQ_HEADER } from '../middleware/read-your-writes.js';
import { respond } from '../respond.js';
import { pageQuerySchema } from '../schemas/common-schemas.js';
import { parseTimeInput } from '../schemas/time-input.js';
import { validate } from '../schemas/validation.js';

const TIME_TEXT_LENGTH_MAX = 64;

export const statementQuerySchema = pageQuerySchema.extend({
  from: z.string().max(TIME_TEXT_LENGTH_MAX).optional().meta({ description: 'start of the window, inclusive (RFC 3339); left out: the beginning' }),
  to: z.string().max(TIME_TEXT_LENGTH_MAX).optional().meta({ description: 'end of the window, inclusive (RFC 3339); left out: now' }),
  format: z.enum(['json', 'csv']).optional().meta({ description: 'csv for text/csv (as Accept: text/csv asks)' }),
});

const movementJsonSchema = z.object({
  transaction_id: z.string().nullable(),
  reference: z.string().nullable(),
  effective_date: timeTextSchema,
  amount: z.bigint().meta({ description: 'signed change to the balance in the smallest unit: credits positive, debits negative' }),
  running_balance: z.bigint(),
}).meta({ id: 'StatementMovement' });

const statementJsonSchema = z.object({
  balance_id: z.string(),
  ledger_id: z.string(),
  currency: z.string(),
  from: timeTextSchema,
  to: timeTextSchema,
  opening_balance: z.bigint(),
  closing_balance: z.bigint(),
  total_credits: z.bigint(),
  total_debits: z.bigint(),
  movement_count: z.number().int(),
  movements: z.array(movementJsonSchema),
  sealed_by: z.object({ period_id: z.string(), sealed_seq: z.number().int(), sealed_hash: z.string() }).nullable()
    .meta({ description: 'the closed period the window ends in, if it does: the statement can no longer change' }),
}).meta({ id: 'Statement' });

function movementView(movement: StatementMovement): Record<string, unknown> {
  return {
    transaction_id: movement.transaction_id,
    reference: movement.reference,
    effective_date: timeText(movement.at),
    amount: movement.amount,
    running_balance: movement.running_balance,
  };
}

const CSV_COLUMNS = ['kind', 'transaction_id', 'reference', 'effective_date', 'amount', 'running_balance'];

/** A CSV field: quoted, quotes doubled, and a leading formula character defused for spreadsheets. */
function csvField(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return `"${safe.replaceAll('"', '""')}"`;
}

/** The statement as CSV: an opening row, a row per movement of the page, a closing row. */
function statementCsv(statement: StatementPage, from: string, to: string): string {
  const rows = [CSV_COLUMNS.join(',')];
  rows.push(['opening', '', '', from, '', String(statement.opening_balance)].join(','));
  for (const movement of statement.movements) {
    rows.push([
      'movement', csvField(movement.transaction_id ?? ''), csvField(movement.reference ?? ''), timeText(movement.at),
      String(movement.amount), String(movement.running_balance),
    ].join(','));
  }
  rows.push(['closing', '', '', to, String(statement.closing_balance - statement.opening_balance), String(statement.closing_balance)].join(','));
  return `${rows.join('\r\n')}\r\n`;
}

export function statementRoutes(router: Router, core: LedgerCore): void {
  describeRoute(router, 'GET /balances/:id/statement', {
    tag: 'Balances',
    summary: 'The balance\'s statement for a window: opening and closing balance, totals, and every settled movement with the balance after it, exact (folded from the log); CSV with format=csv or Accept: text/csv',
    query: statementQuerySchema,
    answers: answers(200, 'The statement', statementJsonSchema, asJson({
      balance_id: 'bln_0196a4c2-5a10-7b2e-8c31-6d4f2a9b7e02', ledger_id: 'ldg_0196a4c2-5a10-7b2e-8c31-6d4f2a9b7e01', currency: 'USD',
      from: '2026-04-01T00:00:00Z', to: '2026-04-30T23:59:59.999Z',
      opening_balance: 10_000n, closing_balance: 7_500n, total_credits: 0n, total_debits: 2_500n, movement_count: 1,
      movements: [{ transaction_id: 'txn_0196a4c2-7e31-7a40-9c5d-3b2a1f0e9d09', reference: 'rent-april', effective_date: '2026-04-03T09:00:00Z', amount: -2_500n, running_balance: 7_500n }],
      sealed_by: null,
    })).map((answer) => ({
      ...answer,
      description: 'The statement: JSON, or CSV (an opening row, a row per movement, a closing row) with format=csv or Accept: text/csv',
      contentType: ['application/json', 'text/csv'],
    })),
    errors: ['BAL_NOT_FOUND', 'BAL_INVALID_TIMESTAMP', 'BAL_STATEMENT_TOO_LONG', 'QUEUE_BACKPRESSURE', 'GEN_VALIDATION_ERROR'],
  });
  router.get('/balances/:id/statement', async (ctx) => {
    const balanceId = ctx.params.id as string;
    const params = validate(statementQuerySchema, ctx.query);
    const seq = core.visibleSeq();
    const fromMs = timeParam('from', params.from) ?? 0;
    const toMs = timeParam('to', params.to) ?? Date.now();
    if (fromMs > toMs) throw new ApiError('BAL_INVALID_TIMESTAMP', 'from is after to', { from: 'is after to' });
    const balance = await core.view.balance(balanceId);
    if (!balance) throw new ApiError('BAL_NOT_FOUND', `balance ${balanceId} not found`);
    await core.durable(seq);
    const answer = await core.balanceStatement(balanceId, fromMs, toMs, seq, params.offset, params.limit);
    if (!answer.ok) {
      const retry = answer.rejection.code === 'QUEUE_BACKPRESSURE' ? { 'Retry-After': String(BACKPRESSURE_RETRY_AFTER_SECONDS) } : undefined;
      throw new ApiError(answer.rejection.code, answer.rejection.message, undefined, retry);
    }
    const statement = answer.value;
    const period = (await core.view.periods(balance.ledger_id)).find((candidate) => toMs <= candidate.closes_at);
    const from = timeText(fromMs);
    const to = timeText(toMs);
    const csv = params.format === 'csv' || (params.format === undefined && ctx.accepts('application/json', 'text/csv') === 'text/csv');
    if (csv) {
      ctx.set(SEQ_HEADER, String(seq));
      ctx.status = 200;
      ctx.type = 'text/csv';
      ctx.body = statementCsv(statement, from, to);
      return;
    }
    await respond(ctx, core, 200, {
      balance_id: balanceId,
      ledger_id: balance.ledger_id,
      currency: balance.currency,
      from,
      to,
      opening_balance: statement.opening_balance,
      closing_balance: statement.closing_balance,
      total_credits: statement.total_credits,
      total_debits: statement.total_debits,
      movement_count: statement.movement_count,
      movements: statement.movements.map(movementView),
      sealed_by: period ? { period_id: period.period_id, sealed_seq: period.sealed_seq, sealed_hash: period.sealed_hash } : null,
    }, seq);
  });
}

/** A time from the query string (undefined when left out), or 400 BAL_INVALID_TIMESTAMP naming the field. */
function timeParam(name: string, text: string | undefined): number | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const parsed = parseTimeInput(text);
  if (!parsed.ok) throw new ApiError('BAL_INVALID_TIMESTAMP', `${name} ${parsed.rejection.message}`, { [name]: parsed.rejection.message });
  return parsed.value;
}
