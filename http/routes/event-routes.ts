// GET /events (master key): every committed change, in log order, from any node (each serves its own
// copy of the group's log; seqs are the same everywhere), resumable from a cursor: the seq of the last
// change the consumer processed. Two forms:
//   - JSON pages: `?after=<cursor>&limit=<n>` answers `{events, next, has_more}`; pass `next` as `after`;
//   - Server-Sent Events (`Accept: text/event-stream`): each change as `id: <seq>`, `event: <type>`,
//     `data: <json>`; a reconnecting EventSource sends `Last-Event-ID`, which wins over `after`, so the
//     stream resumes right after the last change received: none twice, none missed.
// Only committed changes are shown (durable, and on a replicated group committed in PostgreSQL): what a
// crash or a failover could take back never reaches a consumer. A cursor past the last committed change
// waits up to FEED_CURSOR_WAIT_MS for the log to reach it (a standby behind the leader the consumer last
// read, or a worker whose view of the log is a message behind another's), then is refused with 409
// FEED_CURSOR_AHEAD saying where the log ends: after a restore to an earlier point a consumer learns it
// instead of silently skipping what is written again under the seqs it already saw.
//
// Every read of the log is bounded by count and by bytes, whichever ends it first (and always takes one
// change when there is one, so a change larger than the bounds still goes out): once FEED_READ_LOG_BYTES_MAX
// bytes of log records are decoded or FEED_PAGE_BYTES_MAX bytes of JSON rendered, the read stops before
// it decodes the next change. Changes are decoded one at a time as the read pulls them (runtime/change-feed.ts:
// in an HTTP worker straight from the log's LMDB file, so the engine's thread does nothing per read). A
// page is one read; a stream makes one read at a time until it has caught up, and reads again only once
// its client has taken what it wrote ('drain'), so no more than about a read's bytes wait for a client.
// The reads of one thread take turns (ReadTurns): one per turn of the event loop, with a pause after a
// long one, so streams catching up over large changes leave the thread to writes in between. Streams are
// bounded: FEED_STREAMS_MAX at once per HTTP thread (503 FEED_STREAMS_EXCEEDED beyond), each at most
// FEED_STREAM_MS_MAX (then ended: the client reconnects with its Last-Event-ID), a comment every
// FEED_HEARTBEAT_MS to keep proxies from closing an idle stream.

import type { Router } from '@koa/router';
import type Koa from 'koa';
import { PassThrough } from 'node:stream';
import { z } from 'zod';
import type { LedgerEvent } from '../../engine/events.js';
import { toJsonText } from '../../wire/json-text.js';
import { ApiError, BACKPRESSURE_RETRY_AFTER_SECONDS } from '../api-error.js';
import { changeView } from '../views/change-view.js';
import { answers, describeRoute } from '../openapi/route-docs.js';
import { validate } from '../schemas/validation.js';

export const FEED_STREAMS_MAX = 32;
export const FEED_STREAM_MS_MAX = 10 * 60_000;
export const FEED_HEARTBEAT_MS = 15_000;
export const FEED_PAGE_EVENTS_MAX = 1_000;
export const FEED_PAGE_EVENTS_DEFAULT = 100;
/** JSON rendered by one read (a page, or a stream's turn), past which it takes no further change. */
export const FEED_PAGE_BYTES_MAX = 1 << 20;
/** Log record bytes decoded by one read, past which it takes no further change. */
export const FEED_READ_LOG_BYTES_MAX = 1 << 20;
/** Changes one turn of a stream reads. */
export const STREAM_EVENTS_PER_READ = 256;
/** How long a cursor past the last committed change waits for the log to reach it before it is refused. */
export const FEED_CURSOR_WAIT_MS = 5_000;
/** A read that held its thread this long is followed by as long a pause before the next (ReadTurns). */
const READ_PAUSE_FROM_MS = 10;
/** What an EventSource waits before reconnecting (the SSE `retry` field). */
const RECONNECT_MS = 1_000;
const CURSOR_TEXT = /^[0-9]{1,16}$/;

/** A committed change as the feed reads it: its seq, the event, and the bytes it takes in the log. */
export interface FeedChange {
  seq: number;
  event: LedgerEvent;
  bytes: number;
}

/** What the feed needs from the ledger (runtime/change-feed.ts). */
export interface ChangeFeedPort {
  /** The seq of the last committed change. */
  committedSeq(): number;
  /**
   * Committed changes after `afterSeq`, in order, each decoded only when it is pulled. A reader pulls what
   * its bounds allow and lets go of the iterator in the same turn (it reads the log as it stands now).
   */
  changesAfter(afterSeq: number): Iterable<FeedChange>;
  /** Calls `listener` whenever more is committed; returns what stops it. */
  subscribe(listener: () => void): () => void;
}

/** Ends every open stream (the server is stopping, or the node closing its ledger). */
export interface FeedStreams {
  endAll(): void;
}

export const eventsQuerySchema = z.object({
  after: z.string().optional().meta({ description: 'the cursor: the seq of the last change already processed (0 or absent: from the start)' }),
  limit: z.coerce.number().int().min(1).max(FEED_PAGE_EVENTS_MAX).optional(),
});

