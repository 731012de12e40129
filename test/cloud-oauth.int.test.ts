// The control plane's OAuth server over HTTP: users, clients (secret once, revocation), every error of
// the authorization page (pages for untrusted requests, redirects for the rest, CSRF, PKCE) and of the
// token endpoint (RFC 6749 codes and statuses), single-use codes whose replay revokes their tokens,
// rotating refresh tokens whose reuse revokes the family, lifetimes (1 hour, 10 minutes, 30 days, moved
// forward on the control plane's clock), and scopes at the proxy and the deployment routes.

import t from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import {
  authorize, CLOUD_API_KEY, createClient, createDeployment, createUser, openSignIn, removeDir, startCloudRig, submitSignIn,
  tokenRequest, type CloudRig,
} from './helpers/cloud-rig.js';

const REDIRECT = 'http://127.0.0.1:9/callback';
const HOUR_MS = 60 * 60 * 1000;

let rig: CloudRig;
let user: { user_id: string; email: string; password: string };
let deployment: any;

t.before(async () => {
  rig = await startCloudRig();
  user = await createUser(rig, 'ada@example.com');
  deployment = await createDeployment(rig, 'oauth-test', user.user_id);
});

t.teardown(async () => {
  await rig.stop();
  removeDir(rig.dataDir);
});

function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

async function grant(scopes = ['*'], extra: Record<string, string> = {}) {
  const client = await createClient(rig, scopes, [REDIRECT]);
  const code = await authorize(rig, client, user, REDIRECT, extra);
  const answer = await tokenRequest(rig, client, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, ...(extra.code_verifier ? { code_verifier: extra.code_verifier } : {}) });
  return { client, code, answer };
}

t.test('users: created with the cloud key, unique e-mail, validated, never by a token', async (t) => {
  const created = await rig.operator('POST', '/users', { email: 'Grace@Example.com', password: 'long enough password' });
  t.equal(created.status, 201);
  t.equal(created.body.email, 'grace@example.com');
  t.notOk('password' in created.body || 'password_hash' in created.body, 'no password in the answer');
  t.equal((await rig.operator('POST', '/users', { email: 'grace@example.com', password: 'another password' })).body.error_detail.code, 'USER_EMAIL_TAKEN');
  t.equal((await rig.operator('POST', '/users', { email: 'x@example.com', password: 'short' })).status, 400);
  t.equal((await rig.operator('POST', '/users', { email: 'not-an-email', password: 'long enough password' })).status, 400);
  t.equal((await rig.request('POST', '/users', { email: 'y@example.com', password: 'long enough password' })).body.error_detail.code, 'AUTH_MISSING_API_KEY');
  t.equal((await rig.request('POST', '/users', {}, { 'x-svc-key': 'wrong' })).body.error_detail.code, 'AUTH_INVALID_API_KEY');
  const { answer } = await grant();
  const byToken = await rig.request('POST', '/users', { email: 'z@example.com', password: 'long enough password' }, bearer(answer.body.access_token));
  t.equal(byToken.status, 403, 'a token cannot create users');
});

t.test('clients: secret shown once, listed without it, validated', async (t) => {
  const created = await rig.operator('POST', '/oauth/clients', { name: 'App', scopes: ['proxy:read'], redirect_uris: [REDIRECT], expires_at: null });
  t.equal(created.status, 201);
  t.match(created.body, { client_id: /^cli_/, client_secret: /^fcs_/, type: 'OAuth', status: 'Active', expires_at: null, scopes: ['proxy:read'] });
  const listed = (await rig.operator('GET', '/oauth/clients')).body.find((client: any) => client.client_id === created.body.client_id);
  t.ok(listed, 'listed');
  t.notOk('client_secret' in listed, 'the secret is not listed');
  for (const bad of [
    { name: 'x', scopes: ['nope'], redirect_uris: [REDIRECT], expires_at: null },
    { name: 'x', scopes: ['*'], redirect_uris: ['http://example.com/cb'], expires_at: null },
    { name: 'x', scopes: ['*'], redirect_uris: ['https://example.com/cb#frag'], expires_at: null },
    { name: 'x', scopes: ['*'], redirect_uris: [], expires_at: null },
    { name: 'x', scopes: ['*'], redirect_uris: [REDIRECT], expires_at: '2001-01-01T00:00:00Z' },
    { name: 'x', scopes: ['*'], redirect_uris: [REDIRECT] },
  ]) {
    t.equal((await rig.operator('POST', '/oauth/clients', bad)).status, 400, JSON.stringify(bad));
  }
  t.equal((await rig.operator('POST', '/oauth/clients/cli_nope/revoke')).body.error_detail.code, 'OAUTH_CLIENT_NOT_FOUND');
});

