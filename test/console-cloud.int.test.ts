// The console on the cloud's control plane, in a real headless Chromium: the control plane serves the same
// static files at its own /console (a core's console is never forwarded through the proxy: its scripts
// would run on the control plane's origin), and the page reaches a tenant's core through the proxy
// (`/proxy/<path>?instance_id=`) with the person's access token, like any API call. A token with
// proxy:write gets the writes its proxy allows (create a balance, seen on the core) and a transaction's
// position in the core's log as the core answers it; one with proxy:read
// a read-only console; what the proxy does not forward (hooks, the operator's routes) is shown refused;
// a token for someone else's deployment cannot sign in to it.
//
// Screenshots are written to test-screenshots/console/ (git-ignored).

import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import t from 'tap';
import { CHROMIUM, CHROMIUM_ARGS } from './helpers/chromium.js';
import { accessToken, coreOf, coreRequest, createDeployment, createUser, removeDir, startCloudRig, type CloudRig } from './helpers/cloud-rig.js';
import { screenshotDir } from './helpers/screenshots.js';

// The page's own globals, in the functions run inside it (this project's types have no DOM).
declare const document: any;
declare const location: { hash: string };

const SCREENSHOT_DIR = screenshotDir('console');
const WAIT_MS = 60_000;

let rig: CloudRig;
let browser: Browser;
let instanceId = '';
let core: { url: string; masterKey: string };
const tokens = { write: '', read: '', stranger: '' };
let ledgerId = '';
let balanceId = '';
let movedId = '';

t.before(async () => {
  rig = await startCloudRig();
  const user = await createUser(rig, 'console@example.com', 'a console password');
  const stranger = await createUser(rig, 'stranger@example.com', 'another password');
  const deployment = await createDeployment(rig, 'console', user.user_id);
  instanceId = deployment.instance_id;
  core = coreOf(rig, deployment);
  tokens.write = await accessToken(rig, user, ['proxy:read', 'proxy:write']);
  tokens.read = await accessToken(rig, user, ['proxy:read']);
  tokens.stranger = await accessToken(rig, stranger, ['proxy:read', 'proxy:write']);
  ledgerId = (await coreRequest(core, 'POST', '/ledgers', { name: 'Tenant books' })).body.ledger_id;
  balanceId = (await coreRequest(core, 'POST', '/balances', { ledger_id: ledgerId, currency: 'USD' })).body.balance_id;
  const moved = await coreRequest(core, 'POST', '/transactions', {
    source: '@world', destination: balanceId, precise_amount: '123456', precision: 100, currency: 'USD', reference: 'tenant-1', description: 'in', allow_overdraft: true, skip_queue: true,
  });
  if (moved.status !== 201) throw new Error(`seed: ${moved.status} ${moved.text}`);
  movedId = moved.body.transaction_id;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
});

t.teardown(async () => {
  await browser?.close();
  await rig?.stop();
  if (rig) removeDir(rig.dataDir);
});

async function openTab(): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(`console: ${message.text()}`);
  });
  page.on('request', (request) => {
    if (!request.url().startsWith(rig.url)) problems.push(`request to another origin: ${request.url()}`);
  });
  return { page, problems };
}

