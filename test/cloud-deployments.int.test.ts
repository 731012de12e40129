// Deployments as real core processes and the proxy in front of them: every field of a deployment, the
// proxy forwarding method, path, query, body and status with the deployment's own key (a caller's
// credentials never reach the core), streamed uploads, path escapes refused, unknown instances 404 in
// the error envelope, a core that dies or hangs restarted with its data, and a restarted control plane
// that brings its deployments, users and tokens back from its own store.

import net from 'node:net';
import t from 'tap';
import {
  authorize, CLOUD_API_KEY, createClient, createDeployment, createUser, removeDir, startCloudRig, tokenRequest, waitUntil, type CloudRig,
} from './helpers/cloud-rig.js';

let rig: CloudRig;
let deployment: any;
let instance: string;

t.before(async () => {
  rig = await startCloudRig();
  deployment = await createDeployment(rig, 'proxy-test');
  instance = `instance_id=${deployment.instance_id}`;
});

t.teardown(async () => {
  await rig.stop();
  removeDir(rig.dataDir);
});

/** A raw HTTP/1.1 request, for request targets fetch would normalise. */
function rawRequest(port: number, requestLine: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(`${requestLine}\r\nHost: 127.0.0.1:${port}\r\nX-svc-key: ${CLOUD_API_KEY}\r\nConnection: close\r\n\r\n`);
    });
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk.toString();
    });
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
}

t.test('a deployment shows every field of ../shared/spec/interface.md 2.9, plus instance_id and version', async (t) => {
  for (const field of ['deployment_id', 'name', 'ingress_mode', 'dedicated', 'tier', 'type', 'region', 'status', 'watch_enabled',
    'usage_billing_enabled', 'usage_billing_enabled_at', 'record_creates_blocked', 'created_at', 'updated_at', 'instance_id', 'version']) {
    t.ok(field in deployment, field);
  }
  t.equal(deployment.status, 'ACTIVE');
  t.not(deployment.instance_id, deployment.deployment_id, 'instance_id is distinct from deployment_id');
  t.match(deployment.version, /^\d+\.\d+\.\d+/);
  const listed = await rig.operator('GET', '/deployments');
  t.ok(listed.body.some((item: any) => item.deployment_id === deployment.deployment_id), 'listed');
  t.equal((await rig.operator('GET', '/deployments/dep_nope')).body.error_detail.code, 'DEPLOYMENT_NOT_FOUND');
  t.equal((await rig.operator('POST', '/deployments', { name: '' })).status, 400);
  t.equal((await rig.operator('POST', '/deployments', { name: 'x', user_id: 'usr_unknown' })).status, 400);
});

t.test('the proxy forwards method, path, query, body and status with the core\'s own key', async (t) => {
  const created = await rig.operator('POST', `/proxy/ledgers?${instance}`, { name: 'Proxied' });
  t.equal(created.status, 201, 'a create answers 201 through the proxy (and authenticated with the core key, not the cloud key)');
  const read = await rig.operator('GET', `/proxy/ledgers/${created.body.ledger_id}?${instance}`);
  t.equal(read.body.name, 'Proxied', 'path forwarded');
  const transfer = { description: 'test', source: '@world', destination: '@alice', precise_amount: 1500, currency: 'USD', allow_overdraft: true, skip_queue: true, reference: 'proxy-ref-1' };
  t.equal((await rig.operator('POST', `/proxy/transactions?${instance}`, transfer)).status, 201);
  const page = await rig.operator('GET', `/proxy/transactions?limit=1&offset=0&${instance}`);
  t.equal(page.status, 200);
  t.equal(page.body.length, 1, 'the rest of the query is forwarded');
  const missing = await rig.operator('GET', `/proxy/transactions/reference/nope?${instance}`);
  t.equal(missing.status, 404, 'the core\'s status comes back');
  t.equal(missing.body.error_detail.code, 'TXN_NOT_FOUND', 'with the core\'s own envelope');
  const malformed = await rig.operator('POST', `/proxy/transactions?${instance}`, '{"source": ');
  t.equal(malformed.body.error_detail.code, 'GEN_MALFORMED_REQUEST', 'the body arrives as sent');
  const withCookie = await rig.request('GET', `/proxy/ledgers?${instance}`, undefined, { 'x-svc-key': CLOUD_API_KEY, cookie: 'a=b', 'x-blnk-key': 'not the core key' });
  t.equal(withCookie.status, 200, 'the caller\'s other credentials are dropped (a wrong X-Blnk-Key would be refused by the core)');
  const balance = await rig.operator('GET', `/proxy/balances/indicator/@alice/currency/USD?${instance}`);
  t.equal(balance.body.balance, 1500);
});