t.test('authorize: pages, never redirects, for an unknown client or an unregistered redirect_uri', async (t) => {
  const client = await createClient(rig, ['*'], [REDIRECT]);
  const cases: Array<Record<string, string>> = [
    { response_type: 'code', client_id: 'cli_unknown', redirect_uri: REDIRECT },
    { response_type: 'code', client_id: client.client_id, redirect_uri: 'http://127.0.0.1:9/other' },
    { response_type: 'code', client_id: client.client_id, redirect_uri: `${REDIRECT}/` },
    { response_type: 'code', client_id: client.client_id },
  ];
  for (const params of cases) {
    const page = await openSignIn(rig, params);
    t.equal(page.status, 400, JSON.stringify(params));
    t.equal(page.location, null, 'no redirect');
    t.match(page.headers.get('content-type'), /text\/html/);
    t.match(page.headers.get('content-security-policy'), /frame-ancestors 'none'/);
  }
});

t.test('authorize: errors after the client is trusted go back to it with state', async (t) => {
  const client = await createClient(rig, ['proxy:read'], [REDIRECT]);
  const base = { client_id: client.client_id, redirect_uri: REDIRECT, state: 's-1' };
  const cases: Array<[Record<string, string>, string]> = [
    [{ response_type: 'token' }, 'unsupported_response_type'],
    [{ response_type: 'code', scope: 'proxy:write' }, 'invalid_scope'],
    [{ response_type: 'code', scope: 'bogus' }, 'invalid_scope'],
    [{ response_type: 'code', code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' }, 'invalid_request'],
    [{ response_type: 'code', code_challenge: 'short', code_challenge_method: 'S256' }, 'invalid_request'],
    [{ response_type: 'code', code_challenge_method: 'S256' }, 'invalid_request'],
  ];
  for (const [params, error] of cases) {
    const page = await openSignIn(rig, { ...base, ...params });
    t.equal(page.status, 303, JSON.stringify(params));
    const location = new URL(page.location!);
    t.equal(location.origin + location.pathname, REDIRECT);
    t.equal(location.searchParams.get('error'), error);
    t.equal(location.searchParams.get('state'), 's-1', 'state passed through');
    t.equal(location.searchParams.get('iss'), rig.url, 'iss names the issuer (RFC 9207)');
  }
});

t.test('sign-in page: headers, CSRF, cookie, wrong password, deny, single use', async (t) => {
  const client = await createClient(rig, ['*'], [REDIRECT]);
  const params = { response_type: 'code', client_id: client.client_id, redirect_uri: REDIRECT, state: 'abc' };
  const page = await openSignIn(rig, params);
  t.equal(page.status, 200);
  t.match(page.headers.get('content-security-policy'), /frame-ancestors 'none'/);
  t.equal(page.headers.get('x-frame-options'), 'DENY');
  t.equal(page.headers.get('referrer-policy'), 'no-referrer');
  t.equal(page.headers.get('cache-control'), 'no-store');
  t.match(page.html, /Test App/);
  t.ok(page.sealed && page.cookie, 'the sealed request and the cookie');
  t.match(page.headers.get('set-cookie'), /HttpOnly/i);
  t.match(page.headers.get('set-cookie'), /SameSite=Strict/i);
  t.notMatch(page.headers.get('set-cookie'), /Secure/i, 'not Secure: this cloud is served over http');

  const noCookie = await submitSignIn(rig, page, { email: user.email, password: user.password }, { cookie: 'folio_sign_in=forged' });
  t.equal(noCookie.status, 403, 'a post without the page cookie is refused');
  const attackers = await openSignIn(rig, params);
  const crossed = await submitSignIn(rig, page, { email: user.email, password: user.password }, { sealed: attackers.sealed });
  t.equal(crossed.status, 403, 'a form carrying another browser\'s page (a valid seal naming another cookie) is refused');
  const sealed = page.sealed!;
  const tampered = await submitSignIn(rig, page, { email: user.email, password: user.password }, { sealed: `${sealed.slice(0, 40)}${sealed[40] === 'A' ? 'B' : 'A'}${sealed.slice(41)}` });
  t.equal(tampered.status, 400, 'a seal changed by one character does not open');
  const wrong = await submitSignIn(rig, page, { email: user.email, password: 'not the password' });
  t.equal(wrong.status, 401);
  t.match(await wrong.text(), /Wrong e-mail or password/);
  const unknown = await submitSignIn(rig, page, { email: 'nobody@example.com', password: user.password });
  t.equal(unknown.status, 401, 'an unknown e-mail is answered as a wrong password');
  const right = await submitSignIn(rig, page, { email: user.email, password: user.password });
  t.equal(right.status, 303, '303 after the POST');
  const location = new URL(right.headers.get('location')!);
  t.match(location.searchParams.get('code'), /^fac_/);
  t.equal(location.searchParams.get('state'), 'abc');
  t.equal(location.searchParams.get('iss'), rig.url, 'and iss');
  const again = await submitSignIn(rig, page, { email: user.email, password: user.password });
  t.equal(again.status, 400, 'the page cannot be used twice');

  const denied = await openSignIn(rig, params);
  const deny = await submitSignIn(rig, denied, { decision: 'deny' });
  t.equal(deny.status, 303);
  t.equal(new URL(deny.headers.get('location')!).searchParams.get('error'), 'access_denied');
  // Guessing is bounded per account and per address, across pages: test/cloud-sign-in-abuse.int.test.ts.
});

t.test('token endpoint: the exchange, and every error', async (t) => {
  const { client, code, answer } = await grant(['proxy:read', 'deployments:read']);
  t.equal(answer.status, 200);
  t.equal(answer.headers.get('cache-control'), 'no-store');
  t.match(answer.body, { access_token: /^fat_/, token_type: 'Bearer', expires_in: 3600, refresh_token: /^frt_/, scope: 'proxy:read deployments:read' });

  const bad = async (who: { client_id: string; client_secret: string } | undefined, form: Record<string, string>, status: number, error: string, label: string) => {
    const response = await tokenRequest(rig, who, form);
    t.equal(response.status, status, `${label}: status`);
    t.equal(response.body.error, error, `${label}: ${error}`);
    t.equal(response.headers.get('cache-control'), 'no-store', `${label}: no-store`);
    if (error === 'invalid_client') t.match(response.headers.get('www-authenticate'), /^Basic/, `${label}: WWW-Authenticate`);
  };
  await bad(undefined, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT }, 401, 'invalid_client', 'no client authentication');
  await bad({ ...client, client_secret: 'fcs_wrong' }, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT }, 401, 'invalid_client', 'wrong secret');
  await bad({ client_id: 'cli_unknown', client_secret: client.client_secret }, { grant_type: 'client_credentials' }, 401, 'invalid_client', 'unknown client');
  await bad(client, { grant_type: 'password', username: 'a', password: 'b' }, 400, 'unsupported_grant_type', 'unsupported grant');
  await bad(client, {}, 400, 'invalid_request', 'no grant_type');
  await bad(client, { grant_type: 'authorization_code', redirect_uri: REDIRECT }, 400, 'invalid_request', 'no code');
  await bad(client, { grant_type: 'authorization_code', code: 'fac_unknown', redirect_uri: REDIRECT }, 400, 'invalid_grant', 'unknown code');
  await bad(client, { grant_type: 'refresh_token', refresh_token: answer.body.refresh_token, scope: 'proxy:write' }, 400, 'invalid_scope', 'wider scope on refresh');
  await bad(client, { grant_type: 'refresh_token', refresh_token: answer.body.refresh_token, scope: 'nonsense' }, 400, 'invalid_scope', 'unknown scope on refresh');

  const other = await createClient(rig, ['*'], [REDIRECT]);
  const codeForOther = await authorize(rig, other, user, REDIRECT);
  await bad(client, { grant_type: 'authorization_code', code: codeForOther, redirect_uri: REDIRECT }, 400, 'invalid_grant', 'a code of another client');
  const mismatch = await authorize(rig, other, user, REDIRECT);
  await bad(other, { grant_type: 'authorization_code', code: mismatch, redirect_uri: 'http://127.0.0.1:9/elsewhere' }, 400, 'invalid_grant', 'redirect_uri differs');
  const response = await tokenRequest(rig, other, { grant_type: 'authorization_code', code: mismatch, redirect_uri: REDIRECT });
  t.equal(response.status, 200, 'the code still works with the right redirect_uri');
});

