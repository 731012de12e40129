// The whole authorization-code flow in a real headless browser (npm's Chromium, test/helpers/chromium.ts,
// driven by playwright-core): an application sends the user to the control plane's sign-in page, the user fills
// in the form and allows access, the browser lands on the application's local callback with the code
// and its state; the application exchanges the code (with its PKCE verifier) for tokens and uses the
// access token through the proxy. A wrong password keeps the user on the page with a message.

import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import t from 'tap';
import { CHROMIUM, CHROMIUM_ARGS } from './helpers/chromium.js';
import { createClient, createDeployment, createUser, removeDir, startCloudRig, tokenRequest, type CloudRig } from './helpers/cloud-rig.js';


/** The application's callback: records the query it was called with and answers a small page. */
async function startCallback(): Promise<{ url: string; calls: URL[]; close(): Promise<void> }> {
  const calls: URL[] = [];
  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/callback') {
      response.writeHead(404).end(); // the browser's favicon request
      return;
    }
    calls.push(url);
    response.writeHead(200, { 'content-type': 'text/html' });
    response.end('<!doctype html><title>Callback</title><p id="done">signed in</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/callback`,
    calls,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

let rig: CloudRig;
let browser: Browser;
let callback: Awaited<ReturnType<typeof startCallback>>;

t.before(async () => {
  rig = await startCloudRig();
  callback = await startCallback();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
});

t.teardown(async () => {
  await browser?.close();
  await callback?.close();
  await rig?.stop();
  if (rig) removeDir(rig.dataDir);
});

t.test('sign in and allow in a browser, land on the callback, use the token', async (t) => {
  const user = await createUser(rig, 'browser@example.com', 'a browser password');
  const deployment = await createDeployment(rig, 'browser', user.user_id);
  const client = await createClient(rig, ['proxy:read', 'proxy:write'], [callback.url]);
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const state = randomBytes(12).toString('hex');
  const authorizeUrl = `${rig.url}/oauth/authorize?${new URLSearchParams({
    response_type: 'code', client_id: client.client_id, redirect_uri: callback.url, state, scope: 'proxy:write',
    code_challenge: challenge, code_challenge_method: 'S256',
  })}`;

  const context = await browser.newContext();
  t.teardown(() => context.close());
  const page = await context.newPage();
  const opened = await page.goto(authorizeUrl);
  t.equal(opened?.status(), 200);
  t.equal(await page.locator('#client-name').textContent(), 'Test App', 'the page names the application');
  t.match(await page.locator('#scopes').textContent(), /proxy:write/, 'and the scope it asks for');

  await page.fill('input[name=email]', user.email);
  await page.fill('input[name=password]', 'not the password');
  await page.click('#approve');
  await page.waitForSelector('#problem');
  t.match(await page.locator('#problem').textContent(), /Wrong e-mail or password/, 'a wrong password stays on the page');
  t.equal(callback.calls.length, 0, 'and the application was not called');

  await page.fill('input[name=email]', user.email);
  await page.fill('input[name=password]', user.password);
  await Promise.all([page.waitForURL(`${callback.url}?**`), page.click('#approve')]);
  t.equal(await page.locator('#done').textContent(), 'signed in', 'the browser landed on the callback');
  t.equal(callback.calls.length, 1);
  const landed = callback.calls[0]!;
  t.equal(landed.searchParams.get('state'), state, 'state came back');
  const code = landed.searchParams.get('code');
  t.match(code, /^fac_/, 'with a code');

  const tokens = await tokenRequest(rig, client, { grant_type: 'authorization_code', code: code!, redirect_uri: callback.url, code_verifier: verifier });
  t.equal(tokens.status, 200);
  t.equal(tokens.body.scope, 'proxy:write');
  const created = await rig.request('POST', `/proxy/ledgers?instance_id=${deployment.instance_id}`, { name: 'made in a browser flow' }, { authorization: `Bearer ${tokens.body.access_token}` });
  t.equal(created.status, 201, 'the access token works through the proxy');
  t.equal(created.body.name, 'made in a browser flow');
});

t.test('the sign-in page cannot be framed by another site', async (t) => {
  const client = await createClient(rig, ['proxy:read'], [callback.url]);
  const authorizeUrl = `${rig.url}/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: client.client_id, redirect_uri: callback.url })}`;
  const context = await browser.newContext();
  t.teardown(() => context.close());
  const page = await context.newPage();
  await page.setContent(`<iframe id="frame" src="${authorizeUrl}"></iframe>`);
  await page.waitForTimeout(500);
  const frame = page.frames().find((candidate) => candidate !== page.mainFrame());
  const framedHasForm = frame ? await frame.locator('input[name=password]').count().catch(() => 0) : 0;
  t.equal(framedHasForm, 0, 'the browser refused to render the form inside a frame');
});
