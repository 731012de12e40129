// The V8 settings every Folio process runs with: `npm start`, the `folio` command (its first line) and
// the servers and children the benches start. package.json and bin/folio.ts cannot import this list,
// so they repeat it; test/node-flags.unit.test.ts fails when the copies disagree.
//
// Why a larger young generation: start-up replays and bulk loads create records that live for the
// whole run at a high rate. With V8's default semi-space (16 MiB here) the scavenger runs four times as
// often and copies each survivor through the young generation before promoting it. With 64 MiB a full
// replay of 1,000,000 new-balance transfers took 8.1 s instead of 12.4 s, RSS after it was no higher
// (1,144 vs 1,297 MiB), and HTTP transfers were unchanged (within noise). 128 MiB was no faster.
//
// V8's flags belong to the process, not to one isolate: `--max-semi-space-size` also sizes the young
// generation of every worker thread started later, and it wins over a worker's own `resourceLimits`
// (the index projector asked for 32 MB of young generation and got 192). workerHeapsOwnLimits clears the
// flag once the main thread's heap has been sized by it, so each worker gets what its Worker options
// say; workers that should keep the main thread's young generation ask for it (WORKER_YOUNG_GENERATION_MB).
//
// Beside the V8 flags, one setting of the C library's allocator (MALLOC_SETTING), which glibc reads from
// the environment when the process starts: it too is written where a Folio process is started
// (package.json's scripts, the first line of bin/folio.ts, nodeEnvironment for the processes Folio starts).

import v8 from 'node:v8';

export const NODE_FLAGS: readonly string[] = ['--max-semi-space-size=64'];

/**
 * glibc's malloc serves a block of 128 KiB or more with a mapping of its own, given back to the kernel
 * when freed, and everything smaller from its arenas. By default that threshold moves up to the size of
 * the largest such block freed (up to 32 MiB), after which large short-lived blocks (log records
 * handed to the index's and the balance history's threads, request bodies, record batches) are carved out
 * of the arenas too, and the arenas keep what they free: with 1,000,000 balances the main thread's arena
 * held 273 MB for 29 MB in use (the memory bench, docs/performance.md). Naming the threshold fixes it
 * (glibc then never moves it): the main thread's arena at rest 113 -> 12 MiB at 100,000 balances.
 * glibc reads it at start-up only; other C libraries ignore the variable.
 */
export const MALLOC_SETTING = 'glibc.malloc.mmap_threshold=131072';

/**
 * The environment for a Folio process started from this one: `env` with MALLOC_SETTING added to
 * GLIBC_TUNABLES (kept as it is when it already names a threshold).
 */
export function nodeEnvironment(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const tunables = env.GLIBC_TUNABLES;
  if (tunables?.includes('glibc.malloc.mmap_threshold=')) return { ...env };
  return { ...env, GLIBC_TUNABLES: tunables ? `${tunables}:${MALLOC_SETTING}` : MALLOC_SETTING };
}

/**
 * The young generation `--max-semi-space-size=64` gives an isolate (V8 counts three semi-spaces: two
 * for the scavenger, one for new large objects), for worker threads that should keep it.
 */
export const WORKER_YOUNG_GENERATION_MB = 3 * 64;

/**
 * From now on a new worker thread sizes its young generation from its own `resourceLimits` (or V8's
 * default), not from NODE_FLAGS. The main thread's heap was configured at start-up and keeps its size.
 * Idempotent; a process started without the flag is unchanged.
 */
export function workerHeapsOwnLimits(): void {
  v8.setFlagsFromString('--max-semi-space-size=0');
}
