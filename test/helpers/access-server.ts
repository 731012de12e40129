// Test servers for authentication and hooks: the real runtime and Koa app on 127.0.0.1 with a master
// key, an adjustable clock (for expiry) and hook delivery limits, plus a small client that sends a key.

import fs from 'node:fs';
import pino from 'pino';
import { LedgerRuntime } from '../../runtime/ledger-runtime.js';
import type { HookDeliveryLimits } from '../../hooks/hook-dispatcher.js';
import type { FolioApp } from '../../http/app.js';
import { BODY_BYTES_IN_FLIGHT_MAX_DEFAULT } from '../../http/server/body-bytes-in-flight.js';
import { DEFAULT_CONNECTION_LIMITS } from '../../http/server/server-limits.js';
import { startLedgerHttp } from '../../server/ledger-http.js';
import { sendRequest, tempDataDir, type TestResponse } from './test-server.js';

export const MASTER_KEY = 'test-master-key-0123456789abcdefghijklmn';

export interface AccessServer {
  url: string;
  dataDir: string;
  runtime: LedgerRuntime;
  app: FolioApp;
  /** Moves the server's clock (API key expiry, engine times) forward. */
  advanceClock(milliseconds: number): void;
  /** A request with `key` in X-svc-key (no key header when undefined). */
  as(key: string | undefined, method: string, route: string, body?: unknown): Promise<TestResponse>;
  master(method: string, route: string, body?: unknown): Promise<TestResponse>;
  stop(): Promise<void>;
}

export interface AccessServerOptions {
  secretKey?: string;
  dataDir?: string;
  hookDelivery?: Partial<HookDeliveryLimits>;
  apiKeyUseFlushMs?: number;
  /** Hook receivers in tests listen on 127.0.0.1, so private targets are allowed unless a test says not. */
  allowPrivateNetworks?: boolean;
}

export async function startAccessServer(options: AccessServerOptions = {}): Promise<AccessServer> {
  const dataDir = options.dataDir ?? tempDataDir('folio-access');
  let offset = 0;
  const clock = { now: () => Date.now() + offset };
  const runtime = await LedgerRuntime.open({
    dataDir, clock, hookDelivery: options.hookDelivery,
    hookTargets: { allowPrivateNetworks: options.allowPrivateNetworks ?? true },
  });
  const logger = pino({ level: process.env.FOLIO_LOG_LEVEL ?? 'warn' });
  // On this thread: its clock (API key expiry) and key-use interval are the test's.
  const http = await startLedgerHttp({
    host: '127.0.0.1', port: 0, workers: 0, limits: DEFAULT_CONNECTION_LIMITS, bodyBytesInFlightMax: BODY_BYTES_IN_FLIGHT_MAX_DEFAULT,
    version: 'test', logger, logLevel: logger.level, secretKey: options.secretKey ?? MASTER_KEY,
    hookTargets: { allowPrivateNetworks: options.allowPrivateNetworks ?? true }, dataDir, snapshots: false, index: true,
    replication: false, clock, apiKeyUseFlushMs: options.apiKeyUseFlushMs,
    onWorkersFailed: () => undefined,
  }, { runtime });
  const app = http.app as FolioApp;
  const url = `http://127.0.0.1:${http.address.port}`;
  const as = (key: string | undefined, method: string, route: string, body?: unknown): Promise<TestResponse> =>
    sendRequest(url, method, route, body, key === undefined ? {} : { 'X-svc-key': key });
  let stopped = false;
  return {
    url,
    dataDir,
    runtime,
    app,
    advanceClock(milliseconds) {
      offset += milliseconds;
    },
    as,
    master: (method, route, body) => as(options.secretKey ?? MASTER_KEY, method, route, body),
    async stop() {
      if (stopped) return;
      stopped = true;
      await http.close();
      await runtime.close();
    },
  };
}

/** A server that also deletes its data directory at teardown. */
export async function accessServerFor(t: { teardown(fn: () => unknown): void }, options: AccessServerOptions = {}): Promise<AccessServer> {
  const server = await startAccessServer(options);
  t.teardown(async () => {
    await server.stop();
    if (!options.dataDir) fs.rmSync(server.dataDir, { recursive: true, force: true });
  });
  return server;
}

/** Creates an API key with the master key and returns its id and key text. */
export async function createKey(
  server: AccessServer,
  scopes: string[],
  fields: { owner?: string; name?: string; expires_at?: string } = {},
): Promise<{ id: string; key: string }> {
  const response = await server.master('POST', '/api-keys', {
    name: fields.name ?? 'test key',
    owner: fields.owner ?? 'owner-1',
    scopes,
    expires_at: fields.expires_at ?? new Date(Date.now() + 24 * 3600_000).toISOString(),
  });
  if (response.status !== 201) throw new Error(`key creation failed: ${response.status} ${response.text}`);
  return { id: response.body.api_key_id as string, key: response.body.key as string };
}
