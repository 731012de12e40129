// The control plane's HTTP handling. Requests for /proxy/ go to the proxy (proxy.ts), which runs on the
// raw request for speed; everything else goes through the Koa application, whose middleware is, in order:
//   request log -> error envelope -> loopback Host check and shutdown guard -> caller identification
//   -> JSON body reader (not for the OAuth form routes) -> routes
// Both paths share the same Host check, shutdown guard and caller identification, and answer errors
// in the core's error envelope (http/middleware/error-envelope.ts).

import { Router } from '@koa/router';
import type http from 'node:http';
import Koa from 'koa';
import type { Logger } from 'pino';
import { FOLIO_VERSION } from '../server/version.js';
import { ApiError } from '../http/api-error.js';
import { errorEnvelope } from '../http/middleware/error-envelope.js';
import { jsonBody } from '../http/middleware/json-body.js';
import { refuseNonLoopbackHost } from '../http/middleware/loopback-host.js';
import { ROUTER_OPTIONS } from '../http/router-options.js';
import { identifyCaller } from './cloud-auth.js';
import { deploymentRoutes } from './deployment-routes.js';
import { credentialRoutes } from './credential-routes.js';
import { consoleRoutes } from '../http/routes/console-routes.js';
import { userRoutes } from './user-routes.js';
import type { Deployments } from './deployments.js';
import type { ClientRegistry } from './oauth-clients.js';
import { oauthRoutes } from './oauth-routes.js';
import { isProxyTarget, Proxy } from './proxy.js';
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
  /** Whether the server listens on loopback only; then only loopback Host headers (and the public URL's) are served. */
  loopbackOnly: boolean;
  /** The origin users and clients reach the cloud at: the OAuth issuer; https makes the sign-in cookie Secure. */
  publicUrl: () => URL;
  /** Reverse proxies whose X-Forwarded-For is believed about the client's address (client-address.ts). */
  trustedProxies: readonly string[];
}

/** Bodies of the control plane's own JSON routes are small. */
const CLOUD_BODY_BYTES_MAX = 64 * 1024;
const FORM_PATHS = new Set(['/oauth/authorize', '/oauth/token', '/oauth/revoke']);

export interface CloudApp {
  /** The control plane's own routes (the proxy's are not in it); the fuzzer's table is checked against it. */
  router: Router;
  handle(req: http.IncomingMessage, res: http.ServerResponse): void;
  /** Makes every new request answer 503 while the control plane stops. */
  beginShutdown(): void;
  close(): void;
}

export function createCloudApp(parts: CloudParts): CloudApp {
  const koa = new Koa();
  koa.proxy = false;
  koa.silent = true;
  let shuttingDown = false;
  const admit = (req: http.IncomingMessage): void => {
    // DNS rebinding: a page on another site could reach a loopback server under its own host name.
    // The public URL's host is the operator's own name for it (a TLS proxy in front may pass it on).
    if (parts.loopbackOnly && req.headers.host?.toLowerCase() !== parts.publicUrl().host) refuseNonLoopbackHost(req.headers.host);
    if (shuttingDown) throw new ApiError('GEN_SHUTTING_DOWN', 'the control plane is shutting down', undefined, { Connection: 'close' });
  };
  const router = new Router(ROUTER_OPTIONS);
  router.get('/health', (ctx) => {
    ctx.body = { status: 'UP', version: FOLIO_VERSION };
  });
  userRoutes(router, parts);
  oauthRoutes(router, parts);
  deploymentRoutes(router, parts);
  credentialRoutes(router);
  // The console, served here from the same files as a core serves it: its data calls go through the
  // proxy below with the person's token (docs/decisions-cloud.md, "The console").
  consoleRoutes(router, { api: 'proxy' });

  koa.use(async (ctx, next) => {
    const started = performance.now();
    await next();
    parts.logger.debug({ method: ctx.method, path: ctx.path, status: ctx.status, ms: performance.now() - started }, 'request');
  });
  koa.use(errorEnvelope(parts.logger));
  koa.use((ctx, next) => {
    admit(ctx.req);
    return next();
  });
  koa.use(identifyCaller(parts.apiKeyHash, parts.tokens));
  const readJson = jsonBody({ bodyBytesMax: CLOUD_BODY_BYTES_MAX });
  // The form routes read their own bodies (form-body.ts); curl's default form type is JSON elsewhere.
  koa.use((ctx, next) => (FORM_PATHS.has(ctx.path) ? next() : readJson(ctx, next)));
  koa.use(router.routes());
  koa.use(router.allowedMethods({ throw: true }));

  const koaHandler = koa.callback();
  const proxy = new Proxy({ deployments: parts.deployments, tokens: parts.tokens, apiKeyHash: parts.apiKeyHash, admit });
  return {
    router,
    handle(req, res) {
      if (isProxyTarget(req.url ?? '')) void proxy.handle(req, res);
      else void koaHandler(req, res);
    },
    beginShutdown() {
      shuttingDown = true;
    },
    close() {
      proxy.close();
    },
  };
}
