// Running zod at the edge: every body and query is parsed by a schema before anything else sees it,
// and a failure becomes 400 GEN_VALIDATION_ERROR with one message per offending field (or the code of
// the public Blnk ledger's own for the condition, see api-error.ts).

import { z } from 'zod';
import { ApiError } from './api-error.js';

export function validate<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw validationError(detailsOf(result.error.issues));
}

/** Reports a problem with one field (a dotted path), for checks that run after the schema. */
export type ReportIssue = (path: ReadonlyArray<PropertyKey>, message: string) => void;

/**
 * The same object shape, forgiving: every field optional and left out when it fails its schema, and
 * the whole undefined when the input is not an object at all. `fields` replaces the schemas of some
 * fields (to make nested shapes forgiving too). Parsing with it never fails.
 */
export function lenient<S extends z.ZodObject>(schema: S, fields: Partial<Record<keyof S['shape'], z.ZodType>> = {}): z.ZodType<Partial<z.output<S>> | undefined> {
  const forgiving: Record<string, z.ZodType> = {};
  for (const [key, field] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
    forgiving[key] = ((fields as Record<string, z.ZodType | undefined>)[key] ?? field).optional().catch(undefined);
  }
  return z.object(forgiving).catch(undefined as never) as unknown as z.ZodType<Partial<z.output<S>> | undefined>;
}

/** A forgiving array: its failed items are undefined in place. */
export function lenientItems<T>(item: z.ZodType<T | undefined>): z.ZodType<Array<T | undefined>> {
  return z.array(item.catch(undefined));
}

/**
 * A schema for the shapes, then `finish` for the conversions and what spans several fields. When the
 * shape fails, `finish` still runs, on the lenient parse (complete: false), so one answer names every
 * bad field; it reports and makes nothing then. Keeping conversions out of the schema keeps zod on its
 * fast path, which matters on the busiest routes.
 */
export function validateShapeThen<S extends z.ZodType, R>(
  schema: S,
  forgiving: z.ZodType<Partial<z.output<S>> | undefined>,
  input: unknown,
  finish: (shape: Partial<z.output<S>>, complete: boolean, report: ReportIssue) => R | undefined,
): R {
  const result = schema.safeParse(input);
  const details = result.success ? {} : detailsOf(result.error.issues);
  const report: ReportIssue = (path, message) => {
    details[fieldName(path)] ??= message;
  };
  const shape = result.success ? (result.data as Partial<z.output<S>>) : forgiving.parse(input);
  const value = shape === undefined ? undefined : finish(shape, result.success, report);
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
