// A flood of small compressed bodies against the built server (`folio serve` as a child process), in both
// thread modes: 500 POSTs, 100 at a time, of a 10 KB gzip body that inflates to 10 MiB of `[{},{},...]`, sent
// with a key that may only read ledgers (authentication on). To a route that does not exist they are
// answered 404, and to a write route the key may not use 403, without a byte of them being inflated or
// parsed (http/middleware/route-front.ts): the server stays up, /health (timed from a thread of its own, so the
// flood's client does not count) answers every probe within 100 ms meanwhile (or, on a machine so busy
// that the same requests sent without bodies hold /health longer than half of that, within twice what
// they did), and the server's memory stays bounded. The old code read, inflated and parsed every one of them first (about 1.9 s of CPU and
// a few hundred MB each): /health stalled for seconds and the worker, then the process, ran out of memory.
// Then the same bodies sent with the master key to a route that takes a body: read, but only as many at
// once as the process's body bytes in flight allow (server.body_bytes_in_flight_max, here 20 MiB); the
// rest are answered 503 GEN_BODY_BYTES_IN_FLIGHT_EXCEEDED with Retry-After, those read whole are refused
// 413 (3.5 million objects are more than a body may hold), and once the flood is over a bulk of transfers
// is read and carried out: every byte was given back.

import fs from 'node:fs';
import net from 'node:net';
import { Worker } from 'node:worker_threads';
import { gzipSync } from 'node:zlib';
import t from 'tap';
import { startChildServer, type ChildServer } from './helpers/child-server.js';
import { splitResponses } from './helpers/raw-http.js';
import { tempDataDir } from './helpers/test-server.js';

const MASTER = 'flood-master-key-0123456789abcdefghijklmnop';
const FLOOD_REQUESTS = 500;
/**
 * Requests in flight at once. 500 new connections at once cost a one-thread server 100-250 ms of CPU on
 * this two-core machine whatever they carry, so /health could not be within 100 ms of them even if their
 * bodies cost nothing; 100 at a time is what the machine does quickly. The old code could not take even
 * that: each body read cost it about 1.9 s of CPU and a few hundred MB.
 */
const FLOOD_CONCURRENCY = 100;
const HEALTH_MS_MAX = 100;
/**
 * The slowest single /health round trip allowed, or three times the slowest without bodies if that is
 * more. One round trip on a two-core machine running the rest of the suite can wait a few hundred ms
 * whatever the server does, and a flood lasts about eight probes, so the flood is judged by the median
 * round trip (HEALTH_MS_MAX) and this only catches a stall: the old code held /health for seconds.
 */
const HEALTH_STALL_MS_MAX = 1_000;
/** Resident memory the server may reach during the floods (it starts near 200 MB). */
const RSS_BYTES_MAX = 1024 * 1024 * 1024;
const BODY_BYTES_IN_FLIGHT_MAX = 20 * 1024 * 1024;
/** No flood request may take longer than this (the old code never finished them in time). */
const REQUEST_MS_MAX = 60_000;

/** 10 MiB of empty objects in an array, gzipped to about 10 KB. */
const INFLATED_BYTES = 10 * 1024 * 1024;
const floodBody = gzipSync(Buffer.from(`[${'{},'.repeat(INFLATED_BYTES / 3 - 1)}{}]`), { level: 9 });

/** Probes GET /health in a thread of its own until stopped; each probe's round trip and status. */
function healthProbe(url: string): { stop(): Promise<Array<[number, number]>> } {
  const worker = new Worker(`
    const { parentPort, workerData } = require('node:worker_threads');
    let stopping = false;
    parentPort.on('message', () => { stopping = true; });
    (async () => {
      const probes = [];
      while (!stopping) {
        const started = performance.now();
        let status = 0;
        try {
          const response = await fetch(workerData.url + '/health', { signal: AbortSignal.timeout(10000) });
          await response.arrayBuffer();
          status = response.status;
        } catch {}
        probes.push([performance.now() - started, status]);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      parentPort.postMessage(probes);
    })();
  `, { eval: true, workerData: { url } });
  return {
    stop: () => new Promise((resolve) => {
      worker.once('message', (probes: Array<[number, number]>) => {
        void worker.terminate();
        resolve(probes);
      });
      worker.postMessage('stop');
    }),
  };
}

