// The routes the fuzzer drives on a control plane (`folio cloud`): every core route of route-table.ts
// through the proxy, and the control plane's own routes (users, OAuth clients, the sign-in page, the
// token endpoint, deployments). test/cloud-fuzz.int.test.ts fails when the control plane's router has a
// route this table lacks, as test/fuzz.int.test.ts does for the core.
//
// Proxied routes go by `/proxy…?instance_id=…` with an access token: most with a `proxy:write` token,
// each GET also with a `proxy:read` token, and every other method now and then with the read token too
// (refused for its scope). Operator routes of the core are in the list like the rest: the proxy must
// refuse them. The control plane's own routes go with the cloud API key where that is what they take,
// except the two that would start core processes (a new deployment, an upgrade), which go with an
// access token and are refused before anything starts. The sign-in page's routes answer with HTML pages
// and redirects (`page`). The control plane's schemas stay private to its modules, so the body and
// query shapes here are stand-ins with the same fields and bounds.

import fc from 'fast-check';
import { z } from 'zod';
import { CLOUD_SCOPES } from '../cloud/cloud-scopes.js';
import type { FuzzJson } from './fuzz-json.js';
import { FUZZ_ROUTES, type FuzzRoute, type RouteVia } from './route-table.js';
import { CONSOLE_FILES } from '../http/routes/console-routes.js';

export interface CloudFuzzCredentials {
  operatorKey: string;
  instanceId: string;
  deploymentId: string;
  /** Access tokens of the deployment's user, with `proxy:read` and with `proxy:write`. */
  readToken: string;
  writeToken: string;
  /** A client the token endpoint is called as (HTTP Basic). */
  client: { client_id: string; client_secret: string };
  /** A client the fuzzer may revoke (not the one the tokens came from: revoking that ends the run's tokens). */
  revocableClientId: string;
  redirectUri: string;
}

const newUserBody = z.object({ email: z.email().max(320), password: z.string().min(8).max(1024) });
const newClientBody = z.object({
  name: z.string().max(256),
  scopes: z.array(z.enum(CLOUD_SCOPES)).max(CLOUD_SCOPES.length),
  redirect_uris: z.array(z.string().max(2048)).max(12),
  expires_at: z.union([z.iso.datetime({ offset: true }), z.null()]),
});
const authorizeQuery = z.object({
  response_type: z.enum(['code', 'token', 'nope']),
  client_id: z.string().max(64),
  redirect_uri: z.string().max(2048),
  scope: z.string().max(200).optional(),
  state: z.string().max(1100).optional(),
  code_challenge: z.string().max(64).optional(),
  code_challenge_method: z.enum(['S256', 'plain', 'nope']).optional(),
});
const signInForm = z.object({
  request: z.string().max(4096), email: z.string().max(320), password: z.string().max(1100),
  decision: z.enum(['approve', 'deny', 'nope']),
});
const tokenForm = z.object({
  grant_type: z.enum(['authorization_code', 'refresh_token', 'client_credentials', 'nope']),
  code: z.string().max(80).optional(),
  redirect_uri: z.string().max(2048).optional(),
  code_verifier: z.string().max(200).optional(),
  refresh_token: z.string().max(80).optional(),
  scope: z.string().max(200).optional(),
});
/** RFC 7009's revocation form: a token and, optionally, a hint of its kind. */
const revokeForm = z.object({ token: z.string().max(200), token_type_hint: z.string().max(40).optional() });
const newDeploymentBody = z.object({ name: z.string().max(130), region: z.string().max(130).optional(), tier: z.string().max(130).optional(), user_id: z.string().max(64).nullable().optional() });
const upgradeBody = z.object({ force: z.boolean().optional() });

/** Hints for the control plane's fields: values its checks accept about as often as ones they refuse. */
function cloudHints(credentials: CloudFuzzCredentials): Readonly<Record<string, fc.Arbitrary<FuzzJson>>> {
  const { client, redirectUri } = credentials;
  return {
    email: fc.oneof(fc.constantFrom('fuzz-user@example.com', 'FUZZ-USER@EXAMPLE.COM', 'not an e-mail', ''), fc.uuid().map((uuid) => `u-${uuid}@example.com`)),
    redirect_uris: fc.array(fc.constantFrom(redirectUri, 'https://app.example/cb', 'http://example.com/cb', 'https://a.example/cb#x', 'javascript:alert(1)', ''), { maxLength: 3 }),
    redirect_uri: fc.constantFrom(redirectUri, `${redirectUri}/x`, 'https://app.example/cb', ''),
    client_id: fc.constantFrom(client.client_id, credentials.revocableClientId, 'cli_nope', ''),
    scope: fc.constantFrom('proxy:read', 'proxy:write', 'proxy:read proxy:write', '*', 'nope', '', 'proxy:read  proxy:read'),
    code_challenge: fc.constantFrom('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', 'short', ''),
    grant_type: fc.constantFrom('authorization_code', 'refresh_token', 'nope'),
    scopes: fc.array(fc.constantFrom(...CLOUD_SCOPES, 'nope', 'ledgers:read'), { maxLength: 4 }),
  };
}

