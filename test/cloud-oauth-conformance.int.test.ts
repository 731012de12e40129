// The control plane's OAuth server driven by a client library written by others (npm oauth4webapi):
// discovery from RFC 8414 metadata, the authorization code flow with PKCE (the sign-in page driven over
// plain HTTP as a browser would), the `iss` of RFC 9207 checked by the library on every authorization
// response, refresh with rotation, and RFC 7009 revocation of refresh and access tokens. Then what the
// library cannot see: a code replayed while its first redemption is still being written revokes what
// that redemption issued, and a cloud with an https public URL (behind a TLS-terminating proxy) sets its
// sign-in cookie Secure and names that URL as its issuer.

import * as oauth from 'oauth4webapi';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { CloudStore } from '../cloud/cloud-store.js';
import { ClientRegistry } from '../cloud/oauth-clients.js';
import { TokenService } from '../cloud/token-service.js';
import {
  createClient, createUser, httpRequest, openSignIn, removeDir, startCloudRig, submitSignIn, tokenRequest, type CloudRig,
} from './helpers/cloud-rig.js';

const REDIRECT = 'http://127.0.0.1:9/callback';
const insecure = { [oauth.allowInsecureRequests]: true }; // the rig serves http on loopback

let rig: CloudRig;
let user: { email: string; password: string };

t.before(async () => {
  rig = await startCloudRig();
  user = await createUser(rig, 'conformance@example.com', 'conformance password');
});

t.teardown(async () => {
  await rig.stop();
  removeDir(rig.dataDir);
});

async function discover(issuer: URL): Promise<oauth.AuthorizationServer> {
  const response = await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure });
  return oauth.processDiscoveryResponse(issuer, response);
}

/** The OAuth error code the library read from a refusal, or undefined when there was none. */
async function oauthError(outcome: Promise<unknown>): Promise<string | undefined> {
  try {
    await outcome;
    return undefined;
  } catch (error) {
    return (error as { error?: string }).error ?? String(error);
  }
}

/** The user signs in on the page the authorization URL opens; returns where the browser is sent. */
async function signInAt(authorizationUrl: URL): Promise<URL> {
  const page = await openSignIn(rig, authorizationUrl);
  if (page.status !== 200) throw new Error(`sign-in page: ${page.status} ${page.html.slice(0, 200)}`);
  const answer = await submitSignIn(rig, page, { email: user.email, password: user.password });
  if (answer.status !== 303) throw new Error(`sign-in: ${answer.status}`);
  return new URL(answer.headers.get('location')!);
}

