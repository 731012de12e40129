// Service info, health and metrics: the routes that answer without touching the ledger. `GET /` is
// Blnk's "server running..." check, with what is running.

import type { Router } from '@koa/router';
import type { Metrics } from '../metrics.js';

export function systemRoutes(router: Router, metrics: Metrics, version: string): void {
  router.get('/', (ctx) => {
    ctx.body = { message: 'server running...', service: 'folio', version };
  });

  router.get('/health', (ctx) => {
    ctx.body = { status: 'UP', version };
  });

  router.get('/metrics', async (ctx) => {
    ctx.type = metrics.contentType;
    ctx.body = await metrics.text();
  });
}
