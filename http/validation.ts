// Running zod at the edge: every body and query is parsed by a schema before anything else sees it,
// and a failure becomes 400 GEN_VALIDATION_ERROR with one message per offending field.

import type { z } from 'zod';
import { ApiError } from './api-error.js';

export function validate<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const details: Record<string, string> = {};
  for (const issue of result.error.issues) {
    const field = issue.path.length > 0 ? issue.path.map(String).join('.') : 'body';
    details[field] ??= issue.message;
  }
  const fields = Object.keys(details);
  throw new ApiError('GEN_VALIDATION_ERROR', `invalid request: ${fields.map((field) => `${field}: ${details[field]}`).join('; ')}`, details);
}
