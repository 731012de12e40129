// The OAuth routes: clients (cloud API key), the authorization page, and the token endpoint.
//   POST /oauth/clients {name, scopes, redirect_uris, expires_at | null}  -> 201 with client_secret, once
//   GET  /oauth/clients                      every client, Revoked ones included
//   POST /oauth/clients/:id/revoke           -> status Revoked; its tokens stop working at once
//   GET  /oauth/authorize                    checks the request, renders the sign-in and consent page
//   POST /oauth/authorize                    the form: 303 to redirect_uri with code and state
//   POST /oauth/token                        authorization_code and refresh_token grants, HTTP Basic
//   POST /oauth/revoke                       RFC 7009 token revocation, HTTP Basic
//   GET  /.well-known/oauth-authorization-server   RFC 8414 metadata
// Before the client and redirect_uri are known to be genuine, errors are pages and never redirects (an
// open redirector would hand codes to anyone); after, they go back to the client as RFC 6749 4.1.2.1
// says, with `iss` (RFC 9207) as every authorization response. Token errors are RFC 6749 5.2 JSON,
// carrying the error envelope's `error_detail` too. Password checks on the sign-in form pass the
// throttle (sign-in-throttle.ts) and the gate (password-check-gate.ts) first.

import type { Router } from '@koa/router';
import type Koa from 'koa';
import { z } from 'zod';
import { CloudError } from './cloud-errors.js';
import { ApiError, EnvelopeError } from '../http/api-error.js';
import { toJsonText } from '../wire/json-text.js';
import { validate } from '../http/schemas/validation.js';
import { requireOperator } from './cloud-auth.js';
import { CLOUD_LIMITS } from './cloud-config.js';
import { CLOUD_SCOPES, parseScopeList, withinScopes } from './cloud-scopes.js';
import { clientAddress } from './client-address.js';
import { readForm, type FormBody } from './form-body.js';
import { clientView, type ClientRecord, type ClientRegistry } from './oauth-clients.js';
import { PasswordCheckGate } from './password-check-gate.js';
import { PendingSignIns, type SignInRequest } from './pending-sign-ins.js';
import { SignInThrottle } from './sign-in-throttle.js';
import { renderErrorPage, renderSignInPage } from './sign-in-page.js';
import type { GrantOutcome, OAuthErrorCode, TokenService } from './token-service.js';
import type { UserDirectory } from './users.js';

export interface OAuthParts {
  clients: ClientRegistry;
  tokens: TokenService;
  users: UserDirectory;
  now: () => number;
  /** The origin users and clients reach the cloud at: the issuer; https makes the sign-in cookie Secure. */
  publicUrl: () => URL;
  trustedProxies: readonly string[];
}

const BROWSER_COOKIE = 'folio_sign_in';
/** RFC 7636 4.1-4.2: verifiers are 43-128 unreserved characters; an S256 challenge is 43 base64url ones. */
const CODE_VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;
const CODE_CHALLENGE = /^[A-Za-z0-9\-_]{43}$/;
const STATE_LENGTH_MAX = 1024;

/** A redirect URI a client may register: https, or http on a loopback address; no fragment. */
const redirectUriSchema = z.string().max(CLOUD_LIMITS.redirect_uri_length_max).refine((text) => {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return false;
  }
  if (url.hash !== '' || text.includes('#') || url.username !== '' || url.password !== '') return false;
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
}, 'must be an absolute https URL, or http on a loopback address, without a fragment or credentials');

const newClientSchema = z.object({
  name: z.string().trim().min(1).max(256),
  scopes: z.array(z.enum(CLOUD_SCOPES)).min(1).max(CLOUD_SCOPES.length),
  redirect_uris: z.array(redirectUriSchema).min(1).max(CLOUD_LIMITS.redirect_uris_max),
  expires_at: z.union([z.iso.datetime({ offset: true }), z.null()]),
}).strict();

/** The issuer identifier (RFC 8414 2): the public origin, without a trailing slash. */
function issuerOf(parts: OAuthParts): string {
  return parts.publicUrl().origin;
}

