// The console in a real headless Chromium (test/helpers/chromium.ts, driven by playwright-core) against
// the real server (authentication on, HTTP on a worker thread, the query index, hook delivery to a real
// receiver) seeded with real data: ledgers, balances with fund lineage, amounts beyond 2^53, holds
// partly committed, a monitor, a statement and a matching rule, a hook whose first attempts fail, a
// snapshot. It signs in with scoped keys and walks every page: the figures shown are checked against the
// API's own answers, digit for digit (each amount carries its exact digits in data-exact, and its text is
// checked against an independent formatting at its precision); each write (create a balance, commit part
// of a hold, void it, refund, upload a statement, start a reconciliation) is done through the page's
// dialog and then seen in the API and on the page; a read-only key is offered none of them, and the API
// refuses each one it might try. No page may break its Content-Security-Policy or throw.
//
// Screenshots of every page are written to test-screenshots/console/ (git-ignored) for review.
// The replicated group's node page is test/console-replication.int.test.ts.

import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import t from 'tap';
import { CHROMIUM, CHROMIUM_ARGS } from './helpers/chromium.js';
import { HookReceiver } from './helpers/hook-receiver.js';
import { screenshotDir } from './helpers/screenshots.js';
import { csvOf, uploadFile } from './helpers/reconciliation-client.js';
import { startTestServer, type TestResponse, type TestServer } from './helpers/test-server.js';

// The page's own globals, in the functions run inside it (this project's types have no DOM).
declare const document: any;
declare const location: { hash: string };
declare const sessionStorage: { length: number };
declare const localStorage: { length: number };

const MASTER = 'console-master-key-0123456789abcdefghijkl';
const SCREENSHOT_DIR = screenshotDir('console');
/** Every wait for the page is bounded, generously: the machine may be busy. */
const WAIT_MS = 30_000;

let server: TestServer;
let browser: Browser;
let receiver: HookReceiver;
const keys = { writer: '', reader: '' };
const seeded = {
  ledger: '', alice: '', bob: '', whale: '', invoice: '', hold: '', smallHold: '', upload: '', rule: '', hook: '',
};

async function call(method: string, route: string, body?: unknown, key = MASTER): Promise<TestResponse> {
  return server.request(method, route, body, { 'X-svc-key': key });
}

async function ok(method: string, route: string, body?: unknown): Promise<any> {
  const response = await call(method, route, body);
  if (response.status >= 300) throw new Error(`${method} ${route}: ${response.status} ${response.text}`);
  return response.body;
}

/** Exact digits of an amount the API answered (a number, or a bigint beyond 2^53). */
function digits(value: unknown): string {
  return String(value);
}