t.test('a replayed code is refused and revokes the tokens it issued', async (t) => {
  const { client, code, answer } = await grant(['*']);
  t.equal((await rig.request('GET', '/deployments', undefined, bearer(answer.body.access_token))).status, 200, 'the token works');
  const replay = await tokenRequest(rig, client, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT });
  t.equal(replay.status, 400);
  t.equal(replay.body.error, 'invalid_grant');
  t.equal((await rig.request('GET', '/deployments', undefined, bearer(answer.body.access_token))).status, 401, 'its access token is dead');
  const refreshed = await tokenRequest(rig, client, { grant_type: 'refresh_token', refresh_token: answer.body.refresh_token });
  t.equal(refreshed.body.error, 'invalid_grant', 'its refresh token is dead');
});

t.test('refresh tokens rotate; reusing a rotated one revokes the family', async (t) => {
  const { client, answer } = await grant(['*']);
  const second = await tokenRequest(rig, client, { grant_type: 'refresh_token', refresh_token: answer.body.refresh_token });
  t.equal(second.status, 200);
  t.not(second.body.refresh_token, answer.body.refresh_token, 'a new refresh token');
  const narrowed = await tokenRequest(rig, client, { grant_type: 'refresh_token', refresh_token: second.body.refresh_token, scope: 'deployments:read' });
  t.equal(narrowed.body.scope, 'deployments:read', 'a refresh may narrow the scope');
  const reuse = await tokenRequest(rig, client, { grant_type: 'refresh_token', refresh_token: answer.body.refresh_token });
  t.equal(reuse.body.error, 'invalid_grant', 'the rotated token is refused');
  for (const token of [answer.body.access_token, second.body.access_token, narrowed.body.access_token]) {
    t.equal((await rig.request('GET', '/deployments', undefined, bearer(token))).status, 401, 'every access token of the family is dead');
  }
  t.equal((await tokenRequest(rig, client, { grant_type: 'refresh_token', refresh_token: narrowed.body.refresh_token })).body.error, 'invalid_grant', 'the newest refresh token too');
  const elsewhere = await createClient(rig, ['*'], [REDIRECT]);
  const mine = await grant(['*']);
  t.equal((await tokenRequest(rig, elsewhere, { grant_type: 'refresh_token', refresh_token: mine.answer.body.refresh_token })).body.error, 'invalid_grant', 'a refresh token of another client');
});