export function cloudFuzzRoutes(credentials: CloudFuzzCredentials): FuzzRoute[] {
  const { instanceId, readToken, writeToken, operatorKey, client } = credentials;
  const proxied = (token: string): RouteVia => ({ prefix: '/proxy', query: `instance_id=${instanceId}`, headers: { authorization: `Bearer ${token}` } });
  const asOperator: RouteVia = { prefix: '', headers: { 'x-svc-key': operatorKey } };
  const asToken: RouteVia = { prefix: '', headers: { authorization: `Bearer ${writeToken}` } };
  const asClient: RouteVia = { prefix: '', headers: { authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}` } };
  const hints = cloudHints(credentials);
  const routes: FuzzRoute[] = [];
  for (const route of FUZZ_ROUTES) {
    routes.push({ ...route, via: proxied(writeToken) });
    if (route.method === 'GET') routes.push({ ...route, weight: Math.max(1, Math.round(route.weight / 2)), via: proxied(readToken) });
    else routes.push({ ...route, weight: 1, via: proxied(readToken) });
  }
  const own: FuzzRoute[] = [
    { method: 'GET', path: '/health', weight: 2, via: { prefix: '' } },
    { method: 'POST', path: '/users', body: newUserBody, schemaSource: 'declared', hints, weight: 3, via: asOperator },
    { method: 'POST', path: '/oauth/clients', body: newClientBody, schemaSource: 'declared', hints, weight: 6, via: asOperator },
    { method: 'GET', path: '/oauth/clients', weight: 2, via: asOperator },
    { method: 'POST', path: '/oauth/clients/:id/revoke', params: { id: { values: [credentials.revocableClientId, 'cli_nope', ''] } }, weight: 2, via: asOperator },
    { method: 'GET', path: '/oauth/authorize', query: authorizeQuery, schemaSource: 'declared', hints, weight: 15, page: true, via: { prefix: '' } },
    { method: 'POST', path: '/oauth/authorize', body: signInForm, schemaSource: 'declared', hints, weight: 10, page: true, via: { prefix: '' } },
    { method: 'POST', path: '/oauth/token', body: tokenForm, schemaSource: 'declared', hints, weight: 15, via: asClient },
    { method: 'POST', path: '/oauth/revoke', body: revokeForm, schemaSource: 'declared', hints, weight: 4, via: asClient },
    { method: 'GET', path: '/.well-known/oauth-authorization-server', weight: 1, via: { prefix: '' } },
    { method: 'GET', path: '/deployments', weight: 3, via: asOperator },
    { method: 'GET', path: '/deployments/:id', params: { id: { values: [credentials.deploymentId, instanceId, 'dep_nope'] } }, weight: 3, via: asOperator },
    { method: 'POST', path: '/deployments', body: newDeploymentBody, schemaSource: 'declared', weight: 2, via: asToken },
    { method: 'GET', path: '/credentials/current', weight: 2, via: asToken },
    { method: 'GET', path: '/credentials/current', weight: 1, via: asOperator },
    { method: 'GET', path: '/console', weight: 1, page: true, via: { prefix: '' } },
    { method: 'GET', path: '/console/:file', params: { file: { values: [...Object.keys(CONSOLE_FILES), 'nope.js', '..'] } }, weight: 2, via: { prefix: '' } },
    { method: 'POST', path: '/deployments/:id/upgrade', params: { id: { values: [credentials.deploymentId, instanceId, 'dep_nope'] } }, body: upgradeBody, schemaSource: 'declared', weight: 2, via: asToken },
  ];
  // The control plane's own routes get about a fifth of the cases; the proxied ones the rest.
  const proxiedWeight = routes.reduce((sum, route) => sum + route.weight, 0);
  const ownWeight = own.reduce((sum, route) => sum + route.weight, 0);
  const share = Math.max(1, Math.round(proxiedWeight / 4 / ownWeight));
  for (const route of own) routes.push({ ...route, weight: route.weight * share });
  return routes;
}

/** The control plane's own routes in the table, `METHOD /pattern`, to check against its router. */
export function cloudOwnRouteKeys(routes: readonly FuzzRoute[]): Set<string> {
  return new Set(routes.filter((route) => route.via?.prefix !== '/proxy').map((route) => `${route.method} ${route.path}`));
}
