// Bench `engine`: transfers per second through LedgerEngine in-process, first with no WAL (in-memory log
// and store), then durable through the real LedgerRuntime on a temp dir, each mode in its own child
// process. The durable mode also gives the latency from decide to durable as the clients saw it.

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EngineModeResult } from './engine-child.js';
import type { BenchResult } from './report.js';
import { makeTempDir, removeTempDir, runJsonChild } from './resources.js';
import type { BenchSettings } from './settings.js';

const CHILD = path.resolve(path.dirname(fileURLToPath(import.meta.url)), 'engine-child.js');

export const DURABLE_TRANSFERS_PER_SECOND_TARGET = 300_000;

async function runMode(mode: 'memory' | 'lmdb', settings: BenchSettings): Promise<EngineModeResult> {
  const dataDir = mode === 'lmdb' ? makeTempDir('engine') : undefined;
  try {
    const args = [mode, String(settings.seconds), String(settings.engineClients), ...(dataDir ? [dataDir] : [])];
    return await runJsonChild<EngineModeResult>(CHILD, args, { timeoutMs: (settings.seconds + 120) * 1000 });
  } finally {
    if (dataDir) removeTempDir(dataDir);
  }
}

export async function engineBench(settings: BenchSettings, log: (line: string) => void): Promise<BenchResult> {
  log(`engine: WAL off, ${settings.engineClients} clients, ${settings.seconds} s`);
  const memory = await runMode('memory', settings);
  log(`engine: durable (LMDB), ${settings.engineClients} clients, ${settings.seconds} s`);
  const durable = await runMode('lmdb', settings);
  return {
    name: 'engine',
    figures: [
      { label: 'transfers/s, WAL off', value: memory.transfersPerSecond, unit: '/s' },
      { label: 'transfers/s, durable', value: durable.transfersPerSecond, unit: '/s', target: { op: '>=', value: DURABLE_TRANSFERS_PER_SECOND_TARGET } },
      { label: 'durable latency p50', value: durable.latencyMs.p50, unit: 'ms', digits: 2 },
      { label: 'durable latency p99', value: durable.latencyMs.p99, unit: 'ms', digits: 2 },
      { label: 'transfers per group commit', value: durable.eventsPerCommit ?? 0, unit: 'events', digits: 0 },
      { label: 'WAL seal to durable (mean)', value: durable.commitMs ?? 0, unit: 'ms', digits: 2 },
    ],
    details: { clients: settings.engineClients, wal_off: memory, durable },
  };
}
