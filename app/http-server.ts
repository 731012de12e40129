// The Node HTTP server around the Koa app, set up the same way for `folio serve`, the test servers and
// the benches: keep-alive kept longer than common load balancers' (so they close first), and requests
// Node's parser refuses answered in the error envelope (http/client-error.ts).

import http from 'node:http';
import { answerClientErrors } from '../http/client-error.js';
import type { FolioApp } from '../http/app.js';

/** Longer than the 60 s idle timeout most load balancers use, so the server never closes first. */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** The server for one app, or for a listener that passes requests on (app/request-switch.ts). */
export function createHttpServer(app: FolioApp | http.RequestListener): http.Server {
  const server = http.createServer(typeof app === 'function' ? app : app.koa.callback());
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  answerClientErrors(server);
  return server;
}
