// A real control plane for tests: `startCloud` in this process on 127.0.0.1 with an ephemeral port and a
// temp data directory, its cores real child processes of the built CLI (run `npm run build` first).
// The clock can be moved forward (expiry of codes and tokens) without waiting. Helpers create users,
// deployments (waiting for ACTIVE), OAuth clients, and go through the sign-in page over plain HTTP the
// way a browser would (the browser test does it with a real one).

import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import type { CloudConfig } from '../../cloud/cloud-config.js';
import { startCloud, type RunningCloud } from '../../cloud/cloud-service.js';
import type { UpgradeHooks } from '../../cloud/upgrade.js';
import { sendRequest, type TestResponse } from './test-server.js';

export const CLOUD_API_KEY = 'cloud-test-key-0123456789abcdef-0123456789';

export interface CloudRig {
  url: string;
  dataDir: string;
  cloud: RunningCloud;
  /** Milliseconds added to the control plane's clock. */
  clockOffsetMs: number;
  /** A request with the cloud API key (or the headers given). */
  operator(method: string, route: string, body?: unknown, headers?: Record<string, string>): Promise<TestResponse>;
  request(method: string, route: string, body?: unknown, headers?: Record<string, string>): Promise<TestResponse>;
  stop(): Promise<void>;
}

/** Settings a test may give beside the rig's own (the public URL, connection limits, private hook targets, the deployments' default rate). */
export type RigConfig = Pick<CloudConfig, 'public_url' | 'trusted_proxies' | 'connections' | 'core_hooks_allow_private_networks' | 'deployment_rate_limit_default'>;

export async function startCloudRig(options: { dataDir?: string; upgradeHooks?: UpgradeHooks; config?: RigConfig } = {}): Promise<CloudRig> {
  const dataDir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'folio-cloud-'));
  const rig = { clockOffsetMs: 0 } as CloudRig;
  const cloud = await startCloud({
    config: {
      host: '127.0.0.1', port: 0, data_dir: dataDir, api_key: CLOUD_API_KEY, log_level: 'silent',
      core_hooks_allow_private_networks: false, ...options.config,
    },
    logger: pino({ level: process.env.FOLIO_CLOUD_TEST_LOG_LEVEL ?? 'silent' }),
    now: () => Date.now() + rig.clockOffsetMs,
    upgradeHooks: options.upgradeHooks,
  });
  Object.assign(rig, {
    url: cloud.url,
    dataDir,
    cloud,
    operator: (method: string, route: string, body?: unknown, headers: Record<string, string> = {}) =>
      sendRequest(cloud.url, method, route, body, { 'x-svc-key': CLOUD_API_KEY, ...headers }),
    request: (method: string, route: string, body?: unknown, headers?: Record<string, string>) => sendRequest(cloud.url, method, route, body, headers),
    stop: () => cloud.stop(),
  });
  return rig;
}

export async function waitUntil(condition: () => boolean | Promise<boolean>, timeoutMs = 60_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function createUser(rig: CloudRig, email: string, password = 'correct horse battery'): Promise<{ user_id: string; email: string; password: string }> {
  const created = await rig.operator('POST', '/users', { email, password });
  if (created.status !== 201) throw new Error(`user: ${created.status} ${created.text}`);
  return { ...created.body, password };
}

/** Creates a deployment and waits until it is ACTIVE; returns its details. */
export async function createDeployment(rig: CloudRig, name: string, userId?: string): Promise<any> {
  const created = await rig.operator('POST', '/deployments', { name, ...(userId ? { user_id: userId } : {}) });
  if (created.status !== 201) throw new Error(`deployment: ${created.status} ${created.text}`);
  return waitForStatus(rig, created.body.deployment_id, 'ACTIVE');
}

export async function waitForStatus(rig: CloudRig, deploymentId: string, status: string, timeoutMs = 120_000): Promise<any> {
  let details: any;
  await waitUntil(async () => {
    details = (await rig.operator('GET', `/deployments/${deploymentId}`)).body;
    if (details?.status === 'FAILED' && status !== 'FAILED') throw new Error(`deployment ${deploymentId} FAILED: ${details.problem}`);
    return details?.status === status;
  }, timeoutMs, `deployment ${deploymentId} to be ${status}`);
  return details;
}

export async function createClient(rig: CloudRig, scopes: string[], redirectUris: string[], expiresAt: string | null = null): Promise<{ client_id: string; client_secret: string }> {
  const created = await rig.operator('POST', '/oauth/clients', { name: 'Test App', scopes, redirect_uris: redirectUris, expires_at: expiresAt });
  if (created.status !== 201) throw new Error(`client: ${created.status} ${created.text}`);
  return created.body;
}

export interface SignInPage {
  status: number;
  headers: Headers;
  html: string;
  /** The sealed request the form carries. */
  sealed?: string;
  cookie?: string;
  location?: string | null;
}

/** GET /oauth/authorize with these parameters (or the whole URL given), without following redirects. */
export async function openSignIn(rig: CloudRig, params: Record<string, string> | URL): Promise<SignInPage> {
  const url = params instanceof URL ? params : `${rig.url}/oauth/authorize?${new URLSearchParams(params)}`;
  const response = await fetch(url, { redirect: 'manual' });
  const html = await response.text();
  const field = (name: string): string | undefined => new RegExp(`name="${name}" value="([^"]+)"`).exec(html)?.[1];
  const cookie = response.headers.get('set-cookie')?.split(';')[0];
  return { status: response.status, headers: response.headers, html, sealed: field('request'), cookie, location: response.headers.get('location') };
}

/**
 * Posts the sign-in form as a browser would; returns the response (a 303 to the client on success).
 * `localAddress` sends it from another loopback address (127.0.0.0/8 all reach the rig).
 */
export async function submitSignIn(
  rig: CloudRig, page: SignInPage, fields: Record<string, string>, overrides: { cookie?: string; sealed?: string; localAddress?: string } = {},
): Promise<Response> {
  const form = new URLSearchParams({ request: overrides.sealed ?? page.sealed ?? '', decision: 'approve', ...fields });
  const cookie = overrides.cookie ?? page.cookie;
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}) };
  return httpRequest(`${rig.url}/oauth/authorize`, { method: 'POST', headers, body: form.toString(), localAddress: overrides.localAddress });
}

