// Field schemas shared by several resources, each with an explicit bound.

import { z } from 'zod';
import { DecimalLiteral } from '../../wire/amounts.js';
import { metaDataBytes, METADATA_BYTES_MAX, prototypeKeyIn } from '../../engine/metadata.js';

export const NAME_LENGTH_MAX = 256;
export const DESCRIPTION_LENGTH_MAX = 2048;
export const REFERENCE_LENGTH_MAX = 256;
export const IDENTIFIER_LENGTH_MAX = 128;
/** Serialized size bound of one meta_data object (engine/metadata.ts bounds merged ones the same way). */
export const META_DATA_BYTES_MAX = METADATA_BYTES_MAX;
export const LIST_LIMIT_DEFAULT = 20;
export const LIST_LIMIT_MAX = 100;

/**
 * A number field that is not money. The lossless body parser hands over integers beyond 2^53 as bigint
 * and decimals of more than 15 significant digits as their exact text (DecimalLiteral): outside money
 * they are just numbers, bounded by the field's own limits.
 */
export function plainNumber() {
  return z.preprocess(
    (value) => (value instanceof DecimalLiteral ? Number(value.text) : typeof value === 'bigint' ? Number(value) : value),
    z.number(),
  );
}

export const currencySchema = z.string().regex(/^[A-Za-z0-9_.:-]{1,32}$/, 'must be 1 to 32 letters, digits or _ . : -');

export const identifierSchema = z.string().min(1, 'must not be empty').max(IDENTIFIER_LENGTH_MAX);

/**
 * Free-form metadata: a JSON object. Long decimals become ordinary numbers here (only money fields keep
 * exact text); bigints stay exact.
 */
/**
 * A JSON object, passed through as it is. Not z.record: that copies keys by assignment, which turns a
 * "__proto__" key into the copy's prototype before any check could see it. A parsed body is already a
 * plain object of own properties. Not every JavaScript object is one: the lossless parser hands a long
 * decimal over as a DecimalLiteral (a number, held as an object), and an array is an object too.
 */
export const plainObjectSchema = z.custom<Record<string, unknown>>(
  (value) => {
    if (typeof value !== 'object' || value === null) return false;
    const prototype = Object.getPrototypeOf(value) as unknown;
    return prototype === Object.prototype || prototype === null;
  },
  'must be an object',
).meta({ type: 'object' });

export const metaDataSchema = plainObjectSchema
  .transform((value, context) => {
    const normalized = normalizeMetaData(value);
    if (typeof normalized === 'string') {
      context.addIssue({ code: 'custom', message: normalized });
      return z.NEVER;
    }
    return normalized;
  });

/** Metadata that may be left out or sent as null. */
export const optionalMetaData = z.union([metaDataSchema, z.null()]).optional();

/**
 * Metadata as stored: long decimals as numbers, within the size bound, no prototype keys at any depth;
 * or why it is refused.
 */
export function normalizeMetaData(value: Record<string, unknown>): Record<string, unknown> | string {
  let empty = true;
  for (const _key in value) {
    empty = false;
    break;
  }
  if (empty) return {};
  const prototypeKey = prototypeKeyIn(value);
  if (prototypeKey !== undefined) return `must not use the key ${JSON.stringify(prototypeKey)} (at any depth)`;
  const normalized = normalizeLiterals(value) as Record<string, unknown>;
  if (metaDataBytes(normalized) > META_DATA_BYTES_MAX) return `must serialize to at most ${META_DATA_BYTES_MAX} bytes`;
  return normalized;
}

function normalizeLiterals(value: unknown): unknown {
  if (value instanceof DecimalLiteral) return Number(value.text);
  if (Array.isArray(value)) return value.map(normalizeLiterals);
  if (typeof value === 'object' && value !== null) {
    const result: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      Object.defineProperty(result, key, { value: normalizeLiterals(item), enumerable: true, writable: true, configurable: true });
    }
    return result;
  }
  return value;
}

/** An integer from the query string (text) or a body (number), with a default when left out. */
export const nonNegativeInteger = (fallback: number, maximum: number) =>
  z.preprocess(
    (value) => (value === undefined || value === '' ? fallback : typeof value === 'string' ? Number(value) : value),
    z.number().int().min(0).max(maximum),
  );

/**
 * A list's `limit` as Blnk reads it: anything but a whole number from 1 to the maximum (missing, 0,
 * negative, over the maximum, not a number) means the default page size.
 */
const pageLimit = z.any().optional().transform((value: unknown) => {
  const limit = typeof value === 'string' && /^\d{1,6}$/.test(value) ? Number(value) : Number.NaN;
  return limit >= 1 && limit <= LIST_LIMIT_MAX ? limit : LIST_LIMIT_DEFAULT;
});

/** `limit` (default 20, at most 100; see pageLimit) and `offset` of list endpoints, from the query string. */
export const pageQuerySchema = z.object({
  limit: pageLimit,
  offset: nonNegativeInteger(0, Number.MAX_SAFE_INTEGER),
});

/**
 * The page of `GET /ledgers` and `GET /balances`, read as Blnk's GetAllLedgers and GetAllBalances read
 * it: a `limit` that is not a whole number of at least 1 (`abc`, `0`, `-1`, `1.5`) is refused, as a
 * bad offset is; one over the maximum still means the default page (Blnk has no maximum; ours bounds
 * the work of one request).
 */
export const strictPageQuerySchema = z.object({
  limit: z.string().regex(/^\+?0*[1-9]\d{0,15}$/, 'limit must be a whole number of at least 1').optional()
    .transform((value) => (value !== undefined && Number(value) <= LIST_LIMIT_MAX ? Number(value) : LIST_LIMIT_DEFAULT)),
  offset: nonNegativeInteger(0, Number.MAX_SAFE_INTEGER),
});

/**
 * The page of `GET /transactions`, read as Blnk's GetAllTransactions reads it: nothing is refused; a
 * bad `limit` means the default page and a bad `offset` (negative, not a number, past the largest safe
 * integer) means the start.
 */
export const coercedPageQuerySchema = z.object({
  limit: pageLimit,
  offset: z.any().optional().transform((value: unknown) => {
    const offset = typeof value === 'string' && /^\d{1,16}$/.test(value) ? Number(value) : Number.NaN;
    return Number.isSafeInteger(offset) ? offset : 0;
  }),
});