export function oauthRoutes(router: Router, parts: OAuthParts): void {
  const pending = new PendingSignIns(parts.now, parts.clients);
  const throttle = new SignInThrottle(parts.now);
  const passwordChecks = new PasswordCheckGate();

  router.post('/oauth/clients', async (ctx) => {
    requireOperator(ctx);
    const body = validate(newClientSchema, ctx.request.body);
    const expiresAt = body.expires_at === null ? null : Date.parse(body.expires_at);
    if (expiresAt !== null && expiresAt <= parts.now()) throw new ApiError('GEN_VALIDATION_ERROR', 'expires_at must be in the future', { expires_at: 'must be in the future' });
    const { client, secret } = await parts.clients.create({ name: body.name, scopes: [...new Set(body.scopes)], redirect_uris: body.redirect_uris, expires_at: expiresAt }, parts.now());
    ctx.status = 201;
    ctx.body = toJsonText(clientView(client, secret));
    ctx.type = 'application/json';
  });

  router.get('/oauth/clients', (ctx) => {
    requireOperator(ctx);
    ctx.type = 'application/json';
    ctx.body = toJsonText(parts.clients.list().map((client) => clientView(client)));
  });

  router.post('/oauth/clients/:id/revoke', async (ctx) => {
    requireOperator(ctx);
    const client = await parts.clients.revoke(ctx.params.id as string, parts.now());
    if (!client) throw new CloudError('OAUTH_CLIENT_NOT_FOUND', `OAuth client ${ctx.params.id} not found`);
    ctx.type = 'application/json';
    ctx.body = toJsonText(clientView(client));
  });

  router.get('/.well-known/oauth-authorization-server', (ctx) => {
    const issuer = issuerOf(parts);
    ctx.type = 'application/json';
    ctx.body = toJsonText({
      issuer,
      authorization_endpoint: `${issuer}/oauth/authorize`,
      token_endpoint: `${issuer}/oauth/token`,
      revocation_endpoint: `${issuer}/oauth/revoke`,
      scopes_supported: CLOUD_SCOPES,
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_methods_supported: ['client_secret_basic'],
      revocation_endpoint_auth_methods_supported: ['client_secret_basic'],
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
    });
  });

  router.get('/oauth/authorize', (ctx) => {
    const request = checkAuthorizationRequest(ctx, parts);
    if (!request) return;
    const { page, browserNonce } = pending.open(request);
    const secure = parts.publicUrl().protocol === 'https:' ? '; Secure' : '';
    const maxAge = Math.floor(CLOUD_LIMITS.sign_in_page_ttl_ms / 1000);
    ctx.append('Set-Cookie', `${BROWSER_COOKIE}=${browserNonce}; Path=/oauth/authorize; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${secure}`);
    renderSignInPage(ctx, page);
  });

  router.post('/oauth/authorize', async (ctx) => {
    const { fields } = await readForm(ctx, CLOUD_LIMITS.form_bytes_max);
    const entry = pending.find(fields.get('request') ?? '', ctx.cookies.get(BROWSER_COOKIE));
    if (entry === 'unknown') return renderErrorPage(ctx, 400, 'This sign-in page has expired or was already used.');
    if (entry === 'forged') return renderErrorPage(ctx, 403, 'This form did not come from the sign-in page it claims to (CSRF check failed).');
    if (fields.get('decision') !== 'approve') {
      return redirectToClient(ctx, parts, entry.redirectUri, { error: 'access_denied', error_description: 'the user denied the request', state: entry.state });
    }
    const email = fields.get('email') ?? '';
    const address = clientAddress(ctx.req, parts.trustedProxies);
    const waitSeconds = throttle.waitSeconds(email, address);
    if (waitSeconds > 0) {
      ctx.status = 429;
      ctx.set('Retry-After', String(waitSeconds));
      return renderSignInPage(ctx, entry, `Too many failed sign-ins for this account or from this address: try again in ${waitSeconds} seconds.`);
    }
    const checking = passwordChecks.tryRun(() => parts.users.signIn(email, fields.get('password') ?? ''));
    if (!checking) {
      ctx.status = 503;
      ctx.set('Retry-After', '1');
      return renderSignInPage(ctx, entry, 'Too many sign-ins are being checked right now: try again in a moment.');
    }
    throttle.attempted(email, address); // before any await: attempts sent at once are counted at once
    const user = await checking;
    if (!user) {
      ctx.status = 401;
      return renderSignInPage(ctx, entry, 'Wrong e-mail or password.');
    }
    throttle.succeeded(email, address);
    pending.spend(entry);
    const code = await parts.tokens.issueCode({
      client: entry.client, userId: user.user_id, redirectUri: entry.redirectUri, scopes: entry.scopes, codeChallenge: entry.codeChallenge,
    });
    redirectToClient(ctx, parts, entry.redirectUri, { code, state: entry.state });
  });

  router.post('/oauth/token', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Pragma', 'no-cache');
    const outcome = await exchange(ctx, parts);
    if (!outcome.ok) return sendOAuthError(ctx, outcome.error, outcome.description);
    ctx.type = 'application/json';
    ctx.body = toJsonText(outcome.grant);
  });

  router.post('/oauth/revoke', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const request = await authenticatedForm(ctx, parts);
    if (!request.ok) return sendOAuthError(ctx, request.error, request.description);
    const token = request.fields.get('token');
    if (!token) return sendOAuthError(ctx, 'invalid_request', 'token is required');
    // token_type_hint only speeds up a search (RFC 7009 2.1): both kinds are looked for whatever it says.
    await parts.tokens.revokeToken(request.client, token);
    ctx.status = 200;
    ctx.body = '';
  });
}

