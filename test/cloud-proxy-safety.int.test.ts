// The proxy as an attacker meets it (issue 27, points 2 to 5), against a real `folio cloud` and real
// cores, with raw bytes where a client library would not send them:
//   - a body on a method that takes none, and a Connection header naming a header the proxy relies on,
//     are refused before anything is forwarded, so a body can never carry a second request to the core
//     (a GET with `Connection: content-length` once made the core create a ledger for a read token, and
//     left bytes on a kept-alive connection that ate the next caller's request);
//   - framing Node's parser refuses (two Content-Lengths, Content-Length with chunked, obs-fold) never
//     reaches a core, and `Expect` is answered by the control plane;
//   - a body the core answers before it has read all of it (refused unread, or at its size limit) never
//     holds up the next request the caller sends on the same kept-alive connection;
//   - paths are matched case-sensitively everywhere (the proxy, the core, the control plane), and the
//     proxy forwards a closed list of the core's routes: operator routes are out of reach in any case;
//   - the core is called with an API key whose scopes follow the caller's (read-only for reads), never
//     with its master key;
//   - a core's environment is built from an allow-list: the operator's FOLIO_* settings and other
//     secrets of the control plane's environment never reach it, and each core has a tokenization
//     secret of its own.
// The whole file runs with an operator environment full of settings a core must not inherit.

import fs from 'node:fs';
import t, { type Test } from 'tap';
import {
  accessToken, CLOUD_API_KEY, coreOf, coreRequest, createDeployment, createUser, removeDir, startCloudRig, waitUntil, type CloudRig,
} from './helpers/cloud-rig.js';
import { envelopeCodeOf, exchange, splitResponses, type RawAnswer } from './helpers/raw-http.js';
import { createSender, type FuzzAnswer } from '../fuzz/fuzz-request.js';

/** Settings of the operator's environment that are the control plane's, not any tenant's. */
const OPERATOR_ENVIRONMENT: Record<string, string> = {
  FOLIO_WEBHOOK_URL: 'http://127.0.0.1:9/operator-webhook',
  FOLIO_WEBHOOK_SECRET: 'the operator webhook secret',
  FOLIO_TOKENIZATION_SECRET: 'ab'.repeat(32),
  FOLIO_BACKUP_DIR: '/tmp/folio-operator-backups',
  FOLIO_HOOKS_ALLOW_PRIVATE_NETWORKS: 'true',
  FOLIO_SNAPSHOT_EVERY_EVENTS: '3',
  OPERATOR_DATABASE_PASSWORD: 'hunter2-hunter2',
};

let rig: CloudRig;
let port: number;
let deployment: any;
let reader: string;
let writer: string;
let knownLedger: { ledger_id: string; name: string };
let savedEnvironment: Record<string, string | undefined>;

t.before(async () => {
  savedEnvironment = Object.fromEntries(Object.keys(OPERATOR_ENVIRONMENT).map((name) => [name, process.env[name]]));
  Object.assign(process.env, OPERATOR_ENVIRONMENT);
  rig = await startCloudRig();
  port = Number(new URL(rig.url).port);
  const user = await createUser(rig, 'tenant@example.com');
  deployment = await createDeployment(rig, 'safety', user.user_id);
  reader = await accessToken(rig, user, ['proxy:read']);
  writer = await accessToken(rig, user, ['proxy:write']);
  const created = await rig.operator('POST', `/proxy/ledgers?instance_id=${deployment.instance_id}`, { name: 'known ledger' });
  if (created.status !== 201) throw new Error(`ledger: ${created.status} ${created.text}`);
  knownLedger = created.body;
});