/** The formatting the page must show, written independently of the console's: en-US, every decimal place. */
function formatted(amountDigits: string, precision: string): string {
  const negative = amountDigits.startsWith('-');
  const magnitude = negative ? amountDigits.slice(1) : amountDigits;
  const places = precision.length - 1;
  const padded = magnitude.padStart(places + 1, '0');
  const whole = padded.slice(0, padded.length - places).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${negative ? '-' : ''}${whole}${places > 0 ? `.${padded.slice(padded.length - places)}` : ''}`;
}

function transfer(source: string, destination: string, preciseAmount: string, reference: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { source, destination, precise_amount: preciseAmount, precision: 100, currency: 'USD', reference, description: reference, allow_overdraft: true, skip_queue: true, ...extra };
}

async function seed(): Promise<void> {
  const key = async (scopes: string[], name: string): Promise<string> => (await ok('POST', '/api-keys', {
    name, owner: 'console-test', scopes, expires_at: new Date(Date.now() + 24 * 3600_000).toISOString(),
  })).key;
  keys.writer = await key(['ledgers:*', 'balances:*', 'transactions:*', 'search:read', 'reconciliation:*', 'metadata:*'], 'console writer');
  keys.reader = await key(['ledgers:read', 'balances:read', 'transactions:read', 'search:read', 'reconciliation:read'], 'console reader');
  seeded.hook = (await ok('POST', '/hooks', { name: 'ledger events', url: receiver.url, type: 'POST_TRANSACTION', active: true, timeout: 5, retry_count: 3 })).hook_id;
  seeded.ledger = (await ok('POST', '/ledgers', { name: 'Operating' })).ledger_id;
  const identity = (await ok('POST', '/identities', { identity_type: 'individual', first_name: 'Alice' })).identity_id;
  seeded.alice = (await ok('POST', '/balances', { ledger_id: seeded.ledger, currency: 'USD', identity_id: identity, track_fund_lineage: true })).balance_id;
  seeded.bob = (await ok('POST', '/balances', { ledger_id: seeded.ledger, currency: 'USD' })).balance_id;
  seeded.whale = (await ok('POST', '/balances', { ledger_id: seeded.ledger, currency: 'USD' })).balance_id;
  await ok('POST', '/transactions', transfer('@world', seeded.alice, '100000', 'deposit-stripe', { meta_data: { BLNK_LINEAGE_PROVIDER: 'stripe' } }));
  await ok('POST', '/transactions', transfer('@world', seeded.alice, '25075', 'deposit-paypal', { meta_data: { BLNK_LINEAGE_PROVIDER: 'paypal' } }));
  // Beyond 2^53: a double would lose the last digits.
  await ok('POST', '/transactions', transfer('@world', seeded.whale, '123456789012345678901', 'whale-1'));
  seeded.invoice = (await ok('POST', '/transactions', transfer(seeded.alice, seeded.bob, '12025', 'invoice-1'))).transaction_id;
  seeded.hold = (await ok('POST', '/transactions', transfer(seeded.alice, seeded.bob, '30000', 'hold-1', { inflight: true }))).transaction_id;
  await ok('PUT', `/transactions/inflight/${seeded.hold}`, { status: 'commit', precise_amount: '10000', skip_queue: true });
  seeded.smallHold = (await ok('POST', '/transactions', transfer(seeded.alice, seeded.bob, '5000', 'hold-2', { inflight: true }))).transaction_id;
  for (let index = 0; index < 24; index += 1) await ok('POST', '/transactions', transfer('@world', seeded.bob, String(101 + index), `tip-${index}`));
  await ok('POST', '/balance-monitors', { balance_id: seeded.alice, condition: { field: 'balance', operator: '>', precise_value: '50000', precision: 100 }, description: 'Over 500', call_back_url: '' });
  seeded.rule = (await ok('POST', '/reconciliation/matching-rules', { name: 'Reference and amount', criteria: [{ field: 'reference', operator: 'equals' }, { field: 'amount', operator: 'equals' }] })).rule_id;
  const statement = csvOf([
    { id: 'bank-1', amount: '120.25', currency: 'USD', reference: 'invoice-1', description: 'invoice', date: new Date().toISOString() },
    { id: 'bank-2', amount: '9.99', currency: 'USD', reference: 'unknown-9', description: 'nothing like it', date: new Date().toISOString() },
  ]);
  seeded.upload = (await uploadFile(server.url, { name: 'statement.csv', text: statement }, 'bank', { 'X-svc-key': MASTER })).body.upload_id;
  await ok('POST', '/admin/snapshots');
}

t.before(async () => {
  // Every delivery's first attempt fails; its retry is accepted.
  receiver = new HookReceiver((delivery) => ({ status: delivery.attempt === 0 ? 500 : 200 }));
  await receiver.start();
  server = await startTestServer({
    hookTargets: { allowPrivateNetworks: true }, hookDelivery: { backoff_first_ms: 100, backoff_max_ms: 100 },
    snapshots: { every_events: 0, every_seconds: 0, keep: 2 },
  }, { secretKey: MASTER, snapshotRoutes: true });
  await seed();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
});

t.teardown(async () => {
  await browser?.close();
  await server?.stop();
  if (server) fs.rmSync(server.dataDir, { recursive: true, force: true });
  await receiver?.stop();
});

interface Watched {
  page: Page;
  /** Script errors, CSP and Trusted Types violations, console errors other than refused calls. */
  problems: string[];
}

/** A new tab (en-US, a time zone away from UTC) whose problems are collected. */
async function openTab(): Promise<Watched> {
  const context = await browser.newContext({ locale: 'en-US', timezoneId: 'America/New_York', viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const problems: string[] = [];
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event: { violatedDirective: string; blockedURI: string }) => console.error(`CSP violation: ${event.violatedDirective} ${event.blockedURI}`));
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    // A refused call is logged by the browser as a failed resource: the page shows the refusal itself.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(`console: ${message.text()}`);
  });
  page.on('requestfailed', (request) => {
    if (request.failure()?.errorText !== 'net::ERR_ABORTED') problems.push(`request failed: ${request.url()} ${request.failure()?.errorText}`);
  });
  page.on('request', (request) => {
    if (!request.url().startsWith(server.url)) problems.push(`request to another origin: ${request.url()}`);
  });
  return { page, problems };
}

async function signIn(page: Page, key: string): Promise<void> {
  await page.goto(`${server.url}/console`);
  await page.locator('input[name=key]').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Ledgers' }).waitFor({ timeout: WAIT_MS });
}

/** Until the page drawn is the one for the address, and nothing on it is loading. */
async function settled(page: Page): Promise<void> {
  await page.waitForFunction(() => document.getElementById('main')?.dataset.route === (location.hash.slice(1) || '/ledgers')
    && document.querySelectorAll('[aria-busy="true"]').length === 0, undefined, { timeout: WAIT_MS });
}

async function visit(page: Page, route: string, heading: string | RegExp): Promise<void> {
  await page.goto(`${server.url}/console#${route}`);
  await page.getByRole('heading', { level: 1, name: heading }).waitFor({ timeout: WAIT_MS });
  await settled(page);
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

/** The exact digits and text of the amount in the element `locator` finds. */
async function shownAmount(page: Page, selector: string): Promise<{ exact: string; text: string; precision: string }> {
  const element = page.locator(selector).first();
  await element.waitFor({ timeout: WAIT_MS });
  return {
    exact: (await element.getAttribute('data-exact')) ?? '',
    precision: (await element.getAttribute('data-precision')) ?? '',
    text: ((await element.textContent()) ?? '').replace(/\s*USD.*$/, '').trim(),
  };
}

/** The figure beside a label in a facts list. */
function fact(label: string): string {
  return `dl.facts div:has(dt:text-is("${label}")) .amount`;
}

t.test('the console is static, public, under a strict CSP, and refuses nothing a file is not', async (t) => {
  const page = await fetch(`${server.url}/console`);
  t.equal(page.status, 200, 'the page needs no key');
  t.match(page.headers.get('content-type'), /^text\/html/);
  const policy = page.headers.get('content-security-policy') ?? '';
  t.match(policy, /default-src 'self'/);
  t.match(policy, /frame-ancestors 'none'/);
  t.notMatch(policy, /unsafe-inline|unsafe-eval/);
  t.equal(page.headers.get('x-content-type-options'), 'nosniff');
  const script = await fetch(`${server.url}/console/main.js`);
  t.equal(script.status, 200);
  t.match(script.headers.get('content-type'), /^text\/javascript/);
  // fetch() adds Cache-Control: no-cache to a conditional request, which rightly defeats it: a plain request, as a browser revalidates.
  const revalidated = await new Promise<number>((resolve, reject) => {
    http.get(`${server.url}/console/main.js`, { headers: { 'If-None-Match': script.headers.get('etag') ?? '' } }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    }).on('error', reject);
  });
  t.equal(revalidated, 304, 'revalidated by its ETag');
  const chart = await fetch(`${server.url}/console/echarts.js`);
  t.equal(chart.status, 200, 'the chart library comes from the package');
  const missing = await fetch(`${server.url}/console/nope.js`);
  t.equal(missing.status, 404);
  t.equal(((await missing.json()) as { error_detail: { code: string } }).error_detail.code, 'GEN_NOT_FOUND');
  t.equal((await fetch(`${server.url}/console/a/b.js`)).status, 401, 'nothing deeper is public');
  t.equal((await fetch(`${server.url}/ledgers`)).status, 401, 'and the API still asks for a key');
});