/** The checked request, or undefined once an error page or redirect has been sent. */
function checkAuthorizationRequest(ctx: Koa.Context, parts: OAuthParts): SignInRequest | undefined {
  const query = singleValues(ctx.query);
  if (query === undefined) {
    renderErrorPage(ctx, 400, 'A parameter of the request was given more than once.');
    return undefined;
  }
  const client = parts.clients.get(query.client_id ?? '');
  if (!client || !parts.clients.usable(client, parts.now())) {
    renderErrorPage(ctx, 400, 'Unknown, revoked or expired client_id.');
    return undefined;
  }
  const redirectUri = query.redirect_uri;
  if (redirectUri === undefined || !client.redirect_uris.includes(redirectUri)) {
    renderErrorPage(ctx, 400, 'redirect_uri is missing or is not one this client registered (it must match exactly).');
    return undefined;
  }
  const state = query.state;
  const fail = (error: string, description: string): undefined => {
    redirectToClient(ctx, parts, redirectUri, { error, error_description: description, state: state?.slice(0, STATE_LENGTH_MAX) });
    return undefined;
  };
  if (state !== undefined && state.length > STATE_LENGTH_MAX) return fail('invalid_request', `state is longer than ${STATE_LENGTH_MAX} characters`);
  if (query.response_type !== 'code') return fail('unsupported_response_type', 'response_type must be code');
  const scopes = query.scope === undefined ? client.scopes : parseScopeList(query.scope);
  if (!scopes || scopes.length === 0 || !withinScopes(scopes, client.scopes)) return fail('invalid_scope', 'scope is unknown or not granted to this client');
  const challenge = query.code_challenge;
  const method = query.code_challenge_method;
  if (challenge === undefined && method !== undefined) return fail('invalid_request', 'code_challenge_method without code_challenge');
  if (challenge !== undefined) {
    if (method !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256');
    if (!CODE_CHALLENGE.test(challenge)) return fail('invalid_request', 'code_challenge must be 43 base64url characters');
  }
  return { client, redirectUri, state, scopes, codeChallenge: challenge ?? null };
}

/** Query values as single strings; undefined when a parameter was repeated. */
function singleValues(query: Koa.Context['query']): Record<string, string | undefined> | undefined {
  const values: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(query)) {
    if (Array.isArray(value)) return undefined;
    values[name] = value;
  }
  return values;
}

