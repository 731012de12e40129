// Authentication and authorization. Off when the server has no secret key: every caller then acts as
// the master key. On, two steps:
//   1. `authenticate` (app middleware, before the route is matched or any body read): every request but
//      the public routes (by their exact path, or, for a public route whose last segment is a parameter
//      such as the console's `/console/:file`, by its static prefix and one segment after it) must present
//      a key in `X-svc-key` (any letter case), `X-Blnk-Key` or `Authorization: Bearer`. The master key is
//      compared in constant time; an API key is found by the id inside it and its secret checked against
//      the stored hash. Failures are 401s.
//   2. `authorize`, the first step the route front (route-front.ts) puts in front of every route of the
//      router, bound to that route's entry in the access table (route-scopes.ts). It runs only for the
//      route that actually handles the request, so the decision never depends on which other patterns
//      happen to match the path, and before that route reads a body. Failures are 403s.
// Fair use (rate-buckets.ts) is checked in step 1, once the caller is known and before any route runs
// or any body is read: an API key takes one request from its bucket (its own rate_limit, else the
// server's default; neither: no bucket at all), the master key from the master's bucket when one is
// configured, and so does every caller when authentication is off (they all act as the master key): an
// empty bucket is 429 GEN_RATE_LIMITED with Retry-After, and every answer to a limited caller carries
// RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset. Public routes take nothing. An unlimited
// caller pays one comparison.

import type Koa from 'koa';
import type { Clock } from '../../engine/ports.js';
import type { ApiKeyRecord } from '../../engine/records.js';
import { ApiError } from '../api-error.js';
import { API_KEY_TEXT_LENGTH_MAX, MasterKey, parseApiKeyText, secretMatches } from './api-key-secret.js';
import type { ApiKeyUsage } from './api-key-usage.js';
import type { LedgerReads } from '../ports/ledger-core.js';
import { isScopeResource, ROUTE_ACCESS_TABLE, type RouteAccess } from './route-scopes.js';
import { anyCovers, parseScope, type Scope } from './scopes.js';
import { MASTER_BUCKET, rateLimitHeaders, type RateDecision, type RateLimiting } from './rate-buckets.js';

export type Principal =
  | { kind: 'master' }
  | { kind: 'api_key'; apiKeyId: string; scopes: readonly Scope[] };

export const MASTER_PRINCIPAL: Principal = { kind: 'master' };

export interface AuthOptions {
  /** The master key; empty turns authentication off. */
  secretKey: string;
  /** Where API keys are read. */
  view: Pick<LedgerReads, 'apiKey'>;
  clock: Clock;
  usage: ApiKeyUsage;
  table?: Readonly<Record<string, string>>;
  /** The rate limits and their shared buckets; absent, nobody is limited. */
  rateLimiting?: RateLimiting;
}

const BEARER = /^bearer\s+(\S+)\s*$/i;

/** The key a request presents, from the first of the accepted headers that carries one. */
export function presentedKey(headers: Koa.Request['headers']): string | undefined {
  for (const name of ['x-svc-key', 'x-blnk-key']) {
    const value = headers[name];
    const text = (Array.isArray(value) ? value[0] : value)?.trim();
    if (text) return text;
  }
  const authorization = headers.authorization;
  if (authorization === undefined) return undefined;
  return BEARER.exec(authorization)?.[1];
}

/** The principal of each key record; records are replaced, never changed, so this cannot go stale. */
const principalByRecord = new WeakMap<ApiKeyRecord, Principal>();

function principalOf(record: ApiKeyRecord): Principal {
  let principal = principalByRecord.get(record);
  if (!principal) {
    const scopes = record.scopes.map(parseScope).filter((scope): scope is Scope => scope !== undefined);
    principal = { kind: 'api_key', apiKeyId: record.api_key_id, scopes };
    principalByRecord.set(record, principal);
  }
  return principal;
}

