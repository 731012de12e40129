// POST /transactions/recover?threshold=5m, Blnk's manual queue recovery: queued transactions that have
// waited at least the threshold (2 minutes at the least, the default) are carried out now, with what is
// queued ahead of them, instead of waiting for their turn. Folio's queue does not lose work (a restart
// resumes it from the log), so this only hurries the oldest along; the answer says how many.

import type { Router } from '@koa/router';
import { z } from 'zod';
import { ApiError } from '../api-error.js';
import { formatGoDuration, parseGoDuration } from '../schemas/go-duration.js';
import type { LedgerCore } from '../ports/ledger-core.js';
import { accepted, respond } from '../respond.js';
import { validate } from '../schemas/validation.js';
import { answers, describeRoute } from '../openapi/route-docs.js';

/** The shortest threshold (shorter ones are raised to it), and the default. */
export const RECOVERY_THRESHOLD_MIN_MS = 2 * 60_000;

export const recoverQuerySchema = z.object({ threshold: z.string().max(64).optional() });

export function queueRecoveryRoutes(router: Router, core: LedgerCore): void {
  describeRoute(router, 'POST /transactions/recover', {
    tag: 'Transactions', summary: 'Carry out queued transactions that waited at least the threshold (Go duration, 2m at the least)', query: recoverQuerySchema,
    answers: answers(200, 'How many', z.object({ recovered: z.number().int(), threshold: z.string() }), { recovered: 0, threshold: '5m0s' }),
  });
  router.post('/transactions/recover', async (ctx) => {
    const { threshold } = validate(recoverQuerySchema, ctx.query);
    const asked = threshold === undefined || threshold === '' ? RECOVERY_THRESHOLD_MIN_MS : parseGoDuration(threshold);
    if (asked === undefined) {
      throw new ApiError('GEN_VALIDATION_ERROR', `invalid threshold duration: ${threshold}`, { threshold: 'must be a duration like 5m, 90s or 1h' });
    }
    const used = Math.max(RECOVERY_THRESHOLD_MIN_MS, Math.round(asked));
    const { value: recovered, seq } = accepted(await core.run({ op: 'queue.recover', cutoff: (await core.view.currentTime()) - used }));
    await respond(ctx, core, 200, { recovered, threshold: formatGoDuration(used) }, seq);
  });
}
