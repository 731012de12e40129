// The snapshots directory (data/snapshots): naming, listing, atomic writes and pruning.
//
// A snapshot is written to a temp file, fsynced, renamed to its final name and the directory fsynced,
// so a name in the directory always means a complete file whatever moment a crash picks. Temp files
// left by a crash are removed the next time a snapshot is written or the server starts. Names carry
// the seq zero-padded, so sorting names sorts by seq.

import fs from 'node:fs';
import path from 'node:path';
import type { LedgerState } from '../engine/ledger-state.js';
import { NO_CRASH_POINTS, type CrashPoints } from './crash-points.js';
import { writeSnapshot, type SnapshotHeader } from './snapshot-file.js';

const PREFIX = 'snapshot-';
const SUFFIX = '.fsnap';
const TEMP_SUFFIX = '.tmp';
const NAME_PATTERN = /^snapshot-(\d{16})\.fsnap$/;

export function snapshotDirectoryIn(dataDir: string): string {
  return path.join(dataDir, 'snapshots');
}

export function snapshotFileName(seq: number): string {
  return PREFIX + String(seq).padStart(16, '0') + SUFFIX;
}

export interface SnapshotEntry {
  file: string;
  seq: number;
}

/** Snapshot files in the directory, newest (highest seq) first. Temp files and strangers are ignored. */
export function listSnapshots(dir: string): SnapshotEntry[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const entries: SnapshotEntry[] = [];
  for (const name of names) {
    const match = NAME_PATTERN.exec(name);
    if (match) entries.push({ file: path.join(dir, name), seq: Number(match[1]) });
  }
  return entries.sort((a, b) => b.seq - a.seq);
}

export interface WrittenSnapshot {
  file: string;
  header: SnapshotHeader;
  size_bytes: number;
  milliseconds: number;
}

export type SnapshotIdentity = Omit<SnapshotHeader, 'format_version' | 'counts' | 'balance_table' | 'body_bytes' | 'body_sha256'>;

/**
 * Checks a written file before it gets its final name (runtime/state-replica.ts checkReadsBack: restored, it
 * must hash to its header's state hash); throwing removes the file and fails the write.
 */
export type ReadBackCheck = (file: string, header: SnapshotHeader) => void;

/** Writes the state as `snapshot-<seq>.fsnap` in `dir`, atomically. */
export function writeSnapshotFile(
  dir: string,
  state: LedgerState,
  identity: SnapshotIdentity,
  crash: CrashPoints = NO_CRASH_POINTS,
  readBack?: ReadBackCheck,
): WrittenSnapshot {
  const started = performance.now();
  fs.mkdirSync(dir, { recursive: true });
  const finalPath = path.join(dir, snapshotFileName(identity.seq));
  const tempPath = path.join(dir, '.' + snapshotFileName(identity.seq) + TEMP_SUFFIX);
  const fd = fs.openSync(tempPath, 'w');
  let header: SnapshotHeader;
  try {
    header = writeSnapshot(fd, state, identity, { afterChunk: () => crash.reach('snapshot-chunk') });
    crash.reach('snapshot-before-fsync');
    fs.fsyncSync(fd);
  } catch (error) {
    fs.closeSync(fd);
    fs.rmSync(tempPath, { force: true });
    throw error;
  }
  fs.closeSync(fd);
  try {
    readBack?.(tempPath, header);
  } catch (error) {
    fs.rmSync(tempPath, { force: true });
    throw error;
  }
  crash.reach('snapshot-before-rename');
  fs.renameSync(tempPath, finalPath);
  crash.reach('snapshot-before-dir-fsync');
  fsyncDirectory(dir);
  return { file: finalPath, header, size_bytes: fs.statSync(finalPath).size, milliseconds: performance.now() - started };
}

/** Keeps the newest `keep` snapshots and removes the rest (oldest first), then any leftover temp files. */
export function pruneSnapshots(dir: string, keep: number, crash: CrashPoints = NO_CRASH_POINTS): string[] {
  const removed: string[] = [];
  const stale = listSnapshots(dir).slice(Math.max(1, keep)).reverse();
  for (const entry of stale) {
    fs.rmSync(entry.file, { force: true });
    removed.push(entry.file);
    crash.reach('prune-file');
  }
  removed.push(...removeTempFiles(dir));
  if (removed.length > 0) fsyncDirectory(dir);
  return removed;
}

/** Removes temp files a crash left behind. Only the snapshot writer may call this (it owns them). */
export function removeTempFiles(dir: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    if (!name.startsWith('.' + PREFIX) || !name.endsWith(TEMP_SUFFIX)) continue;
    fs.rmSync(path.join(dir, name), { force: true });
    removed.push(path.join(dir, name));
  }
  return removed;
}

export function fsyncDirectory(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Copies a snapshot file into `dir` under its canonical name, atomically (backup and restore use it). */
export function copySnapshotFile(source: string, dir: string, seq: number): string {
  fs.mkdirSync(dir, { recursive: true });
  const finalPath = path.join(dir, snapshotFileName(seq));
  const tempPath = path.join(dir, '.' + snapshotFileName(seq) + TEMP_SUFFIX);
  fs.copyFileSync(source, tempPath);
  const fd = fs.openSync(tempPath, 'r+');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tempPath, finalPath);
  fsyncDirectory(dir);
  return finalPath;
}
