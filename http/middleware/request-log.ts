// One structured log line per request (id, method, route, status, milliseconds) and the matching
// metrics. The request id comes from X-Request-Id when the client sends a sane one, else it is made here,
// and it is echoed back so a client can quote it.

import { randomBytes } from 'node:crypto';
import type Koa from 'koa';
import type { Logger } from 'pino';
import type { Metrics } from '../metrics.js';

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Request ids: a random per-process prefix and a counter; unique and far cheaper than a UUID each. */
const processPrefix = randomBytes(6).toString('hex');
let requestCounter = 0;

export function requestLog(logger: Logger, metrics: Metrics): Koa.Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    const offered = ctx.req.headers['x-request-id'];
    const requestId = typeof offered === 'string' && CLIENT_REQUEST_ID.test(offered)
      ? offered
      : `${processPrefix}-${(requestCounter += 1).toString(36)}`;
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    try {
      await next();
    } finally {
      const milliseconds = performance.now() - started;
      const route = (ctx as unknown as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      metrics.observeRequest(ctx.method, route, ctx.status, milliseconds / 1000);
      if (logger.isLevelEnabled('info')) {
        logger.info({ req_id: requestId, method: ctx.method, route, status: ctx.status, ms: Math.round(milliseconds * 100) / 100 });
      }
    }
  };
}
