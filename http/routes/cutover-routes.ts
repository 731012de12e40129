// The routes a control plane uses to move a ledger onto a new process without losing a write (see
// docs/decisions-cloud.md). Master key only (route-scopes.ts):
//   POST /admin/cutover/fence     stop appending: new writes are refused (503 CUTOVER_FENCED), writes in
//                                 flight finish, queue work, timers and hook delivery stop, the log is
//                                 flushed; answers the position {seq, log_checksum} it stopped at
//   POST /admin/cutover/unfence   undo a fence (the cutover was abandoned)
//   GET  /admin/cutover/status    role, fence, seqs, log checksum; `at_seq=N` first waits (bounded) until
//                                 the ledger stands at N, `state_hash=true` adds the state hash
//   POST /admin/cutover/promote   a follower that stands exactly at {seq, log_checksum} becomes a leader
// `fenceGuard` sits in front of every route that writes or acts on the node but the cutover's own (the
// route front, http/middleware/route-front.ts), before its body is read: a write counts as in flight from there
// until its response is written, which is what the fence waits for.

import type { Router } from '@koa/router';
import type Koa from 'koa';
import { z } from 'zod';
import { ApiError, BACKPRESSURE_RETRY_AFTER_SECONDS } from '../api-error.js';
import { validate } from '../schemas/validation.js';
import { answers, describeRoute } from '../openapi/route-docs.js';
import type { CutoverPort, CutoverResult } from '../ports/cutover-port.js';

export const CUTOVER_PATH_PREFIX = '/admin/cutover/';
/** The longest a status request waits for a follower to reach the seq it asks about. */
export const CATCH_UP_WAIT_MS_MAX = 30_000;

const positionSchema = z.object({
  seq: z.number().int().min(0),
  log_checksum: z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 hex digits'),
}).strict();

const statusQuerySchema = z.object({
  at_seq: z.coerce.number().int().min(0).optional(),
  wait_ms: z.coerce.number().int().min(0).max(CATCH_UP_WAIT_MS_MAX).optional(),
  state_hash: z.enum(['true', 'false']).optional(),
});

const timingsSchema = z.record(z.string(), z.number()).optional();
const answerSchema = z.object({ seq: z.number().int(), log_checksum: z.string(), timings_ms: timingsSchema });
const statusSchema = answerSchema.extend({
  role: z.enum(['leader', 'follower']),
  fenced: z.boolean(),
  appended_seq: z.number().int(),
  durable_seq: z.number().int(),
  leader_seq: z.number().int().optional(),
  follow_error: z.string().optional(),
  index_seq: z.number().int().optional(),
  state_hash: z.string().optional(),
});
const positionExample = { seq: 120, log_checksum: 'd'.repeat(64) };
const statusExample = { ...positionExample, role: 'leader', fenced: false, appended_seq: 120, durable_seq: 120 };

/** Refuses writes while fenced and counts those admitted until their answer is written. */
export function fenceGuard(port: CutoverPort): Koa.Middleware {
  return async (ctx, next) => {
    const ticket = await port.writeStarted();
    if (!ticket) {
      throw new ApiError('CUTOVER_FENCED', 'this ledger is being moved to a new process; retry shortly', undefined, {
        'Retry-After': String(BACKPRESSURE_RETRY_AFTER_SECONDS),
      });
    }
    try {
      await next();
    } finally {
      port.writeEnded(ticket);
    }
  };
}

export function cutoverRoutes(router: Router, port: CutoverPort): void {
  describeRoute(router, 'POST /admin/cutover/fence', { tag: 'Operations', summary: 'Stop appending; answers where the log stopped', answers: answers(200, 'The position', answerSchema, positionExample), errors: ['CUTOVER_CONFLICT'] });
  router.post('/admin/cutover/fence', async (ctx) => {
    ctx.body = await refusalsAsConflicts(() => port.fence());
  });

  describeRoute(router, 'POST /admin/cutover/unfence', { tag: 'Operations', summary: 'Undo a fence', answers: answers(200, 'The position', answerSchema, positionExample), errors: ['CUTOVER_CONFLICT'] });
  router.post('/admin/cutover/unfence', async (ctx) => {
    ctx.body = await refusalsAsConflicts(() => port.unfence());
  });

  describeRoute(router, 'GET /admin/cutover/status', { tag: 'Operations', summary: 'Role, fence and log position (at_seq waits until reached)', query: statusQuerySchema, answers: answers(200, 'The status', statusSchema, statusExample), errors: ['CUTOVER_CONFLICT'] });
  router.get('/admin/cutover/status', async (ctx) => {
    const query = validate(statusQuerySchema, ctx.query);
    ctx.body = await refusalsAsConflicts(() =>
      port.status({ atSeq: query.at_seq, waitMs: query.wait_ms ?? CATCH_UP_WAIT_MS_MAX, stateHash: query.state_hash === 'true' }));
  });

  describeRoute(router, 'POST /admin/cutover/promote', { tag: 'Operations', summary: 'Make a follower standing at the position a leader', body: positionSchema, bodyExample: positionExample, answers: answers(200, 'The new status', statusSchema, { ...statusExample, fenced: false }), errors: ['CUTOVER_CONFLICT'] });
  router.post('/admin/cutover/promote', async (ctx) => {
    const expected = validate(positionSchema, ctx.request.body);
    ctx.body = await refusalsAsConflicts(() => port.promote(expected));
  });
}

/** The value of a cutover request, or its conflict as the error envelope's 409. */
async function refusalsAsConflicts<T>(work: () => Promise<CutoverResult<T>>): Promise<T> {
  const result = await work();
  if (!result.ok) throw new ApiError('CUTOVER_CONFLICT', result.rejection.message);
  return result.value;
}
