// The change feed's reads (http/routes/event-routes.ts readChanges, ReadTurns) and the sizes they count
// (wal/log-record-codec.ts sizedEvents): a read stops at its count, at its log bytes and at its rendered
// bytes, whichever comes first, takes one change however large, and never decodes a change it does not
// take; the bytes counted for each event are exactly the bytes it takes in its record; reads queued on
// one thread run one at a time in the order asked, and a long one is followed by a pause.

import t from 'tap';
import type { LedgerEvent } from '../engine/events.js';
import {
  FEED_PAGE_BYTES_MAX, FEED_READ_LOG_BYTES_MAX, ReadTurns, readChanges, type ChangeFeedPort, type FeedChange,
} from '../http/routes/event-routes.js';
import { encodeLogRecord, GENESIS_CHECKSUM, openLogRecord } from '../wal/log-record-codec.js';

/** An event whose rendering is about `renderedBytes` long. */
function eventOf(renderedBytes: number): LedgerEvent {
  return { type: 'identity.deleted', at: 0, deleted_identities: ['x'.repeat(renderedBytes)] };
}

/** A feed of `committed` changes, each `logBytes` in the log and about `renderedBytes` rendered, counting how many were decoded. */
function feedOf(committed: number, logBytes: number, renderedBytes: number): ChangeFeedPort & { decoded: number } {
  const feed = {
    decoded: 0,
    committedSeq: () => committed,
    *changesAfter(afterSeq: number): Generator<FeedChange> {
      for (let seq = afterSeq + 1; seq <= committed; seq += 1) {
        feed.decoded += 1;
        yield { seq, event: eventOf(renderedBytes), bytes: logBytes };
      }
    },
    subscribe: () => () => undefined,
  };
  return feed;
}

function read(feed: ChangeFeedPort, afterSeq: number, eventsMax: number): { seqs: number[]; rendered: number } {
  const seqs: number[] = [];
  let rendered = 0;
  readChanges(feed, afterSeq, eventsMax, (seq, _type, json) => {
    seqs.push(seq);
    rendered += json.length;
  });
  return { seqs, rendered };
}

t.test('a read stops once its log bytes pass the budget, and decodes nothing it does not take', async (t) => {
  const logBytes = 300 * 1024;
  const feed = feedOf(1_000, logBytes, 100);
  const { seqs } = read(feed, 0, 1_000);
  const expected = Math.ceil(FEED_READ_LOG_BYTES_MAX / logBytes);
  t.same(seqs, Array.from({ length: expected }, (_, index) => index + 1), `${expected} changes of ${logBytes} log bytes, in order`);
  t.equal(feed.decoded, expected, 'no change decoded beyond the ones taken');
});

t.test('a read stops once its rendered bytes pass the budget', async (t) => {
  const feed = feedOf(1_000, 10, 200 * 1024);
  const { seqs, rendered } = read(feed, 10, 1_000);
  t.equal(seqs[0], 11, 'from the cursor');
  t.ok(rendered >= FEED_PAGE_BYTES_MAX && rendered < FEED_PAGE_BYTES_MAX + 201 * 1024, `past the budget by less than one change (${rendered} bytes)`);
  t.equal(feed.decoded, seqs.length, 'no change decoded beyond the ones taken');
});

t.test('a read takes one change however large, and no more', async (t) => {
  const feed = feedOf(5, 64 * 1024 * 1024, 3 * 1024 * 1024);
  t.same(read(feed, 0, 1_000).seqs, [1]);
  t.equal(feed.decoded, 1);
});

t.test('a read stops at its count, and at the committed end', async (t) => {
  const small = feedOf(1_000, 10, 10);
  t.equal(read(small, 0, 256).seqs.length, 256);
  t.same(read(small, 995, 256).seqs, [996, 997, 998, 999, 1_000]);
  small.decoded = 0;
  t.same(read(small, 1_000, 256).seqs, [], 'nothing after the end');
  t.equal(small.decoded, 0);
});

t.test('each event is counted with exactly the bytes it takes in its record', async (t) => {
  const events = [eventOf(10), eventOf(5_000), eventOf(70_000), { type: 'ledger.created', at: 1, ledgers: [] } as unknown as LedgerEvent];
  const record = encodeLogRecord({ first_seq: 1, prev_checksum: GENESIS_CHECKSUM, events });
  const sizes = [...openLogRecord(1, record).sizedEvents()].map((sized) => sized.bytes);
  const header = 32 + 1 + 8 + 32 + 4;
  t.equal(sizes.reduce((sum, bytes) => sum + bytes, 0), record.length - header, 'the sizes add up to the record\'s events');
  t.ok(sizes[2]! > 70_000 && sizes[1]! > 5_000 && sizes[0]! < 100, `each its own (${sizes.join(', ')})`);
  t.same([...openLogRecord(1, record).sizedEvents()].map((sized) => sized.event), [...openLogRecord(1, record).events()], 'the same events as events()');
});

t.test('reads on one thread run one at a time, in order, and a long one is followed by as long a pause', async (t) => {
  const turns = new ReadTurns();
  const order: string[] = [];
  const busyMs = 40;
  let longEnded = 0;
  let nextStarted = 0;
  await Promise.all([
    turns.run(() => {
      order.push('a1');
      const until = performance.now() + busyMs;
      while (performance.now() < until);
      longEnded = performance.now();
    }),
    turns.run(() => {
      nextStarted = performance.now();
      order.push('b1');
    }),
    turns.run(() => order.push('c1')),
  ]);
  t.same(order, ['a1', 'b1', 'c1'], 'in the order asked');
  t.ok(nextStarted - longEnded >= busyMs - 1, `the read after a ${busyMs} ms one waited ${(nextStarted - longEnded).toFixed(1)} ms`);
  await t.rejects(turns.run(() => {
    throw new Error('the log closed');
  }), /the log closed/, 'a read that fails rejects its own turn');
  t.equal(await turns.run(() => 7), 7, 'and the turns go on');
});
