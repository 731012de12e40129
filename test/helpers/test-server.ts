// A real Folio server for integration tests: the same runtime and Koa app as `folio serve`, on an
// ephemeral 127.0.0.1 port, with LMDB in a fresh temp directory. `request` speaks JSON and returns the
// raw text too, so tests can check exact digits of big amounts.

import { createHttpServer } from '../../app/http-server.js';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { LedgerRuntime, type RuntimeOptions } from '../../app/ledger-runtime.js';
import { ChangeFeed } from '../../app/change-feed.js';
import { nodeInspector } from '../../app/node-inspector.js';
import { snapshotAdmin } from '../../app/snapshot-admin.js';
import { EngineHost } from '../../app/engine-host.js';
import { HttpWorkers } from '../../app/http-workers.js';
import { DEFAULT_CONNECTION_LIMITS } from '../../http/server-limits.js';
import type { SnapshotInfo } from '../../app/snapshot-service.js';
import { createApp, type AppOptions } from '../../http/app.js';
import { Metrics } from '../../http/metrics.js';
import { parseJsonExact } from '../../http/lossless-json.js';

export interface TestServer {
  url: string;
  dataDir: string;
  runtime: LedgerRuntime;
  request(method: string, route: string, body?: unknown, headers?: Record<string, string>): Promise<TestResponse>;
  /** Stops the server and closes the stores; the data directory stays for restarts. */
  stop(): Promise<void>;
}

export interface TestResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** The body parsed losslessly: integers beyond 2^53 come back as bigint. */
  body: any;
}

export function tempDataDir(label = 'folio'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `${label}-`));
}

/**
 * App options a test may set beside the runtime's: the tokenization key, a backup port, the master key
 * (authentication on), and the operator snapshot routes (/admin/snapshots) on the server's own data dir.
 */
export type TestAppOptions = Partial<Pick<AppOptions, 'tokenizationKey' | 'backup' | 'secretKey'>> & {
  snapshotRoutes?: boolean;
  /**
   * HTTP worker threads, as `folio serve` runs them (app/http-workers.ts); 0 serves on the test's own
   * thread. Default: TEST_WORKERS_DEFAULT, so the whole suite can be run in either mode.
   */
  workers?: number;
};

/**
 * The HTTP workers a test server runs unless the test says: one, as `folio serve` runs by default on
 * this machine; FOLIO_TEST_WORKERS=0 runs the suite with HTTP on the test's own thread.
 */
export const TEST_WORKERS_DEFAULT = Number(process.env.FOLIO_TEST_WORKERS ?? 1);

export async function startTestServer(options: Partial<RuntimeOptions> = {}, appOptions: TestAppOptions = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? tempDataDir();
  const runtime = await LedgerRuntime.open({ ...options, dataDir });
  const logger = pino({ level: process.env.FOLIO_LOG_LEVEL ?? 'warn' });
  const metrics = new Metrics({
    queuedTransactions: () => runtime.engine.view.queuedCount(),
    lookupBacklog: () => runtime.store.backlog,
    unflushedEvents: () => runtime.log.unflushedEvents,
  });
  runtime.onCommit((stats) => metrics.observeWalCommit(stats.events, stats.milliseconds));
  const { snapshotRoutes, workers = TEST_WORKERS_DEFAULT, ...passed } = appOptions;
  const snapshots = snapshotRoutes ? snapshotAdmin(runtime, dataDir) : undefined;
  const feed = new ChangeFeed(runtime.log);
  const inspector = nodeInspector(() => ({ runtime, status: () => ({ role: 'single', term: 0, applied_seq: runtime.visibleSeq() }) }));
  if (workers > 0) {
    const engine = new EngineHost({ runtime, logger, snapshots, feed, inspector, backup: passed.backup });
    const pool = await HttpWorkers.start({
      count: workers, host: '127.0.0.1', port: 0, engine,
      onFailure: (error) => logger.error({ err: error }, 'an HTTP worker failed'),
      settings: {
        version: 'test', logLevel: process.env.FOLIO_LOG_LEVEL ?? 'warn', secretKey: passed.secretKey ?? '',
        tokenizationKey: passed.tokenizationKey ? new Uint8Array(passed.tokenizationKey) : undefined,
        hookTargets: options.hookTargets ?? { allowPrivateNetworks: false },
        index: runtime.query !== undefined, history: runtime.historyShare, snapshots: snapshots !== undefined, cutover: false, backupDir: passed.backup?.dir,
        feed: true, inspector: true, replication: false, limits: DEFAULT_CONNECTION_LIMITS,
      },
    });
    const url = `http://127.0.0.1:${pool.address.port}`;
    return {
      url,
      dataDir,
      runtime,
      request: (method, route, body, headers) => sendRequest(url, method, route, body, headers),
      async stop() {
        await pool.close();
        engine.close();
        await runtime.close();
      },
    };
  }
  const app = createApp({ core: runtime, logger, metrics, version: 'test', snapshots, feed, inspector, ...passed });
  const server = createHttpServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    dataDir,
    runtime,
    request: (method, route, body, headers) => sendRequest(url, method, route, body, headers),
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await runtime.close();
    },
  };
}

/** Sends one request. A string body is sent as is (for malformed-JSON tests); anything else as JSON. */
export async function sendRequest(
  baseUrl: string,
  method: string,
  route: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<TestResponse> {
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : jsonWithBigInts(body);
  const response = await fetch(baseUrl + route, {
    method,
    headers: { ...(payload === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: payload,
  });
  const text = await response.text();
  let parsed: unknown = undefined;
  if (text !== '') {
    try {
      parsed = parseJsonExact(text);
    } catch {
      parsed = text;
    }
  }
  return { status: response.status, headers: Object.fromEntries(response.headers.entries()), text, body: parsed };
}

/** JSON text in which bigints are written as bare digits. */
export function jsonWithBigInts(value: unknown): string {
  const marker = '__bigint__';
  return JSON.stringify(value, (_key, item) => (typeof item === 'bigint' ? `${marker}${item}${marker}` : item))
    .replace(new RegExp(`"${marker}(-?\\d+)${marker}"`, 'g'), '$1');
}

/** A snapshot written now, or the test fails with the refusal. */
export async function snapshotNow(server: Pick<TestServer, 'runtime'>): Promise<SnapshotInfo> {
  const taken = await server.runtime.snapshotNow();
  if (!taken.ok) throw new Error(`snapshot refused: ${taken.rejection.message}`);
  return taken.value;
}
