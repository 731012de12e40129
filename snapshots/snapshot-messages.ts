// The messages between the server's main thread (snapshot-service.ts) and the snapshot worker
// (snapshot-worker.ts), typed in one place so both sides agree.

export interface SnapshotSchedule {
  /** Write a snapshot once this many events were logged since the last one (0: never for this reason). */
  every_events: number;
  /** Write a snapshot this often, in seconds, if anything was logged since the last (0: never). */
  every_seconds: number;
  /** Snapshots kept; older ones are removed after each write. */
  keep: number;
}

export interface WorkerConfig extends SnapshotSchedule {
  dataDir: string;
  /** The log's durable seq when the worker starts: the replica catches up to it before anything else. */
  durableSeq: number;
}

/** A snapshot as the API and CLI report it. */
export interface SnapshotInfo {
  seq: number;
  file: string;
  size_bytes: number;
  state_hash: string;
  created_at: number;
  /** Time to hash, encode, write and prune (0 for one found on disk). */
  milliseconds: number;
  hash_milliseconds: number;
  /** False when an existing snapshot already covered the requested seq. */
  created: boolean;
}

export type ToWorker =
  | { type: 'durable'; seq: number }
  | { type: 'snapshot'; id: number; seq: number }
  | { type: 'stop' };

export type ToMain =
  | { type: 'ready'; seq: number; snapshot: SnapshotInfo | undefined }
  | { type: 'written'; id: number | undefined; info: SnapshotInfo; reason?: string; removed?: string[] }
  | { type: 'failed'; id: number; message: string }
  | { type: 'log'; level: 'info' | 'warn' | 'error'; msg: string; fields: Record<string, unknown> }
  | { type: 'stopped' };
