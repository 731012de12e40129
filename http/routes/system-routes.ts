// Health and metrics: the two routes that answer without touching the ledger.

import type { Router } from '@koa/router';
import type { Metrics } from '../metrics.js';

export function systemRoutes(router: Router, metrics: Metrics, version: string): void {
  router.get('/health', (ctx) => {
    ctx.body = { status: 'UP', version };
  });

  router.get('/metrics', async (ctx) => {
    ctx.type = metrics.contentType;
    ctx.body = await metrics.text();
  });
}
