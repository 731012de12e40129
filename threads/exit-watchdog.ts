// A bound on how long the process may take to go down once it has decided to stop. `process.exit`
// stops every worker thread and joins libuv's threads before the process ends; a thread stuck in a
// native call never returns and the process hangs, neither serving nor gone, which a supervisor cannot
// tell from a slow node. Seen in three of seventeen runs of a server on a full disk (`ulimit -f`,
// 2026-12-02): "write-ahead log failed" logged, `process.exit(70)` begun, the process still there two
// minutes later, its main thread joining a libuv pool thread held inside lmdb-js's writer (waiting for
// the JavaScript thread to run a write's callbacks, which it never will again). Node offers no `_exit`,
// so a small process outside this one ends it with SIGKILL if it is still there after the bound; the
// supervisor then sees a kill instead of exit 70, and restarts it all the same.

import { spawn } from 'node:child_process';

/** How long going down may take before the watchdog kills the process. */
export const EXIT_WATCHDOG_MS = 10_000;

/**
 * Starts the watchdog for this process and forgets it: it outlives the process by the bound at most and
 * kills only if the process is still there. Failing to start it changes nothing else.
 */
function armExitWatchdog(boundMs: number = EXIT_WATCHDOG_MS): void {
  const seconds = (Math.max(0, boundMs) / 1_000).toFixed(3);
  try {
    const watchdog = spawn('/bin/sh', ['-c', 'sleep "$1"; kill -0 "$2" 2>/dev/null && kill -KILL "$2"', 'folio-exit-watchdog', seconds, String(process.pid)], {
      detached: true, stdio: 'ignore',
    });
    watchdog.on('error', () => undefined);
    watchdog.unref();
  } catch {
    // without a watchdog the exit goes on as before
  }
}

/** Ends the process with `code`, within the watchdog's bound: for the stops a supervisor restarts on. */
export function exitWithin(code: number, boundMs: number = EXIT_WATCHDOG_MS): never {
  armExitWatchdog(boundMs);
  process.exit(code);
}