t.test('oauth4webapi: discovery, code with PKCE and iss, refresh with rotation, revocation', async (t) => {
  const issuer = new URL(rig.url);
  const as = await discover(issuer);
  t.equal(as.issuer, rig.url, 'the issuer is the cloud\'s URL');
  t.same(as.code_challenge_methods_supported, ['S256']);
  t.equal(as.authorization_response_iss_parameter_supported, true);
  t.ok(as.revocation_endpoint, 'a revocation endpoint is advertised');

  const registered = await createClient(rig, ['proxy:read', 'deployments:read'], [REDIRECT]);
  const client: oauth.Client = { client_id: registered.client_id };
  const clientAuth = oauth.ClientSecretBasic(registered.client_secret);
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const authorizationUrl = new URL(as.authorization_endpoint!);
  authorizationUrl.search = new URLSearchParams({
    response_type: 'code', client_id: client.client_id, redirect_uri: REDIRECT, scope: 'deployments:read', state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
  }).toString();
  const landed = await signInAt(authorizationUrl);
  const callback = oauth.validateAuthResponse(as, client, landed, state);
  t.equal(landed.searchParams.get('iss'), as.issuer, 'the response carries iss, and the library accepted it');

  const codeResponse = await oauth.authorizationCodeGrantRequest(as, client, clientAuth, callback, REDIRECT, verifier, insecure);
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, codeResponse);
  t.equal(tokens.token_type, 'bearer', 'token_type (the library lower-cases it)');
  t.equal(tokens.scope, 'deployments:read');
  t.ok(tokens.refresh_token, 'a refresh token');
  const listed = await oauth.protectedResourceRequest(tokens.access_token, 'GET', new URL(`${rig.url}/deployments`), new Headers(), null, insecure);
  t.equal(listed.status, 200, 'the access token works');

  const refreshResponse = await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token!, insecure);
  const refreshed = await oauth.processRefreshTokenResponse(as, client, refreshResponse);
  t.not(refreshed.refresh_token, tokens.refresh_token, 'refresh rotates the refresh token');
  const reuse = await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token!, insecure);
  t.equal(await oauthError(oauth.processRefreshTokenResponse(as, client, reuse)), 'invalid_grant', 'a rotated refresh token is refused');

  // A new family (the reuse above ended that one), then revocation of its access token, then its refresh token.
  const second = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(
    as, client, clientAuth, oauth.validateAuthResponse(as, client, await signInAt(authorizationUrl), state), REDIRECT, verifier, insecure,
  ));
  const access = () => oauth.protectedResourceRequest(second.access_token, 'GET', new URL(`${rig.url}/deployments`), new Headers(), null, insecure);
  t.equal((await access()).status, 200);
  await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, clientAuth, second.access_token, { ...insecure, additionalParameters: { token_type_hint: 'access_token' } }));
  t.equal((await access()).status, 401, 'a revoked access token is refused at once');
  const stillRefreshes = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, clientAuth, second.refresh_token!, insecure));
  t.ok(stillRefreshes.access_token, 'revoking an access token leaves its refresh token');
  await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, clientAuth, stillRefreshes.refresh_token!, insecure));
  const afterRevoke = await oauth.refreshTokenGrantRequest(as, client, clientAuth, stillRefreshes.refresh_token!, insecure);
  t.equal(await oauthError(oauth.processRefreshTokenResponse(as, client, afterRevoke)), 'invalid_grant', 'a revoked refresh token is refused');
  const familyAccess = await oauth.protectedResourceRequest(stillRefreshes.access_token, 'GET', new URL(`${rig.url}/deployments`), new Headers(), null, insecure);
  t.equal(familyAccess.status, 401, 'and so is every access token of its family');
  await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, clientAuth, 'frt_not-a-token', insecure));
  t.pass('an unknown token is answered 200, as RFC 7009 asks');
});

t.test('oauth4webapi refuses an authorization response whose iss is missing or another issuer\'s', async (t) => {
  const as = await discover(new URL(rig.url));
  const registered = await createClient(rig, ['*'], [REDIRECT]);
  const client: oauth.Client = { client_id: registered.client_id };
  const landed = await signInAt(new URL(`${as.authorization_endpoint}?${new URLSearchParams({ response_type: 'code', client_id: client.client_id, redirect_uri: REDIRECT, state: 's' })}`));
  const forged = new URL(landed);
  forged.searchParams.set('iss', 'https://mix-up.example');
  t.throws(() => oauth.validateAuthResponse(as, client, forged, 's'), /iss/, 'another issuer');
  const stripped = new URL(landed);
  stripped.searchParams.delete('iss');
  t.throws(() => oauth.validateAuthResponse(as, client, stripped, 's'), /iss/, 'none');
  t.ok(oauth.validateAuthResponse(as, client, landed, 's').get('code'), 'the real one passes');
});

