// The projector's queue of records pushed by the main thread: reading any range gives exactly the events
// the log holds, taking them from pushed records where it can and from the log where it must (gaps,
// records dropped past the cap, a range reaching past what was pushed), and a pushed record that does
// not chain to the one before it is refused like a damaged log record. With a spill file, records past
// the cap are read back from it instead of from the log; a spill that is full or cannot be read leaves
// them to the log, with the same events either way.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import type { LedgerEvent, LoggedEvent } from '../engine/events.js';
import { packRecords, PushedRecords } from '../index/pushed-records.js';
import { RecordSpill, spillFileFor } from '../index/record-spill.js';
import { CorruptRecordError, decodeLogRecord, encodeLogRecord, GENESIS_CHECKSUM } from '../wal/log-record-codec.js';

const CODEC = { decode: decodeLogRecord, corrupt: (key: number, detail: string) => new CorruptRecordError(key, detail) };

interface Record {
  first_seq: number;
  last_seq: number;
  bytes: Buffer;
}

/** A log of `count` records holding 1 to 3 events each, and the events by seq. */
function makeLog(count: number): { records: Record[]; events: LedgerEvent[] } {
  const records: Record[] = [];
  const events: LedgerEvent[] = [];
  let previous = GENESIS_CHECKSUM;
  let seq = 1;
  for (let index = 0; index < count; index += 1) {
    const recordEvents: LedgerEvent[] = Array.from({ length: 1 + (index % 3) }, (_, offset) => ({ type: 'ledger.created', at: 1000 + seq + offset }));
    const bytes = encodeLogRecord({ first_seq: seq, prev_checksum: previous, events: recordEvents });
    records.push({ first_seq: seq, last_seq: seq + recordEvents.length - 1, bytes });
    events.push(...recordEvents);
    previous = Buffer.from(bytes.subarray(0, 32));
    seq += recordEvents.length;
  }
  return { records, events };
}

function fallbackFrom(events: LedgerEvent[], calls: Array<[number, number]>) {
  return function* (fromSeq: number, toSeq: number): Generator<LoggedEvent> {
    calls.push([fromSeq, toSeq]);
    for (let seq = fromSeq; seq <= Math.min(toSeq, events.length); seq += 1) yield { seq, event: events[seq - 1] as LedgerEvent };
  };
}

const ats = (logged: Iterable<LoggedEvent>): number[] => [...logged].map(({ seq, event }) => seq * 10_000 + event.at);
const expected = (events: LedgerEvent[], from: number, to: number): number[] =>
  events.slice(from - 1, to).map((event, index) => (from + index) * 10_000 + event.at);

t.test('ranges come out whole, from pushed records and the log alike', async (t) => {
  const { records, events } = makeLog(30);
  const last = events.length;
  for (const [from, to] of [[1, last], [5, 17], [2, 2], [last - 3, last + 10]] as Array<[number, number]>) {
    const queue = new PushedRecords(CODEC);
    // Push only the middle third: the start and the end must come from the log.
    queue.push(packRecords(records.slice(10, 20)));
    const calls: Array<[number, number]> = [];
    t.same(ats(queue.read(from, to, fallbackFrom(events, calls))), expected(events, from, Math.min(to, last)), `events ${from}..${to}`);
  }
});

t.test('pushed records are used, and let go once passed', async (t) => {
  const { records, events } = makeLog(12);
  const queue = new PushedRecords(CODEC);
  queue.push(packRecords(records));
  const calls: Array<[number, number]> = [];
  t.same(ats(queue.read(1, 8, fallbackFrom(events, calls))), expected(events, 1, 8));
  t.same(calls, [], 'nothing read from the log');
  const before = queue.bytes;
  t.same(ats(queue.read(9, events.length, fallbackFrom(events, calls))), expected(events, 9, events.length));
  t.ok(queue.bytes < before, 'passed records are freed');
  t.same(calls, [], 'still nothing from the log');
  t.same(ats(queue.read(3, 6, fallbackFrom(events, calls))), expected(events, 3, 6), 'reading again (a rolled back batch) goes to the log');
  t.same(calls, [[3, 6]]);
});

t.test('past the cap the oldest records are dropped and read from the log instead', async (t) => {
  const { records, events } = makeLog(20);
  const recordBytes = records[0]!.bytes.length;
  const queue = new PushedRecords(CODEC, recordBytes * 5);
  queue.push(packRecords(records.slice(0, 10)));
  queue.push(packRecords(records.slice(10)));
  const calls: Array<[number, number]> = [];
  t.same(ats(queue.read(1, events.length, fallbackFrom(events, calls))), expected(events, 1, events.length));
  t.equal(calls.length, 1, 'one stretch from the log');
  t.equal(calls[0]![0], 1, 'starting at the beginning');
});

