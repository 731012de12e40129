// What authentication and hooks cost on the write path. Run after `npm run build`:
//   node dist/bench/access-bench.js [--seconds N] [--rounds N] [--connections N]
// Starts the built server as child processes (one data directory each) and drives synchronous transfers
// (POST /transactions, skip_queue) at them with autocannon from this process:
//   off      no secret key: authentication off
//   api-key  secret key set, requests carry an API key with transactions:write
//   master   secret key set, requests carry the master key
//   hook     as master, plus an active POST_TRANSACTION hook whose receiver answers after 1 s
//   off-2    the same as off: the difference between the two is the noise floor of this run
//   same-mk  the api-key server driven with the master key: API key against master key in one process,
//            free of the differences between processes that the other comparisons carry
// First, in process: the CPU time of authentication and the route's access check alone, per request.
// Configurations are measured in interleaved rounds (so drift in the machine's load hits all of them)
// and each is reported as the median of its rounds. Two figures per configuration: throughput, and the
// server's CPU time per request (from /proc, all threads). On a shared, busy machine throughput swings
// with whatever else runs; CPU per request counts the work Folio itself does, so the cost percentages
// are given from both. Targets: api-key within 5% of off; hook within 10% of master (the same server
// but for the hook).

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { LedgerEngine } from '../engine/ledger-engine.js';
import { MemoryTransactionStore } from '../lookups/memory-transaction-store.js';
import { apiKeyText, newApiKeySecret } from '../http/access/api-key-secret.js';
import { ApiKeyUsage } from '../http/access/api-key-usage.js';
import { authenticate, authorize, type Principal } from '../http/access/auth.js';
import { routeAccess } from '../http/access/route-scopes.js';
import { MemoryLog } from '../wal/memory-log.js';
import { NODE_FLAGS } from '../threads/node-flags.js';

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../bin/folio.js');
const MASTER_KEY = 'bench-master-key-5c1d0b7e-0123456789abcdef';
const RECEIVER_DELAY_MS = 1_000;

interface Settings {
  seconds: number;
  rounds: number;
  connections: number;
}

interface BenchServer {
  name: string;
  url: string;
  dataDir: string;
  child: ChildProcess;
  headers: Record<string, string>;
}

function settingsFrom(argv: string[]): Settings {
  const value = (name: string, fallback: number): number => {
    const index = argv.indexOf(name);
    const parsed = index === -1 ? fallback : Number(argv[index + 1]);
    if (!Number.isFinite(parsed) || parsed <= 0) throw new Error(`${name} needs a positive number`);
    return parsed;
  };
  return { seconds: value('--seconds', 8), rounds: value('--rounds', 3), connections: value('--connections', 32) };
}

async function startServer(name: string, secretKey: string): Promise<BenchServer> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `folio-bench-${name}-`));
  const child = spawn(process.execPath, [...NODE_FLAGS, CLI, 'serve'], {
    env: { ...process.env, FOLIO_PORT: '0', FOLIO_HOST: '127.0.0.1', FOLIO_DATA_DIR: dataDir, FOLIO_SECRET_KEY: secretKey, FOLIO_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /listening on (http:\/\/[0-9.]+:\d+)/.exec(stdout);
      if (match) resolve(match[1] as string);
    });
    child.once('exit', (code) => reject(new Error(`${name} server exited with ${code}`)));
  });
  return { name, url, dataDir, child, headers: secretKey === '' ? {} : { 'X-svc-key': secretKey } };
}

async function call(server: BenchServer, method: string, route: string, body: unknown, key = MASTER_KEY): Promise<any> {
  const response = await fetch(server.url + route, {
    method,
    headers: { 'content-type': 'application/json', 'X-svc-key': key },
    body: JSON.stringify(body),
  });
  const parsed = await response.json();
  if (response.status >= 300) throw new Error(`${method} ${route}: ${response.status} ${JSON.stringify(parsed)}`);
  return parsed;
}

function transferBody(): string {
  return JSON.stringify({
    description: 'test', precise_amount: 1, currency: 'USD', source: '@bench-source', destination: '@bench-destination',
    allow_overdraft: true, skip_queue: true,
  });
}