t.test('a read-only key sees a read-only console, and the API refuses every write it could try', async (t) => {
  const { page, problems } = await openTab();
  t.teardown(() => page.context().close());
  await signIn(page, keys.reader);
  t.equal(await page.locator('[data-access]').getAttribute('data-access'), 'read-only', 'the header says read-only');
  await shot(page, 'read-only-ledgers');

  await visit(page, '/balances', 'Balances');
  t.equal(await page.getByRole('button', { name: 'Create a balance' }).count(), 0, 'no "Create a balance"');
  await visit(page, `/transactions/${seeded.smallHold}`, /Transaction/);
  await page.locator('dl.facts').first().waitFor();
  for (const name of ['Commit…', 'Void…', 'Refund…']) t.equal(await page.getByRole('button', { name }).count(), 0, `no ${name}`);
  await visit(page, '/reconciliation', 'Reconciliation');
  t.equal(await page.getByRole('button', { name: /Upload|Start/ }).count(), 0, 'no upload, no start');
  await shot(page, 'read-only-reconciliation');

  await visit(page, '/hooks', 'Hooks');
  t.equal(await page.locator('[data-code]').first().textContent(), 'AUTH_MASTER_KEY_REQUIRED', 'hooks: the API\'s refusal is shown');
  await visit(page, '/node', 'Node');
  await page.getByText('Not live: the change feed was refused').waitFor({ timeout: WAIT_MS });
  const codes = await page.locator('[data-code]').allTextContents();
  t.ok(codes.length >= 3 && codes.every((code) => code === 'AUTH_MASTER_KEY_REQUIRED'), `the node page shows each refusal (${codes.join(', ')})`);
  t.equal(await page.locator('[data-role]').textContent(), 'single', 'and what it may read');
  await shot(page, 'read-only-node');

  // What the console does not offer, the API would not do either.
  const writes: Array<[string, string, unknown]> = [
    ['POST', '/balances', { ledger_id: seeded.ledger, currency: 'USD' }],
    ['PUT', `/transactions/inflight/${seeded.smallHold}`, { status: 'commit', skip_queue: true }],
    ['PUT', `/transactions/inflight/${seeded.smallHold}`, { status: 'void', skip_queue: true }],
    ['POST', `/refund-transaction/${seeded.invoice}`, { skip_queue: true }],
    ['POST', '/reconciliation/start', { upload_id: seeded.upload, strategy: 'one_to_one', matching_rule_ids: [seeded.rule] }],
  ];
  for (const [method, route, body] of writes) {
    const answer = await call(method, route, body, keys.reader);
    t.equal(answer.body?.error_detail?.code, 'AUTH_INSUFFICIENT_PERMISSIONS', `${method} ${route}: refused 403`);
  }
  const upload = await uploadFile(server.url, { name: 's.csv', text: csvOf([]) }, 'bank', { 'X-svc-key': keys.reader });
  t.equal(upload.status, 403, 'an upload: refused');
  t.same(problems, [], 'no script error or policy violation');
});