t.test('PKCE S256', async (t) => {
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const client = await createClient(rig, ['*'], [REDIRECT]);
  const pkce = { code_challenge: challenge, code_challenge_method: 'S256' };
  const exchange = (code: string, extra: Record<string, string>) => tokenRequest(rig, client, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, ...extra });
  const code = await authorize(rig, client, user, REDIRECT, pkce);
  t.equal((await exchange(code, {})).body.error, 'invalid_grant', 'the verifier is required');
  t.equal((await exchange(code, { code_verifier: randomBytes(32).toString('base64url') })).body.error, 'invalid_grant', 'a wrong verifier');
  t.equal((await exchange(code, { code_verifier: 'short' })).body.error, 'invalid_request', 'a malformed verifier');
  t.equal((await exchange(code, { code_verifier: verifier })).status, 200, 'the right verifier');
  const plain = await authorize(rig, client, user, REDIRECT);
  t.equal((await exchange(plain, { code_verifier: verifier })).body.error, 'invalid_grant', 'a verifier without a challenge');
});

t.test('lifetimes: codes 10 minutes, access tokens 1 hour, refresh families 30 days', async (t) => {
  t.teardown(() => {
    rig.clockOffsetMs = 0;
  });
  const client = await createClient(rig, ['*'], [REDIRECT]);
  const code = await authorize(rig, client, user, REDIRECT);
  rig.clockOffsetMs = 10 * 60 * 1000 + 1;
  t.equal((await tokenRequest(rig, client, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT })).body.error, 'invalid_grant', 'an 11-minute-old code');
  rig.clockOffsetMs = 0;
  const { client: family, answer } = await grant(['*']);
  rig.clockOffsetMs = HOUR_MS - 1_000;
  t.equal((await rig.request('GET', '/deployments', undefined, bearer(answer.body.access_token))).status, 200, 'alive before an hour');
  rig.clockOffsetMs = HOUR_MS + 1;
  t.equal((await rig.request('GET', '/deployments', undefined, bearer(answer.body.access_token))).status, 401, 'dead after an hour');
  rig.clockOffsetMs = 29 * 24 * HOUR_MS;
  const again = await tokenRequest(rig, family, { grant_type: 'refresh_token', refresh_token: answer.body.refresh_token });
  t.equal(again.status, 200, 'a refresh after 29 days works (rotating does not extend the family)');
  rig.clockOffsetMs = 30 * 24 * HOUR_MS + 1;
  t.equal((await tokenRequest(rig, family, { grant_type: 'refresh_token', refresh_token: again.body.refresh_token })).body.error, 'invalid_grant', 'after 30 days the user signs in again');
});