/** A hook receiver that takes a second to answer: deliveries pile up behind it. */
async function slowReceiver(): Promise<{ url: string; received: () => number; close: () => Promise<void> }> {
  let received = 0;
  const timers = new Set<NodeJS.Timeout>();
  const server = http.createServer((request, response) => {
    request.resume();
    received += 1;
    const timer = setTimeout(() => {
      timers.delete(timer);
      response.end('ok');
    }, RECEIVER_DELAY_MS);
    timers.add(timer);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received: () => received,
    async close() {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const CLOCK_TICKS_PER_SECOND = clockTicks();

function clockTicks(): number {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
}

/** User plus system CPU seconds of a process and all its threads, or NaN where /proc is missing. */
function cpuSeconds(pid: number | undefined): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}

async function measure(server: BenchServer, settings: Settings): Promise<{ rps: number; cpuMicroseconds: number; errors: number }> {
  const cpuBefore = cpuSeconds(server.child.pid);
  const result = await autocannon({
    url: `${server.url}/transactions`,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...server.headers },
    body: transferBody(),
    connections: settings.connections,
    duration: settings.seconds,
  });
  const cpu = cpuSeconds(server.child.pid) - cpuBefore;
  return {
    rps: result.requests.average,
    cpuMicroseconds: (cpu / Math.max(1, result.requests.total)) * 1e6,
    errors: result.errors + result.timeouts + result.non2xx,
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** The change from `base` to `other` as a signed percentage of `base`. */
function change(base: number, other: number): string {
  const percent = ((other - base) / base) * 100;
  return `${percent >= 0 ? '+' : ''}${percent.toFixed(1)}%`;
}

async function stop(server: BenchServer): Promise<void> {
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGTERM');
  await exited;
  fs.rmSync(server.dataDir, { recursive: true, force: true });
}

/** Microseconds per request spent in `authenticate` and the route guard's check, by key kind. */
function authMicroseconds(): { apiKey: number; master: number } {
  const engine = new LedgerEngine({
    clock: { now: () => Date.now() }, ids: { next: (prefix) => `${prefix}_bench` }, log: new MemoryLog(), transactions: new MemoryTransactionStore(),
  });
  const { secret, secretHash } = newApiKeySecret();
  const created = engine.run({ op: 'api_key.create', fields: {
    name: 'bench', owner_id: 'bench', scopes: ['transactions:write'], expires_at: Date.now() + 3_600_000, secret_hash: secretHash, created_by: '',
  } });
  if (!created.ok) throw new Error('cannot create a key');
  const usage = new ApiKeyUsage(engine, 3_600_000);
  const middleware = authenticate({ secretKey: MASTER_KEY, view: engine.view, clock: { now: () => Date.now() }, usage });
  const access = routeAccess('POST', '/transactions');
  const next = (): Promise<void> => Promise.resolve();
  const run = (key: string): number => {
    const requests = 200_000;
    let best = Number.POSITIVE_INFINITY;
    for (let round = 0; round < 5; round += 1) {
      const started = process.hrtime.bigint();
      for (let index = 0; index < requests; index += 1) {
        const ctx = { method: 'POST', path: '/transactions', request: { headers: { 'x-svc-key': key } }, state: {} as { principal?: Principal } };
        void middleware(ctx as never, next);
        authorize(ctx.state.principal, access, {});
      }
      best = Math.min(best, Number(process.hrtime.bigint() - started) / requests / 1000);
    }
    return best;
  };
  return { apiKey: run(apiKeyText(created.value.api_key_id, secret)), master: run(MASTER_KEY) };
}

async function main(): Promise<void> {
  const settings = settingsFrom(process.argv.slice(2));
  const auth = authMicroseconds();
  process.stdout.write(`in process: authentication + access check ${auth.apiKey.toFixed(2)} us per request with an API key, `
    + `${auth.master.toFixed(2)} us with the master key (best of 5 runs)\n\n`);
  if (!fs.existsSync(CLI)) throw new Error(`${CLI} not found: run npm run build first`);
  const receiver = await slowReceiver();
  const servers = [
    await startServer('off', ''),
    await startServer('api-key', MASTER_KEY),
    await startServer('master', MASTER_KEY),
    await startServer('hook', MASTER_KEY),
    await startServer('off-2', ''),
  ];
  try {
    const [, apiKeyServer, , hookServer] = servers as [BenchServer, BenchServer, BenchServer, BenchServer, BenchServer];
    const created = await call(apiKeyServer, 'POST', '/api-keys', {
      name: 'bench', owner: 'bench', scopes: ['transactions:write'], expires_at: '2099-01-01T00:00:00Z',
    });
    apiKeyServer.headers = { 'X-svc-key': created.key as string };
    const measured = [...servers, { ...apiKeyServer, name: 'same-mk', headers: { 'X-svc-key': MASTER_KEY } }];
    await call(hookServer, 'POST', '/hooks', {
      name: 'slow', url: receiver.url, type: 'POST_TRANSACTION', active: true, timeout: 5, retry_count: 3,
    });
    const warm = { ...settings, seconds: 2 };
    for (const server of servers) await measure(server, warm);

    const rates = new Map<string, number[]>(measured.map((server) => [server.name, []]));
    const cpu = new Map<string, number[]>(measured.map((server) => [server.name, []]));
    for (let round = 1; round <= settings.rounds; round += 1) {
      // Rotate the order each round, so no configuration always runs right after another.
      const order = measured.map((_, index) => measured[(index + round) % measured.length] as BenchServer);
      for (const server of order) {
        const { rps, cpuMicroseconds, errors } = await measure(server, settings);
        rates.get(server.name)?.push(rps);
        cpu.get(server.name)?.push(cpuMicroseconds);
        process.stdout.write(`round ${round} ${server.name.padEnd(8)} ${rps.toFixed(0).padStart(7)} req/s ${cpuMicroseconds.toFixed(0).padStart(5)} us CPU/req`
          + `${errors > 0 ? `  (${errors} errors)` : ''}\n`);
      }
    }
    const rps = (name: string): number => median(rates.get(name) ?? []);
    const cpuPerRequest = (name: string): number => median(cpu.get(name) ?? []);
    process.stdout.write(`\nmedians over ${settings.rounds} rounds of ${settings.seconds} s, ${settings.connections} connections\n`);
    process.stdout.write('  config      req/s  us CPU/req\n');
    for (const { name } of measured) {
      process.stdout.write(`  ${name.padEnd(8)} ${rps(name).toFixed(0).padStart(7)} ${cpuPerRequest(name).toFixed(1).padStart(11)}\n`);
    }
    const report = (label: string, base: string, other: string, target: string): void => {
      process.stdout.write(`${label}: throughput ${change(rps(base), rps(other))}, CPU per request ${change(cpuPerRequest(base), cpuPerRequest(other))}`
        + ` (target: cost ${target})\n`);
    };
    report('auth cost (api-key vs off)', 'off', 'api-key', '<= 5%');
    report('auth cost (master vs off) ', 'off', 'master', 'none');
    report('hook cost (hook vs master)', 'master', 'hook', '<= 10%');
    report('noise floor (off-2 vs off) ', 'off', 'off-2', 'none: identical servers');
    report('api-key vs master, 1 server', 'same-mk', 'api-key', '<= 5%');
    process.stdout.write(`auth in process vs CPU per request of off: ${((auth.apiKey / cpuPerRequest('off')) * 100).toFixed(1)}% (API key), `
      + `${((auth.master / cpuPerRequest('off')) * 100).toFixed(1)}% (master key)\n`);
    process.stdout.write(`the slow receiver got ${receiver.received()} deliveries\n`);
    // Last line: the figures as JSON, for `npm run bench -- access`.
    const configs = Object.fromEntries(measured.map(({ name }) => [name, { rps: rps(name), cpu_us_per_request: cpuPerRequest(name) }]));
    process.stdout.write(JSON.stringify({
      settings, configs, auth_in_process_us: auth, deliveries: receiver.received(),
    }) + '\n');
  } finally {
    for (const server of servers) await stop(server);
    await receiver.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`access bench failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
