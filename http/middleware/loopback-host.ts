// DNS rebinding guard. A server that listens on loopback only trusts that nothing off the machine can
// reach it, but a web page can: a name the attacker controls is first resolved to their server, then
// rebound to 127.0.0.1, and the browser sends the page's requests here with that name in `Host`. So a
// loopback-only server answers only requests whose Host is a loopback name or address
// (../shared/spec/decisions.md: 403 GEN_FORBIDDEN_HOST). Servers listening beyond loopback are reached by names the
// operator chooses, and guard themselves with the secret key.

import { isIP } from 'node:net';
import type Koa from 'koa';
import { ApiError } from '../api-error.js';

/** Whether an address or name (no port) is this machine's loopback. */
export function isLoopback(host: string): boolean {
  const name = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const lower = name.toLowerCase().replace(/\.$/, '');
  if (lower === 'localhost' || lower.endsWith('.localhost')) return true;
  if (isIP(lower) === 4) return lower.startsWith('127.');
  if (isIP(lower) === 6) return lower === '::1' || lower === '0:0:0:0:0:0:0:1';
  return false;
}

/** The host part of a Host header: without its port, brackets kept off IPv6 literals. */
function hostName(header: string): string {
  if (header.startsWith('[')) return header.slice(0, header.indexOf(']') + 1);
  const colon = header.lastIndexOf(':');
  return colon === -1 ? header : header.slice(0, colon);
}

/** Throws GEN_FORBIDDEN_HOST for a Host header that is not loopback (an absent one passes). */
export function refuseNonLoopbackHost(header: string | undefined): void {
  if (header !== undefined && header !== '' && !isLoopback(hostName(header))) {
    throw new ApiError('GEN_FORBIDDEN_HOST', 'this server listens on loopback only and answers only loopback host names (Host header)');
  }
}

/** Refuses requests whose Host is not loopback; on only when the server itself listens on loopback. */
export function loopbackHostOnly(): Koa.Middleware {
  return (ctx, next) => {
    refuseNonLoopbackHost(ctx.get('host'));
    return next();
  };
}