t.test('uploads stream through: a bulk of 5,000 transfers sent in chunks', async (t) => {
  const transactions = Array.from({ length: 5_000 }, (_, index) => ({
    source: '@world', destination: `@bulk-${index % 50}`, precise_amount: 1 + index, currency: 'USD', allow_overdraft: true, reference: `bulk-${index}`,
    description: 'x'.repeat(100),
  }));
  const text = JSON.stringify({ transactions, atomic: true, skip_queue: true });
  const body = new ReadableStream({
    start(controller) {
      for (let at = 0; at < text.length; at += 64 * 1024) controller.enqueue(new TextEncoder().encode(text.slice(at, at + 64 * 1024)));
      controller.close();
    },
  });
  const response = await fetch(`${rig.url}/proxy/transactions/bulk?${instance}`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-svc-key': CLOUD_API_KEY }, body, duplex: 'half',
  } as RequestInit);
  t.equal(response.status, 201, `bulk of ${text.length} bytes, chunked`);
  t.equal(((await response.json()) as { transaction_count: number }).transaction_count, 5_000);
  const one = await rig.operator('GET', `/proxy/transactions/reference/bulk-4999?${instance}`);
  t.equal(one.body.precise_amount, 5000);
});

t.test('path escapes and operator routes are refused before anything is forwarded', async (t) => {
  const port = Number(new URL(rig.url).port);
  for (const target of [
    `/proxy/../health?${instance}`, `/proxy/ledgers/../../oauth/clients?${instance}`, `/proxy/%2e%2e/health?${instance}`,
    `/proxy/ledgers%2fx?${instance}`, `/proxy/ledgers%2Fx?${instance}`, `/proxy//health?${instance}`, `/proxy/./health?${instance}`,
    `/proxy/ledgers%5c..?${instance}`, `/proxy/?${instance}`,
  ]) {
    const answer = await rawRequest(port, `GET ${target} HTTP/1.1`);
    t.match(answer, /^HTTP\/1\.1 400/, target);
    t.match(answer, /PROXY_PATH_INVALID/, `${target}: the error envelope`);
  }
  const absolute = await rawRequest(port, `GET http://127.0.0.1:${port}/proxy/health?${instance} HTTP/1.1`);
  t.match(absolute, /^HTTP\/1\.1 400/, 'an absolute-form request target');
  for (const target of [`/proxy/admin/cutover/fence?${instance}`, `/proxy/admin/snapshots?${instance}`, `/proxy/admin?${instance}`]) {
    const answer = await rig.operator('POST', target);
    t.equal(answer.status, 403, target);
    t.equal(answer.body.error_detail.code, 'PROXY_ROUTE_FORBIDDEN');
  }
});

t.test('unknown instances and missing instance_id', async (t) => {
  const unknown = await rig.operator('GET', '/proxy/ledgers?instance_id=ins_nope');
  t.equal(unknown.status, 404);
  t.equal(unknown.body.error_detail.code, 'INSTANCE_NOT_FOUND');
  t.equal((await rig.operator('GET', '/proxy/ledgers')).status, 400, 'instance_id is required');
  t.equal((await rig.operator('GET', `/proxy/ledgers?${instance}&${instance}`)).status, 400, 'once');
  t.equal((await rig.request('GET', `/proxy/ledgers?${instance}`)).status, 401, 'a caller needs credentials');
  const byDeploymentId = await rig.operator('GET', `/proxy/ledgers?instance_id=${deployment.deployment_id}`);
  t.equal(byDeploymentId.status, 404, 'a deployment_id is not an instance_id');
});

