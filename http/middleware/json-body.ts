// Reading request bodies. A body is read only once its route is known and the caller may use it (the
// route front, route-front.ts, puts this reader behind the route's access check); a request refused
// before it leaves its body unread, and the error envelope drains it (error-envelope.ts sendError).
//
// The bytes are counted as they arrive, after inflation (Content-Encoding gzip, deflate or br; a gzip
// body is counted by what it inflates to, so a small compressed body cannot grow past the limits in
// memory): at most `bytesMax` per request (413; a declared Content-Length over it is refused before
// anything is read), and at most the process's body bytes in flight (body-bytes-in-flight.ts; 503 with
// Retry-After, also before reading when a declared length cannot fit). The bytes a request took are given
// back when its route is done with it, however the request ends (an error, a client gone, a timeout).
//
// A body must say it is JSON (`application/json` or `application/*+json`): anything else, a missing type
// included, is 415. A web page can send a cross-site POST without asking the server first only as
// text/plain, a form or with no type at all, so refusing those keeps any site a user visits from writing
// to a local Folio. It is decoded as UTF-8 whatever charset it names (a byte-order mark is dropped) and
// parsed losslessly (lossless-json.ts). Multipart is accepted only on the routes that take file uploads,
// which read it themselves through countedBody.

import type http from 'node:http';
import { PassThrough, type Readable } from 'node:stream';
import zlib from 'node:zlib';
import type Koa from 'koa';
import { ApiError, BACKPRESSURE_RETRY_AFTER_SECONDS } from '../api-error.js';
import type { BodyBytesInFlight } from '../server/body-bytes-in-flight.js';
import { parseJsonLossless } from '../schemas/lossless-json.js';

/** Largest accepted request body, in bytes as read (after inflation). */
export const BODY_BYTES_MAX = 10 * 1024 * 1024;

const JSON_TYPES = ['application/json', 'application/*+json'];
const BYTE_ORDER_MARK = 0xfeff;
/** The Content-Encodings a body may come in (exactly as written: `gzip, gzip` is not one). */
const ENCODINGS: ReadonlySet<string> = new Set(['identity', 'gzip', 'deflate', 'br']);

/**
 * What one request holds of the process's count of body bytes in flight (none when there is no count:
 * only the per-request limit applies), given back (release) once its route is done with the body.
 */
export class BodyHold {
  bytes = 0;

  constructor(readonly inFlight: BodyBytesInFlight | undefined) {}

  take(bytes: number): boolean {
    if (!this.inFlight) return true;
    if (!this.inFlight.take(bytes)) return false;
    this.bytes += bytes;
    return true;
  }

  /** Whether `bytes` more would fit now (a declared length, before reading). */
  fits(bytes: number): boolean {
    return this.inFlight === undefined || this.inFlight.fits(bytes);
  }

  release(): void {
    this.inFlight?.release(this.bytes);
    this.bytes = 0;
  }
}

export interface JsonBodyOptions {
  bodyBytesMax?: number;
  inFlight?: BodyBytesInFlight;
  /** The route reads multipart uploads itself (countedBody): a multipart body is left to it. */
  multipart?: boolean;
  /**
   * The route takes no body (Blnk's reads an optional one and ignores it when it is not valid JSON):
   * the bytes are read and counted as any body's, but not parsed, so a malformed one is no error.
   */
  unparsed?: boolean;
}

/** Whether a request carries a body this reader reads: a POST, PUT or PATCH that says it has one. */
function hasBody(ctx: Koa.Context): boolean {
  if (!ctx.request.length && !ctx.get('transfer-encoding')) return false;
  return ctx.method === 'POST' || ctx.method === 'PUT' || ctx.method === 'PATCH';
}

/** Reads, counts and parses a JSON body into ctx.request.body; the bytes are held until the route is done. */
export function jsonBody(options: JsonBodyOptions = {}): Koa.Middleware {
  const bytesMax = options.bodyBytesMax ?? BODY_BYTES_MAX;
  return async (ctx, next) => {
    if (!hasBody(ctx)) return next();
    const type = ctx.req.headers['content-type'];
    // The common case first: ctx.is parses the type, which costs more than the rest of this check.
    const plainJson = type !== undefined && (type === 'application/json' || type.startsWith('application/json;'));
    if (!plainJson && (type === undefined || !ctx.is(JSON_TYPES))) {
      if (options.multipart && ctx.is('multipart')) return next(); // read by the upload route itself
      throw new ApiError('GEN_UNSUPPORTED_MEDIA_TYPE', 'send the body as application/json (Content-Type: application/json)');
    }
    const hold = new BodyHold(options.inFlight);
    try {
      const chunks: Buffer[] = [];
      let length = 0;
      await pumpBody(ctx.req, bytesMax, hold, (chunk) => {
        if (options.unparsed) return;
        chunks.push(chunk);
        length += chunk.length;
      });
      (ctx.request as { body?: unknown }).body = length === 0 || options.unparsed ? undefined : jsonOf(Buffer.concat(chunks, length));
      return await next();
    } finally {
      hold.release();
    }
  };
}

