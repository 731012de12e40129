// The values a hostile client puts where a valid one belongs: numbers at the edges of what JSON, doubles
// and 64-bit integers hold; strings that are empty, huge (up to past the body limit) or odd (NUL, lone
// surrogates, direction marks, emoji, prototype names); arrays empty and huge; nesting past every depth
// limit. `valueOfAnotherKind(kind)` draws one whose JSON type differs from `kind`, so every field is
// tried with every other type.

import fc from 'fast-check';
import { DeepNest, FuzzObject, LongString, RawNumber, RepeatedArray, type FuzzJson, type JsonKind } from './fuzz-json.js';

/** The server's body limit (http/middleware/json-body.ts BODY_BYTES_MAX); strings go up to it and just past it. */
export const BODY_LIMIT_BYTES = 10 * 1024 * 1024;

export const PROTOTYPE_KEYS = ['__proto__', 'constructor', 'prototype'] as const;

/** Number literals at the edges, written exactly. */
export const EDGE_NUMBER_TEXTS: readonly string[] = [
  '0', '-0', '-1', '1', '1.5', '-1.5', '0.1', '0.30000000000000004', '1e-7', '12.3456789012345678901234567890',
  '9007199254740991', '9007199254740992', '9007199254740993', '-9007199254740993',
  '9223372036854775807', '9223372036854775808', '-9223372036854775809', '18446744073709551615', '18446744073709551617',
  '340282366920938463463374607431768211457', '9999999999999999999999999999999999999999', '10000000000000000000000000000000000000000',
  '1e308', '-1e308', '1.7976931348623157e308', '1e309', '5e-324', '-5e-324', '1e-400', '1E+2', '1e400', '4.9e-324',
  '2147483647', '2147483648', '-2147483649', '4294967296', '1000000000000000000', '1000000000000000001',
  '123456789012345678901234567890123456789012345678901234567890',
];

/** Strings chosen to break parsers, trimmers, lookups and encodings. */
export const ODD_STRINGS: readonly string[] = [
  '', ' ', '  x  ', '\u0000', 'a\u0000b', '\ud800', 'x\udc00', '\udc00\ud800', '\u202eRTL\u202c', '\u200f\u200e', '\ufeff',
  '😀', '👩‍👩‍👧‍👦', 'e\u0301', 'Ω≈ç√∫', '中文', '\n', '\r\n', '\t', '\\', '"', '\'', '`', '%', '%00', '%ZZ', '%2F..%2F',
  '../../etc/passwd', '<script>alert(1)</script>', "'; DROP TABLE transactions; --", '${7*7}', '{{7*7}}',
  '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf',
  'null', 'true', 'false', 'undefined', 'NaN', 'Infinity', '-Infinity', '0', '-0', '-1', '1e308', '0x10', '1_000',
  '12345678901234567890123456789012345678901234567890', '0.000000000000000000000001', '-5', '5%', '-5%', '101%', '0%',
  '100.0000000000000000001%', 'left', 'LEFT', ' left ', '*', '@', '@world', '@ ', '@' + 'a'.repeat(300),
  'USD', 'usd', ' USD', 'U$D', 'commit', 'void', 'COMMIT', ' void ', 'individual', 'organization',
  'ledgers:read', '*:*', 'x:y', ':', 'http://', 'http://169.254.169.254/latest/meta-data/', 'file:///etc/passwd',
  'javascript:alert(1)', '2024-02-30T00:00:00Z', '0001-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '1970-01-01', 'yesterday',
];

const LONG_STRING_UNITS: readonly string[] = ['x', '9', '😀', '\u0000', ' ', '%', '\\', '"', 'é'];
/** Sizes in bytes as sent: past the field limits (256, 2048 characters), past metadata's 64 KiB, and the body limit. */
const longStringBytes = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(257, 2_049) },
  { weight: 2, arbitrary: fc.constant(65_537) },
  { weight: 1, arbitrary: fc.constantFrom(1_000_000, BODY_LIMIT_BYTES - 64, BODY_LIMIT_BYTES + 1) },
);

