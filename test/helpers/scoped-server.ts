// A test server that belongs to one tap test: stopped and its temp data directory removed at teardown.

import fs from 'node:fs';
import type { Test } from 'tap';
import type { RuntimeOptions } from '../../runtime/ledger-runtime.js';
import { startTestServer, type TestServer } from './test-server.js';

export async function startScopedServer(t: Test, options: Partial<RuntimeOptions> = {}): Promise<TestServer> {
  const server = await startTestServer(options);
  t.teardown(async () => {
    await server.stop();
    fs.rmSync(server.dataDir, { recursive: true, force: true });
  });
  return server;
}