t.test('ledgers and balances: search, the API\'s filters, paging, and every figure as the API has it', async (t) => {
  const { page, problems } = await openTab();
  t.teardown(() => page.context().close());
  await signIn(page, keys.writer);
  t.equal(await page.locator('[data-access]').getAttribute('data-access'), 'read-write');
  await page.getByRole('link', { name: 'Balances of Operating' }).waitFor({ timeout: WAIT_MS });
  t.pass('the new ledger is listed');
  await shot(page, 'ledgers');

  await page.getByRole('searchbox', { name: 'Search ledgers' }).fill('Operating');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await page.waitForURL(/q=Operating/);
  await settled(page);
  t.equal(await page.locator('tbody tr').count(), 1, 'the search finds the one ledger');

  await page.getByRole('link', { name: 'Balances of Operating' }).click();
  await page.getByRole('heading', { level: 1, name: `Balances of ${seeded.ledger}` }).waitFor({ timeout: WAIT_MS });
  await settled(page);
  const listed = await ok('POST', '/balances/filter', { filters: [{ field: 'ledger_id', operator: 'eq', value: seeded.ledger }], sort_by: 'created_at', sort_order: 'desc', limit: 20 });
  const rows = page.locator('tbody tr');
  t.equal(await rows.count(), listed.data.length, 'as many rows as the API lists');
  for (const [index, balance] of (listed.data as any[]).entries()) {
    const row = rows.nth(index);
    t.equal(await row.locator('a code').first().textContent(), balance.balance_id, `row ${index}: ${balance.balance_id}`);
    const cells = row.locator('.amount');
    for (const [cell, fieldName] of [[0, 'balance'], [1, 'available_balance'], [2, 'inflight_balance']] as const) {
      const shown = cells.nth(cell);
      t.equal(await shown.getAttribute('data-exact'), digits(balance[fieldName]), `${balance.balance_id} ${fieldName}: exact digits`);
      t.equal((await shown.textContent())?.trim(), formatted(digits(balance[fieldName]), '100'), `${balance.balance_id} ${fieldName}: shown at precision 100`);
    }
  }
  t.ok((await page.locator(`[data-exact="123456789012345678901"]`).count()) > 0, 'an amount beyond 2^53 is shown to its last digit');
  await shot(page, 'balances-of-a-ledger');

  // The API's filters, through the form: currency and a floor on the balance, ordered by balance.
  // The form is open already: the page was reached with a filter on its ledger.
  t.equal(await page.locator('details.filter-box[open]').count(), 1, 'the filters in use are shown');
  await page.getByRole('button', { name: '+ Condition' }).click();
  const condition = page.locator('fieldset.condition').last();
  await condition.getByLabel('Field').selectOption('balance');
  await condition.getByLabel('Operator').selectOption('gte');
  await condition.getByLabel('Value').fill('50000');
  await page.getByLabel('Sort by').selectOption('balance');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.waitForURL(/sort=balance/);
  await settled(page);
  const filtered = await ok('POST', '/balances/filter', {
    filters: [{ field: 'ledger_id', operator: 'eq', value: seeded.ledger }, { field: 'balance', operator: 'gte', value: '50000' }], sort_by: 'balance', sort_order: 'desc', limit: 20,
  });
  await page.locator('tbody tr').first().waitFor();
  t.same(await page.locator('tbody tr a code').evaluateAll((codes) => codes.filter((code) => code.textContent?.startsWith('bln_')).map((code) => code.textContent)),
    (filtered.data as any[]).map((balance) => balance.balance_id), 'the filtered rows are the API\'s, in its order');
  await shot(page, 'balances-filtered');
  const url = page.url();
  await page.reload();
  await settled(page);
  t.equal(page.url(), url, 'the filtered page reloads as it was');
  t.equal(await page.locator('tbody tr').count(), filtered.data.length, 'with the same rows');

  // Paging: the transactions list holds more than a page.
  await visit(page, '/transactions', 'Transactions');
  t.equal(await page.locator('tbody tr').count(), 20, 'a page of 20');
  const total = (await ok('POST', '/transactions/filter', { filters: [], include_count: true, limit: 1 })).total_count;
  t.match(await page.locator('.pager span').textContent(), `1–20 of ${total}`);
  await page.getByRole('button', { name: 'Next →' }).click();
  await page.waitForURL(/offset=20/);
  await settled(page);
  const second = await ok('POST', '/transactions/filter', { filters: [], sort_by: 'created_at', sort_order: 'desc', limit: 20, offset: 20 });
  t.same(await page.locator('tbody tr td:nth-child(2) code').allTextContents(), (second.data as any[]).map((transaction) => transaction.transaction_id), 'the second page is the API\'s');
  t.same(problems, [], 'no script error or policy violation');
});

