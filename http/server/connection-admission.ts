// Which accepted connections a server takes on: at most connections_per_address_max open from one client
// address (address-key.ts: IPv6 counts by its /64), counted for the whole process in
// address-connections.ts. One beyond is answered at once, before anything is read from it, with 503
// GEN_CONNECTIONS_EXCEEDED and Retry-After in the error envelope, and closed: Node's HTTP handling never
// sees it, so it costs no parser and holds no place for long. So one client holding its cap of slow
// connections leaves the rest of connections_max (Node's maxConnections, whose refusals are closed
// unanswered as they are accepted) to everyone else. Both kinds of refusal are counted for /metrics.
//
// The check runs in place of Node's own 'connection' listener (which sets up the HTTP parser), calling
// it only for the connections taken. A refused connection's answer is written and its side closed; what
// the client sends meanwhile is read and dropped (closing with unread bytes would reset the connection
// and could lose the answer) until it closes its side, for LINGER_MS at most. At most
// REFUSALS_LINGERING_MAX refused connections linger at once; beyond them one is closed unanswered, so a
// flood of refused connections cannot take places under connections_max either.

import type http from 'node:http';
import type net from 'node:net';
import { AddressConnections } from './address-connections.js';
import { plainAddress } from './address-key.js';
import { ApiError, BACKPRESSURE_RETRY_AFTER_SECONDS } from '../api-error.js';
import { LINGER_MS, rawErrorAnswer } from './client-error.js';

/** Refused connections waiting for their client to read the answer, at most, per server. */
const REFUSALS_LINGERING_MAX = 64;

export interface AdmissionSettings {
  perAddressMax: number;
  addresses: AddressConnections;
  /** Peers not held to the per-address cap. */
  unlimitedAddresses: readonly string[];
}

export function admitByAddress(server: http.Server, settings: AdmissionSettings): void {
  const nodeListeners = server.listeners('connection');
  // A new server has exactly one: Node's, which hands the connection to the HTTP parser.
  if (nodeListeners.length !== 1) throw new Error(`a new HTTP server has one connection listener, not ${nodeListeners.length}`);
  const takeOn = nodeListeners[0] as (socket: net.Socket) => void;
  server.removeListener('connection', takeOn);
  const unlimited = new Set(settings.unlimitedAddresses.map(plainAddress));
  const { addresses, perAddressMax } = settings;
  let lingering = 0;
  const refuse = (socket: net.Socket): void => {
    socket.on('error', () => socket.destroy());
    if (lingering >= REFUSALS_LINGERING_MAX) {
      socket.destroy();
      return;
    }
    lingering += 1;
    const refusal = new ApiError('GEN_CONNECTIONS_EXCEEDED', `this client address has ${perAddressMax} connections open, as many as it may`, undefined, {
      'Retry-After': String(BACKPRESSURE_RETRY_AFTER_SECONDS),
    });
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('close', () => {
      clearTimeout(timer);
      lingering -= 1;
    });
    socket.once('end', () => socket.destroy());
    socket.end(rawErrorAnswer(503, 'Service Unavailable', refusal, refusal.headers));
    socket.resume();
  };
  server.on('drop', () => addresses.countDropped());
  server.on('connection', (socket: net.Socket) => {
    const peer = plainAddress(socket.remoteAddress ?? '');
    const key = unlimited.has(peer) ? undefined : AddressConnections.keyOf(peer);
    // No key: an exempt peer, or a connection already gone (it has no address left to count).
    if (key === undefined) {
      takeOn.call(server, socket);
      return;
    }
    if (!addresses.open(key, perAddressMax)) {
      refuse(socket);
      return;
    }
    socket.once('close', () => addresses.close(key));
    takeOn.call(server, socket);
  });
}
