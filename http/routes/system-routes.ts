// Health and metrics: the two routes that answer without touching the ledger.

import type { Router } from '@koa/router';
import { z } from 'zod';
import type { Metrics } from '../metrics.js';
import { answers, describeRoute } from '../openapi/route-docs.js';

const healthSchema = z.object({ status: z.literal('UP'), version: z.string() });

export function systemRoutes(router: Router, metrics: Metrics, version: string): void {
  describeRoute(router, 'GET /health', { tag: 'System', summary: 'Is the server up', answers: answers(200, 'Up, with its version', healthSchema, { status: 'UP', version }) });
  router.get('/health', (ctx) => {
    ctx.body = { status: 'UP', version };
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