/** An authorization response: 303 to the client's redirect URI, with `iss` beside the parameters (RFC 9207). */
function redirectToClient(ctx: Koa.Context, parts: OAuthParts, redirectUri: string, params: Record<string, string | undefined>): void {
  const target = new URL(redirectUri);
  for (const [name, value] of Object.entries({ ...params, iss: issuerOf(parts) })) if (value !== undefined) target.searchParams.append(name, value);
  ctx.status = 303;
  ctx.set('Location', target.toString());
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.body = '';
}

type AuthenticatedForm = { ok: true; client: ClientRecord; fields: FormBody['fields'] } | { ok: false; error: OAuthErrorCode; description: string };

/** The form of a token or revocation request, and the client its HTTP Basic credentials authenticate. */
async function authenticatedForm(ctx: Koa.Context, parts: OAuthParts): Promise<AuthenticatedForm> {
  const credentials = basicCredentials(ctx.get('authorization'));
  if (!credentials) return { ok: false, error: 'invalid_client', description: 'client authentication with HTTP Basic is required' };
  let form;
  try {
    form = await readForm(ctx, CLOUD_LIMITS.form_bytes_max);
  } catch (error) {
    if (error instanceof EnvelopeError) return { ok: false, error: 'invalid_request', description: error.message };
    throw error;
  }
  const client = parts.clients.authenticate(credentials.clientId, credentials.secret, parts.now());
  if (!client) return { ok: false, error: 'invalid_client', description: 'unknown client, wrong secret, or a revoked or expired client' };
  if (form.repeated) return { ok: false, error: 'invalid_request', description: `${form.repeated} was given more than once` };
  return { ok: true, client, fields: form.fields };
}

async function exchange(ctx: Koa.Context, parts: OAuthParts): Promise<GrantOutcome> {
  const request = await authenticatedForm(ctx, parts);
  if (!request.ok) return request;
  const { client, fields } = request;
  const grantType = fields.get('grant_type');
  if (grantType === 'authorization_code') {
    const code = fields.get('code');
    const redirectUri = fields.get('redirect_uri');
    const verifier = fields.get('code_verifier');
    if (!code || !redirectUri) return { ok: false, error: 'invalid_request', description: 'code and redirect_uri are required' };
    if (verifier !== undefined && !CODE_VERIFIER.test(verifier)) return { ok: false, error: 'invalid_request', description: 'code_verifier must be 43-128 unreserved characters' };
    return parts.tokens.redeemCode(client, code, redirectUri, verifier);
  }
  if (grantType === 'refresh_token') {
    const refreshToken = fields.get('refresh_token');
    if (!refreshToken) return { ok: false, error: 'invalid_request', description: 'refresh_token is required' };
    const scopeText = fields.get('scope');
    const scopes = scopeText === undefined ? undefined : parseScopeList(scopeText);
    if (scopeText !== undefined && (!scopes || scopes.length === 0)) {
      return { ok: false, error: 'invalid_scope', description: 'scope names an unknown scope' };
    }
    return parts.tokens.refreshGrant(client, refreshToken, scopes);
  }
  if (grantType === undefined) return { ok: false, error: 'invalid_request', description: 'grant_type is required' };
  return { ok: false, error: 'unsupported_grant_type', description: 'grant_type must be authorization_code or refresh_token' };
}

/** RFC 6749 2.3.1: `Basic base64(urlencoded(id):urlencoded(secret))`. */
function basicCredentials(header: string): { clientId: string; secret: string } | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  try {
    return { clientId: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' ')), secret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' ')) };
  } catch {
    return undefined;
  }
}

const OAUTH_ERROR_STATUS: Record<OAuthErrorCode, number> = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  invalid_scope: 400,
};

/** RFC 6749 5.2, with the error envelope's `error_detail` beside it for clients that read that. */
function sendOAuthError(ctx: Koa.Context, error: OAuthErrorCode, description: string): void {
  ctx.status = OAUTH_ERROR_STATUS[error];
  if (error === 'invalid_client') ctx.set('WWW-Authenticate', 'Basic realm="folio-cloud"');
  ctx.type = 'application/json';
  ctx.body = toJsonText({ error, error_description: description, error_detail: { code: error, message: description } });
}
