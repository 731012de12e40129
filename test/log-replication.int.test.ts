// The LMDB log with a replicator (wal/lmdb-log.ts), on a real LMDB in a temp dir, with a replicator
// the test answers by hand, so every interleaving of the two commits is chosen, not raced:
//   - the disk is not held up by the replicator: records keep being sealed, handed over and written
//     while earlier ones wait for their replication, up to records_replicating_max;
//   - a record counts as durable only once its flush and its replication have both reported, and only
//     after every earlier record has: a later record committed first waits for the earlier one;
//   - a refusal stops the log: every waiter from the refused record on is refused, nothing more is taken.

import t from 'tap';
import type { LedgerEvent } from '../engine/events.js';
import { LmdbLog, type RecordReplicator, type SealedRecord } from '../wal/lmdb-log.js';
import { tempDataDir } from './helpers/test-server.js';

interface Handed {
  record: SealedRecord;
  resolve: () => void;
  reject: (error: Error) => void;
}

class HandReplicator implements RecordReplicator {
  readonly handed: Handed[] = [];
  replicate(record: SealedRecord): Promise<void> {
    return new Promise((resolve, reject) => this.handed.push({ record, resolve, reject }));
  }
}

const event = (at: number): LedgerEvent => ({ type: 'system.error', at });

/** Lets the event loop turn until `done` holds (at most `turns` times, each a few ms). */
async function until(what: string, done: () => boolean, turns = 2_000): Promise<void> {
  for (let turn = 0; !done(); turn += 1) {
    if (turn >= turns) throw new Error(`${what}: not reached`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

t.test('records go to disk while earlier ones wait for replication; durable only when both reported, in order', async (t) => {
  // Options as a variable, not a literal: the same test runs against a log without the replicating bound.
  const options = { dir: LmdbLog.directoryIn(tempDataDir('log-replication')), records_in_flight_max: 2, records_replicating_max: 8 };
  const log = LmdbLog.open(options);
  const replicator = new HandReplicator();
  log.replicateTo(replicator);
  const lost: Error[] = [];
  log.onReplicationLost((error) => lost.push(error));
  const outcomes: string[] = [];
  for (let seq = 1; seq <= 6; seq += 1) {
    log.appendAll([event(seq)]);
    void log.durable(seq).then(() => outcomes.push(`durable ${seq}`), (error: Error) => outcomes.push(`refused ${seq}: ${error.message}`));
    // Each event is sealed in a record of its own once the one before it is handed over.
    await until(`record ${seq} handed over`, () => replicator.handed.length === seq);
  }
  t.same(replicator.handed.map((handed) => [handed.record.first_seq, handed.record.last_seq]), [[1, 1], [2, 2], [3, 3], [4, 4], [5, 5], [6, 6]],
    'six records sealed and handed over while none was replicated: more than records_in_flight_max (2)');
  t.equal(log.durableSeq, 0, 'none is durable before its replication reports');

  replicator.handed[1]!.resolve();
  replicator.handed[2]!.resolve();
  await new Promise((resolve) => setTimeout(resolve, 20));
  t.equal(log.durableSeq, 0, 'records 2 and 3 replicated first still wait for record 1');
  t.same(outcomes, [], 'no waiter answered yet');

  replicator.handed[0]!.resolve();
  await log.durable(3);
  t.equal(log.durableSeq, 3, 'record 1 replicated: records 1 to 3 are durable together');
  t.same(outcomes, ['durable 1', 'durable 2', 'durable 3'], 'their waiters are answered in order');

  replicator.handed[4]!.resolve();
  replicator.handed[3]!.reject(new Error('refused by the group'));
  await until('waiters of records 4 to 6 answered', () => outcomes.length === 6);
  t.same(outcomes.slice(3), ['refused 4: refused by the group', 'refused 5: refused by the group', 'refused 6: refused by the group'],
    'record 4 refused: it and every later record are refused, even one the group took');
  t.equal(log.durableSeq, 3, 'the durable seq stays where it was');
  t.equal(lost.length, 1, 'the owner is told once');
  t.throws(() => log.appendAll([event(7)]), /refused by the group/, 'the log takes nothing more');
  await log.close();
});

t.test('without a replicator the bound is records_in_flight_max, as before', async (t) => {
  const log = LmdbLog.open({ dir: LmdbLog.directoryIn(tempDataDir('log-no-replication')), records_in_flight_max: 2, records_replicating_max: 8 });
  for (let seq = 1; seq <= 20; seq += 1) log.appendAll([event(seq)]);
  await log.flush();
  t.equal(log.durableSeq, 20, 'everything appended is durable after a flush');
  t.equal([...log.read(1)].length, 20, 'and reads back');
  await log.close();
});
