// A log whose disk refused one record but took the next (wal/gap-at-end.ts): the nemesis's full disk left
// node logs holding 1..493 and 496.., and the node could never open its log again ("log record 496 is
// corrupt: expected first seq 494"). The records past the gap were never durable, so never acknowledged:
// opening the log drops them, the engine replays what is left and the log goes on from there. A gap
// further back than any writer has in flight is corruption, and still refused.

import { open } from 'lmdb';
import t from 'tap';
import { LedgerEngine } from '../engine/ledger-engine.js';
import { LmdbTransactionStore } from '../lookups/lmdb-transaction-store.js';
import { RECORDS_PAST_GAP_MAX } from '../wal/gap-at-end.js';
import { checkedRecords } from '../wal/log-record-codec.js';
import { LmdbLog } from '../wal/lmdb-log.js';
import { LogRewind } from '../wal/log-rewind.js';
import { CountingIds, FakeClock, transfer } from './helpers/engine-rig.js';
import { tempDataDir } from './helpers/test-server.js';

/** Writes `count` transfers, each waited for, so each is a record of its own; the records' keys, and the log's end. */
async function writeRecords(dataDir: string, count: number): Promise<number[] & { end?: number }> {
  const log = LmdbLog.open({ dir: LmdbLog.directoryIn(dataDir) });
  const store = LmdbTransactionStore.open(LmdbTransactionStore.directoryIn(dataDir), log);
  const engine = new LedgerEngine({ clock: new FakeClock(), ids: new CountingIds(), log, transactions: store });
  for (const { event } of log.read(1)) engine.replay(event);
  engine.run({ op: 'genesis.ensure' });
  for (let index = 0; index < count; index += 1) {
    const outcome = engine.run({ op: 'transaction.create', ...transfer({ source: '@world', destination: '@payee', precise_amount: 1n, allow_overdraft: true, skip_queue: true }) });
    if (!outcome.ok) throw new Error(outcome.rejection.message);
    await log.durable(log.appendedSeq);
  }
  const keys: number[] & { end?: number } = [...log.logRecords()].map((record) => record.first_seq);
  keys.end = log.appendedSeq;
  await log.close();
  await store.close();
  return keys;
}

/** Removes one record behind the log's back, as a commit the disk refused leaves it. */
async function removeRecord(dataDir: string, key: number): Promise<void> {
  const env = open({ path: LmdbLog.directoryIn(dataDir), maxDbs: 4, mapSize: 1024 ** 3 });
  const records = env.openDB<Buffer, number>({ name: 'log', encoding: 'binary' });
  await records.remove(key);
  await env.close();
}

function chainHolds(log: LmdbLog): boolean {
  const entries = [...log.logRecords()].map((record) => ({ key: record.first_seq, value: log.rawRecord(record.first_seq) as Buffer }));
  return [...checkedRecords(entries)].length === entries.length;
}

t.test('records past a gap at the end are dropped on opening; the log goes on from the gap', async (t) => {
  const dataDir = tempDataDir('folio-gap-at-end');
  const keys = await writeRecords(dataDir, 6);
  const missing = keys[keys.length - 2] as number;
  const last = keys[keys.length - 1] as number;
  await removeRecord(dataDir, missing);

  // A reader's thread (the index's, the history's) takes the log as it finds it: the owner drops, not it.
  const reader = LmdbLog.open({ dir: LmdbLog.directoryIn(dataDir), reader: true });
  t.equal(reader.gapDropped, undefined, 'a reader drops nothing');
  t.ok(reader.rawRecord(last) !== undefined, 'and the record past the gap is still there for the owner to judge');
  await reader.close();

  const log = LmdbLog.open({ dir: LmdbLog.directoryIn(dataDir) });
  t.same(log.gapDropped, { kept_seq: missing - 1, dropped_from_seq: last, records_dropped: 1 }, 'the record past the gap is reported dropped');
  t.equal(log.appendedSeq, missing - 1, 'the log ends where the disk holds it without a gap');
  t.ok(chainHolds(log), 'what is left chains');
  await log.close();

  // The engine replays it and goes on writing: the records it writes next take the missing seqs.
  const more = await writeRecords(dataDir, 2);
  t.ok(more.includes(missing), `the next record starts at seq ${missing} again`);
  const reopened = LmdbLog.open({ dir: LmdbLog.directoryIn(dataDir) });
  t.equal(reopened.gapDropped, undefined, 'nothing to drop the second time');
  t.ok(chainHolds(reopened), 'the log chains from its first record to its last');
  await reopened.close();
});

t.test('a rejoining node compares only what its disk holds without a gap', async (t) => {
  const dataDir = tempDataDir('folio-gap-at-end-rewind');
  const keys = await writeRecords(dataDir, 4);
  await removeRecord(dataDir, keys[keys.length - 2] as number);
  const rewind = LogRewind.open(LmdbLog.directoryIn(dataDir));
  t.equal(rewind.endSeq(), (keys[keys.length - 2] as number) - 1, 'the rewind sees the log ending before the gap');
  await rewind.close();
});

t.test('a gap further back than a writer has in flight is not dropped: the chain check refuses it', async (t) => {
  const dataDir = tempDataDir('folio-gap-deep');
  const keys = await writeRecords(dataDir, RECORDS_PAST_GAP_MAX + 4);
  const deep = keys[keys.length - RECORDS_PAST_GAP_MAX - 2] as number;
  await removeRecord(dataDir, deep);
  const log = LmdbLog.open({ dir: LmdbLog.directoryIn(dataDir) });
  t.equal(log.gapDropped, undefined, 'nothing dropped');
  t.equal(log.appendedSeq, keys.end, 'the log still ends at its last record');
  t.throws(() => [...log.read(1)], /expected first seq/, 'reading across the gap is refused as corruption');
  await log.close();
});
