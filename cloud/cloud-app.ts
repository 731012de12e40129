// The control plane's Koa application and the parts behind it. Middleware, in order:
//   request log -> error envelope -> loopback Host check -> caller identification -> proxy (streams, so
//   it reads no body) -> JSON body reader -> routes
// The error envelope, the JSON body reader and the request log are the core's own (http/).

import { Router } from '@koa/router';
import Koa from 'koa';
import type { Logger } from 'pino';
import { FOLIO_VERSION } from '../bin/version.js';
import { ApiError } from '../http/api-error.js';
import { errorEnvelope } from '../http/error-envelope.js';
import { jsonBody } from '../http/json-body.js';
import { identifyCaller } from './cloud-auth.js';
import { deploymentRoutes } from './deployment-routes.js';
import type { Deployments } from './deployments.js';
import type { ClientRegistry } from './oauth-clients.js';
import { oauthRoutes } from './oauth-routes.js';
import { proxyMiddleware } from './proxy.js';
import type { TokenService } from './token-service.js';
import type { Upgrades } from './upgrade.js';
import type { UserDirectory } from './users.js';

export interface CloudParts {
  apiKeyHash: string;
  users: UserDirectory;
  clients: ClientRegistry;
  tokens: TokenService;
  deployments: Deployments;
  upgrades: Upgrades;
  logger: Logger;
  now: () => number;
  /** Whether the server listens on loopback only; then only loopback Host headers are served. */
  loopbackOnly: boolean;
}

/** Bodies of the control plane's own JSON routes are small. */
const CLOUD_BODY_BYTES_MAX = 64 * 1024;
const FORM_PATHS = new Set(['/oauth/authorize', '/oauth/token']);
const LOOPBACK_HOST = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|\[::1\])(:\d+)?$/i;

export function createCloudApp(parts: CloudParts): { koa: Koa; beginShutdown(): void } {
  const koa = new Koa();
  koa.proxy = false;
  koa.silent = true;
  let shuttingDown = false;
  const router = new Router();
  router.get('/health', (ctx) => {
    ctx.body = { status: 'UP', version: FOLIO_VERSION };
  });
  oauthRoutes(router, parts);
  deploymentRoutes(router, parts);

  koa.use(async (ctx, next) => {
    const started = performance.now();
    await next();
    parts.logger.debug({ method: ctx.method, path: ctx.path, status: ctx.status, ms: performance.now() - started }, 'request');
  });
  koa.use(errorEnvelope(parts.logger));
  koa.use((ctx, next) => {
    // DNS rebinding: a page on another site could reach a loopback server under its own host name.
    if (parts.loopbackOnly && !LOOPBACK_HOST.test(ctx.get('host'))) throw new ApiError('GEN_FORBIDDEN_HOST', 'this server answers loopback host names only');
    if (shuttingDown) {
      ctx.set('Connection', 'close');
      throw new ApiError('GEN_SHUTTING_DOWN', 'the control plane is shutting down');
    }
    return next();
  });
  koa.use(identifyCaller(parts.apiKeyHash, parts.tokens));
  koa.use(proxyMiddleware(parts.deployments));
  const readJson = jsonBody(CLOUD_BODY_BYTES_MAX);
  // The two form routes read their own bodies (form-body.ts); curl's default form type is JSON elsewhere.
  koa.use((ctx, next) => (FORM_PATHS.has(ctx.path) ? next() : readJson(ctx, next)));
  koa.use(router.routes());
  koa.use(router.allowedMethods({ throw: true }));
  return {
    koa,
    beginShutdown() {
      shuttingDown = true;
    },
  };
}
