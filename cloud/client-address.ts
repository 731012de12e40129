// The address a request comes from, as the sign-in throttle counts it. It is the connection's peer,
// unless that peer is one of the configured trusted proxies (FOLIO_CLOUD_TRUSTED_PROXIES): then the
// X-Forwarded-For entries are read from the right, past every trusted proxy, and the first other one is
// the client (entries further left were written by the client itself and prove nothing). IPv4-mapped IPv6
// addresses count as their IPv4 address; an IPv6 address counts as its /64, because one host is usually
// handed a whole /64 and could otherwise take a fresh address for every try.

import type http from 'node:http';
import { isIP } from 'node:net';

export function clientAddress(req: http.IncomingMessage, trustedProxies: readonly string[]): string {
  const peer = plainAddress(req.socket.remoteAddress ?? '');
  if (trustedProxies.length === 0 || !trustedProxies.some((proxy) => plainAddress(proxy) === peer)) return throttleKey(peer);
  const header = req.headers['x-forwarded-for'] ?? '';
  const forwarded = (Array.isArray(header) ? header.join(',') : header).split(',').map((entry) => plainAddress(entry.trim()));
  for (let index = forwarded.length - 1; index >= 0; index -= 1) {
    const hop = forwarded[index] as string;
    if (isIP(hop) === 0) break; // garbage: the proxy's peer is as far as can be told
    if (!trustedProxies.some((proxy) => plainAddress(proxy) === hop)) return throttleKey(hop);
  }
  return throttleKey(peer);
}

/** The address without an IPv4-mapped prefix or a zone, lower case. */
function plainAddress(address: string): string {
  const lower = address.toLowerCase().split('%')[0] as string;
  return lower.startsWith('::ffff:') && isIP(lower.slice(7)) === 4 ? lower.slice(7) : lower;
}

/** IPv4 addresses as they are; IPv6 ones as their /64 prefix. */
function throttleKey(address: string): string {
  if (isIP(address) !== 6) return address;
  const [head = '', tail] = address.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return `${groups.slice(0, 4).map((group) => group.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}