t.teardown(async () => {
  await rig.stop();
  removeDir(rig.dataDir);
  for (const [name, value] of Object.entries(savedEnvironment)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

/** Request bytes for `/proxy<path>` on this deployment, with the header lines given and the body. */
function proxyRequest(method: string, path: string, headerLines: string[], body = ''): string {
  const target = `/proxy${path}${path.includes('?') ? '&' : '?'}instance_id=${deployment.instance_id}`;
  return `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${headerLines.map((line) => `${line}\r\n`).join('')}\r\n${body}`;
}

/** Sends one request on its own connection and returns the first answer. */
async function send(bytes: string): Promise<RawAnswer | undefined> {
  const { text } = await exchange(port, bytes);
  return splitResponses(text)[0];
}

async function ledgerNames(): Promise<string[]> {
  const page = await rig.operator('GET', `/proxy/ledgers?limit=100&instance_id=${deployment.instance_id}`);
  return (page.body as Array<{ name: string }>).map((ledger) => ledger.name);
}

async function knownLedgerAnswersItself(t: Test, label: string): Promise<void> {
  const read = await rig.operator('GET', `/proxy/ledgers/${knownLedger.ledger_id}?instance_id=${deployment.instance_id}`);
  t.equal(read.status, 200, `${label}: the next proxied request gets an answer of its own`);
  t.equal(read.body?.name, knownLedger.name, `${label}: its own answer, not another request's`);
}

t.test('a GET whose body carries a second request cannot make the core run it', async (t) => {
  const json = '{"name":"smuggled by a reader"}';
  // The first request leaves the head of a POST on the core's connection; the second's body ends it.
  const head = `POST /ledgers HTTP/1.1\r\nContent-Length: ${json.length}\r\nX-Smuggled: `;
  const first = await send(proxyRequest('GET', '/ledgers', [`Authorization: Bearer ${reader}`, 'Connection: close, Content-Length', `Content-Length: ${head.length}`], head));
  const second = await send(proxyRequest('GET', '/ledgers', [
    `Authorization: Bearer ${reader}`, 'Connection: close, content-length', 'Content-Type: application/json', `Content-Length: ${json.length}`,
  ], json));
  t.equal(first?.status, 400, 'the first is refused');
  t.equal(envelopeCodeOf(first), 'PROXY_HEADER_INVALID', 'in the envelope, with a code of its own');
  t.equal(second?.status, 400, 'the second is refused');
  t.notOk((await ledgerNames()).includes('smuggled by a reader'), 'no ledger was created with a read token');
  await knownLedgerAnswersItself(t, 'afterwards');
});

t.test('what a body leaves on a kept-alive connection never becomes the next caller\'s request or answer', async (t) => {
  // The head of an operator route with no body, left open at a header: the next request forwarded on
  // the same connection would become its last headers (and lend it the proxy's key).
  const leftover = 'POST /admin/snapshots HTTP/1.1\r\nContent-Length: 0\r\nX-Smuggled: ';
  const attempt = await send(proxyRequest('GET', '/ledgers', [`Authorization: Bearer ${reader}`, 'Connection: close, content-length', `Content-Length: ${leftover.length}`], leftover));
  t.equal(attempt?.status, 400, 'refused');
  await knownLedgerAnswersItself(t, 'after the attempt');
  // Many callers at once, each answer carrying the request id its own request sent.
  const answers = await Promise.all(Array.from({ length: 20 }, async (_, index) => {
    const id = `req-${index}-${Date.now()}`;
    const answer = await rig.request('GET', `/proxy/ledgers/${knownLedger.ledger_id}?instance_id=${deployment.instance_id}`, undefined, { authorization: `Bearer ${reader}`, 'x-request-id': id });
    return { id, answer };
  }));
  t.ok(answers.every(({ id, answer }) => answer.status === 200 && answer.headers['x-request-id'] === id), 'every answer belongs to its own request');
});

t.test('a body the core answers part way through never holds up the caller\'s next request on the connection', async (t) => {
  // The cloud fuzz run once waited 30 s for a request sent on the kept-alive connection of an earlier one
  // whose 20 MiB body the core had refused at its 10 MiB limit: the rest of that body stayed unread on
  // the connection, so the next request on it was never read. One connection at most: the next request
  // goes on the same one once the body is written, and waits for it until then.
  const sender = createSender(rig.url, { timeoutMs: 10_000, connections: 1 });
  const on = `instance_id=${deployment.instance_id}`;
  const bearer = `Bearer ${writer}`;
  const statusOf = (answer: FuzzAnswer): number | string => (answer.kind === 'answer' ? answer.status : answer.error);
  const bodies: Array<[string, string, Buffer, number]> = [
    ['a body refused unread (not JSON)', 'text/plain', Buffer.alloc(4 * 1024 * 1024, 'a'), 415],
    ['a body refused at the core\'s size limit', 'application/json', Buffer.from(`{"name":"${'n'.repeat(20 * 1024 * 1024)}"}`), 413],
  ];
  try {
    for (const [label, type, body, status] of bodies) {
      const refused = await sender.send({ method: 'POST', path: `/proxy/ledgers?${on}`, headers: { authorization: bearer, 'content-type': type }, body });
      t.equal(statusOf(refused), status, `${label}: the core's refusal reaches the caller`);
      const next = await sender.send({ method: 'GET', path: `/proxy/ledgers/${knownLedger.ledger_id}?${on}`, headers: { authorization: bearer } });
      t.equal(statusOf(next), 200, `${label}: the caller's next request is answered`);
    }
  } finally {
    sender.close();
  }
});

t.test('a body on a method that takes none is refused, whatever frames it', async (t) => {
  const bearer = `Authorization: Bearer ${writer}`;
  const cases: Array<[string, string]> = [
    ['GET with Content-Length', proxyRequest('GET', '/ledgers', [bearer, 'Connection: close', 'Content-Length: 2'], '{}')],
    ['GET chunked', proxyRequest('GET', '/ledgers', [bearer, 'Connection: close', 'Transfer-Encoding: chunked'], '2\r\n{}\r\n0\r\n\r\n')],
    ['GET chunked, empty', proxyRequest('GET', '/ledgers', [bearer, 'Connection: close', 'Transfer-Encoding: chunked'], '0\r\n\r\n')],
    ['DELETE with Content-Length', proxyRequest('DELETE', '/identities/idt_00000000-0000-7000-8000-000000000000', [bearer, 'Connection: close', 'Content-Length: 2'], '{}')],
    ['HEAD with Content-Length', proxyRequest('HEAD', '/ledgers', [bearer, 'Connection: close', 'Content-Length: 2'], '{}')],
  ];
  for (const [label, bytes] of cases) {
    const answer = await send(bytes);
    t.equal(answer?.status, 400, label);
    if (!label.startsWith('HEAD')) t.equal(envelopeCodeOf(answer), 'PROXY_BODY_NOT_ALLOWED', `${label}: in the envelope`);
  }
  const empty = await send(proxyRequest('GET', '/ledgers', [bearer, 'Connection: close', 'Content-Length: 0']));
  t.equal(empty?.status, 200, 'Content-Length: 0 is no body');
  const posted = await send(proxyRequest('POST', '/ledgers', [bearer, 'Connection: close', 'Content-Type: application/json', 'Transfer-Encoding: chunked'], '5\r\n{"nam\r\n12\r\ne":"chunked post"}\r\n0\r\n\r\n'));
  t.equal(posted?.status, 201, 'a chunked POST goes through (framed by the proxy)');
});

t.test('a Connection header may not name a header the proxy relies on', async (t) => {
  const json = '{"name":"hop by hop"}';
  for (const named of ['content-length', 'Transfer-Encoding', 'HOST', 'x-svc-key', 'Authorization', 'X-Blnk-Key', 'content-type', 'keep-alive, Content-Length']) {
    const answer = await send(proxyRequest('POST', '/ledgers', [
      `Authorization: Bearer ${writer}`, `Connection: ${named}`, 'Content-Type: application/json', `Content-Length: ${json.length}`,
    ], json));
    t.equal(answer?.status, 400, `Connection: ${named}`);
    t.equal(envelopeCodeOf(answer), 'PROXY_HEADER_INVALID', `Connection: ${named}: the code`);
  }
  const twoHeaders = await send(proxyRequest('POST', '/ledgers', [
    `Authorization: Bearer ${writer}`, 'Connection: keep-alive', 'CONNECTION: Content-Length', 'Content-Type: application/json', `Content-Length: ${json.length}`,
  ], json));
  t.equal(twoHeaders?.status, 400, 'named in a second Connection header, in capitals');
  const custom = await send(proxyRequest('POST', '/ledgers', [
    `Authorization: Bearer ${writer}`, 'Connection: close, X-Hop', 'X-Hop: 1', 'Content-Type: application/json', `Content-Length: ${json.length}`,
  ], json));
  t.equal(custom?.status, 201, 'a hop-by-hop header of the client\'s own is dropped, the request forwarded');
  t.equal((await ledgerNames()).filter((name) => name === 'hop by hop').length, 1, 'only that one request created a ledger');
});

t.test('framing Node refuses never reaches a core, and is answered in the envelope', async (t) => {
  const key = `X-svc-key: ${CLOUD_API_KEY}`;
  const json = '{"name":"refused framing"}';
  const cases: Array<[string, string[], string, string?]> = [
    ['two Content-Lengths', [key, 'Content-Type: application/json', `Content-Length: ${json.length}`, `Content-Length: ${json.length}`], json],
    ['Content-Length and chunked', [key, 'Content-Type: application/json', `Content-Length: ${json.length}`, 'Transfer-Encoding: chunked'], `${json.length.toString(16)}\r\n${json}\r\n0\r\n\r\n`],
    // Node hands this one to the control plane before its parser fails on the body: the proxy refuses it,
    // or the parser's refusal goes out first (a request not received whole is not waited for).
    ['a transfer coding other than chunked', [key, 'Content-Type: application/json', 'Transfer-Encoding: gzip'], json, 'PROXY_HEADER_INVALID|GEN_MALFORMED_REQUEST'],
    ['chunked twice', [key, 'Content-Type: application/json', 'Transfer-Encoding: chunked, chunked'], `${json.length.toString(16)}\r\n${json}\r\n0\r\n\r\n`],
    ['obs-fold', [key, 'Content-Type: application/json', 'X-Folded: one', ` Content-Length: ${json.length}`], json],
    ['space before the colon', [key, 'Content-Type: application/json', `Content-Length : ${json.length}`], json],
  ];
  for (const [label, lines, body, code] of cases) {
    const answer = await send(proxyRequest('POST', '/ledgers', ['Connection: close', ...lines], body));
    t.equal(answer?.status, 400, label);
    t.ok((code ?? 'GEN_MALFORMED_REQUEST').split('|').includes(envelopeCodeOf(answer) ?? ''), `${label}: in the envelope (${envelopeCodeOf(answer)})`);
  }
  t.notOk((await ledgerNames()).includes('refused framing'), 'none of them reached the core');
});

t.test('Expect: 100-continue is answered once, by the control plane; other expectations are refused', async (t) => {
  const json = '{"name":"expected"}';
  const { text } = await exchange(port, proxyRequest('POST', '/ledgers', [
    `Authorization: Bearer ${writer}`, 'Connection: close', 'Expect: 100-continue', 'Content-Type: application/json', `Content-Length: ${json.length}`,
  ], json));
  t.equal(text.match(/HTTP\/1\.1 100 Continue/g)?.length, 1, 'one 100 Continue');
  t.equal(splitResponses(text)[0]?.status, 201, 'then the answer');
  const other = await send(proxyRequest('POST', '/ledgers', [
    `Authorization: Bearer ${writer}`, 'Connection: close', 'Expect: something-else', 'Content-Type: application/json', `Content-Length: ${json.length}`,
  ], json));
  t.equal(other?.status, 417);
  t.equal(envelopeCodeOf(other), 'GEN_EXPECTATION_FAILED', 'in the envelope');
});

t.test('operator routes are out of reach in any letter case, and nothing routes by case', async (t) => {
  const on = `instance_id=${deployment.instance_id}`;
  for (const [method, path] of [
    ['GET', '/ADMIN/cutover/status'], ['GET', '/Admin/snapshots'], ['GET', '/admin/CUTOVER/status'], ['POST', '/ADMIN/cutover/fence'],
    ['POST', '/aDmIn/snapshots'], ['GET', '/Ledgers'], ['GET', '/HOOKS'],
  ] as const) {
    const answer = await rig.operator(method, `/proxy${path}?${on}`);
    t.equal(answer.status, 403, `${method} /proxy${path}`);
    t.equal(answer.body?.error_detail?.code, 'PROXY_ROUTE_FORBIDDEN', `${method} /proxy${path}: the code`);
  }
  const started = Date.now();
  const write = await rig.operator('POST', `/proxy/ledgers?${on}`, { name: 'after the fence attempts' });
  t.equal(write.status, 201, 'writes still go through: the core was never fenced');
  t.ok(Date.now() - started < 5_000, 'at once');
  const core = coreOf(rig, deployment);
  for (const [method, path] of [['GET', '/ADMIN/cutover/status'], ['POST', '/ADMIN/cutover/fence'], ['GET', '/LEDGERS'], ['GET', '/Admin/snapshots']] as const) {
    t.equal((await coreRequest(core, method, path)).status, 404, `the core itself: ${method} ${path} is no route, even with its master key`);
  }
  t.equal((await coreRequest(core, 'GET', '/admin/cutover/status')).body.fenced, false, 'and the core is not fenced');
  t.equal((await rig.operator('GET', '/DEPLOYMENTS')).status, 404, 'the control plane: /DEPLOYMENTS is no route');
  t.equal((await rig.operator('GET', '/Health')).status, 404, 'nor /Health');
  t.equal((await rig.operator('GET', `/PROXY/ledgers?${on}`)).status, 404, 'nor /PROXY/...');
});

t.test('the proxy forwards a closed list of the core\'s routes; operator routes are never forwarded, whoever asks', async (t) => {
  const on = `instance_id=${deployment.instance_id}`;
  const operatorOnly: Array<[string, string]> = [
    ['GET', '/hooks'], ['POST', '/hooks'], ['GET', '/api-keys'], ['POST', '/api-keys'], ['DELETE', '/api-keys/key_x'], ['GET', '/metrics'],
    ['GET', '/backup'], ['POST', '/backup'], ['POST', '/search/reindex'], ['GET', '/admin/snapshots'], ['GET', '/docs'], ['GET', '/nope'],
    ['OPTIONS', '/ledgers'], ['PATCH', '/ledgers/ldg_x'],
  ];
  for (const [method, path] of operatorOnly) {
    for (const [who, headers] of [['the cloud key', { 'x-svc-key': CLOUD_API_KEY }], ['a read token', { authorization: `Bearer ${reader}` }], ['a write token', { authorization: `Bearer ${writer}` }]] as const) {
      if (who === 'a read token' && method !== 'GET') continue; // refused for its scope first
      const answer = await rig.request(method, `/proxy${path}?${on}`, undefined, headers);
      t.ok(answer.status === 403 || answer.status === 400, `${method} ${path} with ${who}: ${answer.status}`);
      t.ok(['PROXY_ROUTE_FORBIDDEN', 'PROXY_PATH_INVALID'].includes(answer.body?.error_detail?.code), `${method} ${path} with ${who}: refused by the proxy`);
    }
  }
  // A fragment never reaches a server from a client library; sent raw, it is refused (the core would cut the path there).
  const fragment = await send(proxyRequest('GET', '/ledgers#/../hooks', [`Authorization: Bearer ${writer}`, 'Connection: close']));
  t.equal(envelopeCodeOf(fragment), 'PROXY_PATH_INVALID', 'a # in the path');
  for (const [method, path] of [['GET', '/ledgers'], ['GET', '/health'], ['GET', '/openapi.json'], ['GET', '/identities/'], ['POST', '/ledgers/filter'], ['POST', `/${knownLedger.ledger_id}/metadata`]] as const) {
    const answer = await rig.request(method, `/proxy${path}?${on}`, method === 'POST' ? {} : undefined, { authorization: `Bearer ${writer}` });
    t.notOk(String(answer.body?.error_detail?.code ?? '').startsWith('PROXY_'), `${method} ${path} is forwarded (${answer.status})`);
  }
});

interface KeyView {
  api_key_id: string;
  owner_id: string;
  scopes: string[];
  last_used_at: string;
  is_revoked: boolean;
}

async function proxyKeys(core: { url: string; masterKey: string }): Promise<KeyView[]> {
  const listed = await coreRequest(core, 'GET', '/api-keys');
  return (listed.body as KeyView[]).filter((key) => !key.is_revoked);
}

t.test('the core is called with an API key whose scopes follow the caller\'s, never with its master key', async (t) => {
  const core = coreOf(rig, deployment);
  const keys = await proxyKeys(core);
  t.equal(keys.length, 2, 'the control plane made two keys on the core');
  const readKey = keys.find((key) => key.scopes.every((scope) => scope.endsWith(':read')));
  const writeKey = keys.find((key) => key !== readKey);
  t.ok(readKey && writeKey, 'a read-only key and a read-write key');
  for (const key of keys) {
    t.notOk(key.scopes.some((scope) => scope.startsWith('api-keys:') || scope.startsWith('hooks:') || scope.startsWith('*')), `${key.api_key_id}: no API key, hook or wildcard scope (${key.scopes.join(' ')})`);
  }
  t.ok(writeKey!.scopes.includes('transactions:write'), 'the write key writes');
  const lastUse = async (id: string): Promise<string> => (await proxyKeys(core)).find((key) => key.api_key_id === id)!.last_used_at;
  const readBefore = await lastUse(readKey!.api_key_id);
  const writeBefore = await lastUse(writeKey!.api_key_id);
  await new Promise((resolve) => setTimeout(resolve, 5));
  t.equal((await rig.request('GET', `/proxy/ledgers?instance_id=${deployment.instance_id}`, undefined, { authorization: `Bearer ${reader}` })).status, 200);
  t.not(await lastUse(readKey!.api_key_id), readBefore, 'a read with a proxy:read token used the read key');
  t.equal(await lastUse(writeKey!.api_key_id), writeBefore, 'and not the write key');
  const read2 = await lastUse(readKey!.api_key_id);
  await new Promise((resolve) => setTimeout(resolve, 5));
  t.equal((await rig.request('POST', `/proxy/ledgers?instance_id=${deployment.instance_id}`, { name: 'by the write key' }, { authorization: `Bearer ${writer}` })).status, 201);
  t.not(await lastUse(writeKey!.api_key_id), writeBefore, 'a write with a proxy:write token used the write key');
  t.equal(await lastUse(readKey!.api_key_id), read2, 'and not the read key');
  const keyFile = fs.readdirSync(`${rig.dataDir}/secrets`).filter((name) => name.includes('proxy-keys'));
  t.equal(keyFile.length, 1, 'the keys are kept in the control plane\'s secrets');
  const mode = fs.statSync(`${rig.dataDir}/secrets/${keyFile[0]}`).mode & 0o777;
  t.equal(mode, 0o600, 'readable by the control plane only');
  const stored = JSON.parse(fs.readFileSync(`${rig.dataDir}/secrets/${keyFile[0]}`, 'utf8')) as { read: { key: string } };
  const refused = await coreRequest(core, 'POST', '/ledgers', { name: 'with the read key' }, { 'x-svc-key': stored.read.key });
  t.equal(refused.status, 403, 'the read key cannot write on the core, whatever reaches it');
});

t.test('a core\'s environment is built from an allow-list, with a tokenization secret of its own', async (t) => {
  const environmentOf = (pid: number): Map<string, string> => new Map(fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean)
    .map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)] as [string, string]));
  const first = environmentOf(coreOf(rig, deployment).pid);
  for (const [name, value] of Object.entries(OPERATOR_ENVIRONMENT)) {
    t.not(first.get(name), value, `${name} of the operator does not reach the core`);
  }
  for (const name of ['FOLIO_WEBHOOK_URL', 'FOLIO_WEBHOOK_SECRET', 'FOLIO_BACKUP_DIR', 'FOLIO_SNAPSHOT_EVERY_EVENTS', 'OPERATOR_DATABASE_PASSWORD', 'FOLIO_CLOUD_API_KEY']) {
    t.notOk(first.has(name), `${name} is not set at all`);
  }
  t.equal(first.get('FOLIO_HOOKS_ALLOW_PRIVATE_NETWORKS'), 'false', 'private hook targets: the control plane\'s own setting for cores (off)');
  t.ok(first.get('PATH'), 'PATH is passed on');
  t.match(first.get('FOLIO_TOKENIZATION_SECRET') ?? '', /^[0-9a-f]{64}$/, 'a tokenization secret made by the control plane');
  const other = await createDeployment(rig, 'another tenant');
  const second = environmentOf(coreOf(rig, other).pid);
  t.not(second.get('FOLIO_TOKENIZATION_SECRET'), first.get('FOLIO_TOKENIZATION_SECRET'), 'each core has its own');
  t.not(second.get('FOLIO_SECRET_KEY'), first.get('FOLIO_SECRET_KEY'), 'as it has its own master key');

  const core = coreOf(rig, deployment);
  const hook = await coreRequest(core, 'POST', '/hooks', { name: 'private', url: 'http://127.0.0.1:9/hook', type: 'POST_TRANSACTION' });
  t.equal(hook.status, 400, 'the operator\'s FOLIO_HOOKS_ALLOW_PRIVATE_NETWORKS does not apply: a loopback hook is refused');
  const backup = await coreRequest(core, 'POST', '/backup');
  t.equal(backup.status, 400, 'nor does the operator\'s FOLIO_BACKUP_DIR: no backup directory is configured');

  const on = `instance_id=${deployment.instance_id}`;
  const identity = await rig.request('POST', `/proxy/identities?${on}`, { identity_type: 'individual', first_name: 'Ada' }, { authorization: `Bearer ${writer}` });
  t.equal(identity.status, 201);
  const id = identity.body.identity_id as string;
  t.equal((await rig.request('POST', `/proxy/identities/${id}/tokenize/firstName?${on}`, undefined, { authorization: `Bearer ${writer}` })).status, 200, 'tokenization works');
  const pid = core.pid;
  process.kill(pid, 'SIGKILL');
  await waitUntil(() => {
    const live = rig.cloud.deployments.instance(deployment.instance_id)?.core;
    return live?.state === 'running' && live.pid !== pid;
  }, 60_000, 'the core to be restarted');
  const opened = await rig.request('GET', `/proxy/identities/${id}/detokenize/firstName?${on}`, undefined, { authorization: `Bearer ${reader}` });
  t.same(opened.body, { field: 'firstName', value: 'Ada' }, 'a restarted core opens what it tokenized before: the secret is kept');
  t.equal(environmentOf(coreOf(rig, deployment).pid).get('FOLIO_TOKENIZATION_SECRET'), first.get('FOLIO_TOKENIZATION_SECRET'), 'the same secret');
});