const changeSchema = z.object({
  seq: z.number().int(),
  type: z.string(),
  at: z.string(),
}).catchall(z.unknown()).meta({ id: 'Change', description: 'one committed change: its seq, type and time, and the records, postings and ids it changed' });

const pageSchema = z.object({
  events: z.array(changeSchema),
  next: z.string().meta({ description: 'pass as `after` for the next page' }),
  has_more: z.boolean(),
});

/** What one read took: how many changes, the seq of the last, and the bytes it decoded and rendered. */
export interface ChangesRead {
  count: number;
  lastSeq: number;
  logBytes: number;
  renderedBytes: number;
}

/**
 * One bounded read: renders committed changes after `afterSeq` in order and hands each to `take`, until
 * `eventsMax` changes, FEED_READ_LOG_BYTES_MAX bytes of log or FEED_PAGE_BYTES_MAX bytes of JSON have
 * been taken (one change at least, when there is one): the check comes before the next change is pulled,
 * so no change is decoded that the read does not take.
 */
export function readChanges(feed: ChangeFeedPort, afterSeq: number, eventsMax: number, take: (seq: number, type: string, json: string) => void): ChangesRead {
  const read: ChangesRead = { count: 0, lastSeq: afterSeq, logBytes: 0, renderedBytes: 0 };
  if (feed.committedSeq() <= afterSeq) return read;
  for (const { seq, event, bytes } of feed.changesAfter(afterSeq)) {
    const json = toJsonText(changeView(seq, event));
    take(seq, event.type, json);
    read.count += 1;
    read.lastSeq = seq;
    read.logBytes += bytes;
    read.renderedBytes += json.length;
    if (read.count >= eventsMax || read.logBytes >= FEED_READ_LOG_BYTES_MAX || read.renderedBytes >= FEED_PAGE_BYTES_MAX) break;
  }
  return read;
}

/** The cursor a request resumes after: Last-Event-ID (an EventSource reconnecting), else `after`. */
function cursorOf(ctx: Koa.Context, after: string | undefined): number {
  const text = ctx.get('Last-Event-ID') || after || '0';
  const seq = CURSOR_TEXT.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(seq)) throw new ApiError('FEED_CURSOR_INVALID', 'the cursor (after, or Last-Event-ID) must be a seq the feed gave out: digits only');
  return seq;
}

/**
 * Resolves once the log has committed `cursor` (at once, nearly always); refuses a cursor it has not
 * reached within FEED_CURSOR_WAIT_MS with FEED_CURSOR_AHEAD and where the log ends.
 */
async function cursorReached(feed: ChangeFeedPort, cursor: number): Promise<void> {
  if (cursor <= feed.committedSeq()) return;
  await new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      unsubscribe();
      resolve();
    };
    const unsubscribe = feed.subscribe(() => {
      if (cursor <= feed.committedSeq()) done();
    });
    const timer = setTimeout(done, FEED_CURSOR_WAIT_MS);
  });
  const committed = feed.committedSeq();
  if (cursor <= committed) return;
  throw new ApiError(
    'FEED_CURSOR_AHEAD',
    `the cursor ${cursor} is past the end of this node's log, which ends at seq ${committed}: resume from a cursor at or before it (a ledger restored to an earlier point writes those seqs again), or retry later on a standby that is catching up`,
    { committed_seq: committed },
    { 'Retry-After': String(BACKPRESSURE_RETRY_AFTER_SECONDS) },
  );
}

/**
 * The feed's reads on one thread take turns: one read per turn of the event loop, in the order they
 * were asked for, so whatever else the thread serves (a write's request, its answer) waits for at most
 * one read at each step, however many streams are catching up and pages are asked for at once. A read
 * that held the thread READ_PAUSE_FROM_MS or more is followed by as long a pause before the next one
 * starts (reads of a few small changes are not): while reads are long (changes of megabytes), they take
 * at most about half of the thread, and the steps of a write fit in between.
 */
export class ReadTurns {
  private readonly waiting: Array<() => void> = [];
  private scheduled = false;
  private pauseUntil = 0;