function jsonOf(bytes: Buffer): unknown {
  let text = bytes.toString('utf8');
  if (text.charCodeAt(0) === BYTE_ORDER_MARK) text = text.slice(1);
  return text.trim() === '' ? undefined : parseJsonLossless(text);
}

/**
 * The body as a stream of its bytes (inflated), at most `bytesMax`, counted into `hold` as they arrive; a
 * refusal or a failure destroys the stream with the ApiError to answer. For routes that parse the body
 * themselves (multipart uploads); `headers` are the request's, for a parser that reads them. Destroying
 * the stream stops the reading.
 */
export function countedBody(req: http.IncomingMessage, bytesMax: number, hold: BodyHold): Readable & { headers: http.IncomingHttpHeaders } {
  const stream = Object.assign(new PassThrough(), { headers: req.headers });
  const stop = new AbortController();
  stream.once('close', () => stop.abort());
  const write = (chunk: Buffer): void => {
    if (!stream.destroyed) stream.write(chunk);
  };
  pumpBody(req, bytesMax, hold, write, stop.signal).then(
    () => stream.end(),
    (error: unknown) => stream.destroy(error as Error),
  );
  return stream;
}

/** Refusals of the reader, each before or while reading. */
function tooLarge(bytesMax: number): ApiError {
  return new ApiError('GEN_PAYLOAD_TOO_LARGE', `request body is too large: at most ${bytesMax} bytes (after decompression)`);
}

function bodiesBusy(inFlight: BodyBytesInFlight | undefined): ApiError {
  return new ApiError(
    'GEN_BODY_BYTES_IN_FLIGHT_EXCEEDED',
    `the server holds as many request body bytes as it may (${inFlight?.max}); retry after Retry-After seconds`,
    undefined,
    { 'Retry-After': String(BACKPRESSURE_RETRY_AFTER_SECONDS) },
  );
}

function cutOff(): Error {
  return Object.assign(new Error('the request was cut off before its body arrived'), { code: 'ECONNRESET' });
}

/**
 * Hands each chunk of the body, inflated, to `onChunk`, within the limits; resolves at the body's end and
 * rejects with the refusal (413, 415, 503), the decompression error or the connection's end. Whatever
 * way it ends, the request is left unpiped and unread from here on, for the error envelope to drain.
 */
function pumpBody(req: http.IncomingMessage, bytesMax: number, hold: BodyHold, onChunk: (chunk: Buffer) => void, stop?: AbortSignal): Promise<void> {
  const encoding = req.headers['content-encoding'] || 'identity';
  if (!ENCODINGS.has(encoding)) {
    return Promise.reject(new ApiError('GEN_UNSUPPORTED_MEDIA_TYPE', `unsupported Content-Encoding ${JSON.stringify(encoding).slice(0, 64)}: send gzip, deflate, br or none`));
  }
  const declared = Number(req.headers['content-length'] ?? Number.NaN);
  if (declared > bytesMax) return Promise.reject(tooLarge(bytesMax));
  // Only an uncompressed length says what the body will hold.
  if (encoding === 'identity' && declared > 0 && !hold.fits(declared)) return Promise.reject(bodiesBusy(hold.inFlight));
  // Unzip reads gzip and deflate alike.
  const inflater = encoding === 'identity' ? undefined : encoding === 'br' ? zlib.createBrotliDecompress() : zlib.createUnzip();
  const source: Readable = inflater ?? req;
  return new Promise<void>((resolve, reject) => {
    let length = 0;
    let rawLength = 0;
    let settled = false;
    const finish = (error?: unknown): void => {
      if (settled) return;
      settled = true;
      source.off('data', onData);
      source.off('end', onEnd);
      source.off('error', finish);
      req.off('close', onClose);
      stop?.removeEventListener('abort', onStop);
      if (inflater) {
        req.off('data', onRawData);
        req.off('error', finish);
        req.unpipe(inflater);
        inflater.destroy();
      }
      if (error === undefined) resolve();
      else reject(error);
    };
    const onData = (chunk: Buffer): void => {
      length += chunk.length;
      if (length > bytesMax) finish(tooLarge(bytesMax));
      else if (!hold.take(chunk.length)) finish(bodiesBusy(hold.inFlight));
      else onChunk(chunk);
    };
    const onRawData = (chunk: Buffer): void => {
      rawLength += chunk.length;
      if (rawLength > bytesMax) finish(tooLarge(bytesMax));
    };
    const onEnd = (): void => finish();
    // A connection that ends before the body did (the client went, or its time ran out) ends the read.
    const onClose = (): void => {
      if (!req.complete) finish(cutOff());
    };
    const onStop = (): void => finish(cutOff());
    if (stop?.aborted) {
      finish(cutOff());
      return;
    }
    stop?.addEventListener('abort', onStop, { once: true });
    source.on('data', onData);
    source.once('end', onEnd);
    source.on('error', finish);
    req.once('close', onClose);
    if (inflater) {
      req.on('data', onRawData);
      req.on('error', finish);
      req.pipe(inflater);
    }
  });
}
