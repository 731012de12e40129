// Reading request bodies: koa-body reads the raw text (enforcing the size limit before anything is
// parsed: a declared length over the limit is refused unread), then the lossless parser turns it into
// a value with exact numbers. A body must say it is JSON (`application/json` or `application/*+json`):
// anything else, a missing type included, is 415. A web page can send a cross-site POST without asking
// the server first only as text/plain, a form or with no type at all, so refusing those keeps any site
// a user visits from writing to a local Folio. Multipart is accepted only on the routes that take file
// uploads, which read it themselves.

import type Koa from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { ApiError } from './api-error.js';
import { parseJsonLossless } from './lossless-json.js';

/** Largest accepted request body. */
export const BODY_BYTES_MAX = 10 * 1024 * 1024;

const JSON_TYPES = ['application/json', 'application/*+json'];

export interface JsonBodyOptions {
  bodyBytesMax?: number;
  /** Paths whose routes read multipart uploads themselves. */
  uploadPaths?: ReadonlySet<string>;
}

export function jsonBody(options: JsonBodyOptions = {}): Koa.Middleware {
  const bodyBytesMax = options.bodyBytesMax ?? BODY_BYTES_MAX;
  const uploadPaths = options.uploadPaths ?? new Set<string>();
  const reader = koaBody({
    json: false,
    urlencoded: false,
    multipart: false,
    text: true,
    textTypes: JSON_TYPES,
    textLimit: bodyBytesMax,
    parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH],
  });
  const skip = async (): Promise<void> => undefined;
  return async (ctx, next) => {
    if (!ctx.request.length && !ctx.get('transfer-encoding')) return next();
    if (!['POST', 'PUT', 'PATCH'].includes(ctx.method)) return next();
    const type = ctx.req.headers['content-type'];
    if (type === undefined || !type.startsWith('application/json')) {
      if (uploadPaths.has(ctx.path) && ctx.is('multipart')) return next(); // read by the upload route itself
      if (type === undefined || !ctx.is(JSON_TYPES)) {
        throw new ApiError('GEN_UNSUPPORTED_MEDIA_TYPE', 'send the body as application/json (Content-Type: application/json)');
      }
    }
    await reader(ctx as never, skip);
    const text = ctx.request.body;
    (ctx.request as { body?: unknown }).body = typeof text === 'string' && text.trim() !== '' ? parseJsonLossless(text) : undefined;
    return next();
  };
}
