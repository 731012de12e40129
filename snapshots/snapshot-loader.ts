// Choosing the snapshot to start from: the newest one that is whole, belongs to this log and is not
// ahead of it. Each one passed over is reported with the reason (torn, corrupt, ahead of the log, from
// another history), and the next older one is tried; with none left the caller replays from genesis.
//
// A snapshot belongs to the log when the log record ending at its seq has the checksum the snapshot
// recorded. Since records chain by checksum, that ties the snapshot to the whole history before it:
// a log restored from elsewhere, or rewritten, cannot be paired with a stale snapshot by accident.
// A corrupt log record met while checking is not a snapshot problem: it propagates, and start-up stops.

/** The log records a snapshot is checked against (wal/log-reader.ts and the server's log satisfy it). */
export interface LogRecordSource {
  logRecords(fromKey?: number): Generator<{ first_seq: number; last_seq: number; checksum: Buffer }>;
}
import { readHeader, readSnapshot, SnapshotFileError, type SnapshotHeader, type SnapshotContents } from './snapshot-file.js';
import { listSnapshots } from './snapshot-directory.js';

export interface SkippedSnapshot {
  file: string;
  reason: string;
}

export interface LoadedSnapshot {
  file: string;
  contents: SnapshotContents;
}

export interface ChooseOptions {
  dir: string;
  log: LogRecordSource;
  /** Last seq of the log that may be used (durable). */
  logEndSeq: number;
  /** Snapshots after this seq are not candidates (point-in-time work). */
  seqMax?: number;
  onSkip?(skipped: SkippedSnapshot): void;
}

/**
 * The newest usable snapshot, read, checked and handed to `use` (which restores it), with what `use`
 * returned; undefined when there is none. A snapshot whose use throws a SnapshotFileError (it restores
 * into a state other than the one its header records) is passed over like one that fails its checks.
 */
export function useNewestSnapshot<T>(options: ChooseOptions, use: (loaded: LoadedSnapshot) => T): { loaded: LoadedSnapshot; used: T } | undefined {
  for (const entry of listSnapshots(options.dir)) {
    if (options.seqMax !== undefined && entry.seq > options.seqMax) continue;
    const reason = whyNotUsable(entry.file, options);
    if (reason !== undefined) {
      options.onSkip?.({ file: entry.file, reason });
      continue;
    }
    try {
      const loaded = { file: entry.file, contents: readSnapshot(entry.file) };
      return { loaded, used: use(loaded) };
    } catch (error) {
      if (!(error instanceof SnapshotFileError)) throw error;
      options.onSkip?.({ file: entry.file, reason: error.message });
    }
  }
  return undefined;
}

/** Why the snapshot's header rules it out for this log, if it does (its body is checked when read). */
function whyNotUsable(file: string, options: ChooseOptions): string | undefined {
  let header: SnapshotHeader;
  try {
    header = readHeader(file);
  } catch (error) {
    if (error instanceof SnapshotFileError) return error.message;
    throw error;
  }
  if (header.seq > options.logEndSeq) return `snapshot ${file} is at seq ${header.seq}, ahead of the log (which ends at ${options.logEndSeq})`;
  return logMismatch(file, header, options.log);
}

/** Whether the log record the snapshot names is there and is the one it saw. */
export function logMismatch(file: string, header: SnapshotHeader, log: LogRecordSource): string | undefined {
  const logRecords = log.logRecords(header.log_record_key);
  let logRecord;
  try {
    const first = logRecords.next();
    logRecord = first.done ? undefined : first.value;
  } finally {
    logRecords.return(undefined);
  }
  if (!logRecord || logRecord.first_seq !== header.log_record_key || logRecord.last_seq !== header.seq) {
    return `snapshot ${file} names log record ${header.log_record_key} ending at seq ${header.seq}, which this log does not have`;
  }
  if (logRecord.checksum.toString('hex') !== header.log_checksum) {
    return `snapshot ${file} was taken from another history: log record ${header.log_record_key} differs`;
  }
  return undefined;
}