t.test('a balance: figures, history with the as-of balance under the pointer, movements, lineage, monitors', async (t) => {
  const { page, problems } = await openTab();
  t.teardown(() => page.context().close());
  await signIn(page, keys.writer);
  await visit(page, `/balances/${seeded.alice}`, /Balance/);
  await page.locator('figure.history canvas').waitFor({ timeout: WAIT_MS });
  const balance = await ok('GET', `/balances/${seeded.alice}?with_queued=true`);
  const figures: Array<[string, string]> = [
    ['Balance', 'balance'], ['Available', 'available_balance'], ['Credit', 'credit_balance'], ['Debit', 'debit_balance'], ['Inflight', 'inflight_balance'],
    ['Inflight credit', 'inflight_credit_balance'], ['Inflight debit', 'inflight_debit_balance'], ['Queued credit', 'queued_credit_balance'], ['Queued debit', 'queued_debit_balance'],
  ];
  for (const [label, fieldName] of figures) {
    const shown = await shownAmount(page, fact(label));
    t.equal(shown.exact, digits(balance[fieldName]), `${label}: the API's digits`);
    t.equal(shown.precision, '100', `${label}: at the precision of its transactions`);
    t.equal(shown.text, formatted(digits(balance[fieldName]), '100'), `${label}: ${shown.text}`);
  }
  const created = page.locator('dl.facts div:has(dt:text-is("Created")) time');
  t.equal(await created.getAttribute('datetime'), balance.created_at, 'times carry the instant');
  t.equal(await created.getAttribute('title'), `UTC: ${balance.created_at}`, 'and show UTC on hover');

  // The pointer over the chart: the balance as of that moment is what GET /balances/:id/at answers.
  const canvas = page.locator('figure.history canvas').first();
  const box = await canvas.boundingBox();
  if (!box) throw new Error('no chart');
  for (const fraction of [0.35, 0.6, 0.9]) {
    await page.mouse.move(box.x + box.width * fraction, box.y + box.height / 2);
    const readout = page.locator('#as-of-readout');
    await page.waitForFunction(() => document.getElementById('as-of-readout')?.hasAttribute('data-at'));
    const at = (await readout.getAttribute('data-at')) as string;
    const shown = await readout.locator('.amount').getAttribute('data-exact').catch(() => null);
    const answer = await call('GET', `/balances/${seeded.alice}/at?timestamp=${encodeURIComponent(at)}`);
    if (answer.status === 404) t.equal(shown, null, `${at}: no balance yet, as the API says`);
    else t.equal(shown, digits(answer.body.balance.balance), `under the pointer at ${at}: ${shown}, as GET /at says`);
  }
  await shot(page, 'balance');
  // The keyboard walks the same changes.
  await page.locator('figure.history .chart').focus();
  await page.keyboard.press('Home');
  const firstChange = await page.locator('#as-of-readout .amount').getAttribute('data-exact');
  const history = await ok('GET', `/balances/${seeded.alice}/history?limit=1000`);
  t.equal(firstChange, digits(history.changes[0].balance), 'Home: the first change');
  await page.keyboard.press('End');
  t.equal(await page.locator('#as-of-readout .amount').getAttribute('data-exact'), digits(history.changes[history.changes.length - 1].balance), 'End: the last');

  // The as-of form, in the viewer's zone.
  const moment = new Date(Date.parse(history.changes[1].at) + 1000);
  const local = new Intl.DateTimeFormat('sv-SE', { timeZone: 'America/New_York', dateStyle: 'short', timeStyle: 'medium' }).format(moment).replace(' ', 'T');
  await page.getByLabel('Moment (your time zone)').fill(local);
  await page.getByRole('button', { name: 'Show' }).click();
  const asOf = await call('GET', `/balances/${seeded.alice}/at?timestamp=${encodeURIComponent(new Date(Math.floor(moment.getTime() / 1000) * 1000).toISOString())}`);
  t.equal((await shownAmount(page, '.as-of-result ' + fact('Balance'))).exact, digits(asOf.body.balance.balance), 'the balance as of a typed moment is GET /at\'s');

  // Movements, newest first, signed from the balance's side.
  const movements = await ok('POST', '/transactions/filter', { filters: [{ field: 'balance_id', operator: 'eq', value: seeded.alice }], sort_by: 'created_at', sort_order: 'desc', limit: 20 });
  const movementRows = page.locator('section[aria-labelledby="section-movements"] tbody tr');
  t.equal(await movementRows.count(), movements.data.length);
  for (const [index, transaction] of (movements.data as any[]).entries()) {
    const out = transaction.source === seeded.alice;
    t.equal(await movementRows.nth(index).locator('.amount').getAttribute('data-exact'), `${out ? '-' : ''}${digits(transaction.precise_amount)}`, `${transaction.reference}: ${out ? 'out' : 'in'}`);
  }
  // Lineage by provider.
  const lineage = await ok('GET', `/balances/${seeded.alice}/lineage`);
  const lineageRows = page.locator('section[aria-labelledby="section-fund-lineage-by-provider"] tbody tr');
  t.equal(await lineageRows.count(), lineage.providers.length, 'one row per provider');
  for (const [index, provider] of (lineage.providers as any[]).entries()) {
    t.equal(await lineageRows.nth(index).locator('td').first().textContent(), provider.provider);
    t.equal(await lineageRows.nth(index).locator('.amount').nth(2).getAttribute('data-exact'), digits(provider.available), `${provider.provider}: available`);
  }
  t.equal(await page.locator('.pie-figure canvas').count(), 1, 'and a chart of them');
  // Monitors.
  t.match(await page.locator('section[aria-labelledby="section-monitors"] tbody').textContent(), /balance > 500\.00.*Over 500/s, 'the monitor, its threshold exact');

  // A balance beyond 2^53.
  await visit(page, `/balances/${seeded.whale}`, /Balance/);
  const whale = await shownAmount(page, fact('Balance'));
  t.equal(whale.exact, '123456789012345678901');
  t.equal(whale.text, '1,234,567,890,123,456,789.01', 'shown to the cent');
  t.same(problems, [], 'no script error or policy violation');
});