export const edgeNumber: fc.Arbitrary<FuzzJson> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...EDGE_NUMBER_TEXTS).map((text): FuzzJson => new RawNumber(text)) },
  { weight: 2, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
  { weight: 2, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.bigInt({ min: -(2n ** 200n), max: 2n ** 200n }).map((value): FuzzJson => new RawNumber(value.toString())) },
);

export const oddString: fc.Arbitrary<FuzzJson> = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...ODD_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
);

/** Long strings: mostly moderate, sometimes up to and just past the body limit (then a 413 is due). */
export const longString: fc.Arbitrary<FuzzJson> = fc
  .tuple(fc.constantFrom(...LONG_STRING_UNITS), longStringBytes)
  .map(([unit, bytes]): FuzzJson => new LongString(unit, Math.max(1, Math.floor(bytes / escapedBytes(unit)))));

/** Bytes one unit takes inside a JSON string literal. */
function escapedBytes(unit: string): number {
  return Buffer.byteLength(JSON.stringify(unit).slice(1, -1));
}

export const hostileString: fc.Arbitrary<FuzzJson> = fc.oneof(
  { weight: 8, arbitrary: oddString },
  { weight: 1, arbitrary: longString },
);

const smallLeaf: fc.Arbitrary<FuzzJson> = fc.oneof(
  fc.constant(null), fc.boolean(), fc.integer({ min: -5, max: 5 }), fc.constantFrom('a', '', '1'),
);

/** Depths around the parser's limit (64) and far past it. */
const NEST_DEPTHS: readonly number[] = [2, 63, 64, 65, 1_000, 100_000];

const protoObject: fc.Arbitrary<FuzzJson> = fc.constantFrom(...PROTOTYPE_KEYS).map((key): FuzzJson =>
  new FuzzObject([[key, new FuzzObject([['polluted', true], ['prototype', new FuzzObject([['polluted', true]])]])]]),
);

export const hostileArray: fc.Arbitrary<FuzzJson> = fc.oneof(
  { weight: 3, arbitrary: fc.constant<FuzzJson>([]) },
  { weight: 3, arbitrary: fc.array(smallLeaf, { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.tuple(smallLeaf, fc.constantFrom(101, 1_001, 10_001, 100_000)).map(([item, count]): FuzzJson => new RepeatedArray(item, count)) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...NEST_DEPTHS), smallLeaf).map(([depth, leaf]): FuzzJson => new DeepNest(depth, 'array', leaf)) },
);

export const hostileObject: fc.Arbitrary<FuzzJson> = fc.oneof(
  { weight: 3, arbitrary: fc.constant<FuzzJson>(new FuzzObject([])) },
  { weight: 2, arbitrary: protoObject },
  { weight: 2, arbitrary: fc.array(fc.tuple(fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom(...PROTOTYPE_KEYS)), smallLeaf), { maxLength: 4 }).map((entries): FuzzJson => new FuzzObject(entries)) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...NEST_DEPTHS), smallLeaf).map(([depth, leaf]): FuzzJson => new DeepNest(depth, 'object', leaf)) },
);

const BY_KIND: Record<JsonKind, fc.Arbitrary<FuzzJson>> = {
  null: fc.constant(null),
  boolean: fc.boolean(),
  number: edgeNumber,
  string: hostileString,
  array: hostileArray,
  object: hostileObject,
};

const KINDS = Object.keys(BY_KIND) as JsonKind[];

/** A hostile value of any JSON type. */
export const hostileValue: fc.Arbitrary<FuzzJson> = fc.oneof(...KINDS.map((kind) => BY_KIND[kind]));

/** A hostile value whose JSON type is not `kind` (for a value of the right type, see `hostileOfKind`). */
export function valueOfAnotherKind(kind: JsonKind): fc.Arbitrary<FuzzJson> {
  return fc.oneof(...KINDS.filter((other) => other !== kind).map((other) => BY_KIND[other]));
}

/** A hostile value of the same JSON type as the one it replaces (edge numbers, odd strings, ...). */
export function hostileOfKind(kind: JsonKind): fc.Arbitrary<FuzzJson> {
  return BY_KIND[kind];
}
