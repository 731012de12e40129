// `folio openapi`: prints the OpenAPI document of a server with every optional part on (query index,
// snapshots, cutover), the same document such a server serves at GET /openapi.json. The router is the
// real one, built over a real ledger opened in a temporary directory that is removed afterwards, so the
// printed routes cannot differ from what `folio serve` registers.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { createApp } from '../http/app.js';
import { Metrics } from '../http/metrics.js';
import { openApiDocument } from '../http/openapi/openapi-document.js';
import { CutoverControl } from '../cutover/cutover-control.js';
import { LedgerRuntime } from '../runtime/ledger-runtime.js';
import { snapshotAdmin } from '../runtime/snapshot-admin.js';
import { FOLIO_VERSION } from './version.js';

/** The document as text (two-space indented JSON), from a throwaway ledger. */
export async function openApiText(): Promise<string> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-openapi-'));
  try {
    const runtime = await LedgerRuntime.open({ dataDir });
    const cutover = CutoverControl.forLeader(runtime);
    try {
      const metrics = new Metrics({ queuedTransactions: () => 0, lookupBacklog: () => 0, unflushedEvents: () => 0 });
      const app = createApp({
        core: runtime, logger: pino({ level: 'silent' }), metrics, version: FOLIO_VERSION,
        snapshots: snapshotAdmin(runtime, dataDir), cutover,
      });
      return `${JSON.stringify(openApiDocument(app.router, { version: FOLIO_VERSION }), null, 2)}\n`;
    } finally {
      await cutover.close();
      await runtime.close();
    }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function openApiCommand(): Promise<number> {
  const text = await openApiText();
  await new Promise<void>((resolve, reject) => process.stdout.write(text, (error) => (error ? reject(error) : resolve())));
  return 0;
}
