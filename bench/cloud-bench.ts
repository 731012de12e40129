// Bench `cloud`: the control plane (`folio cloud` in a child process, its cores its own children).
//   - proxy overhead: synchronous transfers through the proxy against the same core directly, rounds
//     interleaved (direct, proxy, direct, proxy, ...) in the same run; targets: proxy req/s >= 80% of
//     direct, p99 added <= 2 ms (paired medians). At full speed (64 connections) the three processes
//     (load generator, control plane, core) compete for the CPUs and latency is mostly queueing, so the
//     latency added is also measured at a fixed FIXED_RATE requests per second that neither saturates;
//   - token endpoint: refresh-token grants per second (each rotates its token, so every request is a
//     real grant with its durable write), from 32 concurrent chains;
//   - cutover write pause: a deployment holding FOLIO_BENCH_BALANCES balances (1,000,000 in a full run)
//     is upgraded (forced) while writers post transfers through the proxy; the pause is the control
//     plane's own measure (write gate closed to opened, with its phases), and the longest write seen by
//     the writers is reported beside it; target <= 1 s.
// The direct address and key of the core are found the way an operator on the machine would: the
// listening socket of the cloud's child process, and the key file in the cloud's data directory.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runLoad, type LoadSummary } from './load.js';
import type { BenchResult, Figure } from './report.js';
import { LISTENING_LINE, makeTempDir, removeTempDir, spawnChild, waitForOutput, type Child } from './resources.js';
import type { BenchSettings } from './settings.js';
import { median, percentileOfSorted, Samples } from './stats.js';
import { NODE_FLAGS } from '../threads/node-flags.js';

export const PROXY_RATIO_TARGET = 0.8;
export const PROXY_P99_ADDED_MS_MAX = 2;
export const CUTOVER_PAUSE_MS_MAX = 1_000;

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../bin/folio.js');
const CLOUD_KEY = 'bench-cloud-key-0123456789abcdef';
const TRANSFER = { source: '@bench-src', destination: '@bench-dst', precise_amount: 1, precision: 100, currency: 'USD', description: 'cloud bench', skip_queue: true };
const FILL_BULK_ITEMS = 10_000;
const TOKEN_CHAINS = 32;
const CUTOVER_WRITERS = 16;
const REDIRECT = 'http://127.0.0.1:9/callback';
const FIXED_RATE = 1_000;
const FIXED_RATE_CONNECTIONS = 8;

interface Cloud {
  child: Child;
  url: string;
  dataDir: string;
}

async function startCloud(): Promise<Cloud> {
  const dataDir = makeTempDir('cloud');
  const child = spawnChild(process.execPath, [...NODE_FLAGS, CLI, 'cloud'], {
    env: {
      ...process.env, FOLIO_CLOUD_PORT: '0', FOLIO_CLOUD_DATA_DIR: dataDir, FOLIO_CLOUD_API_KEY: CLOUD_KEY,
      FOLIO_LOG_LEVEL: process.env.FOLIO_BENCH_SERVER_LOG_LEVEL ?? 'warn',
    },
  });
  const [, url] = await waitForOutput(child, LISTENING_LINE);
  return { child, url: url!, dataDir };
}

function operator(url: string, method: string, route: string, status: number, body?: unknown): Promise<any> {
  return requestWithKey(url, method, route, status, CLOUD_KEY, body);
}