/** What `work` gives, and the /health probes made while it ran. */
async function probed<T>(url: string, work: () => Promise<T>): Promise<{ result: T; probes: Array<[number, number]> }> {
  const probe = healthProbe(url);
  try {
    return { result: await work(), probes: await probe.stop() };
  } catch (error) {
    await probe.stop();
    throw error;
  }
}

/** The server's resident memory, sampled until stopped; the most seen. */
function rssSampler(pid: number): { stop(): number } {
  let most = 0;
  const sample = (): void => {
    const match = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    if (match) most = Math.max(most, Number(match[1]) * 1024);
  };
  const timer = setInterval(() => {
    try {
      sample();
    } catch {
      // the process is gone: what it reached is what was seen
    }
  }, 50);
  return {
    stop() {
      clearInterval(timer);
      return most;
    },
  };
}

/** One request on a connection of its own: the answer's status (-503: a 503 without Retry-After; 0: none). */
function sendOnce(port: number, request: Buffer): Promise<number> {
  return new Promise((resolve) => {
    let text = '';
    const finish = (status: number): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(status);
    };
    const timer = setTimeout(() => finish(0), REQUEST_MS_MAX);
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      text += chunk;
      const [answer] = splitResponses(text);
      if (!answer) return;
      finish(answer.status === 503 && answer.headers['retry-after'] === undefined ? -503 : answer.status);
    });
    socket.on('error', () => finish(0));
    socket.on('close', () => finish(0));
  });
}

/**
 * `count` POSTs of the flood body, FLOOD_CONCURRENCY at a time, each on a connection of its own, from raw
 * sockets (a light client, so the flood's own CPU does not crowd out the server on a small machine); the
 * count of each answer's status.
 */