t.test('a transaction: its life, hash, position in the log and lineage; commit part of a hold, void the rest, refund, each confirmed and seen', async (t) => {
  const { page, problems } = await openTab();
  t.teardown(() => page.context().close());
  await signIn(page, keys.writer);
  await visit(page, `/transactions/${seeded.hold}`, /Transaction/);
  await page.locator('[data-hash-check]').waitFor({ timeout: WAIT_MS });
  t.equal(await page.locator('[data-hash-check]').getAttribute('data-hash-check'), 'match', 'the row hash checks out in the browser');
  const before = await ok('GET', `/transactions/${seeded.hold}`);
  t.equal((await shownAmount(page, fact('Committed so far'))).exact, digits(before.precise_committed_amount), 'committed so far: as the API says');
  t.equal((await shownAmount(page, fact('Still held'))).exact, String(BigInt(before.precise_amount) - BigInt(before.precise_committed_amount)));
  t.match(await page.locator('section[aria-labelledby="section-life"] tbody').textContent(), /partial commit/, 'the partial commit made before is in its life');
  const logPosition = await ok('GET', `/transactions/${seeded.hold}/log-position`);
  t.ok(logPosition.last_changed, 'the API names the record of the partial commit as the hold\'s last change');
  for (const [which, expected] of [['created', logPosition], ['last_changed', logPosition.last_changed]] as const) {
    for (const field of ['seq', 'record_first_seq', 'record_last_seq', 'record_checksum', 'prev_checksum']) {
      const shown = page.locator(`[data-log-position="${which}"] [data-field="${field}"]`);
      t.equal(await shown.getAttribute('data-value'), String(expected[field]), `the log position's ${which} ${field}: as the API says`);
      t.equal(await shown.textContent(), String(expected[field]), `and shown so`);
    }
  }
  await shot(page, 'transaction-hold');

  // Commit 50.00 more: confirmed in a dialog, answered with the child transaction.
  await page.getByRole('button', { name: 'Commit…' }).click();
  const dialog = page.getByRole('dialog', { name: 'Commit the hold' });
  await dialog.getByLabel(/Amount to commit/).fill('50.00');
  await shot(page, 'transaction-commit-dialog');
  await dialog.getByRole('button', { name: 'Commit' }).click();
  await dialog.getByText('Done:').waitFor({ timeout: WAIT_MS });
  await dialog.getByRole('button', { name: 'Close' }).click();
  await page.locator('[data-hash-check]').waitFor({ timeout: WAIT_MS });
  const afterCommit = await ok('GET', `/transactions/${seeded.hold}`);
  t.equal(digits(afterCommit.precise_committed_amount), '15000', 'the API has 150.00 committed');
  await page.locator(`${fact('Committed so far')}[data-exact="15000"]`).waitFor({ timeout: WAIT_MS });
  t.pass('and the page shows it');

  // More than is held: the API's refusal, plainly.
  await page.getByRole('button', { name: 'Commit…' }).click();
  await dialog.getByLabel(/Amount to commit/).fill('1000.00');
  await dialog.getByRole('button', { name: 'Commit' }).click();
  await dialog.locator('[data-code]').waitFor({ timeout: WAIT_MS });
  t.equal(await dialog.locator('[data-code]').textContent(), 'TXN_COMMIT_AMOUNT_EXCEEDED', 'the refusal is shown with its code');
  await shot(page, 'transaction-refused');
  await dialog.getByRole('button', { name: 'Cancel' }).click();

  // Void what is still held.
  await page.getByRole('button', { name: 'Void…' }).click();
  const voiding = page.getByRole('dialog', { name: 'Void the hold' });
  await voiding.getByRole('button', { name: 'Void' }).click();
  await voiding.getByText('Done:').waitFor({ timeout: WAIT_MS });
  await voiding.getByRole('button', { name: 'Close' }).click();
  await page.locator('section[aria-labelledby="section-life"] tbody').waitFor({ timeout: WAIT_MS });
  await page.waitForFunction(() => /void/.test(document.querySelector('section[aria-labelledby="section-life"] tbody')?.textContent ?? ''), undefined, { timeout: WAIT_MS });
  t.equal((await ok('GET', `/transactions/${seeded.hold}`)).status, 'VOID', 'the API has the hold void');
  t.equal(await page.getByRole('button', { name: 'Commit…' }).count(), 0, 'a void hold offers no commit');
  await shot(page, 'transaction-life');

  // Refund the invoice; a second refund is refused, and the page says why.
  await visit(page, `/transactions/${seeded.invoice}`, /Transaction/);
  await page.getByRole('button', { name: 'Refund…' }).click();
  const refunding = page.getByRole('dialog', { name: 'Refund the transaction' });
  await refunding.getByRole('button', { name: 'Refund' }).click();
  await refunding.getByText('Done:').waitFor({ timeout: WAIT_MS });
  const refund = await ok('GET', `/transactions/reference/${seeded.invoice}_refund`);
  t.equal(refund.status, 'APPLIED', 'the refund is applied');
  await refunding.getByRole('button', { name: 'Close' }).click();
  await page.waitForFunction(() => /refund/.test(document.querySelector('section[aria-labelledby="section-life"] tbody')?.textContent ?? ''), undefined, { timeout: WAIT_MS });
  await page.getByRole('button', { name: 'Refund…' }).click();
  await refunding.getByRole('button', { name: 'Refund' }).click();
  await refunding.locator('[data-code]').waitFor({ timeout: WAIT_MS });
  t.equal(await refunding.locator('[data-code]').textContent(), 'GEN_CONFLICT', 'a second refund: the API\'s 409, shown');
  await refunding.getByRole('button', { name: 'Cancel' }).click();

  // Lineage: alice's debit drew on her tagged funds.
  const lineage = await ok('GET', `/transactions/${seeded.invoice}/lineage`);
  const rows = page.locator('section[aria-labelledby="section-fund-lineage"] tbody tr');
  t.equal(await rows.count(), lineage.fund_allocation.length, 'one row per provider drawn on');
  for (const [index, share] of (lineage.fund_allocation as any[]).entries()) t.equal(await rows.nth(index).locator('.amount').getAttribute('data-exact'), digits(share.amount));
  await shot(page, 'transaction-refunded');
  t.same(problems, [], 'no script error or policy violation');
});

