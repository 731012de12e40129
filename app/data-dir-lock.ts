// One server per data directory. Two `folio serve` processes on one directory would both append to the
// log and break its chain, so the runtime takes `LOCK` (holding its pid) when it opens a directory and
// removes it when it closes. A lock left by a process that is gone (killed with SIGKILL, say) is taken
// over; one held by a live process refuses the start. Read-only tools (verify, backup, a follower
// reading its leader's log) take no lock.

import fs from 'node:fs';
import path from 'node:path';

export class DataDirLockedError extends Error {
  override readonly name = 'DataDirLockedError';
}

/** Takes the data directory's lock; returns the function that gives it back. */
export function lockDataDir(dataDir: string): () => void {
  const file = path.join(dataDir, 'LOCK');
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      fs.writeFileSync(file, `${process.pid}\n`, { flag: 'wx', mode: 0o644 });
      return () => fs.rmSync(file, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = Number.parseInt(fs.readFileSync(file, 'utf8'), 10);
    if (Number.isInteger(holder) && holder > 0 && isAlive(holder)) {
      throw new DataDirLockedError(`data directory ${dataDir} is in use by process ${holder} (${file}); one server per data directory`);
    }
    fs.rmSync(file, { force: true }); // left by a process that is gone
  }
  throw new DataDirLockedError(`could not take the lock of ${dataDir} (${file})`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
