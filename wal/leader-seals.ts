// Which records at the end of the log this node sealed as its replicated group's leader: the only records
// a node may drop when it rejoins (replication/log-alignment.ts). A record the group never committed was never
// acknowledged only if it was sealed under a term, by a leader whose acknowledgements waited for the
// group; a record sealed any other way (as a single node, by a version that kept no such mark, copied by
// a cutover follower, restored) may have been acknowledged by this node alone, and is never dropped.
//
// The mark is one value, `leader_seals_from_seq`, in a small database of the log's own LMDB environment
// (so it goes wherever the log goes: a backup copies it): every record from that seq to the log's end was
// sealed by this node as the leader. It is written, and flushed, when a node takes the lead and before
// it seals its first record of the term (LmdbLog.sealAsLeader); removed, and flushed, when a ledger
// opens without a group, before it appends anything (LmdbLog.sealAsSingleNode), when a leader closes its
// log with every record committed (LmdbLog.close), and when a rejoining node has aligned its log with the
// group's (LogRewind.forgetLeaderSeals). Nothing is written per record.

import type { Database, RootDatabase } from 'lmdb';

const MARKS_DB_NAME = 'marks';
const LEADER_SEALS_FROM_KEY = 'leader_seals_from_seq';

export class LeaderSeals {
  private constructor(private readonly marks: Database<number, string>) {}

  /** The marks of the log environment `env` (the database is made the first time). */
  static in(env: RootDatabase): LeaderSeals {
    return new LeaderSeals(env.openDB<number, string>({ name: MARKS_DB_NAME, encoding: 'msgpack' }));
  }

  /** The seq from which this node sealed the log's records as the group's leader, if it did. */
  fromSeq(): number | undefined {
    const seq = this.marks.get(LEADER_SEALS_FROM_KEY);
    return typeof seq === 'number' ? seq : undefined;
  }

  /** Sets (a seq) or removes (undefined) the mark, and waits until it is on disk. */
  async set(seq: number | undefined): Promise<void> {
    if (seq === this.fromSeq()) return;
    const written = (seq === undefined ? this.marks.remove(LEADER_SEALS_FROM_KEY) : this.marks.put(LEADER_SEALS_FROM_KEY, seq)) as Promise<boolean> & { flushed?: Promise<unknown> };
    await written;
    await (written.flushed ?? this.marks.flushed);
  }
}
