// The address a request comes from, as the sign-in throttle counts it. It is the connection's peer,
// unless that peer is one of the configured trusted proxies (FOLIO_CLOUD_TRUSTED_PROXIES): then the
// X-Forwarded-For entries are read from the right, past every trusted proxy, and the first other one is
// the client (entries further left were written by the client itself and prove nothing). Addresses are
// counted as http/server/address-key.ts says: IPv4-mapped IPv6 as IPv4, IPv6 by its /64.

import type http from 'node:http';
import { isIP } from 'node:net';
import { addressKey, plainAddress } from '../http/server/address-key.js';

export function clientAddress(req: http.IncomingMessage, trustedProxies: readonly string[]): string {
  const peer = plainAddress(req.socket.remoteAddress ?? '');
  if (trustedProxies.length === 0 || !trustedProxies.some((proxy) => plainAddress(proxy) === peer)) return addressKey(peer);
  const header = req.headers['x-forwarded-for'] ?? '';
  const forwarded = (Array.isArray(header) ? header.join(',') : header).split(',').map((entry) => plainAddress(entry.trim()));
  for (let index = forwarded.length - 1; index >= 0; index -= 1) {
    const hop = forwarded[index] as string;
    if (isIP(hop) === 0) break; // garbage: the proxy's peer is as far as can be told
    if (!trustedProxies.some((proxy) => plainAddress(proxy) === hop)) return addressKey(hop);
  }
  return addressKey(peer);
}
