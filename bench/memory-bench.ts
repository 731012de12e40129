// Bench `memory`: resident memory of a ledger holding N balances (1,000,000 in a full run), created
// through the engine of the real runtime in a child process and measured after GC. Per-balance cost is
// the growth over a baseline taken after start-up; total RSS is judged against the 1 GiB target only
// when 1,000,000 were created (fixed costs such as allocator arenas make a projection from fewer wrong:
// 100,000 balances projected to twice what 1,000,000 really took). RSS is split into anonymous memory
// and file-backed pages: LMDB maps its files, and log pages read back (by the index catching up) stay
// resident until the kernel needs them; the balance history's store and malloc's main arena are shown
// apart too (docs/performance.md, "Memory with 1,000,000 balances"). A second child restarts on the
// same data from a snapshot.

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MemoryChildResult, RestartResult } from './memory-child.js';
import type { BenchResult, Figure } from './report.js';
import { makeTempDir, removeTempDir, runJsonChild } from './resources.js';
import type { BenchSettings } from './settings.js';

const CHILD = path.resolve(path.dirname(fileURLToPath(import.meta.url)), 'memory-child.js');
const TARGET_BALANCES = 1_000_000;
const RSS_TARGET_BYTES = 1024 ** 3;
const MIB = 1024 ** 2;

export async function memoryBench(settings: BenchSettings, log: (line: string) => void): Promise<BenchResult> {
  const dataDir = makeTempDir('memory');
  let child: MemoryChildResult;
  let restart: RestartResult;
  const options = { nodeArgs: ['--expose-gc'], timeoutMs: 30 * 60 * 1000 };
  try {
    log(`memory: creating ${settings.balances.toLocaleString('en-US')} balances`);
    child = await runJsonChild<MemoryChildResult>(CHILD, [String(settings.balances), dataDir], options);
    log('memory: restarting from the snapshot written after them');
    restart = await runJsonChild<RestartResult>(CHILD, ['restart', dataDir], options);
  } finally {
    removeTempDir(dataDir);
  }
  const { baseline, loaded, balances } = child;
  const perBalance = (loaded.rssBytes - baseline.rssBytes) / balances;
  const heapPerBalance = (loaded.heapUsedBytes - baseline.heapUsedBytes) / balances;
  const full = balances >= TARGET_BALANCES;
  const figures: Figure[] = [
    { label: 'RSS per balance', value: perBalance, unit: 'bytes' },
    { label: 'JS heap per balance', value: heapPerBalance, unit: 'bytes' },
    {
      label: `RSS with ${balances.toLocaleString('en-US')} balances`, value: loaded.rssBytes / MIB, unit: 'MiB',
      ...(full ? { target: { op: '<=', value: RSS_TARGET_BYTES / MIB } } : { note: `target is for ${TARGET_BALANCES.toLocaleString('en-US')}` }),
    },
    { label: 'of which anonymous (heaps, caches)', value: loaded.rssAnonBytes / MIB, unit: 'MiB' },
    { label: 'of which file-backed (mapped log and index pages)', value: loaded.rssFileBytes / MIB, unit: 'MiB' },
    { label: 'of which the log file\'s mapped pages', value: mappedBytes(loaded.rssFileByMapping, `${path.sep}wal${path.sep}data.mdb`) / MIB, unit: 'MiB' },
    { label: 'of which the balance history\'s mapped pages', value: mappedBytes(loaded.rssFileByMapping, `${path.sep}history${path.sep}data.mdb`) / MIB, unit: 'MiB' },
    { label: 'of which malloc\'s main arena (in use or kept free)', value: loaded.rssMainArenaBytes / MIB, unit: 'MiB' },
    { label: 'of which JS heap (used)', value: loaded.heapUsedBytes / MIB, unit: 'MiB' },
    { label: 'RSS after a restart from a snapshot', value: restart.restarted.rssBytes / MIB, unit: 'MiB' },
    { label: 'start-up time of that restart', value: restart.startupMilliseconds, unit: 'ms' },
    { label: 'RSS after start-up (baseline)', value: baseline.rssBytes / MIB, unit: 'MiB' },
    { label: 'time to create the balances', value: child.createSeconds, unit: 's', digits: 1 },
  ];
  return { name: 'memory', figures, details: { ...child, restart } };
}

/** Resident bytes of the mapped files whose path ends with `suffix`. */
function mappedBytes(mappings: Array<[string, number]>, suffix: string): number {
  return mappings.filter(([file]) => file.endsWith(suffix)).reduce((total, [, bytes]) => total + bytes, 0);
}