async function flood(url: string, path: string, key: string, count = FLOOD_REQUESTS, withBody = true): Promise<Map<number, number>> {
  const { port } = new URL(url);
  const body = withBody ? floodBody : Buffer.alloc(0);
  const head = [
    `POST ${path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, 'Content-Type: application/json', 'Content-Encoding: gzip', `X-Svc-Key: ${key}`,
    `Content-Length: ${body.length}`,
  ].join('\r\n');
  const request = Buffer.concat([Buffer.from(`${head}\r\n\r\n`), body]);
  const counts = new Map<number, number>();
  let sent = 0;
  await Promise.all(Array.from({ length: Math.min(count, FLOOD_CONCURRENCY) }, async () => {
    while (sent < count) {
      sent += 1;
      const status = await sendOnce(Number(port), request);
      counts.set(status, (counts.get(status) ?? 0) + 1);
    }
  }));
  return counts;
}

const describe = (counts: Map<number, number>): string => JSON.stringify(Object.fromEntries([...counts].sort(([a], [b]) => a - b)));

async function json(url: string, method: string, path: string, key: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(url + path, {
    method, headers: { 'content-type': 'application/json', 'x-svc-key': key }, body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json().catch(() => undefined) };
}

for (const workers of ['1', '0']) {
  t.test(`a flood of gzip bodies inflating to 10 MiB (FOLIO_WORKERS=${workers})`, async (t) => {
    t.ok(floodBody.length < 16 * 1024, `the body is small on the wire (${floodBody.length} bytes)`);
    const dataDir = tempDataDir('body-flood');
    const server: ChildServer = await startChildServer(dataDir, {
      FOLIO_WORKERS: workers, FOLIO_SECRET_KEY: MASTER, FOLIO_BODY_BYTES_IN_FLIGHT_MAX: String(BODY_BYTES_IN_FLIGHT_MAX), FOLIO_LOG_LEVEL: 'error',
    });
    let exitCode: number | string | undefined;
    void server.exited.then((code) => {
      exitCode = code;
    });
    t.teardown(async () => {
      if (exitCode === undefined) await server.kill();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });
    const key = await json(server.url, 'POST', '/api-keys', MASTER, {
      name: 'reader', owner: 'flood', scopes: ['ledgers:read'], expires_at: new Date(Date.now() + 3_600_000).toISOString(),
    });
    t.equal(key.status, 201, 'a key that may only read ledgers');
    const readKey = key.body.key as string;

    // The server's first requests of a kind cost more (its code is compiled as they come): warm it up.
    await flood(server.url, '/nonexistent', readKey, 50);
    await flood(server.url, '/ledgers', readKey, 50);
    await flood(server.url, '/nonexistent', readKey, 50, false);
    // What the same requests cost /health with no body at all, before and after the floods: the machine's
    // noise (on a busy two-core machine a thread waits its turn for tens of ms, or hundreds) and the
    // requests themselves. The median under the flood must be within 100 ms, or twice the bodiless one if
    // that is more; the slowest within HEALTH_STALL_MS_MAX, or three times the bodiless slowest. (A ratio
    // of two maxima alone failed a clean-clone suite run by 3 ms: 204.9 against 2 x 100.8.)
    const sorted = (probes: Array<[number, number]>): number[] => probes.map(([ms]) => ms).sort((a, b) => a - b);
    const median = (times: number[]): number => times[times.length >> 1] ?? 0;
    const bodiless = async (): Promise<number[]> => {
      const { probes } = await probed(server.url, async () => {
        await flood(server.url, '/nonexistent', readKey, FLOOD_REQUESTS, false);
        await flood(server.url, '/ledgers', readKey, FLOOD_REQUESTS, false);
      });
      return sorted(probes);
    };
    const bodilessBefore = await bodiless();
    const memory = rssSampler(server.process.pid as number);
    const { result: [unknown, forbidden], probes } = await probed(server.url, async () => [
      await flood(server.url, '/nonexistent', readKey),
      await flood(server.url, '/ledgers', readKey),
    ]);
    const rss = memory.stop();
    const bodilessAfter = await bodiless();
    const baselineMedian = Math.max(median(bodilessBefore), median(bodilessAfter));
    const baselineSlowest = Math.max(bodilessBefore.at(-1) ?? 0, bodilessAfter.at(-1) ?? 0);
    const medianBound = Math.max(HEALTH_MS_MAX, 2 * baselineMedian);
    const stallBound = Math.max(HEALTH_STALL_MS_MAX, 3 * baselineSlowest);

    t.same(describe(unknown), describe(new Map([[404, FLOOD_REQUESTS]])), 'every POST to a route that does not exist: 404');
    t.same(describe(forbidden), describe(new Map([[403, FLOOD_REQUESTS]])), 'every POST to a write route the key may not use: 403');
    t.equal(exitCode, undefined, 'the server is still running');
    const times = sorted(probes);
    const slowest = times.at(-1) ?? 0;
    t.ok(probes.length >= 3, `/health was probed throughout (${probes.length} probes)`);
    t.ok(probes.every(([, status]) => status === 200), '/health answered 200 every time');
    t.ok(
      median(times) < medianBound,
      `/health answers within ${medianBound.toFixed(0)} ms: median ${median(times).toFixed(1)} ms over ${times.length} probes (the same requests without bodies: median ${baselineMedian.toFixed(1)} ms)`,
    );
    t.ok(slowest < stallBound, `and never stalled: slowest ${slowest.toFixed(1)} ms, within ${stallBound.toFixed(0)} ms (without bodies: ${baselineSlowest.toFixed(1)} ms)`);
    t.ok(rss < RSS_BYTES_MAX, `memory stays bounded: ${(rss / 1048576).toFixed(0)} MiB resident at most`);

    // The master key may write: the bodies are read, as many at once as the cap allows.
    const memoryAuthorized = rssSampler(server.process.pid as number);
    const authorized = await flood(server.url, '/transactions/bulk', MASTER);
    const rssAuthorized = memoryAuthorized.stop();
    t.ok([...authorized.keys()].every((status) => status === 503 || status === 413), `the master key's flood: 503 past the cap, 413 for a body read whole (${describe(authorized)})`);
    t.ok((authorized.get(503) ?? 0) > 0, 'the cap on body bytes in flight refused some, with Retry-After');
    t.equal(exitCode, undefined, 'the server is still running');
    t.ok(rssAuthorized < RSS_BYTES_MAX, `memory stays bounded: ${(rssAuthorized / 1048576).toFixed(0)} MiB resident at most`);

    const transfers = Array.from({ length: 2_000 }, (_, index) => ({
      precise_amount: 1, currency: 'USD', source: '@world', destination: '@flood', reference: `after-flood-${workers}-${index}`, description: 'after the flood', allow_overdraft: true,
    }));
    const after = await json(server.url, 'POST', '/transactions/bulk', MASTER, { transactions: transfers, atomic: true, skip_queue: true });
    t.equal(after.status, 201, `a bulk sent after the flood is read and carried out (${after.status}: every byte was given back)`);
  });
}
