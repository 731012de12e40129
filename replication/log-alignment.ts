// Bringing a node's local log in line with its group's before the node opens it (replication-node.ts
// runs this under the data directory's lock on every join). The group's log in PostgreSQL is the truth:
//   - records at the end of the local log that the group does not hold, or holds different bytes for,
//     and that this node sealed as the group's leader (the log's mark says so: wal/leader-seals.ts) were
//     never committed by the group, so never acknowledged: they are dropped (wal/log-rewind.ts), with the
//     snapshots taken after them. The lookups and the query index notice on opening that their
//     checkpoint is past the log's end or of another history and rebuild (lmdb-transaction-store.ts
//     catchUp, projector.ts sameHistory), so nothing they hold of those records survives;
//   - such records sealed any other way (the node served without its group: started without the URL, by
//     a version that did not refuse that; or they were restored, or copied from the group before its
//     database lost them) may have been acknowledged: they are never dropped, and the join is refused
//     naming their seqs (AcknowledgedAloneError) for an operator to resolve (docs/operations.md);
//   - a local log the group has never seen (an empty group, and this node's existing ledger) is kept:
//     this node may take the first term and upload it (seeding);
//   - anything else is refused, and nothing is dropped: more than `records_dropped_max` records to drop
//     (never more than a leader has in flight), or a local log that differs from the group's from its
//     first record (a node pointed at another group's database). An operator decides those.
// Once aligned the local log is a prefix of the group's, and the leader's mark is cleared.

import fs from 'node:fs';
import { listSnapshots, snapshotDirectoryIn } from '../snapshots/snapshot-directory.js';
import type { PostgresClient } from './postgres/postgres-client.js';
import { logEnd, placeAt } from './postgres/postgres-log-store.js';
import { LmdbLog } from '../wal/lmdb-log.js';
import { LogRewind } from '../wal/log-rewind.js';

/** A local log that cannot be brought in line without an operator. */
export class DivergedLogError extends Error {
  override readonly name = 'DivergedLogError';
}

/**
 * Records at the end of the local log that the group does not hold and that this node did not seal as the
 * group's leader: it may have acknowledged them alone, so they are not dropped.
 */
export class AcknowledgedAloneError extends Error {
  override readonly name = 'AcknowledgedAloneError';

  constructor(message: string, readonly first_seq: number | undefined, readonly last_seq: number) {
    super(message);
  }
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

/** What an operator can do with a data directory its group refuses (docs/operations.md says more). */
function resolution(dataDir: string): string {
  return `To keep this directory's ledger, make it an independent single-node ledger: \`folio replication leave --data ${dataDir}\`, then serve it without FOLIO_REPLICATION_URL. `
    + 'To rejoin the group, move the directory aside and start this node with an empty data directory: it copies the group\'s log '
    + '(docs/operations.md, "A data directory its group refuses")';
}

export async function alignWithGroup(dataDir: string, client: PostgresClient, recordsDroppedMax: number): Promise<Alignment> {
  const rewind = LogRewind.open(LmdbLog.directoryIn(dataDir));
  try {
    const localEnd = rewind.endSeq();
    const groupEnd = await logEnd(client);
    if (!groupEnd) return { local_end_seq: localEnd, records_dropped: 0, snapshots_removed: 0, seeding: localEnd > 0 };
    // Records starting past the group's end are not in it: counted, not compared. Those before it are
    // compared newest first, each with the group's record at its place, until one is the same.
    const beyond = rewind.recordsAfter(groupEnd.last_seq);
    let differing = beyond.count;
    let oldestDiffering = beyond.first_seq;
    let keep: number | undefined;
    let compared = 0;
    let exhausted = true;
    for (const place of rewind.newestFirst(groupEnd.last_seq)) {
      if (compared > recordsDroppedMax) {
        exhausted = false;
        break;
      }
      compared += 1;
      const stored = await placeAt(client, place.first_seq);
      if (stored && stored.last_seq === place.last_seq && stored.checksum.equals(place.checksum)) {
        keep = place.last_seq;
        break;
      }
      differing += 1;
      oldestDiffering = place.first_seq;
    }
    if (keep === undefined && exhausted) {
      if (localEnd === 0) return { local_end_seq: 0, records_dropped: 0, snapshots_removed: 0, seeding: false };
      throw new DivergedLogError(`the local log in ${dataDir} differs from the group's from its first record: this data directory belongs to another history (or to another group); nothing was dropped. ${resolution(dataDir)}`);
    }
    const leaderFrom = rewind.leaderSealsFromSeq();
    const sealedAsLeader = oldestDiffering === undefined || (leaderFrom !== undefined && oldestDiffering >= leaderFrom);
    if (!sealedAsLeader) {
      const seqs = keep === undefined ? `up to seq ${localEnd} (at least seqs ${oldestDiffering}-${localEnd})` : `seqs ${keep + 1}-${localEnd}`;
      throw new AcknowledgedAloneError(
        `the local log in ${dataDir} holds ${seqs}, which the group's log (ending at seq ${groupEnd.last_seq}) does not hold, and this node did not seal them as the group's leader: `
        + 'it may have acknowledged them alone, serving without its group (started without FOLIO_REPLICATION_URL, or by a version that did not refuse that), '
        + 'or copied them from the group before its database lost them. '
        + `Nothing was dropped. ${resolution(dataDir)}`,
        keep === undefined ? undefined : keep + 1, localEnd,
      );
    }
    if (keep === undefined || differing > recordsDroppedMax) {
      throw new DivergedLogError(`the local log in ${dataDir} differs from the group's in more than its last ${recordsDroppedMax} records (it ends at seq ${localEnd}, the group's at ${groupEnd.last_seq}): this data directory belongs to another history; nothing was dropped. ${resolution(dataDir)}`);
    }
    const dropped = await rewind.dropAfter(keep);
    const snapshotsRemoved = dropped > 0 ? removeSnapshotsAfter(dataDir, keep) : 0;
    await rewind.forgetLeaderSeals();
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