async function signIn(page: Page, token: string): Promise<void> {
  await page.goto(`${rig.url}/console`);
  await page.getByLabel('Cloud access token or API key').fill(token);
  await page.getByLabel('Instance id of the deployment').fill(instanceId);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

async function visit(page: Page, route: string, heading: string | RegExp): Promise<void> {
  await page.goto(`${rig.url}/console#${route}`);
  await page.getByRole('heading', { level: 1, name: heading }).waitFor({ timeout: WAIT_MS });
  await page.waitForFunction(() => document.getElementById('main')?.dataset.route === location.hash.slice(1)
    && document.querySelectorAll('[aria-busy="true"]').length === 0, undefined, { timeout: WAIT_MS });
}

t.test('the control plane serves the console itself; the proxy never forwards a core\'s', async (t) => {
  const page = await fetch(`${rig.url}/console`);
  t.equal(page.status, 200, 'public');
  t.match(await page.text(), /data-api="proxy"/, 'the page calls the API through the proxy');
  t.match(page.headers.get('content-security-policy'), /frame-ancestors 'none'/);
  t.equal((await fetch(`${rig.url}/console/main.js`)).status, 200);
  const forwarded = await fetch(`${rig.url}/proxy/console?instance_id=${instanceId}`, { headers: { 'X-svc-key': tokens.write } });
  t.equal(forwarded.status, 403, 'a core\'s console through the proxy: refused');
  t.equal(((await forwarded.json()) as { error_detail: { code: string } }).error_detail.code, 'PROXY_ROUTE_FORBIDDEN');
  const credential = await rig.request('GET', '/credentials/current', undefined, { 'X-svc-key': tokens.read });
  t.match(credential.body, { kind: 'token', scopes: ['proxy:read'] }, 'a token reads what it may do');
  t.equal((await rig.request('GET', '/credentials/current')).status, 401, 'without one: 401');
});

t.test('a proxy:write token: the tenant\'s ledger through the proxy, and a write seen on the core', async (t) => {
  const { page, problems } = await openTab();
  t.teardown(() => page.context().close());
  await signIn(page, tokens.write);
  await page.getByRole('heading', { level: 1, name: 'Ledgers' }).waitFor({ timeout: WAIT_MS });
  t.equal(await page.locator('[data-access]').getAttribute('data-access'), 'read-write');
  await page.getByRole('link', { name: 'Balances of Tenant books' }).waitFor({ timeout: WAIT_MS });
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'cloud-ledgers.png'), fullPage: true });

  await visit(page, `/balances/${balanceId}`, /Balance/);
  const balance = (await coreRequest(core, 'GET', `/balances/${balanceId}`)).body;
  const figure = page.locator('dl.facts div:has(dt:text-is("Balance")) .amount').first();
  t.equal(await figure.getAttribute('data-exact'), String(balance.balance), 'the figure is the core\'s, exactly');
  t.equal((await figure.textContent())?.replace(/\s*USD.*$/, '').trim(), '1,234.56');
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'cloud-balance.png'), fullPage: true });

  // A transaction's position in the core's log, read through the proxy as the page reads it.
  await visit(page, `/transactions/${movedId}`, /Transaction/);
  const position = (await coreRequest(core, 'GET', `/transactions/${movedId}/log-position`)).body;
  const checksum = page.locator('[data-log-position="created"] [data-field="record_checksum"]');
  t.equal(await checksum.getAttribute('data-value'), position.record_checksum, 'the log position shown is the core\'s');

  await visit(page, `/balances?f=${encodeURIComponent(`ledger_id:eq:${ledgerId}`)}`, /Balances of/);
  await page.getByRole('button', { name: 'Create a balance' }).click();
  const dialog = page.getByRole('dialog', { name: 'Create a balance' });
  await dialog.getByLabel('Currency').fill('GBP');
  await dialog.getByRole('button', { name: 'Create' }).click();
  await dialog.getByText('Created').waitFor({ timeout: WAIT_MS });
  await dialog.getByRole('button', { name: 'Close' }).click();
  await page.waitForURL(/#\/balances\/bln_/);
  const created = decodeURIComponent(page.url().split('#/balances/')[1] ?? '');
  t.match((await coreRequest(core, 'GET', `/balances/${created}`)).body, { ledger_id: ledgerId, currency: 'GBP' }, 'the core has the balance created through the proxy');

  await visit(page, '/hooks', 'Hooks');
  t.equal(await page.locator('[data-code]').first().textContent(), 'PROXY_ROUTE_FORBIDDEN', 'what the proxy does not forward is shown refused');
  await visit(page, '/node', 'Node');
  await page.locator('[data-role]').waitFor({ timeout: WAIT_MS });
  t.equal(await page.locator('[data-role]').textContent(), 'single', 'the core\'s health, through the proxy');
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'cloud-node.png'), fullPage: true });
  t.same(problems, [], 'no script error or policy violation');
});

t.test('a proxy:read token sees a read-only console; a token for another user\'s deployment cannot sign in', async (t) => {
  const { page, problems } = await openTab();
  t.teardown(() => page.context().close());
  await signIn(page, tokens.read);
  await page.getByRole('heading', { level: 1, name: 'Ledgers' }).waitFor({ timeout: WAIT_MS });
  t.equal(await page.locator('[data-access]').getAttribute('data-access'), 'read-only');
  await visit(page, '/balances', 'Balances');
  t.equal(await page.getByRole('button', { name: 'Create a balance' }).count(), 0, 'no write is offered');
  const refused = await rig.request('POST', `/proxy/balances?instance_id=${instanceId}`, { ledger_id: ledgerId, currency: 'USD' }, { 'X-svc-key': tokens.read });
  t.equal(refused.body.error_detail.code, 'AUTH_INSUFFICIENT_PERMISSIONS', 'and the proxy refuses the write it would be');
  await page.getByRole('button', { name: 'Sign out' }).click();
  await signIn(page, tokens.stranger);
  await page.locator('[data-code]').waitFor({ timeout: WAIT_MS });
  t.equal(await page.locator('[data-code]').textContent(), 'INSTANCE_NOT_FOUND', 'someone else\'s deployment: not found, plainly');
  t.same(problems, [], 'no script error or policy violation');
});
