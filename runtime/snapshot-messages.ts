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

/** One snapshot job: build the state at `targetSeq`, write it unless a snapshot is already there, prune. */
export interface WorkerConfig {
  dataDir: string;
  /** A durable log seq; the snapshot is taken at the end of the last whole record up to it. */
  targetSeq: number;
  keep: number;
  reason: string;
  /** Shared with every job: crash points count across jobs (tests only; see crash-points.ts). */
  crashCounter: SharedArrayBuffer;
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

export type ToMain =
  | { type: 'written'; info: SnapshotInfo; removed?: string[] }
  | { type: 'failed'; message: string }
  | { type: 'log'; level: 'info' | 'warn' | 'error'; msg: string; fields: Record<string, unknown> };