async function requestWithKey(url: string, method: string, route: string, status: number, key: string, body?: unknown): Promise<any> {
  const response = await fetch(url + route, {
    method, headers: { 'x-svc-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== status) throw new Error(`${method} ${route}: expected ${status}, got ${response.status}: ${text.slice(0, 500)}`);
  return text === '' ? undefined : JSON.parse(text);
}

async function activeDeployment(cloud: Cloud, name: string, timeoutMs = 120_000): Promise<any> {
  const created = await operator(cloud.url, 'POST', '/deployments', 201, { name });
  return waitForDeployment(cloud, created.deployment_id, (details) => details.status === 'ACTIVE', timeoutMs);
}

async function waitForDeployment(cloud: Cloud, id: string, done: (details: any) => boolean, timeoutMs: number): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const details = await operator(cloud.url, 'GET', `/deployments/${id}`, 200);
    if (details.status === 'FAILED') throw new Error(`deployment ${id} FAILED: ${details.problem}`);
    if (done(details)) return details;
    if (Date.now() > deadline) throw new Error(`deployment ${id} still ${details.status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The address, master key and pid of the cloud's one core, as an operator on this machine finds them. */
function directCore(cloud: Cloud): { url: string; key: string; pid: number } {
  const ports: number[] = [];
  let pid = 0;
  const tcp = fs.readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1).map((line) => line.trim().split(/\s+/));
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== cloud.child.pid) continue;
    pid = Number(entry);
    for (const fd of fs.readdirSync(`/proc/${entry}/fd`)) {
      const inode = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${entry}/fd/${fd}`))?.[1];
      const row = inode && tcp.find((fields) => fields[9] === inode && fields[3] === '0A');
      if (row) ports.push(parseInt(row[1]!.split(':')[1]!, 16));
    }
  }
  // The master keys (`<secret_id>.key`), not the core's other secrets beside them.
  const keys = fs.readdirSync(path.join(cloud.dataDir, 'secrets')).filter((name) => /^sec_[^.]+\.key$/.test(name));
  if (ports.length !== 1 || keys.length !== 1) throw new Error(`expected one core, found ports ${ports} and keys ${keys.length}`);
  return { url: `http://127.0.0.1:${ports[0]}`, key: fs.readFileSync(path.join(cloud.dataDir, 'secrets', keys[0]!), 'utf8'), pid };
}

