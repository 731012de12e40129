// GET /admin/replication (master key): this node's account of itself in its group: role, term, applied
// seq, the lease as it last read it, its apply lag, on request (`group=true`) every node of the group as
// PostgreSQL holds it (what `folio replication status` shows; a single node has no group), and on
// request the state hash. `at_seq=N` first waits
// up to `wait_ms` (0 unless given, at most INSPECT_WAIT_MS_MAX) until the node has applied N, and then
// answers only if it stands exactly at N, so the hashes of several nodes can be compared at one seq. A
// single node answers too (role single).

import type { Router } from '@koa/router';
import { z } from 'zod';
import { ApiError } from '../api-error.js';
import { answers, describeRoute } from '../openapi/route-docs.js';
import { validate } from '../schemas/validation.js';
import type { ReplicationInspector } from '../ports/replication-port.js';

/** The longest an inspection waits for the seq it asks about. */
export const INSPECT_WAIT_MS_MAX = 30_000;

export const inspectQuerySchema = z.object({
  at_seq: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
  wait_ms: z.coerce.number().int().min(0).max(INSPECT_WAIT_MS_MAX).optional(),
  state_hash: z.enum(['true', 'false']).optional(),
  lag_window_ms: z.coerce.number().int().min(1).max(3_600_000).optional(),
  group: z.enum(['true', 'false']).optional(),
});

const groupSchema = z.object({
  lease: z.object({ term: z.number().int(), holder: z.string(), url: z.string(), expires_in_ms: z.number() }),
  log_end_seq: z.number().int(),
  nodes: z.array(z.object({
    name: z.string(), role: z.string(), term: z.number().int(), applied_seq: z.number().int(),
    behind_events: z.number().int().meta({ description: 'events between its applied seq and the end of the group\'s log' }),
    lag_ms: z.number().nullable(), url: z.string(), reported_ms_ago: z.number(),
    silent: z.boolean().meta({ description: 'no report for 5 s: it may be dead' }),
  })),
}).meta({ description: 'The group as PostgreSQL holds it (group=true on a replicated node)' });

const inspectionSchema = z.object({
  role: z.enum(['leader', 'standby', 'single']),
  term: z.number().int(),
  applied_seq: z.number().int(),
  leader: z.object({ name: z.string(), url: z.string() }).optional(),
  lag_ms: z.number().optional(),
  node: z.string().optional(),
  phase: z.string().optional(),
  lease: z.object({ term: z.number().int(), holder: z.string(), url: z.string(), expires_in_ms: z.number() }).optional(),
  lag_percentiles_ms: z.object({ p50: z.number(), p99: z.number(), max: z.number(), samples: z.number().int() }).optional(),
  state_hash: z.string().optional(),
  group: groupSchema.optional(),
  group_error: z.string().optional().meta({ description: 'why `group` is missing although asked for (PostgreSQL could not be read just now)' }),
});

export function replicationRoutes(router: Router, inspector: ReplicationInspector): void {
  describeRoute(router, 'GET /admin/replication', {
    tag: 'Operations', summary: "This node in its replication group (at_seq waits until applied; group adds every node as PostgreSQL holds it; state_hash adds the state's hash)", query: inspectQuerySchema,
    answers: answers(200, 'The node', inspectionSchema, { role: 'leader', term: 3, applied_seq: 120, node: 'node-a', phase: 'leader' }),
    errors: ['GEN_CONFLICT'],
  });
  router.get('/admin/replication', async (ctx) => {
    const query = validate(inspectQuerySchema, ctx.query);
    const inspection = await inspector.inspect({ atSeq: query.at_seq, waitMs: query.wait_ms ?? 0, stateHash: query.state_hash === 'true', lagWindowMs: query.lag_window_ms, group: query.group === 'true' });
    if (!inspection.ok) throw new ApiError(inspection.rejection.code, inspection.rejection.message);
    ctx.body = inspection.value;
  });
}