t.test('a non-loopback Host is refused (DNS rebinding)', async (t) => {
  const port = Number(new URL(rig.url).port);
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write('GET /health HTTP/1.1\r\nHost: evil.example:80\r\nConnection: close\r\n\r\n'));
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk.toString();
    });
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
  t.match(answer, /^HTTP\/1\.1 403/);
  t.match(answer, /GEN_FORBIDDEN_HOST/);
});

t.test('a core that dies is restarted with its data', async (t) => {
  const pid = rig.cloud.deployments.instance(deployment.instance_id)?.core.pid;
  t.ok(pid, 'the core runs');
  process.kill(pid!, 'SIGKILL');
  await waitUntil(async () => {
    const core = rig.cloud.deployments.instance(deployment.instance_id)?.core;
    return core?.state === 'running' && core.pid !== pid;
  }, 60_000, 'the core to be restarted');
  const balance = await rig.operator('GET', `/proxy/balances/indicator/@alice/currency/USD?${instance}`);
  t.equal(balance.status, 200, 'the proxy reaches the new process');
  t.equal(balance.body.balance, 1500, 'with the data the old one had');
  t.equal((await rig.operator('GET', `/deployments/${deployment.deployment_id}`)).body.status, 'ACTIVE');
});

t.test('a core that stops answering is killed after three failed health checks and restarted', async (t) => {
  const before = rig.cloud.deployments.instance(deployment.instance_id)?.core.pid;
  process.kill(before!, 'SIGSTOP'); // alive, listening, answering nothing
  const started = Date.now();
  const hung = await rig.operator('GET', `/proxy/ledgers?${instance}`);
  t.equal(hung.status, 502, 'a request to the hung core is answered once the core is killed, not left hanging');
  t.equal(hung.body.error_detail.code, 'PROXY_UPSTREAM_FAILED');
  await waitUntil(async () => {
    const core = rig.cloud.deployments.instance(deployment.instance_id)?.core;
    return core?.state === 'running' && core.pid !== before;
  }, 60_000, 'the hung core to be replaced');
  t.comment(`replaced after ${Date.now() - started} ms`);
  const balance = await rig.operator('GET', `/proxy/balances/indicator/@alice/currency/USD?${instance}`);
  t.equal(balance.body.balance, 1500, 'the new process has the data');
});

t.test('a restarted control plane brings back its deployments, users, clients and tokens', async (t) => {
  const user = await createUser(rig, 'restart@example.com');
  const owned = await createDeployment(rig, 'owned', user.user_id);
  const redirect = 'http://127.0.0.1:9/cb';
  const client = await createClient(rig, ['*'], [redirect]);
  const code = await authorize(rig, client, user, redirect);
  const tokens = (await tokenRequest(rig, client, { grant_type: 'authorization_code', code, redirect_uri: redirect })).body;
  const written = await rig.request('POST', `/proxy/ledgers?instance_id=${owned.instance_id}`, { name: 'before restart' }, { authorization: `Bearer ${tokens.access_token}` });
  t.equal(written.status, 201);
  await rig.stop();
  rig = await startCloudRig({ dataDir: rig.dataDir });
  await rig.cloud.deployments.settled();
  const again = await rig.operator('GET', `/deployments/${owned.deployment_id}`);
  t.equal(again.body.status, 'ACTIVE');
  t.equal(again.body.instance_id, owned.instance_id, 'the same instance_id');
  const read = await rig.request('GET', `/proxy/ledgers/${written.body.ledger_id}?instance_id=${owned.instance_id}`, undefined, { authorization: `Bearer ${tokens.access_token}` });
  t.equal(read.status, 200, 'the access token survived the restart');
  t.equal(read.body.name, 'before restart', 'and the ledger its data');
  const refreshed = await tokenRequest(rig, client, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
  t.equal(refreshed.status, 200, 'so did the client and the refresh token');
  t.equal((await rig.operator('POST', '/users', { email: 'restart@example.com', password: 'whatever password' })).status, 409, 'and the user');
});