t.test('create a balance through its dialog', async (t) => {
  const { page, problems } = await openTab();
  t.teardown(() => page.context().close());
  await signIn(page, keys.writer);
  await visit(page, `/balances?f=${encodeURIComponent(`ledger_id:eq:${seeded.ledger}`)}`, /Balances of/);
  await page.getByRole('button', { name: 'Create a balance' }).click();
  const dialog = page.getByRole('dialog', { name: 'Create a balance' });
  t.equal(await dialog.getByLabel('Ledger id').inputValue(), seeded.ledger, 'the ledger being looked at is offered');
  await dialog.getByLabel('Currency').fill('EUR');
  await dialog.getByRole('button', { name: 'Create' }).click();
  await dialog.getByText('Created').waitFor({ timeout: WAIT_MS });
  await dialog.getByRole('button', { name: 'Close' }).click();
  await page.waitForURL(/#\/balances\/bln_/);
  const created = decodeURIComponent(page.url().split('#/balances/')[1] ?? '');
  const balance = await ok('GET', `/balances/${created}`);
  t.match(balance, { ledger_id: seeded.ledger, currency: 'EUR' }, 'the API has it');
  await page.locator(fact('Balance')).waitFor({ timeout: WAIT_MS });
  t.equal(await page.locator(fact('Balance')).first().getAttribute('data-exact'), '0', 'and the page shows it, at zero');
  t.match(await page.locator('dl.facts div:has(dt:text-is("Precision")) dd').textContent(), /not known/, 'a currency without transactions says its precision is not known');
  t.same(problems, [], 'no script error or policy violation');
});

t.test('reconciliation: upload a statement, start a run, watch it finish, matched and unmatched side by side', async (t) => {
  const { page, problems } = await openTab();
  t.teardown(() => page.context().close());
  await signIn(page, keys.writer);
  await visit(page, '/reconciliation', 'Reconciliation');
  t.match(await page.locator('section[aria-labelledby="section-matching-rules"] tbody').textContent(), /Reference and amount/);

  await page.getByRole('button', { name: 'Upload a statement…' }).click();
  const uploading = page.getByRole('dialog', { name: 'Upload a statement' });
  await uploading.getByLabel('File').setInputFiles({ name: 'second.csv', mimeType: 'text/csv', buffer: Buffer.from(csvOf([{ id: 'bank-3', amount: '1.01', currency: 'USD', reference: 'tip-0', description: 'tip', date: new Date().toISOString() }])) });
  await uploading.getByLabel('Source').fill('second-bank');
  await uploading.getByRole('button', { name: 'Upload' }).click();
  await uploading.getByText('Uploaded 1 records').waitFor({ timeout: WAIT_MS });
  await uploading.getByRole('button', { name: 'Close' }).click();
  await page.locator('section[aria-labelledby="section-uploads"] tbody tr:has-text("second-bank")').waitFor({ timeout: WAIT_MS });
  const uploads = await ok('GET', '/reconciliation/uploads');
  t.equal(uploads[0].source, 'second-bank', 'the API lists the new upload first');
  t.equal(await page.locator('section[aria-labelledby="section-uploads"] tbody tr').count(), uploads.length, 'the page lists every upload');

  await page.getByRole('button', { name: 'Start a reconciliation…' }).click();
  const starting = page.getByRole('dialog', { name: 'Start a reconciliation' });
  await starting.getByLabel('Upload', { exact: true }).selectOption(seeded.upload);
  await starting.getByLabel(/Reference and amount/).check();
  await shot(page, 'reconciliation-start-dialog');
  await starting.getByRole('button', { name: 'Start' }).click();
  await starting.getByText('Started').waitFor({ timeout: WAIT_MS });
  await starting.getByRole('button', { name: 'Close' }).click();
  await page.waitForURL(/#\/reconciliation\/recon_/);
  const runId = decodeURIComponent(page.url().split('#/reconciliation/')[1] ?? '');
  await page.locator('[data-status="completed"]').waitFor({ timeout: WAIT_MS });
  await settled(page);
  const run = await ok('GET', `/reconciliation/${runId}`);
  t.match(run, { status: 'completed', matched_transactions: 1, unmatched_transactions: 1 }, 'the API has the run completed');
  const matched = page.locator('section[aria-labelledby="section-matched"] tbody tr');
  t.equal(await matched.count(), 1);
  t.match(await matched.first().textContent(), /bank-1/);
  t.equal(await matched.first().locator('a code').textContent(), seeded.invoice, 'matched with the invoice');
  t.equal(await matched.first().locator('.amount').getAttribute('data-exact'), '0', 'no amount difference');
  const unmatched = page.locator('section[aria-labelledby="section-unmatched"] tbody tr');
  t.equal(await unmatched.count(), 1);
  t.equal(await unmatched.first().locator('.amount').getAttribute('data-exact'), '999', 'the unmatched record\'s exact amount');
  t.equal((await unmatched.first().locator('.amount').textContent())?.replace(/\s*USD$/, '').trim(), '9.99');
  await shot(page, 'reconciliation-run');
  await visit(page, '/reconciliation', 'Reconciliation');
  await page.locator(`section[aria-labelledby="section-runs"] tbody a:has-text("${runId}")`).waitFor({ timeout: WAIT_MS });
  t.pass('the run is listed with the runs');
  await shot(page, 'reconciliation');
  t.same(problems, [], 'no script error or policy violation');
});

t.test('the node: health, the index, snapshots, and the log seq moving with the change feed', async (t) => {
  const { page, problems } = await openTab();
  t.teardown(() => page.context().close());
  await signIn(page, MASTER);
  await visit(page, '/node', 'Node');
  await page.locator('.live.on').waitFor({ timeout: WAIT_MS });
  const health = await ok('GET', '/health');
  t.equal(await page.locator('[data-role]').textContent(), health.role);
  const snapshots = await ok('GET', '/admin/snapshots');
  t.equal(await page.locator('section[aria-labelledby="section-snapshots"] tbody tr').count(), snapshots.length, 'the snapshots on disk');
  t.ok(await page.locator('[data-index-lag]').count() === 1, 'the index lag');
  const write = await call('POST', '/transactions', transfer('@world', seeded.bob, '777', 'live-1'));
  const seq = Number(write.headers['x-folio-seq']);
  await page.waitForFunction((expected) => Number(document.querySelector('.seq')?.getAttribute('data-seq')) >= expected, seq, { timeout: WAIT_MS });
  t.pass(`the log seq reached ${seq} through the change feed`);
  await page.waitForFunction((expected) => Number(document.querySelector('[data-applied-seq]')?.getAttribute('data-applied-seq')) >= expected, seq, { timeout: WAIT_MS });
  t.pass('and the health was read again');
  await shot(page, 'node');
  t.same(problems, [], 'no script error or policy violation');
});

t.test('hooks: each delivery with its status and retries', async (t) => {
  const { page, problems } = await openTab();
  t.teardown(() => page.context().close());
  await signIn(page, MASTER);
  // Wait until the API says every delivery so far is delivered (each after one failed attempt).
  let deliveries: any[] = [];
  for (const started = Date.now(); Date.now() - started < WAIT_MS;) {
    deliveries = (await ok('GET', `/hooks/${seeded.hook}/deliveries?limit=20`)).deliveries;
    if (deliveries.length > 0 && deliveries.every((delivery) => delivery.status === 'delivered')) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await visit(page, '/hooks', 'Hooks');
  const rows = page.locator('article.hook tbody tr');
  t.equal(await rows.count(), deliveries.length, 'as many deliveries as the API lists');
  const first = rows.first();
  t.equal(await first.locator('[data-status]').textContent(), 'delivered');
  t.equal(await first.locator('td').nth(3).textContent(), String(deliveries[0].attempts), 'attempts');
  t.equal(await first.locator('td').nth(4).textContent(), String(deliveries[0].retries), 'retries');
  t.equal(deliveries[0].retries, 1, 'one retry after the failed first attempt');
  await shot(page, 'hooks');
  t.same(problems, [], 'no script error or policy violation');
});

t.test('keyboard and screen readers: landmarks, labels, captions, a skip link, sign-out', async (t) => {
  const { page, problems } = await openTab();
  t.teardown(() => page.context().close());
  await signIn(page, keys.writer);
  await visit(page, `/balances/${seeded.alice}`, /Balance/);
  t.equal(await page.getByRole('banner').count(), 1, 'a banner');
  t.equal(await page.getByRole('navigation', { name: 'Pages', exact: true }).count(), 1, 'the pages\' navigation');
  t.equal(await page.getByRole('main').count(), 1, 'a main region');
  const unlabelled = await page.locator('input, select, textarea').evaluateAll((controls) => controls
    .filter((control) => (control as unknown as { labels: { length: number } | null }).labels?.length === 0 && !control.getAttribute('aria-label')).map((control) => control.outerHTML));
  t.same(unlabelled, [], 'every control has a label');
  t.same(await page.locator('table').evaluateAll((tables) => tables.filter((table) => !table.querySelector('caption')).length), 0, 'every table has a caption');
  t.equal(await page.evaluate(() => document.querySelector('a[href], button, input, select, textarea, [tabindex]:not([tabindex="-1"])')?.className), 'skip-link',
    'the first thing Tab reaches is the skip link');
  await page.locator('.skip-link').focus();
  await page.keyboard.press('Enter');
  t.equal(await page.evaluate(() => document.activeElement?.tagName), 'H1', 'which moves the focus to the page');
  // Navigation by keyboard: a link in the header, followed with Enter.
  await page.getByRole('link', { name: 'Reconciliation' }).focus();
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { level: 1, name: 'Reconciliation' }).waitFor({ timeout: WAIT_MS });
  t.equal(await page.evaluate(() => document.activeElement?.tagName), 'H1', 'a new page takes the focus to its heading');
  t.equal(await page.evaluate(() => sessionStorage.length), 1, 'one thing stored: the session');
  t.equal(await page.evaluate(() => localStorage.length + document.cookie.length), 0, 'and nothing else');
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { level: 1, name: 'Sign in to the Folio console' }).waitFor({ timeout: WAIT_MS });
  t.equal(await page.evaluate(() => sessionStorage.length), 0, 'signing out forgets the key');
  await shot(page, 'sign-in');
  // A wrong key: the API's 401, plainly.
  await page.locator('input[name=key]').fill('key_nope.nope');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('[data-code]').waitFor({ timeout: WAIT_MS });
  t.equal(await page.locator('[data-code]').textContent(), 'AUTH_INVALID_API_KEY');
  t.same(problems, [], 'no script error or policy violation');
});
