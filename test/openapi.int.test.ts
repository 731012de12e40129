// The API's description: GET /openapi.json is a valid OpenAPI 3.1 document generated from the router
// (every route the router has is in it, every path in it is a route), its examples validate against their
// own schemas (and real answers against the documented ones), `folio openapi` prints the same document,
// and GET /docs renders it in a real headless browser with no console errors. Runs over the real app
// with every optional part on, with authentication on, on 127.0.0.1.

import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import pino from 'pino';
import { chromium } from 'playwright-core';
import t from 'tap';
import { CutoverControl } from '../cutover/cutover-control.js';
import { LedgerRuntime } from '../runtime/ledger-runtime.js';
import { snapshotAdmin } from '../runtime/snapshot-admin.js';
import { FOLIO_VERSION } from '../server/version.js';
import { createApp, type FolioApp } from '../http/app.js';
import { Metrics } from '../http/metrics.js';
import { isUndocumented, openApiPath, routerRoutes } from '../http/openapi/openapi-document.js';
import { routeDocs } from '../http/openapi/route-docs.js';
import { DOCS_CONTENT_SECURITY_POLICY } from '../http/routes/docs-routes.js';
import { CHROMIUM, CHROMIUM_ARGS } from './helpers/chromium.js';
import { tempDataDir } from './helpers/test-server.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MASTER_KEY = 'm'.repeat(40);

type Json = Record<string, unknown>;

let dataDir: string;
let runtime: LedgerRuntime;
let cutover: CutoverControl;
let app: FolioApp;
let server: http.Server;
let baseUrl: string;

