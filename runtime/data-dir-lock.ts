// One server per data directory. Two `folio serve` processes on one directory would both append to the
// log and break its chain, so the runtime locks the directory when it opens it and lets go when it
// closes.
//
// The lock must be one the kernel drops when its process dies, however it dies. A pid file is not: a
// server killed with SIGKILL whose parent is gone stays a zombie wherever PID 1 does not reap orphans
// (a container started without an init), `kill(pid, 0)` keeps succeeding on it, and the next start was
// refused for good. Node has no flock(), but SQLite (the sqlite3 module Folio already uses for its index)
// takes POSIX fcntl() locks, which the kernel releases when the process's files are closed: at exit,
// before it becomes a zombie. So the lock is a small SQLite database, `lock.sqlite`, opened with
// `PRAGMA locking_mode=EXCLUSIVE`: its first write transaction takes an exclusive lock that SQLite then
// keeps until the connection closes. Another process (or another connection in this one: SQLite keeps
// its locks per file inside a process too) gets SQLITE_BUSY at once and the start is refused, naming
// the directory. The holder writes its pid into the database header (`user_version`), for that message
// only: the pid is never what decides.
//
// A `LOCK` file of the pid-file kind, left by an older Folio, means nothing now and is removed once the
// lock is held. Read-only tools (verify, backup, a follower reading its leader's log) take no lock.

import fs from 'node:fs';
import path from 'node:path';
import sqlite3 from 'sqlite3';

export const LOCK_FILE = 'lock.sqlite';
/** The pid file older versions used instead. */
const LEGACY_LOCK_FILE = 'LOCK';
/** Where SQLite's header keeps `user_version` (a 4-byte big-endian integer). */
const USER_VERSION_OFFSET = 60;

export class DataDirLockedError extends Error {
  override readonly name = 'DataDirLockedError';
}

/** Takes the data directory's lock; returns the function that gives it back. */
export async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const file = path.join(dataDir, LOCK_FILE);
  const db = await openDatabase(file);
  try {
    db.configure('busyTimeout', 0);
    await run(db, 'PRAGMA locking_mode = EXCLUSIVE');
    await run(db, 'PRAGMA synchronous = OFF'); // nothing in it needs to survive a crash
    await run(db, 'BEGIN EXCLUSIVE');
    await run(db, `PRAGMA user_version = ${process.pid}`);
    await run(db, 'COMMIT'); // the exclusive lock stays: in EXCLUSIVE locking mode it is kept until close
  } catch (error) {
    await closeDatabase(db).catch(() => undefined);
    const code = (error as { code?: string }).code;
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') {
      const holder = holderPid(file);
      throw new DataDirLockedError(
        `data directory ${dataDir} is in use by another server${holder ? ` (process ${holder})` : ''}, which holds the lock on ${file}; one server per data directory`,
      );
    }
    throw new Error(`cannot lock data directory ${dataDir} (${file}): ${(error as Error).message}`);
  }
  fs.rmSync(path.join(dataDir, LEGACY_LOCK_FILE), { force: true });
  let released: Promise<void> | undefined;
  return () => (released ??= closeDatabase(db));
}

/** The pid the holder wrote, read from the file's header (reads are not blocked by the lock). */
function holderPid(file: string): number | undefined {
  try {
    const header = Buffer.alloc(4);
    const handle = fs.openSync(file, 'r');
    try {
      if (fs.readSync(handle, header, 0, 4, USER_VERSION_OFFSET) !== 4) return undefined;
    } finally {
      fs.closeSync(handle);
    }
    const pid = header.readUInt32BE(0);
    return pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function openDatabase(file: string): Promise<sqlite3.Database> {
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(file, sqlite3.OPEN_READWRITE | sqlite3.OPEN_CREATE, (error) => (error ? reject(error) : resolve(db)));
  });
}

function run(db: sqlite3.Database, sql: string): Promise<void> {
  return new Promise((resolve, reject) => db.run(sql, (error) => (error ? reject(error) : resolve())));
}

function closeDatabase(db: sqlite3.Database): Promise<void> {
  return new Promise((resolve, reject) => db.close((error) => (error ? reject(error) : resolve())));
}