t.test('a gap in what was pushed starts the queue over', async (t) => {
  const { records, events } = makeLog(10);
  const queue = new PushedRecords(CODEC);
  queue.push(packRecords(records.slice(0, 3)));
  queue.push(packRecords(records.slice(5)));
  const calls: Array<[number, number]> = [];
  t.same(ats(queue.read(1, events.length, fallbackFrom(events, calls))), expected(events, 1, events.length));
  t.same(calls, [[1, records[4]!.last_seq]], 'the part before the restart comes from the log');
});

t.test('a pushed record that does not chain to the one before it is refused', async (t) => {
  const { records, events } = makeLog(4);
  const queue = new PushedRecords(CODEC);
  const forged = { ...records[2]!, bytes: encodeLogRecord({ first_seq: records[2]!.first_seq, prev_checksum: Buffer.alloc(32, 7), events: [{ type: 'ledger.created', at: 1 }, { type: 'ledger.created', at: 2 }, { type: 'ledger.created', at: 3 }] }) };
  queue.push(packRecords([records[0]!, records[1]!, forged, records[3]!]));
  t.throws(() => [...queue.read(1, events.length, fallbackFrom(events, []))], CorruptRecordError);
});

/** A spill file in a fresh directory, closed and removed at the end of the test. */
function spillIn(t: Test, bytesMax?: number): { spill: RecordSpill; dir: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-spill-'));
  const spill = new RecordSpill(spillFileFor(path.join(dir, 'index.sqlite')), bytesMax);
  t.teardown(() => {
    spill.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { spill, dir };
}

t.test('past the cap the oldest records go to the spill file and are read back from it, not from the log', async (t) => {
  const { records, events } = makeLog(20);
  const recordBytes = records[0]!.bytes.length;
  const { spill, dir } = spillIn(t);
  const queue = new PushedRecords(CODEC, recordBytes * 5, spill);
  queue.push(packRecords(records.slice(0, 10)));
  queue.push(packRecords(records.slice(10)));
  t.ok(queue.spilledRecords >= 10, `${queue.spilledRecords} records spilled`);
  t.ok(queue.bytes <= recordBytes * 5 + 2 * recordBytes, 'memory stays near the cap');
  const calls: Array<[number, number]> = [];
  t.same(ats(queue.read(1, 9, fallbackFrom(events, calls))), expected(events, 1, 9));
  t.same(ats(queue.read(10, events.length, fallbackFrom(events, calls))), expected(events, 10, events.length));
  t.same(calls, [], 'nothing read from the log');
  t.equal(queue.spilledRecords, 0, 'read records are let go');
  t.equal(spill.bytes, 0, 'and the file emptied');
  t.equal(fs.statSync(path.join(dir, 'index.sqlite-spill')).size, 0, 'on disk too');
  spill.close();
  t.same(fs.readdirSync(dir), [], 'closing removes it');
});

t.test('a full spill leaves the records past it to the log', async (t) => {
  const { records, events } = makeLog(20);
  const recordBytes = records[0]!.bytes.length;
  const { spill } = spillIn(t, recordBytes * 4);
  const queue = new PushedRecords(CODEC, recordBytes * 5, spill);
  queue.push(packRecords(records));
  t.ok(queue.spilledRecords > 0 && queue.spilledRecords <= 4, `${queue.spilledRecords} records spilled`);
  const calls: Array<[number, number]> = [];
  t.same(ats(queue.read(1, events.length, fallbackFrom(events, calls))), expected(events, 1, events.length));
  t.equal(calls.length, 1, 'one stretch from the log: between the spilled and the held records');
  t.ok(calls[0]![0] > 1, 'after the spilled ones');
});

t.test('a spill that cannot be read back is given up, and the log answers', async (t) => {
  const { records, events } = makeLog(20);
  const recordBytes = records[0]!.bytes.length;
  const { spill } = spillIn(t);
  const queue = new PushedRecords(CODEC, recordBytes * 5, spill);
  queue.push(packRecords(records));
  t.ok(queue.spilledRecords > 0);
  spill.close(); // closed and removed: reads fail
  const calls: Array<[number, number]> = [];
  t.same(ats(queue.read(1, events.length, fallbackFrom(events, calls))), expected(events, 1, events.length));
  t.equal(calls[0]![0], 1, 'from the start, from the log');
  t.equal(queue.spilledRecords, 0);
});

t.test('spilled records are checked like held ones', async (t) => {
  const { records, events } = makeLog(8);
  const recordBytes = records[0]!.bytes.length;
  const { spill } = spillIn(t);
  const queue = new PushedRecords(CODEC, recordBytes, spill);
  const forged = { ...records[2]!, bytes: encodeLogRecord({ first_seq: records[2]!.first_seq, prev_checksum: Buffer.alloc(32, 7), events: [{ type: 'ledger.created', at: 1 }, { type: 'ledger.created', at: 2 }, { type: 'ledger.created', at: 3 }] }) };
  queue.push(packRecords([records[0]!, records[1]!, forged, ...records.slice(3)]));
  t.ok(queue.spilledRecords >= 3, 'the forged record was spilled');
  t.throws(() => [...queue.read(1, events.length, fallbackFrom(events, []))], CorruptRecordError);
});
