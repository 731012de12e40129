// `folio restore`: builds a fresh data directory from a snapshot and a log, up to a chosen seq (point in
// time). The log's records from genesis to that seq are copied byte for byte, so the chain and the
// snapshot's tie to its log record survive; when the seq falls inside a record, that last record is
// cut after it and re-sealed (same prev_checksum, new checksum). The snapshot goes in beside it, the
// transaction lookups are rebuilt so the first start is quick, and the result is verified from genesis
// before the command reports success. A snapshot later than the chosen seq cannot describe that moment
// and is refused.

import fs from 'node:fs';
import path from 'node:path';
import { open } from 'lmdb';
import { encodeLogRecord } from '../wal/log-record-codec.js';
import { LmdbLog } from '../wal/lmdb-log.js';
import { LmdbTransactionStore } from '../lookups/lmdb-transaction-store.js';
import { LogReader } from '../wal/log-reader.js';
import { copySecrets } from './backup.js';
import { copySnapshotFile, snapshotDirectoryIn } from '../snapshots/snapshot-directory.js';
import { readSnapshot, type SnapshotHeader } from '../snapshots/snapshot-file.js';
import { logMismatch } from '../snapshots/snapshot-loader.js';
import { verifyDataDir, type VerifyReport } from './verify.js';

export class RestoreError extends Error {
  override readonly name = 'RestoreError';
}

export interface RestoreOptions {
  snapshotFile: string;
  /** The directory to create; it must not exist or be empty. */
  targetDir: string;
  /** The data (or backup) directory whose log to copy; default: the one the snapshot file sits in. */
  logDir?: string;
  /** Last seq to keep; default: the end of the source log. */
  toSeq?: number;
  onProgress?(phase: 'copy' | 'lookups' | 'verify', done: number, total: number): void;
}

export interface RestoreReport {
  snapshotSeq: number;
  toSeq: number;
  recordsCopied: number;
  verify: VerifyReport;
}

/** Records written per LMDB transaction while copying. */
const COPY_BATCH_RECORDS = 2_000;

export async function restoreDataDir(options: RestoreOptions): Promise<RestoreReport> {
  const header = checkedSnapshot(options.snapshotFile);
  const logDir = options.logDir ?? path.dirname(path.dirname(path.resolve(options.snapshotFile)));
  assertEmptyTarget(options.targetDir);
  const source = openSource(logDir);
  let recordsCopied: number;
  let toSeq: number;
  try {
    const sourceEnd = source.endSeq();
    toSeq = options.toSeq ?? sourceEnd;
    if (toSeq > sourceEnd) throw new RestoreError(`the log in ${logDir} ends at seq ${sourceEnd}, before the requested seq ${toSeq}`);
    if (header.seq > toSeq) {
      throw new RestoreError(`the snapshot is at seq ${header.seq}, later than --to-seq ${toSeq}: choose a snapshot at or before ${toSeq}`);
    }
    const mismatch = logMismatch(options.snapshotFile, header, source);
    if (mismatch) throw new RestoreError(mismatch);
    fs.mkdirSync(options.targetDir, { recursive: true });
    recordsCopied = await copyLog(source, options.targetDir, toSeq, options.onProgress);
  } finally {
    await source.close();
  }
  copySnapshotFile(options.snapshotFile, snapshotDirectoryIn(options.targetDir), header.seq);
  copySecrets(logDir, options.targetDir);
  await rebuildLookups(options.targetDir, toSeq, options.onProgress);
  const verify = verifyDataDir({ dataDir: options.targetDir, onProgress: (seq, end) => options.onProgress?.('verify', seq, end) });
  return { snapshotSeq: header.seq, toSeq, recordsCopied, verify };
}

function checkedSnapshot(file: string): SnapshotHeader {
  // Reading it whole checks both checksums before anything is written.
  return readSnapshot(file).header;
}

function assertEmptyTarget(dir: string): void {
  if (!fs.existsSync(dir)) return;
  if (fs.readdirSync(dir).length > 0) throw new RestoreError(`${dir} is not empty: restore only into a new directory`);
}

function openSource(dir: string): LogReader {
  try {
    return LogReader.open(dir);
  } catch (error) {
    throw new RestoreError(`cannot open the log to restore from: ${(error as Error).message}`);
  }
}

/** Copies records up to `toSeq` into a new log (data/wal) with the server's settings, checking the chain. */
async function copyLog(source: LogReader, targetDir: string, toSeq: number, onProgress: RestoreOptions['onProgress']): Promise<number> {
  const env = open({ path: path.join(targetDir, 'wal'), maxDbs: 4, mapSize: 1024 ** 3 });
  const target = env.openDB<Buffer, number>({ name: 'log', encoding: 'binary' });
  let copied = 0;
  let batch: Array<[number, Buffer]> = [];
  const flush = async (): Promise<void> => {
    const items = batch;
    batch = [];
    await target.transaction(() => {
      for (const [key, bytes] of items) target.put(key, bytes);
    });
  };
  try {
    for (const logRecord of source.logRecords()) {
      if (logRecord.first_seq > toSeq) break;
      let bytes: Buffer;
      if (logRecord.last_seq <= toSeq) bytes = source.rawRecord(logRecord.first_seq) as Buffer;
      else {
        const kept = logRecord.events.slice(0, toSeq - logRecord.first_seq + 1);
        bytes = encodeLogRecord({ first_seq: logRecord.first_seq, prev_checksum: logRecord.prev_checksum, events: kept });
      }
      batch.push([logRecord.first_seq, Buffer.from(bytes)]);
      copied += 1;
      if (batch.length >= COPY_BATCH_RECORDS) {
        await flush();
        onProgress?.('copy', Math.min(logRecord.last_seq, toSeq), toSeq);
      }
      if (logRecord.last_seq >= toSeq) break;
    }
    await flush();
    onProgress?.('copy', toSeq, toSeq);
    await env.flushed;
  } finally {
    await env.close();
  }
  return copied;
}

async function rebuildLookups(targetDir: string, toSeq: number, onProgress: RestoreOptions['onProgress']): Promise<void> {
  // The lookups store positions in the log, so they are rebuilt against the restored log itself.
  const log = LmdbLog.open({ dir: LmdbLog.directoryIn(targetDir) });
  const store = LmdbTransactionStore.open(LmdbTransactionStore.directoryIn(targetDir), log);
  try {
    onProgress?.('lookups', 0, toSeq);
    await store.catchUp(toSeq);
    onProgress?.('lookups', toSeq, toSeq);
  } finally {
    await store.close();
    await log.close();
  }
}