t.test('revoking a client kills its tokens at once and keeps it listed', async (t) => {
  const { client, answer } = await grant(['*']);
  t.equal((await rig.request('GET', '/deployments', undefined, bearer(answer.body.access_token))).status, 200);
  const revoked = await rig.operator('POST', `/oauth/clients/${client.client_id}/revoke`);
  t.equal(revoked.body.status, 'Revoked');
  t.equal((await rig.request('GET', '/deployments', undefined, { 'x-svc-key': answer.body.access_token })).status, 401, 'the access token is dead');
  t.equal((await tokenRequest(rig, client, { grant_type: 'refresh_token', refresh_token: answer.body.refresh_token })).body.error, 'invalid_client', 'the client cannot refresh');
  const listed = (await rig.operator('GET', '/oauth/clients')).body.find((item: any) => item.client_id === client.client_id);
  t.equal(listed.status, 'Revoked', 'still listed, as Revoked');
  t.equal((await openSignIn(rig, { response_type: 'code', client_id: client.client_id, redirect_uri: REDIRECT })).status, 400, 'no new sign-ins');
});

t.test('an expired client stops working', async (t) => {
  t.teardown(() => {
    rig.clockOffsetMs = 0;
  });
  const created = await rig.operator('POST', '/oauth/clients', { name: 'Short', scopes: ['*'], redirect_uris: [REDIRECT], expires_at: new Date(Date.now() + 2 * HOUR_MS).toISOString() });
  const client = created.body;
  const code = await authorize(rig, client, user, REDIRECT);
  const answer = await tokenRequest(rig, client, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT });
  rig.clockOffsetMs = 2 * HOUR_MS + 1;
  t.equal((await tokenRequest(rig, client, { grant_type: 'refresh_token', refresh_token: answer.body.refresh_token })).status, 401, 'invalid_client once expired');
});

