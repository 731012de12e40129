// The one place errors become responses: `{error, error_detail: {code, message, details?}}`. Known
// failures keep their code and status, a refusal of the node (ports/node-refusal.ts) becomes its code
// with Retry-After; errors from the body reader are mapped to their codes; anything
// else is a bug, logged with its stack and answered as a bare 500 that reveals nothing.

import type Koa from 'koa';
import type { Logger } from 'pino';
import { z } from 'zod';
import { ApiError, EnvelopeError, fromNodeRefusal, STATUS_BY_CODE, type ErrorCode } from '../api-error.js';
import { NodeRefusal } from '../ports/node-refusal.js';
import { JsonSyntaxError, JsonTooLargeError } from '../schemas/lossless-json.js';
import { toJsonText } from '../../wire/json-text.js';

export function errorEnvelope(logger: Logger): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new ApiError('GEN_NOT_FOUND', `no route for ${ctx.method} ${ctx.path}`);
      }
    } catch (error) {
      const apiError = toApiError(error);
      if (apiError.status >= 500 && apiError.code === 'GEN_INTERNAL_ERROR') {
        logger.error({ err: error, req_id: ctx.state.requestId }, 'request failed');
      }
      sendError(ctx, apiError);
    }
  };
}

export function sendError(ctx: Koa.Context, error: EnvelopeError): void {
  ctx.status = error.status;
  // A body refused part way (over the size limit in chunked encoding, say) is left unread on the
  // socket, and Node does not drain a body the reader had started on: the next request on that
  // keep-alive connection would wait for ever. The rest is read and dropped, as Node does for a body
  // nobody read (bounded by the server's request timeout). Closing instead would cut off a client
  // still writing its body before it reads this answer (EPIPE).
  if (!ctx.req.complete) ctx.req.resume();
  for (const [name, value] of Object.entries(error.headers ?? {})) ctx.set(name, value);
  ctx.type = 'application/json';
  ctx.body = envelopeText(error);
}

/** The envelope's JSON text (also written by handlers that answer outside Koa, like the cloud's proxy). */
export function envelopeText(error: EnvelopeError): string {
  const detail: Record<string, unknown> = { code: error.code, message: error.message };
  if (error.details) detail.details = error.details;
  return toJsonText({ error: error.message, error_detail: detail });
}

/** The envelope as the API reference describes it (http/openapi/). */
export const errorEnvelopeSchema = z.object({
  error: z.string(),
  error_detail: z.object({
    code: z.enum(Object.keys(STATUS_BY_CODE) as [ErrorCode, ...ErrorCode[]]),
    message: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  }),
}).meta({ id: 'ErrorEnvelope', description: 'Every refusal: a stable code, a message, and details where a field is at fault' });

/** Errors of the body readers (formidable's, for uploads, carry an HTTP status and a `type`) mapped to stable codes. */
export function toApiError(error: unknown): EnvelopeError {
  if (error instanceof EnvelopeError) return error;
  if (error instanceof NodeRefusal) return fromNodeRefusal(error);
  if (error instanceof JsonSyntaxError) return new ApiError('GEN_MALFORMED_REQUEST', `malformed JSON body: ${error.message}`);
  if (error instanceof JsonTooLargeError) return new ApiError('GEN_PAYLOAD_TOO_LARGE', `request body is too large: ${error.message}`);
  const status = typeof error === 'object' && error !== null ? (error as { status?: unknown }).status : undefined;
  const type = typeof error === 'object' && error !== null ? (error as { type?: unknown }).type : undefined;
  if (status === 413 || type === 'entity.too.large') return new ApiError('GEN_PAYLOAD_TOO_LARGE', 'request body is too large');
  if (status === 415) return new ApiError('GEN_UNSUPPORTED_MEDIA_TYPE', 'unsupported content type');
  if (status === 405 || status === 501) return new ApiError('GEN_METHOD_NOT_ALLOWED', 'method not allowed on this route');
  if (status === 404) return new ApiError('GEN_NOT_FOUND', 'not found');
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new ApiError('GEN_MALFORMED_REQUEST', `unreadable request body (${String(type ?? status)})`);
  }
  // zlib rejects a body that does not decompress with a code and no status: Z_* for gzip and deflate,
  // ERR__ERROR_* for Brotli (Content-Encoding br).
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  if (typeof code === 'string' && (code.startsWith('Z_') || code.startsWith('ERR__ERROR_'))) {
    return new ApiError('GEN_MALFORMED_REQUEST', 'request body could not be decompressed');
  }
  // The connection went away (or was cut off for taking too long) while a route read the body itself.
  if (code === 'ECONNRESET') return new ApiError('GEN_MALFORMED_REQUEST', 'the request was cut off before its body arrived');
  return new ApiError('GEN_INTERNAL_ERROR', 'internal error');
}