async function proxyOverhead(cloud: Cloud, settings: BenchSettings, log: (line: string) => void): Promise<{ figures: Figure[]; rounds: Record<string, LoadSummary[]> }> {
  const deployment = await activeDeployment(cloud, 'proxy-bench');
  const proxyPath = `/proxy/transactions?instance_id=${deployment.instance_id}`;
  await operator(cloud.url, 'POST', proxyPath, 201, {
    description: 'test', source: '@bench-world', destination: '@bench-src', precise_amount: '1000000000000000000', precision: 100, currency: 'USD', allow_overdraft: true, skip_queue: true,
  });
  const direct = directCore(cloud);
  await requestWithKey(direct.url, 'POST', '/transactions', 201, direct.key, TRANSFER);
  const body = JSON.stringify(TRANSFER);
  const load = (which: 'direct' | 'proxy', seconds: number, title: string, fixedRate = false): Promise<LoadSummary> => runLoad({
    title: `${which} ${title}`, url: which === 'direct' ? direct.url : cloud.url, path: which === 'direct' ? '/transactions' : proxyPath, body,
    headers: { 'x-svc-key': which === 'direct' ? direct.key : CLOUD_KEY },
    connections: fixedRate ? FIXED_RATE_CONNECTIONS : settings.connections, overallRate: fixedRate ? FIXED_RATE : undefined, seconds,
    serverPid: which === 'direct' ? direct.pid : cloud.child.pid,
  });
  const warmup = Math.min(5, settings.seconds);
  log(`cloud: proxy warm-up ${warmup} s each`);
  await load('direct', warmup, 'warm-up');
  await load('proxy', warmup, 'warm-up');
  const rounds: Record<'direct' | 'proxy' | 'direct_fixed_rate' | 'proxy_fixed_rate', LoadSummary[]> = { direct: [], proxy: [], direct_fixed_rate: [], proxy_fixed_rate: [] };
  for (let round = 1; round <= settings.rounds; round += 1) {
    for (const which of ['direct', 'proxy'] as const) {
      const summary = await load(which, settings.seconds, `round ${round}`);
      rounds[which].push(summary);
      log(`cloud: round ${round} ${which.padEnd(6)} ${summary.requestsPerSecond.toFixed(0)} req/s, p50 ${summary.latencyP50Ms} ms, p99 ${summary.latencyP99Ms} ms, ${(summary.serverCpuMicrosPerRequest ?? Number.NaN).toFixed(0)} µs CPU/req`);
    }
    for (const which of ['direct', 'proxy'] as const) {
      const summary = await load(which, settings.seconds, `round ${round} at ${FIXED_RATE} req/s`, true);
      rounds[`${which}_fixed_rate`].push(summary);
      log(`cloud: round ${round} ${which.padEnd(6)} at ${FIXED_RATE} req/s: p50 ${summary.latencyP50Ms} ms, p99 ${summary.latencyP99Ms} ms`);
    }
  }
  const paired = (value: (direct: LoadSummary, proxy: LoadSummary) => number, fixed = false): number =>
    median(rounds[fixed ? 'proxy_fixed_rate' : 'proxy'].map((proxyRound, index) => value(rounds[fixed ? 'direct_fixed_rate' : 'direct'][index]!, proxyRound)));
  const figures: Figure[] = [
    { label: 'direct req/s (median)', value: median(rounds.direct.map((run) => run.requestsPerSecond)), unit: 'req/s' },
    { label: 'through the proxy req/s (median)', value: median(rounds.proxy.map((run) => run.requestsPerSecond)), unit: 'req/s' },
    { label: 'proxy / direct, req/s (paired rounds)', value: paired((d, p) => p.requestsPerSecond / d.requestsPerSecond), unit: 'ratio', digits: 2, target: { op: '>=', value: PROXY_RATIO_TARGET } },
    { label: 'direct p99', value: median(rounds.direct.map((run) => run.latencyP99Ms)), unit: 'ms' },
    { label: 'proxy p99', value: median(rounds.proxy.map((run) => run.latencyP99Ms)), unit: 'ms' },
    { label: 'p99 added by the proxy (paired rounds)', value: paired((d, p) => p.latencyP99Ms - d.latencyP99Ms), unit: 'ms', digits: 1, target: { op: '<=', value: PROXY_P99_ADDED_MS_MAX } },
    { label: 'p50 added by the proxy (paired rounds)', value: paired((d, p) => p.latencyP50Ms - d.latencyP50Ms), unit: 'ms', digits: 1 },
    { label: `p99 added by the proxy at ${FIXED_RATE} req/s`, value: paired((d, p) => p.latencyP99Ms - d.latencyP99Ms, true), unit: 'ms', digits: 1, target: { op: '<=', value: PROXY_P99_ADDED_MS_MAX } },
    { label: `p50 added by the proxy at ${FIXED_RATE} req/s`, value: paired((d, p) => p.latencyP50Ms - d.latencyP50Ms, true), unit: 'ms', digits: 1 },
    { label: 'core CPU per direct request', value: median(rounds.direct.map((run) => run.serverCpuMicrosPerRequest ?? Number.NaN)), unit: 'µs', digits: 1 },
    { label: 'control plane CPU per proxied request', value: median(rounds.proxy.map((run) => run.serverCpuMicrosPerRequest ?? Number.NaN)), unit: 'µs', digits: 1 },
  ];
  return { figures, rounds };
}

/** Signs a user in on the authorization page over HTTP and returns an authorization code. */
async function authorizationCode(cloud: Cloud, clientId: string, email: string, password: string): Promise<string> {
  const page = await fetch(`${cloud.url}/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT })}`);
  const html = await page.text();
  const field = (name: string): string => new RegExp(`name="${name}" value="([^"]+)"`).exec(html)?.[1] ?? '';
  const answer = await fetch(`${cloud.url}/oauth/authorize`, {
    method: 'POST', redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: page.headers.get('set-cookie')?.split(';')[0] ?? '' },
    body: new URLSearchParams({ request_id: field('request_id'), csrf_token: field('csrf_token'), email, password, decision: 'approve' }).toString(),
  });
  const code = new URL(answer.headers.get('location') ?? 'http://x/').searchParams.get('code');
  if (!code) throw new Error(`sign-in failed: ${answer.status}`);
  return code;
}

