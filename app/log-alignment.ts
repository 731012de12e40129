// Bringing a node's local log in line with its group's before the node opens it (replication-node.ts
// runs this under the data directory's lock on every join). The group's log in PostgreSQL is the truth:
//   - records at the end of the local log that the group does not hold, or holds different bytes for,
//     were sealed by this node as a leader and never committed by the group, so never acknowledged:
//     they are dropped (wal/log-rewind.ts), with the snapshots taken after them. The lookups and the
//     query index notice on opening that their checkpoint is past the log's end or of another history and
//     rebuild (lmdb-transaction-store.ts catchUp, projector.ts sameHistory), so nothing they hold of those
//     records survives;
//   - a local log the group has never seen (an empty group, and this node's existing ledger) is kept:
//     this node may take the first term and upload it (seeding);
//   - anything else is refused, and nothing is dropped: more than `records_dropped_max` records to drop
//     (never more than a leader has in flight), or a local log that differs from the group's from its
//     first record (a node pointed at another group's database). An operator decides those.

import fs from 'node:fs';
import { listSnapshots, snapshotDirectoryIn } from '../snapshots/snapshot-directory.js';
import type { PostgresClient } from '../replication/postgres-client.js';
import { logEnd, placeAt } from '../replication/postgres-log-store.js';
import { LmdbLog } from '../wal/lmdb-log.js';
import { LogRewind } from '../wal/log-rewind.js';

/** A local log that cannot be brought in line without an operator. */
export class DivergedLogError extends Error {
  override readonly name = 'DivergedLogError';
}

export interface Alignment {
  /** Seq the local log ends at now. */
  local_end_seq: number;
  /** Records dropped from its end, and from which seq on. */
  records_dropped: number;
  dropped_after_seq?: number;
  snapshots_removed: number;
  /** The group's log is empty and this node's is not: it holds the group's history until it uploads it. */
  seeding: boolean;
}

export async function alignWithGroup(dataDir: string, client: PostgresClient, recordsDroppedMax: number): Promise<Alignment> {
  const rewind = LogRewind.open(LmdbLog.directoryIn(dataDir));
  try {
    const localEnd = rewind.endSeq();
    const groupEnd = await logEnd(client);
    if (!groupEnd) return { local_end_seq: localEnd, records_dropped: 0, snapshots_removed: 0, seeding: localEnd > 0 };
    let keep: number | undefined;
    let differing = 0;
    for (const place of rewind.newestFirst()) {
      if (place.first_seq <= groupEnd.last_seq) {
        const stored = await placeAt(client, place.first_seq);
        if (stored && stored.last_seq === place.last_seq && stored.checksum.equals(place.checksum)) {
          keep = place.last_seq;
          break;
        }
      }
      differing += 1;
      if (differing > recordsDroppedMax) {
        throw new DivergedLogError(`the local log differs from the group's in more than its last ${recordsDroppedMax} records (it ends at seq ${localEnd}, the group's at ${groupEnd.last_seq}): this data directory belongs to another history; nothing was dropped`);
      }
    }
    if (keep === undefined) {
      if (localEnd === 0) return { local_end_seq: 0, records_dropped: 0, snapshots_removed: 0, seeding: false };
      throw new DivergedLogError(`the local log differs from the group's from its first record: this data directory belongs to another history (or to another group); nothing was dropped`);
    }
    const dropped = await rewind.dropAfter(keep);
    const snapshotsRemoved = dropped > 0 ? removeSnapshotsAfter(dataDir, keep) : 0;
    const alignment: Alignment = { local_end_seq: keep, records_dropped: dropped, snapshots_removed: snapshotsRemoved, seeding: false };
    if (dropped > 0) alignment.dropped_after_seq = keep;
    return alignment;
  } finally {
    await rewind.close();
  }
}

/** Snapshots of a history that no longer exists (they would never load: their log record is gone). */
function removeSnapshotsAfter(dataDir: string, seq: number): number {
  let removed = 0;
  for (const entry of listSnapshots(snapshotDirectoryIn(dataDir))) {
    if (entry.seq <= seq) continue;
    fs.rmSync(entry.file, { force: true });
    removed += 1;
  }
  return removed;
}
