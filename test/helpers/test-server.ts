// A real Folio server for integration tests: the same runtime and Koa app as `folio serve`, on an
// ephemeral 127.0.0.1 port, with LMDB in a fresh temp directory. `request` speaks JSON and returns the
// raw text too, so tests can check exact digits of big amounts.

import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { LedgerRuntime, type RuntimeOptions } from '../../runtime/ledger-runtime.js';
import { nodeInspector } from '../../server/node-inspector.js';
import type { HttpWorkers, RestartBudget } from '../../workers/http-workers.js';
import { startLedgerHttp, type LedgerHttpOptions } from '../../server/ledger-http.js';
import { BODY_BYTES_IN_FLIGHT_MAX_DEFAULT } from '../../http/server/body-bytes-in-flight.js';
import { DEFAULT_CONNECTION_LIMITS } from '../../http/server/server-limits.js';
import type { SnapshotInfo } from '../../runtime/snapshot-service.js';
import { parseJsonExact } from '../../http/schemas/lossless-json.js';

export interface TestServer {
  url: string;
  dataDir: string;
  runtime: LedgerRuntime;
  request(method: string, route: string, body?: unknown, headers?: Record<string, string>): Promise<TestResponse>;
  /** The HTTP worker threads, when the server runs on them. */
  workers?: HttpWorkers;
  /** Why the workers were given up on (they failed past their restart budget), if they were. */
  workersFailed(): Error | undefined;
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
export type TestAppOptions = Partial<Pick<LedgerHttpOptions, 'tokenizationKey' | 'backup' | 'secretKey'>> & {
  snapshotRoutes?: boolean;
  /**
   * HTTP worker threads, as `folio serve` runs them (workers/http-workers.ts); 0 serves on the test's own
   * thread. Default: TEST_WORKERS_DEFAULT, so the whole suite can be run in either mode.
   */
  workers?: number;
  /** The process's cap on request body bytes in flight (server.body_bytes_in_flight_max). */
  bodyBytesInFlightMax?: number;
  /** How many failed workers are replaced (workers/http-workers.ts WORKER_RESTART_BUDGET unless given). */
  restartBudget?: RestartBudget;
};

/**
 * The HTTP workers a test server runs unless the test says: one, as `folio serve` runs by default on
 * this machine; FOLIO_TEST_WORKERS=0 runs the suite with HTTP on the test's own thread.
 */
export const TEST_WORKERS_DEFAULT = Number(process.env.FOLIO_TEST_WORKERS ?? 1);

export async function startTestServer(options: Partial<RuntimeOptions> = {}, appOptions: TestAppOptions = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? tempDataDir();
  const runtime = await LedgerRuntime.open({ ...options, dataDir });
  const logLevel = process.env.FOLIO_LOG_LEVEL ?? 'warn';
  const { snapshotRoutes, workers = TEST_WORKERS_DEFAULT, bodyBytesInFlightMax = BODY_BYTES_IN_FLIGHT_MAX_DEFAULT, restartBudget, ...passed } = appOptions;
  let workersFailed: Error | undefined;
  const logger = pino({ level: logLevel });
  const inspector = nodeInspector(() => ({ runtime, status: () => ({ role: 'single', term: 0, applied_seq: runtime.visibleSeq() }) }));
  // Assembled as `folio serve` assembles it (server/ledger-http.ts), on an ephemeral loopback port.
  const http = await startLedgerHttp({
    host: '127.0.0.1', port: 0, workers, limits: DEFAULT_CONNECTION_LIMITS, bodyBytesInFlightMax,
    version: 'test', logger, logLevel, secretKey: passed.secretKey ?? '', tokenizationKey: passed.tokenizationKey,
    hookTargets: options.hookTargets ?? { allowPrivateNetworks: false }, backup: passed.backup, dataDir,
    snapshots: snapshotRoutes === true, index: runtime.query !== undefined, replication: false, restartBudget,
    onWorkersFailed: (error) => {
      workersFailed = error;
      logger.error({ err: error }, 'HTTP workers keep failing');
    },
  }, { runtime, inspector });
  const url = `http://127.0.0.1:${http.address.port}`;
  return {
    url,
    dataDir,
    runtime,
    workers: http.workers,
    workersFailed: () => workersFailed,
    request: (method, route, body, headers) => sendRequest(url, method, route, body, headers),
    async stop() {
      await http.close();
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