  /** Runs `read` in its turn (synchronously: it must not keep what it reads across turns). */
  run<T>(read: () => T): Promise<T> {
    return new Promise((resolve, reject) => {
      this.waiting.push(() => {
        try {
          resolve(read());
        } catch (error) {
          reject(error as Error);
        }
      });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.waiting.length === 0) return;
    this.scheduled = true;
    const wait = this.pauseUntil - performance.now();
    // An immediate asked for in this one runs in the next turn, after the I/O that turn finds waiting.
    if (wait > 0) setTimeout(() => this.turn(), wait);
    else setImmediate(() => this.turn());
  }

  private turn(): void {
    this.scheduled = false;
    const started = performance.now();
    this.waiting.shift()?.();
    const took = performance.now() - started;
    if (took >= READ_PAUSE_FROM_MS) this.pauseUntil = performance.now() + took;
    this.schedule();
  }
}

export function eventRoutes(router: Router, feed: ChangeFeedPort): FeedStreams {
  const streams = new Set<() => void>();
  const turns = new ReadTurns();
  describeRoute(router, 'GET /events', {
    tag: 'Operations',
    summary: 'Every committed change in order, resumable: a page of JSON, or Server-Sent Events with Accept: text/event-stream',
    query: eventsQuerySchema,
    answers: [
      ...answers(200, 'A page of changes (SSE: a stream of them)', pageSchema, { events: [{ seq: 12, type: 'transaction.applied', at: '2026-05-04T10:20:30.000Z' }], next: '12', has_more: false }),
    ],
    errors: ['FEED_CURSOR_INVALID', 'FEED_CURSOR_AHEAD', 'FEED_STREAMS_EXCEEDED'],
  });
  router.get('/events', async (ctx) => {
    const query = validate(eventsQuerySchema, ctx.query);
    const after = cursorOf(ctx, query.after);
    const streaming = ctx.get('Accept').includes('text/event-stream');
    if (!streaming) {
      await cursorReached(feed, after);
      const rendered: string[] = [];
      const read = await turns.run(() => readChanges(feed, after, query.limit ?? FEED_PAGE_EVENTS_DEFAULT, (_seq, _type, json) => rendered.push(json)));
      ctx.type = 'application/json';
      ctx.body = `{"events":[${rendered.join(',')}],"next":"${read.lastSeq}","has_more":${read.lastSeq < feed.committedSeq()}}`;
      return;
    }
    if (streams.size >= FEED_STREAMS_MAX) throw streamsExceeded();
    let gone = false;
    const left = (): void => {
      gone = true;
    };
    ctx.res.once('close', left);
    await cursorReached(feed, after);
    ctx.res.off('close', left);
    // A client that left while its cursor waited takes no stream; counted again, as others may have opened.
    if (gone) return;
    if (streams.size >= FEED_STREAMS_MAX) throw streamsExceeded();
    openStream(ctx, feed, turns, after, streams);
  });
  return { endAll: () => [...streams].forEach((end) => end()) };
}

function streamsExceeded(): ApiError {
  return new ApiError('FEED_STREAMS_EXCEEDED', `this node serves at most ${FEED_STREAMS_MAX} change streams at once`, undefined, {
    'Retry-After': String(BACKPRESSURE_RETRY_AFTER_SECONDS),
  });
}

function openStream(ctx: Koa.Context, feed: ChangeFeedPort, turns: ReadTurns, after: number, streams: Set<() => void>): void {
  const stream = new PassThrough();
  let cursor = after;
  let ended = false;
  let pumping = false;
  let again = false;
  /** Ends the stream: after what is written has gone out, or at once when the client has gone. */
  const end = (clientGone = false): void => {
    if (ended) return;
    ended = true;
    streams.delete(endNow);
    unsubscribe();
    clearInterval(heartbeat);
    clearTimeout(lifetime);
    if (clientGone) stream.destroy();
    else stream.end();
  };
  const endNow = (): void => end();
  /** Bounded reads, each in its turn, until caught up; then the next commit starts it again. */
  const pump = async (): Promise<void> => {
    if (pumping) {
      again = true;
      return;
    }
    pumping = true;
    try {
      do {
        again = false;
        for (;;) {
          if (ended) return;
          let full = false;
          const read = await turns.run(() => {
            if (ended) return undefined;
            return readChanges(feed, cursor, STREAM_EVENTS_PER_READ, (seq, type, json) => {
              if (!stream.write(`id: ${seq}\nevent: ${type}\ndata: ${json}\n\n`)) full = true;
            });
          });
          if (!read) return;
          if (read.count === 0) break;
          cursor = read.lastSeq;
          // The client has not taken what was written: wait for it before the next read. It may have taken
          // it all already (the 'drain' went out before this await): then waiting would wait for a write
          // that never comes, on a quiet ledger for ever.
          if (full && stream.writableNeedDrain) await drained(stream);
        }
      } while (again);
    } catch {
      end(); // the log closed under the stream (the node is rejoining): the client reconnects
    } finally {
      pumping = false;
    }
  };
  const unsubscribe = feed.subscribe(() => void pump());
  const heartbeat = setInterval(() => stream.write(': keep-alive\n\n'), FEED_HEARTBEAT_MS);
  const lifetime = setTimeout(endNow, FEED_STREAM_MS_MAX);
  streams.add(endNow);
  ctx.res.once('close', () => end(true));
  ctx.status = 200;
  ctx.type = 'text/event-stream';
  ctx.set('Cache-Control', 'no-store');
  ctx.set('X-Accel-Buffering', 'no');
  ctx.body = stream;
  stream.write(`retry: ${RECONNECT_MS}\n\n`);
  void pump();
}

/** Resolves when the stream can take more, or has closed. */
function drained(stream: PassThrough): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      stream.off('drain', done);
      stream.off('close', done);
      resolve();
    };
    stream.once('drain', done);
    stream.once('close', done);
  });
}
