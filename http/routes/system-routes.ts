// Service info, health and metrics: the routes that answer without touching the ledger. `GET /` is
// Blnk's "server running..." check, with what is running. `GET /health` also says what this node is in
// its replication group (http/ports/replication-port.ts): a load balancer sends writes to the `leader`.

import type { Router } from '@koa/router';
import { z } from 'zod';
import type { Metrics } from '../metrics.js';
import { answers, describeRoute } from '../openapi/route-docs.js';
import type { ReplicationStatus } from '../ports/replication-port.js';

const serviceSchema = z.object({ message: z.string(), service: z.string(), version: z.string() });
const healthSchema = z.object({
  status: z.literal('UP'),
  version: z.string(),
  role: z.enum(['leader', 'standby', 'single']).meta({ description: 'single: replication is off' }),
  term: z.number().int().meta({ description: 'the replication term this node knows (0 for a single node)' }),
  applied_seq: z.number().int().meta({ description: 'the seq of the last event this node has applied' }),
  leader: z.object({ name: z.string(), url: z.string() }).optional().meta({ description: 'on a standby: the leader, while its lease is live' }),
  lag_ms: z.number().optional().meta({ description: "on a standby: how far behind the group's log it was at its last apply (0: caught up)" }),
});

export function systemRoutes(router: Router, metrics: Metrics, version: string, replication: () => ReplicationStatus): void {
  describeRoute(router, 'GET /', { tag: 'System', summary: "Blnk's service check: what is running", answers: answers(200, 'Running', serviceSchema, { message: 'server running...', service: 'folio', version }) });
  router.get('/', (ctx) => {
    ctx.body = { message: 'server running...', service: 'folio', version };
  });

  describeRoute(router, 'GET /health', {
    tag: 'System', summary: 'Is the server up, and what it is in its replication group',
    answers: answers(200, 'Up, with its version and role', healthSchema, { status: 'UP', version, role: 'standby', term: 3, applied_seq: 120, leader: { name: 'node-a', url: 'http://10.0.0.5:5001' }, lag_ms: 4 }),
  });
  router.get('/health', (ctx) => {
    ctx.body = { status: 'UP', version, ...replication() };
  });

  describeRoute(router, 'GET /metrics', {
    tag: 'System', summary: 'Prometheus metrics',
    answers: [{ status: 200, description: 'Metrics in the Prometheus text format', schema: z.string(), contentType: 'text/plain' }],
  });
  router.get('/metrics', async (ctx) => {
    ctx.type = metrics.contentType;
    ctx.body = await metrics.text();
  });
}