t.test('revocation: client authentication, and another client\'s token is left alone', async (t) => {
  const owner = await createClient(rig, ['*'], [REDIRECT]);
  const other = await createClient(rig, ['*'], [REDIRECT]);
  const page = await openSignIn(rig, { response_type: 'code', client_id: owner.client_id, redirect_uri: REDIRECT });
  const code = new URL((await submitSignIn(rig, page, { email: user.email, password: user.password })).headers.get('location')!).searchParams.get('code')!;
  const tokens = (await tokenRequest(rig, owner, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT })).body;
  const revoke = (who: { client_id: string; client_secret: string } | undefined, form: Record<string, string>) => {
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
    if (who) headers.authorization = `Basic ${Buffer.from(`${who.client_id}:${who.client_secret}`).toString('base64')}`;
    return fetch(`${rig.url}/oauth/revoke`, { method: 'POST', headers, body: new URLSearchParams(form).toString() });
  };
  t.equal((await revoke(undefined, { token: tokens.access_token })).status, 401, 'without client authentication: 401');
  t.equal((await revoke({ ...owner, client_secret: 'fcs_wrong' }, { token: tokens.access_token })).status, 401, 'with a wrong secret: 401');
  t.equal((await revoke(owner, {})).status, 400, 'without a token: 400 invalid_request');
  t.equal((await revoke(other, { token: tokens.refresh_token })).status, 200, 'another client is answered as for an unknown token');
  const stillWorks = await rig.request('GET', '/deployments', undefined, { authorization: `Bearer ${tokens.access_token}` });
  t.equal(stillWorks.status, 200, 'and the token is not revoked');
});

t.test('a code replayed while its first redemption is being written revokes what that redemption issued', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-replay-'));
  const store = CloudStore.open(dir);
  t.teardown(async () => {
    await store.close();
    removeDir(dir);
  });
  const clients = new ClientRegistry(store);
  const tokens = new TokenService(store, clients, Date.now);
  const { client } = await clients.create({ name: 'Race', scopes: ['*'], redirect_uris: [REDIRECT], expires_at: null }, Date.now());
  const code = await tokens.issueCode({ client, userId: 'usr_race', redirectUri: REDIRECT, scopes: ['*'], codeChallenge: null });
  // Both begin before either awaits anything: the second arrives while the first one's write is on its way.
  const first = tokens.redeemCode(client, code, REDIRECT, undefined);
  const second = tokens.redeemCode(client, code, REDIRECT, undefined);
  const [one, two] = await Promise.all([first, second]);
  t.equal(two.ok, false, 'the replay is refused');
  if (one.ok) t.equal(tokens.holderOf(one.grant.access_token), undefined, 'if the first answer handed out tokens, they are dead');
  else t.equal(one.error, 'invalid_grant', 'the first redemption hands out nothing');
  const families = store.all<{ revoked_at: number | null }>('family');
  t.equal(families.length, 1, 'one family was started');
  t.ok(families.every((family) => family.revoked_at !== null), 'and it is revoked on disk');
});

t.test('behind a TLS-terminating proxy: an https public URL makes the cookie Secure and is the issuer', async (t) => {
  const tls = await startCloudRig({ config: { public_url: 'https://cloud.example.test' } });
  t.teardown(async () => {
    await tls.stop();
    removeDir(tls.dataDir);
  });
  const metadata = await httpRequest(`${tls.url}/.well-known/oauth-authorization-server`, { method: 'GET', headers: { host: 'cloud.example.test' } });
  t.equal(metadata.status, 200, 'the public host is served although the cloud listens on loopback');
  const body = await metadata.json() as Record<string, string>;
  t.equal(body.issuer, 'https://cloud.example.test');
  t.equal(body.authorization_endpoint, 'https://cloud.example.test/oauth/authorize');
  t.equal(body.revocation_endpoint, 'https://cloud.example.test/oauth/revoke');
  const other = await httpRequest(`${tls.url}/health`, { method: 'GET', headers: { host: 'evil.example' } });
  t.equal(other.status, 403, 'any other host is still refused');

  const tlsUser = await createUser(tls, 'tls@example.com', 'a tls password');
  const registered = await createClient(tls, ['*'], [REDIRECT]);
  const page = await openSignIn(tls, { response_type: 'code', client_id: registered.client_id, redirect_uri: REDIRECT, state: 'x' });
  t.match(page.headers.get('set-cookie'), /; Secure/, 'the sign-in cookie is Secure');
  t.match(page.headers.get('set-cookie'), /HttpOnly/);
  const answer = await submitSignIn(tls, page, { email: tlsUser.email, password: tlsUser.password });
  t.equal(answer.status, 303);
  t.equal(new URL(answer.headers.get('location')!).searchParams.get('iss'), 'https://cloud.example.test', 'iss is the public URL');
});
