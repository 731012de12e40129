// Running zod at the edge: every body and query is parsed by a schema before anything else sees it,
// and a failure becomes a 400 with one message per offending field in `details`. The code is
// GEN_VALIDATION_ERROR unless the public Blnk ledger has one of its own for the condition: a route says
// which (TXN_VALIDATION_ERROR for transaction bodies, IDT_VALIDATION_ERROR for identities), and a check
// may name a more specific one for its field (TXN_PRECISION_NOT_INTEGER), which then wins.

import { z } from 'zod';
import { ApiError, type ErrorCode } from '../api-error.js';

/** The codes that say only "this body is not valid", each the default of some route. */
const GENERAL_CODES: ReadonlySet<ValidationCode> = new Set(['GEN_VALIDATION_ERROR', 'TXN_VALIDATION_ERROR', 'IDT_VALIDATION_ERROR']);

/** The codes a validation failure may carry (each a 400). */
export type ValidationCode = Extract<ErrorCode,
  'GEN_VALIDATION_ERROR' | 'GEN_MALFORMED_REQUEST' | 'TXN_VALIDATION_ERROR' | 'TXN_PRECISION_NOT_INTEGER' | 'TXN_INVALID_AMOUNT' | 'IDT_VALIDATION_ERROR'>;

export function validate<S extends z.ZodType>(schema: S, input: unknown, code: ValidationCode = 'GEN_VALIDATION_ERROR'): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw validationError(detailsOf(result.error.issues), code);
}

/**
 * Reports a problem with one field (a dotted path), for checks that run after the schema; `code` when
 * Blnk has a code of its own for exactly this problem.
 */
export type ReportIssue = (path: ReadonlyArray<PropertyKey>, message: string, code?: ValidationCode) => void;

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
  code: ValidationCode = 'GEN_VALIDATION_ERROR',
): R {
  const result = schema.safeParse(input);
  const details = result.success ? {} : detailsOf(result.error.issues);
  let specific: ValidationCode | undefined;
  const report: ReportIssue = (path, message, issueCode) => {
    details[fieldName(path)] ??= message;
    // A route's own general code names no problem in particular: only a specific one wins.
    if (issueCode !== undefined && !GENERAL_CODES.has(issueCode)) specific ??= issueCode;
  };
  const shape = result.success ? (result.data as Partial<z.output<S>>) : forgiving.parse(input);
  const value = shape === undefined ? undefined : finish(shape, result.success, report);
  if (Object.keys(details).length > 0 || value === undefined) throw validationError(details, specific ?? code);
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

export function validationError(details: Record<string, string>, code: ValidationCode = 'GEN_VALIDATION_ERROR'): ApiError {
  const fields = Object.keys(details);
  return new ApiError(code, `invalid request: ${fields.map((field) => `${field}: ${details[field]}`).join('; ')}`, details);
}
