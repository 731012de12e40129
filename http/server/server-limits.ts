// The Node HTTP server both Folio servers run on (`folio serve` through http/server/http-server.ts, and
// `folio cloud`), with limits on what a connection may hold: its request's headers must arrive within
// headers_timeout_ms and the whole request, body included, within request_timeout_ms (Node's own
// headersTimeout and requestTimeout, checked every second at most), at most connections_max
// connections are open at once (Node's maxConnections: further ones are closed as they are accepted),
// and at most connections_per_address_max of them from one client address (connection-admission.ts:
// one beyond is answered 503 and closed). A request cut off is answered 408 in the error envelope and
// its connection closed (http/server/client-error.ts); one the route answered before its body was in gets no
// second answer, its connection is closed at the same deadline. Keep-alive lasts longer than common load
// balancers' idle timeout, so the server never closes first.

import http from 'node:http';
import { AddressConnections } from './address-connections.js';
import { answerClientErrors } from './client-error.js';
import { admitByAddress } from './connection-admission.js';

export interface ConnectionLimits {
  /** A request's headers must arrive within this long of its first byte (a new connection's, of its start). */
  headers_timeout_ms: number;
  /** The whole request, body included, must arrive within this long of its first byte. */
  request_timeout_ms: number;
  /** Open connections at most; a connection beyond them is closed as soon as it is accepted. */
  connections_max: number;
  /** Open connections from one client address (IPv6: one /64) at most; one beyond is answered 503 and closed. */
  connections_per_address_max: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  headers_timeout_ms: 20_000,
  // A 10 MiB bulk body at 100 KB/s still arrives; a client sending slower than that holds no connection longer.
  request_timeout_ms: 120_000,
  connections_max: 1_000,
  // Half of connections_max: one client cannot shut the others out, and the benches' load generators
  // (256 connections at most, all from 127.0.0.1) still fit.
  connections_per_address_max: 500,
};

/** What a server shares beyond its limits: the process's count of connections per address, and who is exempt. */
export interface AdmissionOptions {
  /** The count to keep (shared by every worker thread's server); a server of its own by default. */
  addresses?: AddressConnections;
  /** Peers not held to connections_per_address_max (reverse proxies that carry many clients). */
  unlimitedAddresses?: readonly string[];
}

/** Longer than the 60 s idle timeout most load balancers use, so the server never closes first. */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;
/** Node looks for requests past their deadline this often at most (its default is every 30 s). */
const TIMEOUT_CHECK_INTERVAL_MS_MAX = 1_000;

const LIMIT_NAMES = ['headers_timeout_ms', 'request_timeout_ms', 'connections_max', 'connections_per_address_max'] as const;

/** Why these limits cannot be used, or undefined when they can. */
export function connectionLimitsRefusal(limits: ConnectionLimits): string | undefined {
  for (const name of LIMIT_NAMES) {
    const value = limits[name];
    if (!Number.isInteger(value) || value < 1) return `${name} must be a whole number >= 1, not ${value}`;
  }
  if (limits.headers_timeout_ms > limits.request_timeout_ms) return 'headers_timeout_ms must not be longer than request_timeout_ms';
  return undefined;
}

export function createLimitedServer(handler: http.RequestListener, limits: ConnectionLimits, options: AdmissionOptions = {}): http.Server {
  const refusal = connectionLimitsRefusal(limits);
  if (refusal) throw new Error(refusal);
  const server = http.createServer({
    headersTimeout: limits.headers_timeout_ms,
    requestTimeout: limits.request_timeout_ms,
    connectionsCheckingInterval: Math.max(10, Math.min(TIMEOUT_CHECK_INTERVAL_MS_MAX, Math.floor(limits.headers_timeout_ms / 4))),
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
  });
  // Answers owed on a connection whose later bytes were refused are waited for as long as a request may take.
  const answers = answerClientErrors(server, limits.request_timeout_ms);
  server.on('request', (request: http.IncomingMessage, response: http.ServerResponse) => {
    if (answers.takesRequests(request, response)) handler(request, response);
  });
  server.maxConnections = limits.connections_max;
  admitByAddress(server, {
    perAddressMax: limits.connections_per_address_max,
    addresses: options.addresses ?? AddressConnections.create(limits.connections_max),
    unlimitedAddresses: options.unlimitedAddresses ?? [],
  });
  return server;
}
