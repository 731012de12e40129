// The Node HTTP server around the Koa app, set up the same way for `folio serve`, the test servers and
// the benches: the connection limits of http/server/server-limits.ts (request deadlines, caps on open
// connections in all and per client address, keep-alive longer than load balancers'), and requests
// Node's parser refuses answered in the error envelope (http/server/client-error.ts).

import type http from 'node:http';
import type { FolioApp } from '../app.js';
import type { AddressConnections } from './address-connections.js';
import { createLimitedServer, DEFAULT_CONNECTION_LIMITS, type ConnectionLimits } from './server-limits.js';

/**
 * The server for one app, or for a listener that passes requests on (http/server/request-switch.ts). `addresses`:
 * the process's count of connections per client address, when its threads share one (workers/http-workers.ts).
 */
export function createHttpServer(
  app: FolioApp | http.RequestListener, limits: ConnectionLimits = DEFAULT_CONNECTION_LIMITS, addresses?: AddressConnections,
): http.Server {
  return createLimitedServer(typeof app === 'function' ? app : app.koa.callback(), limits, { addresses });
}

/** How long shutdown waits for in-flight requests before closing their connections. */
const SHUTDOWN_GRACE_MS = 10_000;

/** Stops accepting and waits for the requests under way (closing their connections after the grace). */
export async function closeServer(server: http.Server): Promise<void> {
  const forced = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  clearTimeout(forced);
}