t.test('scopes at the proxy and the deployment routes; a token reaches its own user\'s deployments only', async (t) => {
  const instance = `instance_id=${deployment.instance_id}`;
  const reader = (await grant(['proxy:read'])).answer.body.access_token;
  const writer = (await grant(['proxy:write'])).answer.body.access_token;
  const lister = (await grant(['deployments:read'])).answer.body.access_token;
  t.equal((await rig.request('GET', `/proxy/ledgers?${instance}`, undefined, bearer(reader))).status, 200, 'proxy:read may GET');
  const refused = await rig.request('POST', `/proxy/ledgers?${instance}`, { name: 'x' }, bearer(reader));
  t.equal(refused.status, 403, 'proxy:read may not POST');
  t.equal(refused.body.error_detail.code, 'AUTH_INSUFFICIENT_PERMISSIONS');
  t.equal((await rig.request('POST', `/proxy/ledgers?${instance}`, { name: 'by writer' }, bearer(writer))).status, 201, 'proxy:write may POST');
  t.equal((await rig.request('GET', `/proxy/ledgers?${instance}`, undefined, { 'x-svc-key': writer })).status, 200, 'proxy:write may GET, token in X-svc-key');
  t.equal((await rig.request('GET', `/proxy/ledgers?${instance}`, undefined, bearer(lister))).status, 403, 'deployments:read is not a proxy scope');
  t.equal((await rig.request('GET', '/deployments', undefined, bearer(reader))).status, 403, 'proxy:read cannot list deployments');
  const listed = await rig.request('GET', '/deployments', undefined, bearer(lister));
  t.same(listed.body.map((item: any) => item.deployment_id), [deployment.deployment_id], 'the user\'s deployment only');
  t.equal((await rig.request('POST', `/deployments/${deployment.deployment_id}/upgrade`, {}, bearer(lister))).status, 403, 'upgrading needs deployments:write');

  const stranger = await createUser(rig, 'stranger@example.com');
  const foreign = await createDeployment(rig, 'not-ada', stranger.user_id);
  t.equal((await rig.request('GET', `/proxy/ledgers?instance_id=${foreign.instance_id}`, undefined, bearer(writer))).status, 404, 'another user\'s instance is not found');
  t.equal((await rig.request('GET', `/deployments/${foreign.deployment_id}`, undefined, bearer(lister))).status, 404, 'nor is their deployment');
  const upgrader = (await grant(['deployments:write'])).answer.body.access_token;
  const missing = 'ins_00000000-0000-4000-8000-000000000000';
  for (const [method, suffix, token] of [['GET', '', lister], ['POST', '/upgrade', upgrader]] as const) {
    const theirs = await rig.request(method, `/deployments/${foreign.instance_id}${suffix}`, method === 'POST' ? {} : undefined, bearer(token));
    const nobodys = await rig.request(method, `/deployments/${missing}${suffix}`, method === 'POST' ? {} : undefined, bearer(token));
    t.equal(theirs.status, 404, `${method} with another user's instance_id`);
    t.same(JSON.parse(theirs.text.replaceAll(foreign.instance_id, 'ID')), JSON.parse(nobodys.text.replaceAll(missing, 'ID')), `${method}: answered exactly as an id that does not exist`);
    const mine = await rig.request(method, `/deployments/${deployment.instance_id}${suffix}`, method === 'POST' ? {} : undefined, bearer(token));
    t.match(mine.body.error_detail.message, /is an instance_id/, `${method}: the owner is told it gave an instance_id`);
  }
  t.equal((await rig.request('GET', `/proxy/ledgers?instance_id=${foreign.instance_id}`, undefined, { 'x-svc-key': CLOUD_API_KEY })).status, 200, 'the cloud key reaches every deployment');
});
