// A balance's past:
// - GET /balances/:id/at?timestamp=: the balance as it stood at a moment, transactions counting at their
//   effective date. Answered from the balance history (`from_source: false`, index/history-reader.ts) on
//   the thread that parsed the request: a few seeks, whatever the length of the history. The history
//   answers as soon as nothing it has not reached can change the answer, else it waits a bounded time for
//   that; if it is still behind then, 503 SRCH_INDEX_BEHIND with Retry-After, never a fold (a fold of a
//   long history under load is what made this route take seconds). Only a server without the index folds the log, from
//   the newest balance snapshot taken by then when there is one (`from_source: false`, as Blnk answers),
//   else from the beginning (`from_source: true`); `from_source=true` asks for that full fold. All give
//   the same balance. Without a timestamp: the balance now. A balance created after the moment did not
//   exist then (404), unless a back-dated transaction reached it by then.
// - GET /balances/:id/history?from=&to=&limit=&cursor=: the balance after each change inside a window,
//   oldest first, as recorded, paged by an opaque cursor (from the balance history only).
// Both answer with X-Folio-Index-Seq, the seq the history had reached, and without waiting for the log's
// newest events to be durable: they show nothing that is not (http/respond.ts respondFromIndex).
// - POST /balances-snapshots: takes balance snapshots in the background (the folds start from them).

import type { Router } from '@koa/router';
import { z } from 'zod';
import type { BalanceRecord } from '../../engine/records.js';
import { ApiError, BACKPRESSURE_RETRY_AFTER_SECONDS } from '../api-error.js';
import { nonNegativeInteger } from '../schemas/common-schemas.js';
import type { FoldAnswer, LedgerCore } from '../ports/ledger-core.js';
import type { BalanceHistoryPort, BalanceHistoryPosition } from '../ports/query-port.js';
import { answered } from '../views/query-answers.js';
import { respond, respondFromIndex } from '../respond.js';
import { parseTimeInput } from '../schemas/time-input.js';
import { validate } from '../schemas/validation.js';
import { asJson, EXAMPLES } from '../openapi/examples.js';
import { answers, describeRoute } from '../openapi/route-docs.js';
import { balanceChangeJsonSchema, balanceChangeView, balanceJsonSchema, balanceView, timeText, timeTextSchema } from '../../wire/views.js';

/** Changes per history page: by default, and at most. */
export const HISTORY_LIMIT_DEFAULT = 100;
export const HISTORY_LIMIT_MAX = 1_000;
const TIME_TEXT_LENGTH_MAX = 64;
const CURSOR_LENGTH_MAX = 128;

const atSchema = z.object({ balance: balanceJsonSchema, timestamp: timeTextSchema, from_source: z.boolean() });
const historySchema = z.object({ balance_id: z.string(), currency: z.string(), changes: z.array(balanceChangeJsonSchema), next_cursor: z.string().nullable() });

export const atQuerySchema = z.object({
  timestamp: z.string().max(TIME_TEXT_LENGTH_MAX).optional(),
  // Blnk reads "1" as true too.
  from_source: z.enum(['true', 'false', '1', '0']).optional(),
});

export const historyQuerySchema = z.object({
  from: z.string().max(TIME_TEXT_LENGTH_MAX).optional(),
  to: z.string().max(TIME_TEXT_LENGTH_MAX).optional(),
  limit: nonNegativeInteger(HISTORY_LIMIT_DEFAULT, HISTORY_LIMIT_MAX).pipe(z.number().min(1)),
  cursor: z.string().max(CURSOR_LENGTH_MAX).optional(),
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
    tag: 'Balances', summary: 'A balance as it stood at a moment: from the balance history, or folded from the log (from_source=true)', query: atQuerySchema,
    answers: answers(200, 'The balance at `timestamp`', atSchema, { balance: EXAMPLES.balance, timestamp: '2026-05-04T12:00:00.000Z', from_source: false }),
    errors: ['BAL_NOT_FOUND', 'BAL_INVALID_TIMESTAMP', 'QUEUE_BACKPRESSURE', 'SRCH_INDEX_BEHIND'],
  });
  router.get('/balances/:id/at', async (ctx) => {
    const balanceId = ctx.params.id as string;
    const params = validate(atQuerySchema, ctx.query);
    const untilMs = timeParam('timestamp', params.timestamp) ?? Number.MAX_SAFE_INTEGER;
    const timestamp = (): string => timeText(untilMs === Number.MAX_SAFE_INTEGER ? Date.now() : untilMs);
    const fullFold = params.from_source === 'true' || params.from_source === '1';
    const history = fullFold ? undefined : core.history;
    if (history) {
      const seq = core.visibleSeq();
      const answer = answered(await history.balanceAt(balanceId, untilMs, seq));
      if (!answer.balance) {
        throw new ApiError('BAL_NOT_FOUND', answer.exists ? `balance ${balanceId} did not exist at ${timestamp()}` : `balance ${balanceId} not found`);
      }
      respondFromIndex(ctx, 200, { balance: balanceView(answer.balance), timestamp: timestamp(), from_source: false }, seq, answer.index_seq);
      return;
    }
    if (!(await core.view.balanceExists(balanceId))) throw new ApiError('BAL_NOT_FOUND', `balance ${balanceId} not found`);
    const seq = core.visibleSeq();
    await core.durable(seq);
    const folded = await core.balanceHistory(balanceId, untilMs, seq, !fullFold);
    const balance = foldedBalance(folded);
    if (!balance) throw new ApiError('BAL_NOT_FOUND', `balance ${balanceId} did not exist at ${timestamp()}`);
    await respond(ctx, core, 200, { balance: balanceView(balance), timestamp: timestamp(), from_source: folded.ok && folded.value.from_source }, seq);
  });

  const history = core.history;
  if (history) historyRoute(router, core, history);

  describeRoute(router, 'POST /balances-snapshots', {
    tag: 'Balances', summary: 'Take a snapshot of every balance, in the background (folds of historical balances start from it)', query: snapshotQuerySchema,
    answers: answers(200, 'Started', z.object({ message: z.string() }), { message: 'Snapshotting in progress. should be completed shortly' }), errors: ['GEN_BAD_REQUEST'],
  });
  router.post('/balances-snapshots', async (ctx) => {
    validate(snapshotQuerySchema, ctx.query);
    const taken = await core.takeBalanceSnapshots();
    // Not a passing condition (no Retry-After would help): the server runs without snapshots.
    if (!taken.ok) throw new ApiError('GEN_BAD_REQUEST', taken.rejection.message);
    await respond(ctx, core, 200, { message: 'Snapshotting in progress. should be completed shortly' });
  });
}

