// A copy of the working state kept by applying the log's records, whole records at a time, with the
// engine's own applyEvent. The snapshot worker keeps one beside the server and writes snapshots from
// it; restore and verify build one too. It remembers the key and checksum of the last record applied,
// which a snapshot records to tie itself to the log, and it refuses records that do not follow on.

import type { LoggedEvent } from '../engine/events.js';
import { applyEvent, LedgerState } from '../engine/ledger-state.js';
import { CorruptRecordError, GENESIS_CHECKSUM } from '../wal/log-record-codec.js';
import type { LogRecordSource } from '../wal/log-reader.js';
import type { LoadedSnapshot } from '../snapshots/snapshot-loader.js';
import type { SnapshotIdentity } from '../snapshots/snapshot-directory.js';
import { NullTransactionStore } from '../lookups/null-transaction-store.js';
import { stateHash } from '../snapshots/state-hash.js';
import { restoreVerified } from '../snapshots/state-restore.js';
import { readSnapshot, SnapshotFileError, type SnapshotHeader } from '../snapshots/snapshot-file.js';

export class StateReplica {
  readonly state = new LedgerState(new NullTransactionStore());
  private _appliedSeq = 0;
  private lastRecordKey = 0;
  private lastChecksum: Buffer = GENESIS_CHECKSUM;

  /**
   * A replica starting from a loaded snapshot, or from genesis without one. The restore is verified
   * (restoreVerified): a SnapshotFileError says the snapshot did not restore into the state it records.
   */
  static from(loaded: LoadedSnapshot | undefined): StateReplica {
    const replica = new StateReplica();
    if (loaded) {
      restoreVerified(replica.state, loaded.contents);
      const header = loaded.contents.header;
      replica._appliedSeq = header.seq;
      replica.lastRecordKey = header.log_record_key;
      replica.lastChecksum = Buffer.from(header.log_checksum, 'hex');
    }
    return replica;
  }

  get appliedSeq(): number {
    return this._appliedSeq;
  }

  /**
   * Applies the records after the applied seq whose last event is at most `toSeq`, and returns how
   * many events that was. Records are applied whole, so the replica always stands at a record's end.
   */
  catchUp(log: LogRecordSource, toSeq: number, onEvent?: (logged: LoggedEvent) => void): number {
    let applied = 0;
    if (toSeq <= this._appliedSeq) return 0;
    for (const logRecord of log.logRecords(this._appliedSeq + 1)) {
      if (logRecord.last_seq > toSeq) break;
      if (logRecord.first_seq !== this._appliedSeq + 1) {
        throw new CorruptRecordError(logRecord.first_seq, `expected a record starting at seq ${this._appliedSeq + 1}`);
      }
      if (!logRecord.prev_checksum.equals(this.lastChecksum)) {
        throw new CorruptRecordError(logRecord.first_seq, 'does not chain to the record before it');
      }
      for (let index = 0; index < logRecord.events.length; index += 1) {
        const event = logRecord.events[index] as LoggedEvent['event'];
        onEvent?.({ seq: logRecord.first_seq + index, event });
        applyEvent(this.state, event, { owned: true });
      }
      applied += logRecord.events.length;
      this._appliedSeq = logRecord.last_seq;
      this.lastRecordKey = logRecord.first_seq;
      this.lastChecksum = logRecord.checksum;
    }
    return applied;
  }

  /** What a snapshot of the replica as it stands records about itself (hashing the state takes a while). */
  identity(createdAt: number): SnapshotIdentity {
    return {
      seq: this._appliedSeq,
      log_record_key: this.lastRecordKey,
      log_checksum: this.lastChecksum.toString('hex'),
      state_hash: stateHash(this.state),
      created_at: createdAt,
    };
  }
}

/**
 * A snapshot is published only once it reads back into the state it was written from: restored from the
 * file, the state must hash to the hash its header records (the hash of the state written). Restarts
 * and later snapshots start from the newest file, so one that does not read back would lose records
 * silently, for good (restoreVerified checks the same on every restore that follows).
 */
export function checkReadsBack(file: string, header: SnapshotHeader): void {
  const contents = readSnapshot(file);
  if (contents.header.state_hash !== header.state_hash) throw new SnapshotFileError(file, 'corrupt', 'it does not carry the header it was written with');
  restoreVerified(new LedgerState(new NullTransactionStore()), contents);
}
