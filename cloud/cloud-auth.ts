// Who is calling the control plane. A request presents the cloud API key or an OAuth access token, in
// `X-svc-key` (any letter case) or `Authorization: Bearer` (interface.md 5.7; the same headers the core
// reads, through its presentedKey). The cloud key is the operator: it may do everything. A token acts
// for the user who signed in, within its scopes, on that user's deployments only. The middleware only
// identifies the caller; each route says what it needs with requireOperator / requireScopes.

import type Koa from 'koa';
import { ApiError } from '../http/api-error.js';
import { presentedKey } from '../http/auth.js';
import { scopesCover, type CloudScope } from './cloud-scopes.js';
import { matchesHash } from './secrets.js';
import type { TokenHolder, TokenService } from './token-service.js';

export type CloudPrincipal = { kind: 'operator' } | { kind: 'token'; holder: TokenHolder };

/** Longer credentials are refused unread: nothing this service issues is that long. */
const CREDENTIAL_LENGTH_MAX = 512;

export function identifyCaller(apiKeyHash: string, tokens: TokenService): Koa.Middleware {
  return (ctx, next) => {
    const presented = presentedKey(ctx.request.headers);
    if (presented === undefined) return next();
    if (presented.length > CREDENTIAL_LENGTH_MAX) throw new ApiError('AUTH_INVALID_API_KEY', 'invalid API key or access token');
    if (matchesHash(presented, apiKeyHash)) {
      ctx.state.principal = { kind: 'operator' } satisfies CloudPrincipal;
      return next();
    }
    const holder = tokens.holderOf(presented);
    if (!holder) throw new ApiError('AUTH_INVALID_API_KEY', 'invalid API key or access token (revoked or expired tokens are refused)');
    ctx.state.principal = { kind: 'token', holder } satisfies CloudPrincipal;
    return next();
  };
}

function principalOf(ctx: Koa.Context): CloudPrincipal {
  const principal = ctx.state.principal as CloudPrincipal | undefined;
  if (!principal) throw new ApiError('AUTH_MISSING_API_KEY', 'a cloud API key or access token is required (X-svc-key header)');
  return principal;
}

/** The cloud API key only. */
export function requireOperator(ctx: Koa.Context): void {
  if (principalOf(ctx).kind !== 'operator') throw new ApiError('AUTH_INSUFFICIENT_PERMISSIONS', 'this operation needs the cloud API key');
}

/** The cloud API key, or a token with one of `scopes`; returns the caller. */
export function requireScopes(ctx: Koa.Context, scopes: readonly CloudScope[]): CloudPrincipal {
  const principal = principalOf(ctx);
  if (principal.kind === 'token' && !scopesCover(principal.holder.scopes, scopes)) {
    throw new ApiError('AUTH_INSUFFICIENT_PERMISSIONS', `this access token lacks the scope ${scopes.join(' or ')}`, { required_scope: scopes.join(' ') });
  }
  return principal;
}
