// `folio backup`: a consistent copy of a data directory while the server keeps running. The newest
// whole snapshot is copied first and checked; then LMDB copies the log environment from inside one read
// transaction (mdb_env_copy2, the same as mdb_copy), which sees one committed state of the log however
// many records are written meanwhile. The log copy therefore always reaches at least the snapshot's seq,
// and the pair is checked to belong together before the command reports success. The result is laid
// out as a data directory: `folio serve` can run on it, and `folio restore` can restore from it.
// The transaction lookups are not copied; they are rebuilt from the log when a server starts on it.

import fs from 'node:fs';
import path from 'node:path';
import { LogReader } from '../wal/log-reader.js';
import { HookSecretSealer } from '../hooks/signing-secrets.js';
import { copySnapshotFile, listSnapshots, snapshotDirectoryIn } from '../snapshots/snapshot-directory.js';
import { readSnapshot, SnapshotFileError, type SnapshotHeader } from '../snapshots/snapshot-file.js';
import { logMismatch } from '../snapshots/snapshot-loader.js';

export class BackupError extends Error {
  override readonly name = 'BackupError';
}

export interface BackupReport {
  outDir: string;
  logEndSeq: number;
  logBytes: number;
  /** The snapshot copied (undefined when the data directory has none yet). */
  snapshot?: { file: string; seq: number; size_bytes: number };
  /** Snapshots passed over because they were damaged or pruned while being copied. */
  skipped: string[];
}

export async function backupDataDir(dataDir: string, outDir: string): Promise<BackupReport> {
  if (fs.existsSync(outDir) && fs.readdirSync(outDir).length > 0) throw new BackupError(`${outDir} is not empty: back up into a new directory`);
  const source = openLog(dataDir);
  try {
    const skipped: string[] = [];
    const snapshot = copyNewestSnapshot(dataDir, outDir, skipped);
    copySecrets(dataDir, outDir);
    const walCopy = path.join(outDir, 'wal');
    await source.copyTo(walCopy);
    const report: BackupReport = { outDir, logEndSeq: 0, logBytes: fs.statSync(path.join(walCopy, 'data.mdb')).size, skipped };
    const copy = LogReader.open(outDir);
    try {
      report.logEndSeq = copy.endSeq();
      if (snapshot) {
        const mismatch = logMismatch(snapshot.file, snapshot.header, copy);
        if (mismatch) throw new BackupError(`the copied snapshot does not fit the copied log: ${mismatch}`);
        report.snapshot = { file: snapshot.file, seq: snapshot.header.seq, size_bytes: fs.statSync(snapshot.file).size };
      }
    } finally {
      await copy.close();
    }
    return report;
  } finally {
    await source.close();
  }
}

function openLog(dataDir: string): LogReader {
  try {
    return LogReader.open(dataDir);
  } catch (error) {
    throw new BackupError(`cannot open the log to back up: ${(error as Error).message}`);
  }
}

/**
 * Copies the newest snapshot that reads back whole. A snapshot may be pruned by the server while it is
 * copied; then the next older one is taken.
 */
function copyNewestSnapshot(dataDir: string, outDir: string, skipped: string[]): { file: string; header: SnapshotHeader } | undefined {
  const targetDir = snapshotDirectoryIn(outDir);
  for (const entry of listSnapshots(snapshotDirectoryIn(dataDir))) {
    let copied: string;
    try {
      copied = copySnapshotFile(entry.file, targetDir, entry.seq);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      skipped.push(`${entry.file}: removed while copying`);
      continue;
    }
    try {
      return { file: copied, header: readSnapshot(copied).header };
    } catch (error) {
      if (!(error instanceof SnapshotFileError)) throw error;
      fs.rmSync(copied, { force: true });
      skipped.push(error.message);
    }
  }
  return undefined;
}

/**
 * Copies the data directory's secrets (the key hook signing secrets are sealed with): the log holds
 * them sealed, so a copy of the log without that key could not sign hook deliveries.
 */
export function copySecrets(fromDataDir: string, toDataDir: string): void {
  const from = HookSecretSealer.directoryIn(fromDataDir);
  if (!fs.existsSync(from)) return;
  fs.cpSync(from, HookSecretSealer.directoryIn(toDataDir), { recursive: true, preserveTimestamps: true });
}
