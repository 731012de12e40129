// The HTTP client hook deliveries go out with: got, never retrying on its own (the dispatcher decides
// retries), never following a redirect (a 3xx is a failure, and a redirect could point anywhere), and
// resolving names only through the guarded lookup (hook-targets.ts), so every address a delivery
// connects to is one that was checked. It has agents of its own rather than Node's global ones: those
// would send requests through an HTTP proxy when NODE_USE_ENV_PROXY is set, and the proxy, not this
// check, would then choose the address.

import http from 'node:http';
import https from 'node:https';
import got from 'got';
import { guardedLookup, type Resolver, type TargetPolicy } from './hook-targets.js';

export type DeliveryClient = ReturnType<typeof deliveryClient>;

/**
 * got with the options every delivery shares (resolved once rather than merged on each request), and
 * `close` to let go of its kept-alive sockets.
 */
export function deliveryClient(targets: TargetPolicy, resolve?: Resolver) {
  const agent = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
  const request = got.extend({
    retry: { limit: 0 },
    throwHttpErrors: false,
    followRedirect: false,
    headers: { 'user-agent': 'folio-hooks' },
    agent,
    // Every address a hook's name resolves to is checked when the delivery connects.
    dnsLookup: guardedLookup(targets, resolve) as never,
  });
  return {
    request,
    close(): void {
      agent.http.destroy();
      agent.https.destroy();
    },
  };
}
