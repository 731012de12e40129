// GET /events (master key): every committed change, in log order, from any node (each serves its own
// copy of the group's log; seqs are the same everywhere), resumable from a cursor: the seq of the last
// change the consumer processed. Two forms:
//   - JSON pages: `?after=<cursor>&limit=<n>` answers `{events, next, has_more}`; pass `next` as `after`;
//   - Server-Sent Events (`Accept: text/event-stream`): each change as `id: <seq>`, `event: <type>`,
//     `data: <json>`; a reconnecting EventSource sends `Last-Event-ID`, which wins over `after`, so the
//     stream resumes right after the last change received: none twice, none missed.
// Only committed changes are shown (durable, and on a replicated group committed in PostgreSQL): what a
// crash or a failover could take back never reaches a consumer. Bounded: FEED_STREAMS_MAX streams at
// once (503 FEED_STREAMS_EXCEEDED beyond), each at most FEED_STREAM_MS_MAX (then ended: the client
// reconnects with its Last-Event-ID), written only as fast as the client reads (the log is the buffer),
// a comment every FEED_HEARTBEAT_MS to keep proxies from closing an idle stream; pages of at most
// FEED_PAGE_EVENTS_MAX changes and about FEED_PAGE_BYTES_MAX bytes.

import type { Router } from '@koa/router';
import type Koa from 'koa';
import { PassThrough } from 'node:stream';
import { z } from 'zod';
import type { LoggedEvent } from '../../engine/events.js';
import { toJsonText } from '../../wire/json-text.js';
import { ApiError, BACKPRESSURE_RETRY_AFTER_SECONDS } from '../api-error.js';
import { changeView } from '../change-view.js';
import { answers, describeRoute } from '../openapi/route-docs.js';
import { validate } from '../validation.js';

export const FEED_STREAMS_MAX = 32;
export const FEED_STREAM_MS_MAX = 10 * 60_000;
export const FEED_HEARTBEAT_MS = 15_000;
export const FEED_PAGE_EVENTS_MAX = 1_000;
export const FEED_PAGE_EVENTS_DEFAULT = 100;
export const FEED_PAGE_BYTES_MAX = 1 << 20;
/** Changes read from the log per turn of a stream, so one stream does not hold the thread. */
const STREAM_EVENTS_PER_READ = 256;
/** What an EventSource waits before reconnecting (the SSE `retry` field). */
const RECONNECT_MS = 1_000;
const CURSOR_TEXT = /^[0-9]{1,16}$/;

/** What the feed needs from the ledger (app/change-feed.ts). */
export interface ChangeFeedPort {
  /** The seq of the last committed change. */
  committedSeq(): number;
  /** Committed changes after `afterSeq`, at most `limit`, in order (from another thread: a promise). */
  read(afterSeq: number, limit: number): LoggedEvent[] | Promise<LoggedEvent[]>;
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

/** The cursor a request resumes after: Last-Event-ID (an EventSource reconnecting), else `after`. */
function cursorOf(ctx: Koa.Context, after: string | undefined): number {
  const text = ctx.get('Last-Event-ID') || after || '0';
  const seq = CURSOR_TEXT.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(seq)) throw new ApiError('FEED_CURSOR_INVALID', 'the cursor (after, or Last-Event-ID) must be a seq the feed gave out: digits only');
  return seq;
}

export function eventRoutes(router: Router, feed: ChangeFeedPort): FeedStreams {
  const streams = new Set<() => void>();
  describeRoute(router, 'GET /events', {
    tag: 'Operations',
    summary: 'Every committed change in order, resumable: a page of JSON, or Server-Sent Events with Accept: text/event-stream',
    query: eventsQuerySchema,
    answers: [
      ...answers(200, 'A page of changes (SSE: a stream of them)', pageSchema, { events: [{ seq: 12, type: 'transaction.applied', at: '2026-05-04T10:20:30.000Z' }], next: '12', has_more: false }),
    ],
    errors: ['FEED_CURSOR_INVALID', 'FEED_STREAMS_EXCEEDED'],
  });
  router.get('/events', async (ctx) => {
    const query = validate(eventsQuerySchema, ctx.query);
    const after = cursorOf(ctx, query.after);
    if (ctx.get('Accept').includes('text/event-stream')) {
      if (streams.size >= FEED_STREAMS_MAX) {
        throw new ApiError('FEED_STREAMS_EXCEEDED', `this node serves at most ${FEED_STREAMS_MAX} change streams at once`, undefined, {
          'Retry-After': String(BACKPRESSURE_RETRY_AFTER_SECONDS),
        });
      }
      openStream(ctx, feed, after, streams);
      return;
    }
    const limit = query.limit ?? FEED_PAGE_EVENTS_DEFAULT;
    const events = await feed.read(after, limit);
    const rendered: string[] = [];
    let bytes = 0;
    let next = after;
    for (const { seq, event } of events) {
      const text = toJsonText(changeView(seq, event));
      if (rendered.length > 0 && bytes + text.length > FEED_PAGE_BYTES_MAX) break;
      rendered.push(text);
      bytes += text.length;
      next = seq;
    }
    ctx.type = 'application/json';
    ctx.body = `{"events":[${rendered.join(',')}],"next":"${next}","has_more":${next < feed.committedSeq()}}`;
  });
  return { endAll: () => [...streams].forEach((end) => end()) };
}

function openStream(ctx: Koa.Context, feed: ChangeFeedPort, after: number, streams: Set<() => void>): void {
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
          const events = await feed.read(cursor, STREAM_EVENTS_PER_READ);
          if (events.length === 0) break;
          for (const { seq, event } of events) {
            const fits = stream.write(`id: ${seq}\nevent: ${event.type}\ndata: ${toJsonText(changeView(seq, event))}\n\n`);
            cursor = seq;
            if (!fits && !ended) await drained(stream);
            if (ended) return;
          }
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