export function authenticate(options: AuthOptions): Koa.Middleware {
  const table = options.table ?? ROUTE_ACCESS_TABLE;
  const publicRoutes = new Set(Object.entries(table).filter(([, access]) => access === 'public').map(([route]) => route));
  const publicPaths = new Set([...publicRoutes].map((route) => route.slice(route.indexOf(' ') + 1)));
  const publicFolders = publicFoldersOf(publicRoutes);
  const isPublic = (ctx: Koa.Context): boolean => (publicPaths.has(ctx.path) && publicRoutes.has(`${ctx.method === 'HEAD' ? 'GET' : ctx.method} ${ctx.path}`))
    || (publicFolders.length > 0 && inPublicFolder(publicFolders, ctx.method, ctx.path));
  const limiting = options.rateLimiting;
  const masterLimit = limiting?.settings.master;
  const admitMaster = limiting && masterLimit ? (ctx: Koa.Context): void => {
    const decision = limiting.buckets.admit(MASTER_BUCKET, masterLimit);
    refuseOrMark(ctx, decision);
  } : undefined;
  if (options.secretKey === '') {
    if (!admitMaster) {
      return (ctx, next) => {
        ctx.state.principal = MASTER_PRINCIPAL;
        return next();
      };
    }
    // Authentication off: every caller acts as the master key, so the master's bucket is the server's.
    return (ctx, next) => {
      ctx.state.principal = MASTER_PRINCIPAL;
      if (!isPublic(ctx)) admitMaster(ctx);
      return next();
    };
  }
  const master = new MasterKey(options.secretKey);
  const keyLengthMax = Math.max(API_KEY_TEXT_LENGTH_MAX, options.secretKey.length);
  const { view, clock, usage } = options;
  const keyDefault = limiting?.settings.keyDefault;
  return async (ctx, next) => {
    if (isPublic(ctx)) return next();
    const key = presentedKey(ctx.request.headers);
    if (key === undefined) throw new ApiError('AUTH_MISSING_API_KEY', 'an API key is required (X-svc-key header)');
    if (key.length > keyLengthMax) throw new ApiError('AUTH_INVALID_API_KEY', 'invalid API key');
    // A key naming a known key id is checked as that API key; anything else can only be the master key.
    // Key ids are not secret (listings show them), so taking one path or the other reveals nothing.
    const parsed = parseApiKeyText(key);
    const record = parsed && await view.apiKey(parsed.apiKeyId);
    if (!record) {
      if (!master.matches(key)) throw new ApiError('AUTH_INVALID_API_KEY', 'invalid API key');
      ctx.state.principal = MASTER_PRINCIPAL;
      admitMaster?.(ctx);
      return next();
    }
    if (record.is_revoked || !secretMatches((parsed as { secret: string }).secret, record.secret_hash)) {
      throw new ApiError('AUTH_INVALID_API_KEY', 'invalid API key');
    }
    const now = clock.now();
    if (record.expires_at > 0 && now >= record.expires_at) throw new ApiError('AUTH_EXPIRED_API_KEY', 'API key has expired');
    // Only a caller who proved the key takes from its bucket: its id alone (not secret) cannot drain it.
    const limit = record.rate_limit ?? keyDefault;
    if (limit !== undefined && limiting) {
      const found = limiting.cells.cellOf(record.api_key_id);
      const cell = typeof found === 'number' ? found : await found;
      refuseOrMark(ctx, limiting.buckets.admit(cell, limit));
    }
    usage.note(record.api_key_id, now);
    ctx.state.principal = principalOf(record);
    return next();
  };
}

/** Sets the RateLimit-* headers; an empty bucket is refused, with Retry-After. */
function refuseOrMark(ctx: Koa.Context, decision: RateDecision): void {
  const headers = rateLimitHeaders(decision);
  if (!decision.admitted) throw new ApiError('GEN_RATE_LIMITED', `this key has used up its request rate: retry after ${decision.retryAfterSeconds} s`, undefined, headers);
  ctx.set(headers);
}

/** A public route `METHOD <prefix>/:<param>`: its method and `<prefix>/`. */
interface PublicFolder {
  method: string;
  prefix: string;
}

/** The public routes whose only parameter is their last segment (`GET /console/:file`). */
function publicFoldersOf(publicRoutes: ReadonlySet<string>): PublicFolder[] {
  const folders: PublicFolder[] = [];
  for (const route of publicRoutes) {
    const match = /^([A-Z]+) ((?:\/[^/:{}*]+)+\/):[A-Za-z0-9_]+$/.exec(route);
    if (match) folders.push({ method: match[1] as string, prefix: match[2] as string });
  }
  return folders;
}

/** Whether a path is one segment under a public folder (what the router's `:param` matches, a trailing slash aside). */
function inPublicFolder(folders: readonly PublicFolder[], method: string, path: string): boolean {
  const asked = method === 'HEAD' ? 'GET' : method;
  for (const folder of folders) {
    if (asked !== folder.method || !path.startsWith(folder.prefix)) continue;
    const rest = path.endsWith('/') ? path.slice(folder.prefix.length, -1) : path.slice(folder.prefix.length);
    if (rest !== '' && !rest.includes('/')) return true;
  }
  return false;
}

/** Throws the 403 for a principal that may not use a route with `access`; returns when it may. */
export function authorize(principal: Principal | undefined, access: RouteAccess, params: Record<string, string>): void {
  if (access.kind === 'public') return;
  if (!principal) throw new ApiError('AUTH_MISSING_API_KEY', 'an API key is required (X-svc-key header)');
  if (principal.kind === 'master' || access.kind === 'any_key') return;
  if (access.kind === 'master') throw new ApiError('AUTH_MASTER_KEY_REQUIRED', 'this operation requires the master key');
  const resource = access.kind === 'scope' ? access.resource : params[access.param];
  const required = `${resource}:${access.action}`;
  if (!isScopeResource(resource) || !anyCovers(principal.scopes, { resource, action: access.action })) {
    throw new ApiError('AUTH_INSUFFICIENT_PERMISSIONS', `this API key lacks the scope ${required}`, { required_scope: required });
  }
}
