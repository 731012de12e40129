// The one feed of durable log records (wal/durable-records.ts), on a real LMDB log in a temp dir:
// subscribers get each record once it is durable, in order, with its bytes and its events; a reader of
// recent events gets the very objects the engine appended (no read-back from LMDB, no decoding), and one
// that starts before what is held reads the log for that part and the held records for the rest.

import t from 'tap';
import type { LedgerEvent } from '../engine/events.js';
import { DurableRecords } from '../wal/durable-records.js';
import { LmdbLog } from '../wal/lmdb-log.js';
import { tempDataDir } from './helpers/test-server.js';

const event = (at: number): LedgerEvent => ({ type: 'system.error', at });

async function appendRecords(log: LmdbLog, records: number, eventsPerRecord: number): Promise<LedgerEvent[]> {
  const appended: LedgerEvent[] = [];
  for (let record = 0; record < records; record += 1) {
    const events = Array.from({ length: eventsPerRecord }, (_, index) => event(record * 1_000 + index));
    appended.push(...events);
    await log.durable(log.appendAll(events));
  }
  return appended;
}

/** The size in the log of a record of `events` events like appendRecords writes. */
async function recordBytes(events: number): Promise<number> {
  const log = LmdbLog.open({ dir: LmdbLog.directoryIn(tempDataDir('durable-records-size')) });
  let bytes = 0;
  log.onDurableRecord((record) => {
    bytes = record.bytes?.length ?? 0;
  });
  await appendRecords(log, 1, events);
  await log.close();
  return bytes;
}

t.test('recent events are the objects appended; older ones come from the log, equal', async (t) => {
  const log = LmdbLog.open({ dir: LmdbLog.directoryIn(tempDataDir('durable-records')) });
  t.teardown(() => log.close());
  // Room for two and a half records: the last two are held.
  const feed = new DurableRecords(log, { bytes_held_max: Math.floor((await recordBytes(4)) * 2.5) });
  [...feed.read(1, 0)]; // a reader: records are kept from now on
  const seen: Array<[number, number, number | undefined]> = [];
  feed.subscribe((record) => seen.push([record.first_seq, record.last_seq, record.bytes?.length]));
  const appended = await appendRecords(log, 6, 4);
  t.same(seen.map(([first, last]) => [first, last]), [[1, 4], [5, 8], [9, 12], [13, 16], [17, 20], [21, 24]], 'every record once, in order');
  t.ok(seen.every(([, , bytes]) => bytes !== undefined && bytes > 0), 'with its bytes');

  const all = [...feed.read(1, 24)];
  t.same(all.map((logged) => logged.seq), Array.from({ length: 24 }, (_, index) => index + 1), 'every seq once, in order');
  t.same(all.map((logged) => logged.event), appended, 'the same events');
  t.ok(all.slice(16).every((logged, index) => logged.event === appended[16 + index]), 'held events are the appended objects themselves');
  t.ok(all.slice(0, 16).every((logged, index) => logged.event !== appended[index]), 'older ones were read back from the log');
  t.same([...feed.read(14, 18)].map((logged) => logged.seq), [14, 15, 16, 17, 18], 'a range inside what is held');
  t.same([...feed.read(10, 14)].map((logged) => logged.seq), [10, 11, 12, 13, 14], 'a range across the edge');
  t.same([...feed.read(20, 1_000)].map((logged) => logged.seq), [20, 21, 22, 23, 24], 'never past the durable seq');
});

t.test('with no reader nothing is kept: events are read back from the log', async (t) => {
  const log = LmdbLog.open({ dir: LmdbLog.directoryIn(tempDataDir('durable-records-unread')) });
  t.teardown(() => log.close());
  const feed = new DurableRecords(log);
  const appended = await appendRecords(log, 3, 2);
  const all = [...feed.read(1, 6)];
  t.same(all.map((logged) => logged.event), appended, 'the same events');
  t.ok(all.every((logged, index) => logged.event !== appended[index]), 'none kept while nobody read');
});

t.test('a record appended and not yet durable is not read', async (t) => {
  const log = LmdbLog.open({ dir: LmdbLog.directoryIn(tempDataDir('durable-records-pending')) });
  t.teardown(() => log.close());
  const feed = new DurableRecords(log);
  await appendRecords(log, 1, 2);
  const seq = log.appendAll([event(9)]);
  t.same([...feed.read(1, seq)].map((logged) => logged.seq), [1, 2], 'only what is durable');
  await log.durable(seq);
  t.same([...feed.read(1, seq)].map((logged) => logged.seq), [1, 2, 3]);
});