t.before(async () => {
  dataDir = tempDataDir('folio-openapi');
  runtime = await LedgerRuntime.open({ dataDir });
  cutover = CutoverControl.forLeader(runtime);
  const metrics = new Metrics({ queuedTransactions: () => 0, lookupBacklog: () => 0, unflushedEvents: () => 0 });
  // Every optional part on, so every route is registered; authentication on, so "public" is tested.
  app = createApp({
    core: runtime, logger: pino({ level: 'silent' }), metrics, version: FOLIO_VERSION, secretKey: MASTER_KEY,
    snapshots: snapshotAdmin(runtime, dataDir), cutover,
  });
  server = http.createServer(app.koa.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

t.teardown(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await cutover?.close();
  await runtime?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function served(): Promise<Json> {
  const response = await fetch(`${baseUrl}/openapi.json`);
  if (response.status !== 200) throw new Error(`GET /openapi.json answered ${response.status}`);
  return (await response.json()) as Json;
}

function operations(document: Json): Array<{ key: string; operation: Json }> {
  const found: Array<{ key: string; operation: Json }> = [];
  for (const [route, methods] of Object.entries(document.paths as Record<string, Record<string, Json>>)) {
    for (const [method, operation] of Object.entries(methods)) found.push({ key: `${method.toUpperCase()} ${route}`, operation });
  }
  return found;
}

/** A validator for schemas of this document: its components go along, so `#/components/...` resolves. */
function schemaChecker(document: Json): (schema: Json, value: unknown) => string | undefined {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  const compiled = new Map<string, ReturnType<typeof ajv.compile>>();
  return (schema, value) => {
    const text = JSON.stringify(schema);
    let check = compiled.get(text);
    if (!check) {
      check = ajv.compile({ ...schema, components: document.components });
      compiled.set(text, check);
    }
    return check(value) ? undefined : ajv.errorsText(check.errors);
  };
}

t.test('the document is valid OpenAPI 3.1, with no errors', async (t) => {
  const document = await served();
  t.equal(document.openapi, '3.1.0');
  const result = await new Validator().validate(document as never);
  t.same(result.errors ?? [], [], 'no validation errors');
  t.equal(result.valid, true, 'the validator accepts the document');
});

t.test('a 429 of fair use declares its headers wherever a route can answer it', async (t) => {
  const document = await served();
  let limited = 0;
  for (const { key, operation } of operations(document)) {
    const answer = (operation.responses as Record<string, Json>)['429'];
    if (!answer || !String(answer.description).includes('GEN_RATE_LIMITED')) continue;
    limited += 1;
    t.same(Object.keys((answer.headers ?? {}) as Json).sort(), ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After'], `${key}: Retry-After and RateLimit-*`);
  }
  t.ok(limited > 10, `every keyed route can be rate limited (${limited})`);
});

t.test('every route the router has is in the document, documented, and every documented path is a route', async (t) => {
  const document = await served();
  const registered = new Set(routerRoutes(app.router).map((route) => `${route.method} ${openApiPath(route.path)}`));
  const inDocument = operations(document);
  t.ok(registered.size >= 50, `the router was enumerated (${registered.size} routes)`);
  for (const route of registered) t.ok(inDocument.some((entry) => entry.key === route), `${route} is in the document`);
  for (const { key, operation } of inDocument) {
    t.ok(registered.has(key), `${key} in the document is a route of the router`);
    t.notOk(isUndocumented(operation), `${key} is documented (describeRoute next to the route)`);
    t.ok(Object.keys(operation.responses as Json).some((status) => status.startsWith('2')), `${key} documents its success answer`);
  }
  const routes = new Set(routerRoutes(app.router).map((route) => `${route.method} ${route.path}`));
  for (const declared of routeDocs(app.router).keys()) t.ok(routes.has(declared), `the declaration ${declared} names a registered route`);
});

t.test('every example validates against its own schema', async (t) => {
  const document = await served();
  const check = schemaChecker(document);
  const namedExamples = (document.components as { examples: Record<string, { value: unknown }> }).examples;
  let examples = 0;
  for (const { key, operation } of operations(document)) {
    const contents: Array<[string, Json]> = [];
    const body = (operation.requestBody as { content?: Record<string, Json> } | undefined)?.content ?? {};
    for (const media of Object.values(body)) contents.push([`${key} request body`, media]);
    for (const [status, response] of Object.entries(operation.responses as Record<string, { content?: Record<string, Json> }>)) {
      for (const media of Object.values(response.content ?? {})) contents.push([`${key} ${status}`, media]);
    }
    for (const [where, media] of contents) {
      const schema = media.schema as Json;
      if ('example' in media) {
        examples += 1;
        t.equal(check(schema, media.example), undefined, `${where}: the example fits the schema`);
      }
      for (const [name, example] of Object.entries((media.examples ?? {}) as Record<string, { $ref?: string; value?: unknown }>)) {
        examples += 1;
        const value = example.$ref ? namedExamples[example.$ref.split('/').pop() as string]?.value : example.value;
        t.equal(check(schema, value), undefined, `${where} ${name}: the example fits the schema`);
      }
    }
  }
  t.ok(examples >= 100, `${examples} examples checked`);
});

t.test('real answers fit the documented schemas', async (t) => {
  const document = await served();
  const check = schemaChecker(document);
  const send = async (method: string, route: string, pattern: string, body?: unknown): Promise<Json> => {
    const response = await fetch(`${baseUrl}${route}`, {
      method, headers: { 'content-type': 'application/json', 'x-svc-key': MASTER_KEY }, body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answer = (await response.json()) as Json;
    const operation = (document.paths as Record<string, Record<string, Json>>)[pattern]?.[method.toLowerCase()];
    const media = (operation?.responses as Record<string, { content?: Record<string, Json> }> | undefined)?.[String(response.status)]?.content?.['application/json'];
    t.ok(media, `${method} ${route} answered ${response.status}, a documented status`);
    if (media) t.equal(check(media.schema as Json, answer), undefined, `${method} ${pattern} ${response.status}: the answer fits the schema`);
    return answer;
  };
  const ledger = await send('POST', '/ledgers', '/ledgers', { name: 'docs' });
  const source = await send('POST', '/balances', '/balances', { ledger_id: ledger.ledger_id, currency: 'USD' });
  const destination = await send('POST', '/balances', '/balances', { ledger_id: ledger.ledger_id, currency: 'USD' });
  const sides = { source: source.balance_id, destination: destination.balance_id };
  const transaction = await send('POST', '/transactions', '/transactions', { ...sides, amount: 12.5, precision: 100, currency: 'USD', allow_overdraft: true, skip_queue: true, reference: 'docs-1' });
  await send('POST', '/transactions', '/transactions', { ...sides, amount: 1, precision: 100, currency: 'USD', dry_run: true });
  await send('POST', '/transactions', '/transactions', { ...sides, amount: 1, precision: 100, currency: 'EUR', skip_queue: true });
  await send('GET', `/transactions/${String(transaction.transaction_id)}`, '/transactions/{id}');
  await send('GET', `/balances/${String(source.balance_id)}`, '/balances/{id}');
  await send('GET', '/transactions/nope', '/transactions/{id}');
  await send('POST', '/identities', '/identities', { identity_type: 'individual', first_name: 'Ada' });
  await send('POST', `/refund-transaction/${String(transaction.transaction_id)}`, '/refund-transaction/{id}', { skip_queue: true });
  await send('POST', '/transactions/filter', '/transactions/filter', { filters: [{ field: 'currency', operator: 'eq', value: 'USD' }], include_count: true });
  await send('GET', '/ledgers', '/ledgers');
});

t.test('the document and the page are public; the page and its files carry their types and the CSP', async (t) => {
  const document = await fetch(`${baseUrl}/openapi.json`);
  t.equal(document.status, 200, '/openapi.json needs no key');
  t.match(document.headers.get('content-type'), /^application\/json/);
  const files: Array<[string, RegExp]> = [
    ['/docs', /^text\/html/], ['/docs/start.js', /^text\/javascript/], ['/docs/swagger-ui-bundle.js', /^text\/javascript/], ['/docs/swagger-ui.css', /^text\/css/],
  ];
  for (const [route, type] of files) {
    const response = await fetch(`${baseUrl}${route}`);
    t.equal(response.status, 200, `${route} needs no key`);
    t.match(response.headers.get('content-type'), type, `${route} has its content type`);
    t.equal(response.headers.get('content-security-policy'), DOCS_CONTENT_SECURITY_POLICY, `${route} carries the CSP`);
    t.equal(response.headers.get('x-content-type-options'), 'nosniff');
    await response.arrayBuffer();
  }
  const ledgers = await fetch(`${baseUrl}/ledgers`);
  t.equal(ledgers.status, 401, 'the API itself still needs a key');
  await ledgers.arrayBuffer();
});

t.test('folio openapi prints the document a server with every part serves', async (t) => {
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(ROOT, 'dist/bin/folio.js'), 'openapi'], { maxBuffer: 16 * 1024 * 1024 });
  t.same(JSON.parse(stdout), await served(), 'the same document');
});

t.test('GET /docs renders the reference in a headless browser with no console errors', async (t) => {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  t.teardown(() => browser.close());
  const page = await browser.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('requestfailed', (request) => problems.push(`request failed: ${request.url()}`));
  page.on('response', (answer) => {
    if (answer.status() >= 400) problems.push(`answered ${answer.status()}: ${answer.url()}`);
  });
  const outside: string[] = [];
  page.on('request', (request) => {
    if (!request.url().startsWith(baseUrl) && !request.url().startsWith('data:')) outside.push(request.url());
  });
  const response = await page.goto(`${baseUrl}/docs`);
  t.equal(response?.status(), 200);
  const operation = page.locator('.opblock-summary', { hasText: '/transactions' }).filter({ hasText: 'POST' }).first();
  await operation.waitFor({ timeout: 30_000 });
  t.match(await page.locator('body').innerText(), /Record a transaction/, 'the transactions operations are shown, with their summaries');
  t.match(await page.title(), /Folio API reference/);
  t.same(problems, [], 'no console errors, page errors or failed requests');
  t.same(outside, [], 'nothing is fetched from anywhere but this server');
});
