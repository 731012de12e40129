// Who is calling the control plane. A request presents the cloud API key or an OAuth access token, in
// `X-svc-key` (any letter case) or `Authorization: Bearer` (../shared/spec/interface.md 5.7; the same headers the core
// reads, through its presentedKey). The cloud key is the operator: it may do everything. A token acts
// for the user who signed in, within its scopes, on that user's deployments only. The middleware only
// identifies the caller; each route says what it needs with requireOperator / requireScopes.

import type Koa from 'koa';
import { ApiError } from '../http/api-error.js';
import { presentedKey } from '../http/access/auth.js';
import { scopesCover, type CloudScope } from './cloud-scopes.js';
import { matchesHash } from './secrets.js';
import type { TokenHolder, TokenService } from './token-service.js';

export type CloudPrincipal = { kind: 'operator' } | { kind: 'token'; holder: TokenHolder };

/** Longer credentials are refused unread: nothing this service issues is that long. */
const CREDENTIAL_LENGTH_MAX = 512;

/** The caller a request's headers identify; undefined when it presents nothing; throws for a bad credential. */
export function callerOf(headers: Koa.Request['headers'], apiKeyHash: string, tokens: TokenService): CloudPrincipal | undefined {
  const presented = presentedKey(headers);
  if (presented === undefined) return undefined;
  if (presented.length > CREDENTIAL_LENGTH_MAX) throw new ApiError('AUTH_INVALID_API_KEY', 'invalid API key or access token');
  if (matchesHash(presented, apiKeyHash)) return OPERATOR;
  const holder = tokens.holderOf(presented);
  if (!holder) throw new ApiError('AUTH_INVALID_API_KEY', 'invalid API key or access token (revoked or expired tokens are refused)');
  return { kind: 'token', holder };
}

const OPERATOR: CloudPrincipal = { kind: 'operator' };

export function identifyCaller(apiKeyHash: string, tokens: TokenService): Koa.Middleware {
  return (ctx, next) => {
    ctx.state.principal = callerOf(ctx.request.headers, apiKeyHash, tokens);
    return next();
  };
}

function principalOf(ctx: Koa.Context): CloudPrincipal {
  return present(ctx.state.principal as CloudPrincipal | undefined);
}

function present(principal: CloudPrincipal | undefined): CloudPrincipal {
  if (!principal) throw new ApiError('AUTH_MISSING_API_KEY', 'a cloud API key or access token is required (X-svc-key header)');
  return principal;
}

/** The cloud API key only. */
export function requireOperator(ctx: Koa.Context): void {
  if (principalOf(ctx).kind !== 'operator') throw new ApiError('AUTH_INSUFFICIENT_PERMISSIONS', 'this operation needs the cloud API key');
}

/** The cloud API key, or a token with one of `scopes`; returns the caller. */
export function requireScopes(ctx: Koa.Context, scopes: readonly CloudScope[]): CloudPrincipal {
  return requireScopesOf(ctx.state.principal as CloudPrincipal | undefined, scopes);
}

export function requireScopesOf(principal: CloudPrincipal | undefined, scopes: readonly CloudScope[]): CloudPrincipal {
  const caller = present(principal);
  if (caller.kind === 'token' && !scopesCover(caller.holder.scopes, scopes)) {
    throw new ApiError('AUTH_INSUFFICIENT_PERMISSIONS', `this access token lacks the scope ${scopes.join(' or ')}`, { required_scope: scopes.join(' ') });
  }
  return caller;
}
