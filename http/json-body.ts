// Reading request bodies: koa-body reads the raw text (enforcing the size limit before anything is
// parsed: a declared length over the limit is refused unread), then the lossless parser turns it into
// a value with exact numbers. Folio accepts no forms, so a missing content type and the form type that
// `curl -d` sends by default are read as JSON too; other types are refused (multipart is left to the
// routes that take file uploads).

import type Koa from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { ApiError } from './api-error.js';
import { parseJsonLossless } from './lossless-json.js';

/** Largest accepted request body. */
export const BODY_BYTES_MAX = 10 * 1024 * 1024;

const JSON_TYPES = ['application/json', 'application/*+json', 'text/plain', 'application/x-www-form-urlencoded'];

export function jsonBody(bodyBytesMax = BODY_BYTES_MAX): Koa.Middleware {
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
    if (type === undefined || type === '') ctx.req.headers['content-type'] = 'application/json';
    else if (!type.startsWith('application/json')) {
      if (ctx.is('multipart')) return next(); // file uploads are read by their own routes
      if (!ctx.is(JSON_TYPES)) throw new ApiError('GEN_UNSUPPORTED_MEDIA_TYPE', 'send the body as application/json');
    }
    await reader(ctx as never, skip);
    const text = ctx.request.body;
    (ctx.request as { body?: unknown }).body = typeof text === 'string' && text.trim() !== '' ? parseJsonLossless(text) : undefined;
    return next();
  };
}