/** One request over node:http (which can choose the local address), answered as a fetch Response; redirects are not followed. */
export function httpRequest(url: string, options: { method: string; headers?: Record<string, string>; body?: string; localAddress?: string }): Promise<Response> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: options.method, headers: options.headers, localAddress: options.localAddress, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const headers = new Headers();
        for (let index = 0; index < response.rawHeaders.length; index += 2) headers.append(response.rawHeaders[index]!, response.rawHeaders[index + 1]!);
        resolve(new Response(chunks.length === 0 ? null : Buffer.concat(chunks), { status: response.statusCode ?? 0, headers }));
      });
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(options.body);
  });
}

/** The whole authorization-code dance over HTTP; returns the code from the redirect. */
export async function authorize(rig: CloudRig, client: { client_id: string }, user: { email: string; password: string }, redirectUri: string, extra: Record<string, string> = {}): Promise<string> {
  const page = await openSignIn(rig, { response_type: 'code', client_id: client.client_id, redirect_uri: redirectUri, state: 'xyz', ...extra });
  if (page.status !== 200) throw new Error(`sign-in page: ${page.status} ${page.html.slice(0, 300)}`);
  const answer = await submitSignIn(rig, page, { email: user.email, password: user.password });
  const location = answer.headers.get('location');
  if (answer.status !== 303 || !location) throw new Error(`sign-in: ${answer.status} ${await answer.text()}`);
  const code = new URL(location).searchParams.get('code');
  if (!code) throw new Error(`no code in ${location}`);
  return code;
}

/** POST /oauth/token with HTTP Basic client credentials and a form body. */
export async function tokenRequest(rig: CloudRig, client: { client_id: string; client_secret: string } | undefined, form: Record<string, string>): Promise<{ status: number; headers: Headers; body: any }> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (client) headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret)}`).toString('base64')}`;
  const response = await fetch(`${rig.url}/oauth/token`, { method: 'POST', headers, body: new URLSearchParams(form).toString() });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

/** The core of a deployment as the control plane reaches it: its address and its master key (tests look behind the proxy). */
export function coreOf(rig: CloudRig, deployment: { deployment_id: string; instance_id: string }): { url: string; masterKey: string; pid: number } {
  const core = rig.cloud.deployments.instance(deployment.instance_id)?.core;
  const record = rig.cloud.deployments.get(deployment.deployment_id);
  if (!core?.url || !core.pid || !record) throw new Error(`the core of ${deployment.deployment_id} is not running`);
  return { url: core.url, masterKey: rig.cloud.deployments.secretOf(record), pid: core.pid };
}

/** A request straight to a core (not through the proxy), with its master key unless other headers are given. */
export function coreRequest(core: { url: string; masterKey: string }, method: string, route: string, body?: unknown, headers?: Record<string, string>): Promise<TestResponse> {
  return sendRequest(core.url, method, route, body, headers ?? { 'x-svc-key': core.masterKey });
}

/** An access token of `user` with exactly these scopes (a client of its own, the code grant over HTTP). */
export async function accessToken(rig: CloudRig, user: { email: string; password: string }, scopes: string[]): Promise<string> {
  const redirect = 'http://127.0.0.1:9/callback';
  const client = await createClient(rig, scopes, [redirect]);
  const code = await authorize(rig, client, user, redirect);
  const answer = await tokenRequest(rig, client, { grant_type: 'authorization_code', code, redirect_uri: redirect });
  if (answer.status !== 200) throw new Error(`token: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.access_token as string;
}

export function removeDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}
