// GET /balances/:id/at?timestamp=: the balance as it stood at a moment, folded from the log, as Blnk
// answers it: from the newest balance snapshot taken by then when there is one (`from_source: false`),
// from the beginning of the log with `from_source=true` or when there is none (`from_source: true`).
// Transactions count at their effective date. Without a timestamp: now. A balance created after the
// moment did not exist then: 404. POST /balances-snapshots takes balance snapshots in the background.

import type { Router } from '@koa/router';
import { z } from 'zod';
import type { BalanceRecord } from '../../engine/records.js';
import type { FoldAnswer } from '../ledger-core.js';
import { ApiError, BACKPRESSURE_RETRY_AFTER_SECONDS } from '../api-error.js';
import type { LedgerCore } from '../ledger-core.js';
import { respond } from '../respond.js';
import { parseTimeInput } from '../time-input.js';
import { validate } from '../validation.js';
import { EXAMPLES } from '../openapi/examples.js';
import { answers, describeRoute } from '../openapi/route-docs.js';
import { balanceJsonSchema, balanceView, timeText, timeTextSchema } from '../../wire/views.js';

const historySchema = z.object({ balance: balanceJsonSchema, timestamp: timeTextSchema, from_source: z.literal(true) });

export const historyQuerySchema = z.object({
  timestamp: z.string().max(64).optional(),
  // Blnk reads "1" as true too.
  from_source: z.enum(['true', 'false', '1', '0']).optional(),
});

/** Blnk's batch size of snapshot work: checked, but a state snapshot takes every balance in one pass. */
export const snapshotQuerySchema = z.object({
  batch_size: z.preprocess(
    (value) => (value === undefined || value === '' ? 1000 : typeof value === 'string' ? Number(value) : value),
    z.number({ message: 'invalid batch_size value' }).int('invalid batch_size value').min(1, 'invalid batch_size value'),
  ),
});

export function balanceHistoryRoutes(router: Router, core: LedgerCore): void {
  describeRoute(router, 'GET /balances/:id/at', {
    tag: 'Balances', summary: 'A balance as it stood at a moment, folded from the log', query: historyQuerySchema,
    answers: answers(200, 'The balance at `timestamp`', historySchema, { balance: EXAMPLES.balance, timestamp: '2026-05-04T12:00:00.000Z', from_source: true }),
    errors: ['BAL_NOT_FOUND', 'BAL_INVALID_TIMESTAMP', 'QUEUE_BACKPRESSURE'],
  });
  router.get('/balances/:id/at', async (ctx) => {
    const balanceId = ctx.params.id as string;
    const params = validate(historyQuerySchema, ctx.query);
    let untilMs = Number.MAX_SAFE_INTEGER;
    if (params.timestamp !== undefined && params.timestamp.trim() !== '') {
      const parsed = parseTimeInput(params.timestamp);
      if (!parsed.ok) throw new ApiError('BAL_INVALID_TIMESTAMP', `timestamp ${parsed.message}`);
      untilMs = parsed.epochMs;
    }
    if (!core.engine.state.balances.has(balanceId)) throw new ApiError('BAL_NOT_FOUND', `balance ${balanceId} not found`);
    const seq = core.visibleSeq();
    await core.durable(seq);
    const fromSource = params.from_source === 'true' || params.from_source === '1';
    const answer = await core.balanceHistory(balanceId, untilMs, seq, !fromSource);
    const balance = foldedBalance(answer);
    if (!balance) throw new ApiError('BAL_NOT_FOUND', `balance ${balanceId} did not exist at ${timeText(untilMs)}`);
    const timestamp = untilMs === Number.MAX_SAFE_INTEGER ? new Date().toISOString() : timeText(untilMs);
    await respond(ctx, core, 200, { balance: balanceView(balance), timestamp, from_source: answer.ok && answer.from_source }, seq);
  });

  describeRoute(router, 'POST /balances-snapshots', {
    tag: 'Balances', summary: 'Take a snapshot of every balance, in the background (historical balances start from it)', query: snapshotQuerySchema,
    answers: answers(200, 'Started', z.object({ message: z.string() }), { message: 'Snapshotting in progress. should be completed shortly' }), errors: ['GEN_BAD_REQUEST'],
  });
  router.post('/balances-snapshots', async (ctx) => {
    validate(snapshotQuerySchema, ctx.query);
    const refusal = core.takeBalanceSnapshots();
    // Not a passing condition (no Retry-After would help): the server runs without snapshots.
    if (refusal) throw new ApiError('GEN_BAD_REQUEST', refusal);
    await respond(ctx, core, 200, { message: 'Snapshotting in progress. should be completed shortly' });
  });
}

/** The balance a fold found (undefined: it did not exist yet), or the refusal of a fold over its bound. */
export function foldedBalance(answer: FoldAnswer): BalanceRecord | undefined {
  if (answer.ok) return answer.balance;
  throw new ApiError(answer.code, answer.message, undefined, { 'Retry-After': String(BACKPRESSURE_RETRY_AFTER_SECONDS) });
}