async function tokenEndpoint(cloud: Cloud, settings: BenchSettings, log: (line: string) => void): Promise<Figure[]> {
  const password = 'bench password 1';
  await operator(cloud.url, 'POST', '/users', 201, { email: 'bench@example.com', password });
  const client = await operator(cloud.url, 'POST', '/oauth/clients', 201, { name: 'bench', scopes: ['*'], redirect_uris: [REDIRECT], expires_at: null });
  const authorization = `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`;
  const grant = async (form: Record<string, string>): Promise<any> => {
    const response = await fetch(`${cloud.url}/oauth/token`, {
      method: 'POST', headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString(),
    });
    const body = await response.json();
    if (response.status !== 200) throw new Error(`token endpoint: ${response.status} ${JSON.stringify(body)}`);
    return body;
  };
  const refreshTokens: string[] = [];
  for (let chain = 0; chain < TOKEN_CHAINS; chain += 1) {
    const code = await authorizationCode(cloud, client.client_id, 'bench@example.com', password);
    refreshTokens.push((await grant({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT })).refresh_token);
  }
  log(`cloud: token endpoint, ${TOKEN_CHAINS} refresh chains for ${settings.seconds} s`);
  const latencies = new Samples();
  let count = 0;
  const started = performance.now();
  const until = started + settings.seconds * 1000;
  await Promise.all(refreshTokens.map(async (first) => {
    let token = first;
    while (performance.now() < until) {
      const sent = performance.now();
      token = (await grant({ grant_type: 'refresh_token', refresh_token: token })).refresh_token;
      latencies.push(performance.now() - sent);
      count += 1;
    }
  }));
  const seconds = (performance.now() - started) / 1000;
  const sorted = latencies.sorted();
  return [
    { label: 'token endpoint, refresh grants/s', value: count / seconds, unit: 'req/s' },
    { label: 'token endpoint p99', value: percentileOfSorted(sorted, 99), unit: 'ms', digits: 1 },
  ];
}

/** Transfers to `count` new balances through the proxy, in atomic bulks. */
async function fill(cloud: Cloud, instanceId: string, count: number, log: (line: string) => void): Promise<void> {
  const started = performance.now();
  for (let first = 0; first < count; first += FILL_BULK_ITEMS) {
    const transactions = [];
    for (let index = first; index < Math.min(count, first + FILL_BULK_ITEMS); index += 1) {
      transactions.push({ description: 'test', source: '@fill-world', destination: `@fill-${index}`, precise_amount: 1 + (index % 1000), currency: 'USD', allow_overdraft: true });
    }
    await operator(cloud.url, 'POST', `/proxy/transactions/bulk?instance_id=${instanceId}`, 201, { transactions, atomic: true, skip_queue: true });
    if ((first / FILL_BULK_ITEMS) % 10 === 9) log(`cloud: filled ${first + FILL_BULK_ITEMS} balances (${Math.round((first + FILL_BULK_ITEMS) / ((performance.now() - started) / 1000))}/s)`);
  }
}

