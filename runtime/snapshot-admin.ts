// Wires the HTTP snapshot routes to the running ledger: snapshots on demand through the runtime's worker,
// listings straight from data/snapshots.

import type { SnapshotAdmin, SnapshotView } from '../http/routes/admin-routes.js';
import { listSnapshots, snapshotDirectoryIn } from '../snapshots/snapshot-directory.js';
import { BODY_OFFSET, readHeader, SnapshotFileError } from '../snapshots/snapshot-file.js';
import type { LedgerRuntime } from './ledger-runtime.js';
import { accept } from '../engine/result.js';

export function snapshotAdmin(runtime: LedgerRuntime, dataDir: string): SnapshotAdmin {
  return {
    async snapshotNow() {
      const taken = await runtime.snapshotNow();
      if (!taken.ok) return taken;
      const info = taken.value;
      return accept({ seq: info.seq, file: info.file, size_bytes: info.size_bytes, state_hash: info.state_hash, created_at: info.created_at, created: info.created });
    },
    list(): SnapshotView[] {
      const views: SnapshotView[] = [];
      for (const entry of listSnapshots(snapshotDirectoryIn(dataDir))) {
        try {
          const header = readHeader(entry.file);
          views.push({ seq: header.seq, file: entry.file, size_bytes: BODY_OFFSET + header.body_bytes, state_hash: header.state_hash, created_at: header.created_at });
        } catch (error) {
          if (!(error instanceof SnapshotFileError)) throw error;
        }
      }
      return views;
    },
  };
}