function historyRoute(router: Router, core: LedgerCore, history: BalanceHistoryPort): void {
  describeRoute(router, 'GET /balances/:id/history', {
    tag: 'Balances', summary: 'The balance after each change in a time window, oldest first, paged by cursor (from the balance history)', query: historyQuerySchema,
    answers: answers(200, 'A page of changes', historySchema, {
      balance_id: 'bln_0196a4c2-5a10-7b2e-8c31-6d4f2a9b7e02', currency: 'USD',
      changes: [asJson(balanceChangeView({
        at: Date.UTC(2026, 4, 4, 12), version: 1, credit_balance: 0n, debit_balance: 2500n, inflight_credit_balance: 0n, inflight_debit_balance: 0n,
      }))],
      next_cursor: null,
    }),
    errors: ['BAL_NOT_FOUND', 'BAL_INVALID_TIMESTAMP', 'GEN_VALIDATION_ERROR', 'SRCH_INDEX_BEHIND'],
  });
  router.get('/balances/:id/history', async (ctx) => {
    const balanceId = ctx.params.id as string;
    const params = validate(historyQuerySchema, ctx.query);
    const fromMs = timeParam('from', params.from) ?? 0;
    const toMs = timeParam('to', params.to) ?? Number.MAX_SAFE_INTEGER;
    if (fromMs > toMs) throw new ApiError('BAL_INVALID_TIMESTAMP', 'from is after to');
    const window = { from_ms: fromMs, to_ms: toMs, limit: params.limit, ...(params.cursor ? { after: decodeCursor(params.cursor) } : {}) };
    const seq = core.visibleSeq();
    const { page, index_seq: indexSeq } = answered(await history.balanceChanges(balanceId, window, seq));
    if (!page) throw new ApiError('BAL_NOT_FOUND', `balance ${balanceId} not found`);
    respondFromIndex(ctx, 200, {
      balance_id: balanceId,
      currency: page.currency,
      changes: page.changes.map(balanceChangeView),
      next_cursor: page.next ? encodeCursor(page.next) : null,
    }, seq, indexSeq);
  });
}

/** A time from the query string (undefined when left out or the zero time), or 400 naming the field. */
function timeParam(name: string, text: string | undefined): number | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const parsed = parseTimeInput(text);
  if (!parsed.ok) throw new ApiError('BAL_INVALID_TIMESTAMP', `${name} ${parsed.rejection.message}`, { [name]: parsed.rejection.message });
  return parsed.value === 0 ? undefined : parsed.value;
}

/** Cursors are opaque to clients: the position of the last change sent, as base64url text. */
function encodeCursor(position: BalanceHistoryPosition): string {
  return Buffer.from(`${position.at}.${position.seq}`, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): BalanceHistoryPosition {
  const match = /^(\d{1,16})\.(\d{1,16})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  const at = Number(match?.[1]);
  const seq = Number(match?.[2]);
  if (!match || !Number.isSafeInteger(at) || !Number.isSafeInteger(seq)) {
    throw new ApiError('GEN_VALIDATION_ERROR', 'invalid request: cursor: is not a cursor this endpoint gave', { cursor: 'is not a cursor this endpoint gave' });
  }
  return { at, seq };
}

/** The balance a fold found (undefined: it did not exist yet), or the refusal of a fold over its bound. */
export function foldedBalance(answer: FoldAnswer): BalanceRecord | undefined {
  if (answer.ok) return answer.value.balance;
  throw new ApiError(answer.rejection.code, answer.rejection.message, undefined, { 'Retry-After': String(BACKPRESSURE_RETRY_AFTER_SECONDS) });
}