async function cutoverPause(cloud: Cloud, settings: BenchSettings, log: (line: string) => void): Promise<{ figures: Figure[]; details: Record<string, unknown> }> {
  const deployment = await activeDeployment(cloud, 'cutover-bench');
  log(`cloud: filling ${settings.balances} balances for the cutover`);
  await fill(cloud, deployment.instance_id, settings.balances, log);
  let instanceId = deployment.instance_id as string;
  let stop = false;
  let acknowledged = 0;
  let retried = 0;
  /** Each acknowledged write: when it was first sent and when it was acknowledged (epoch ms). */
  const spans: Array<[number, number]> = [];
  const writer = async (index: number): Promise<void> => {
    for (let n = 0; !stop; n += 1) {
      const body = JSON.stringify({
        description: 'test', source: '@fill-world', destination: `@fill-${(index * 7919 + n * 104_729) % settings.balances}`, precise_amount: 1, currency: 'USD',
        allow_overdraft: true, skip_queue: true, reference: `cutover-${index}-${n}`,
      });
      const sent = Date.now();
      for (;;) {
        const response = await fetch(`${cloud.url}/proxy/transactions?instance_id=${instanceId}`, {
          method: 'POST', headers: { 'x-svc-key': CLOUD_KEY, 'content-type': 'application/json' }, body,
        });
        await response.arrayBuffer();
        if (response.status === 201 || response.status === 200) break;
        retried += 1;
        if (response.status === 404) instanceId = (await nextInstance()) ?? instanceId;
        else if (response.status !== 503) throw new Error(`write during cutover: ${response.status}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      spans.push([sent, Date.now()]);
      acknowledged += 1;
    }
  };
  let nextInstance: () => Promise<string | undefined> = async () => undefined;
  const writers = Array.from({ length: CUTOVER_WRITERS }, (_, index) => writer(index));
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  log('cloud: forced upgrade under writes');
  const upgradeAt = Date.now();
  const started = await operator(cloud.url, 'POST', `/deployments/${deployment.deployment_id}/upgrade`, 202, { force: true });
  const newId = started.new_deployment.deployment_id as string;
  nextInstance = async () => {
    const details = await operator(cloud.url, 'GET', `/deployments/${newId}`, 200);
    return details.status === 'ACTIVE' ? details.instance_id : undefined;
  };
  const upgraded = await waitForDeployment(cloud, newId, (details) => details.cutover !== null, 60 * 60 * 1000);
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  stop = true;
  await Promise.all(writers);
  const cutover = upgraded.cutover;
  log(`cloud: cutover ${JSON.stringify(cutover)}; ${acknowledged} writes acknowledged, ${retried} retried`);
  const pauseEnd = cutover.paused_at + cutover.write_pause_ms;
  const overlappingSpans = spans.filter(([sent, acked]) => sent <= pauseEnd && acked >= cutover.paused_at);
  const overlapping = overlappingSpans.map(([sent, acked]) => acked - sent);
  const slowest = [...overlappingSpans].sort((a, b) => (b[1] - b[0]) - (a[1] - a[0])).slice(0, 5)
    .map(([sent, acked]) => ({ sent_ms_from_pause: sent - cutover.paused_at, acked_ms_from_pause: acked - cutover.paused_at }));
  log(`cloud: slowest writes overlapping the pause: ${JSON.stringify(slowest)}`);
  const preparing = spans.filter(([sent, acked]) => sent >= upgradeAt && acked < cutover.paused_at).map(([sent, acked]) => acked - sent).sort((a, b) => a - b);
  const before = spans.filter(([, acked]) => acked < upgradeAt).map(([sent, acked]) => acked - sent).sort((a, b) => a - b);
  return {
    figures: [
      { label: `cutover write pause, ${settings.balances} balances`, value: cutover.write_pause_ms, unit: 'ms', target: { op: '<=', value: CUTOVER_PAUSE_MS_MAX } },
      { label: 'longest write that overlapped the pause (writer\'s view)', value: Math.max(0, ...overlapping), unit: 'ms' },
      { label: 'write p99 before the upgrade', value: percentileOfSorted(before, 99), unit: 'ms' },
      { label: 'write p99 while the new core was prepared', value: percentileOfSorted(preparing, 99), unit: 'ms' },
      { label: 'upgrade from request to switch', value: cutover.total_ms, unit: 'ms' },
    ],
    details: { cutover, acknowledged, retried, writes_overlapping_pause: overlapping.length, slowest_overlapping_writes: slowest },
  };
}

export async function cloudBench(settings: BenchSettings, log: (line: string) => void): Promise<BenchResult> {
  const cloud = await startCloud();
  const details: Record<string, unknown> = {};
  const figures: Figure[] = [];
  try {
    const proxy = await proxyOverhead(cloud, settings, log);
    figures.push(...proxy.figures);
    details.proxy_rounds = proxy.rounds;
    figures.push(...(await tokenEndpoint(cloud, settings, log)));
  } finally {
    await cloud.child.stop();
    removeTempDir(cloud.dataDir);
  }
  // A fresh control plane for the cutover, so the proxy bench's deployment does not share the CPUs.
  const second = await startCloud();
  try {
    const cutover = await cutoverPause(second, settings, log);
    figures.push(...cutover.figures);
    Object.assign(details, cutover.details);
  } finally {
    await second.child.stop();
    removeTempDir(second.dataDir);
  }
  return { name: 'cloud', figures, details: { ...details, connections: settings.connections, seconds_per_round: settings.seconds, balances: settings.balances } };
}
