// The real Koa app on a temp-dir runtime, served by nothing: for tests that enumerate the router's
// layers (which routes exist, what each is let through as). Each test names the optional parts it
// turns on, from the runtime and its data directory; both are closed and removed at teardown.

import fs from 'node:fs';
import pino from 'pino';
import type { Test } from 'tap';
import { LedgerRuntime } from '../../runtime/ledger-runtime.js';
import { createApp, type AppOptions, type FolioApp } from '../../http/app.js';
import { Metrics } from '../../http/metrics.js';
import { tempDataDir } from './test-server.js';

export async function routerApp(
  t: Test, label: string, parts: (runtime: LedgerRuntime, dataDir: string) => Partial<AppOptions>,
): Promise<FolioApp> {
  const dataDir = tempDataDir(label);
  const runtime = await LedgerRuntime.open({ dataDir });
  t.teardown(async () => {
    await runtime.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  const metrics = new Metrics({ queuedTransactions: () => 0, lookupBacklog: () => 0, unflushedEvents: () => 0 });
  return createApp({
    core: runtime, logger: pino({ level: 'silent' }), metrics, version: 'test', secretKey: 'k'.repeat(32), ...parts(runtime, dataDir),
  });
}
