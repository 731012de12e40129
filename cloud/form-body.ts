// Reading an application/x-www-form-urlencoded body (the token endpoint and the sign-in form), bounded
// in size. A parameter sent twice is reported rather than silently picking one (RFC 6749 3.1, 3.2).

import type Koa from 'koa';
import { ApiError } from '../http/api-error.js';

export interface FormBody {
  fields: Map<string, string>;
  /** The first parameter that appeared more than once, if any. */
  repeated: string | undefined;
}

export async function readForm(ctx: Koa.Context, bytesMax: number): Promise<FormBody> {
  if (!ctx.is('application/x-www-form-urlencoded')) {
    throw new ApiError('GEN_UNSUPPORTED_MEDIA_TYPE', 'send the body as application/x-www-form-urlencoded');
  }
  const declared = Number(ctx.get('content-length') || '0');
  if (declared > bytesMax) throw new ApiError('GEN_PAYLOAD_TOO_LARGE', `the form is larger than ${bytesMax} bytes`);
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    length += chunk.length;
    if (length > bytesMax) throw new ApiError('GEN_PAYLOAD_TOO_LARGE', `the form is larger than ${bytesMax} bytes`);
    chunks.push(chunk);
  }
  const fields = new Map<string, string>();
  let repeated: string | undefined;
  for (const [name, value] of new URLSearchParams(Buffer.concat(chunks).toString('utf8'))) {
    if (fields.has(name)) repeated ??= name;
    else fields.set(name, value);
  }
  return { fields, repeated };
}
