// Running zod at the edge: every body and query is parsed by a schema before anything else sees it,
// and a failure becomes 400 GEN_VALIDATION_ERROR with one message per offending field.

import type { z } from 'zod';
import { ApiError } from './api-error.js';

export function validate<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw validationError(detailsOf(result.error.issues));
}

/** Reports a problem with one field (a dotted path), for checks that run after the schema. */
export type ReportIssue = (path: ReadonlyArray<PropertyKey>, message: string) => void;

/**
 * A schema for the shapes, then `finish` for what spans several fields and for the conversions. Both
 * run on every request (finish gets the raw input, and the parsed data when the schema passed), so one
 * answer names every bad field. Keeping conversions out of the schema keeps zod on its fast path, which
 * matters on the busiest routes.
 */
export function validateThen<S extends z.ZodType, R>(
  schema: S,
  input: unknown,
  finish: (parsed: z.output<S> | undefined, raw: unknown, report: ReportIssue) => R | undefined,
): R {
  const result = schema.safeParse(input);
  const details = result.success ? {} : detailsOf(result.error.issues);
  const report: ReportIssue = (path, message) => {
    details[fieldName(path)] ??= message;
  };
  const value = finish(result.success ? result.data : undefined, input, report);
  if (Object.keys(details).length > 0 || value === undefined) throw validationError(details);
  return value;
}

function detailsOf(issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>): Record<string, string> {
  const details: Record<string, string> = {};
  for (const issue of issues) details[fieldName(issue.path)] ??= issue.message;
  return details;
}

function fieldName(path: ReadonlyArray<PropertyKey>): string {
  return path.length > 0 ? path.map(String).join('.') : 'body';
}

function validationError(details: Record<string, string>): ApiError {
  const fields = Object.keys(details);
  return new ApiError('GEN_VALIDATION_ERROR', `invalid request: ${fields.map((field) => `${field}: ${details[field]}`).join('; ')}`, details);
}
