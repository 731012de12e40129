// JSON parsing that never loses a digit of a number. Plain JSON.parse turns 12345678901234567890 into
// 12345678901234567000 and 0.1000000000000000055 into 0.1; for money that is unacceptable. Bodies
// without a long run of digits are parsed by plain JSON.parse (no literal there can lose precision).
// The others are parsed by JSON.parse too, with a reviver that reads each number's source text (Node 24
// hands it over as `context.source`) and returns integers beyond 2^53 as bigint and long decimals as
// DecimalLiteral (their exact text), so money fields can convert them exactly.
//
// Why the split: a reviver is called for every value, which costs about 3 µs on a single transfer's
// body, more than the whole parse without it; bodies with long numbers are rare, and for large ones
// (a bulk of 1,000) the reviver is twice as fast as the hand-written parser it replaced
// (docs/performance.md, "Body parsing").
//
// A request body holds at most JSON_CONTAINERS_MAX objects and arrays. What a parse costs grows with the
// objects it makes, and faster than they do once they outgrow V8's young generation: 10 MiB of `[{},{},...]`
// (3.5 million empty objects) took 0.3-0.8 s and 220 MB of heap here, where 10 MiB of ordinary
// transfers (45,000 objects) took 25 ms and 250,000 empty objects about 15 ms. Counting `{` and `[` first
// (strings included: an over-count only refuses sooner) costs a few ms on 10 MiB, and only bodies long
// enough to exceed the bound are counted.

import { DecimalLiteral } from '../../wire/amounts.js';

/** Nesting deeper than this is refused: nothing Folio accepts needs it, and recursion must be bounded. */
export const JSON_DEPTH_MAX = 64;
/**
 * Sixteen or more digits (dots included) in a row can hold a number a double cannot represent. Matching
 * exactly sixteen finds the same bodies; an open `{16,}` made V8 overflow its stack on multi-megabyte runs.
 */
const LONG_NUMBER = /[0-9.]{16}/;
/** Number literals longer than this are refused: nothing Folio stores needs them, and converting a
 * multi-megabyte literal to a bigint would stall the server. */
export const NUMBER_LITERAL_LENGTH_MAX = 400;
/** More significant digits than this do not survive a trip through a double. */
const SAFE_SIGNIFICANT_DIGITS = 15;
/** A JSON escape that can produce half of a surrogate pair. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/**
 * Objects and arrays one request body may hold: a bulk of 10,000 transactions with nested metadata holds
 * a few tens of thousands.
 */
export const JSON_CONTAINERS_MAX = 250_000;

export class JsonSyntaxError extends Error {
  override readonly name = 'JsonSyntaxError';
}

/** A body whose shape is too large to parse (more than JSON_CONTAINERS_MAX objects and arrays). */
export class JsonTooLargeError extends Error {
  override readonly name = 'JsonTooLargeError';
}

export function parseJsonLossless(text: string): unknown {
  // Each object or array takes two characters at least.
  if (text.length > 2 * JSON_CONTAINERS_MAX && occurrences(text, '{', JSON_CONTAINERS_MAX) + occurrences(text, '[', JSON_CONTAINERS_MAX) > JSON_CONTAINERS_MAX) {
    throw new JsonTooLargeError(`the body holds more than ${JSON_CONTAINERS_MAX} objects and arrays`);
  }
  const value = parseJsonExact(text);
  // A lone surrogate can only come from the text itself or from a \uD8xx-\uDFxx escape in it.
  const stringsChecked = !SURROGATE_ESCAPE.test(text) && text.isWellFormed();
  checkValue(value, 1, stringsChecked);
  return value;
}

/** How often `character` occurs in `text`, counting no further than just past `max`. */
function occurrences(text: string, character: string, max: number): number {
  let count = 0;
  for (let at = text.indexOf(character); at !== -1 && count <= max; at = text.indexOf(character, at + 1)) count += 1;
  return count;
}

/**
 * The exact numbers alone, without the limits a request body is held to: for reading Folio's own
 * answers (a list nests a stored value one level deeper than the request that stored it).
 */
export function parseJsonExact(text: string): unknown {
  try {
    return LONG_NUMBER.test(text) ? JSON.parse(text, exactNumber) : JSON.parse(text);
  } catch (error) {
    if (error instanceof JsonSyntaxError) throw error;
    throw new JsonSyntaxError((error as Error).message);
  }
}

/** The reviver of the long-number path: numbers whose text a double would change keep that text. */
function exactNumber(this: unknown, _key: string, value: unknown, context?: { source?: string }): unknown {
  if (typeof value !== 'number') return value;
  const literal = context?.source;
  if (literal === undefined || literal.length <= SAFE_SIGNIFICANT_DIGITS) return value;
  if (literal.length > NUMBER_LITERAL_LENGTH_MAX) {
    throw new JsonSyntaxError(`number literal longer than ${NUMBER_LITERAL_LENGTH_MAX} characters`);
  }
  const fraction = literal.indexOf('.') !== -1;
  const exponent = literal.indexOf('e') !== -1 || literal.indexOf('E') !== -1;
  if (!fraction && !exponent) return Number.isSafeInteger(value) ? value : BigInt(literal);
  const significant = literal.replace(/[eE].*$/, '').replace(/[-.]/g, '').replace(/^0+/, '').replace(/0+$/, '');
  return significant.length > SAFE_SIGNIFICANT_DIGITS ? new DecimalLiteral(literal) : value;
}

/**
 * Walks the parsed value once: nesting is bounded, and every string (keys included) must be well-formed
 * Unicode, because a lone surrogate cannot be stored as UTF-8 without changing, so accepting one would
 * acknowledge a value that replay alters. The recursion stops at JSON_DEPTH_MAX, so its own depth is
 * bounded too; it allocates nothing, which matters on a bulk body of thousands of items.
 */
function checkValue(value: unknown, depth: number, stringsChecked: boolean): void {
  if (typeof value === 'string') {
    if (!stringsChecked && !value.isWellFormed()) throw new JsonSyntaxError('a string holds a lone surrogate (not valid Unicode)');
    return;
  }
  // A DecimalLiteral is a number held as an object, not a level of nesting.
  if (typeof value !== 'object' || value === null || value instanceof DecimalLiteral) return;
  if (depth > JSON_DEPTH_MAX) throw new JsonSyntaxError(`nesting deeper than ${JSON_DEPTH_MAX} levels`);
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index += 1) checkValue(value[index], depth + 1, stringsChecked);
    return;
  }
  // Parsed JSON holds only own enumerable properties, so for...in needs no entries array.
  for (const key in value) {
    if (!stringsChecked && !key.isWellFormed()) throw new JsonSyntaxError('a property name holds a lone surrogate (not valid Unicode)');
    checkValue((value as Record<string, unknown>)[key], depth + 1, stringsChecked);
  }
}
