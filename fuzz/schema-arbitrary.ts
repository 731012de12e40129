// Bodies from a route's zod schema: a walk over zod 4's definitions (`schema._zod.def`) that turns each
// node into a fast-check arbitrary of fuzz trees. Objects get their required keys and a random subset of
// the optional ones; strings, numbers and arrays respect the schema's checks (length, pattern, range,
// integer), so most generated bodies pass the shape and reach the code behind it; mutations
// (body-mutation.ts) then break them. A field with a hint (field-hints.ts) mostly takes the hint's value.
//
// Only the node types Folio's schemas use are understood in detail; anything else generates a small
// JSON value, which is still a fair input for a fuzzer.

import fc from 'fast-check';
import type { z } from 'zod';
import { FuzzObject, LongString, RawNumber, type FuzzJson } from './fuzz-json.js';

/** Items per generated array: enough to exercise lists; huge arrays come from mutations. */
const ARRAY_ITEMS_MAX = 5;
/** Generated strings stay short unless the schema sets a minimum; limits are tried by a separate branch. */
const STRING_CHARS_TYPICAL = 40;
/** Out of (hint weight + 1) draws of a hinted field, this many take the hint. */
const HINT_WEIGHT = 4;

export interface SchemaArbitraryOptions {
  hints: Readonly<Record<string, fc.Arbitrary<FuzzJson>>>;
}

/** What zod 4 keeps on every schema; the walk reads only this. */
interface ZodNode {
  _zod: { def: ZodDef };
}

interface ZodDef {
  type: string;
  [field: string]: unknown;
}

interface CheckDef {
  check: string;
  [field: string]: unknown;
}

export function schemaArbitrary(schema: z.ZodType, options: SchemaArbitraryOptions): fc.Arbitrary<FuzzJson> {
  return nodeArbitrary(schema as unknown as ZodNode, options);
}

/** A small JSON value of any type: the fill for `unknown` and anything the walk does not model. */
export const smallJson: fc.Arbitrary<FuzzJson> = fc.letrec<{ value: FuzzJson }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null), fc.boolean(), fc.integer(), fc.string({ maxLength: 12 }),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.array(fc.tuple(fc.string({ maxLength: 8 }), tie('value')), { maxLength: 3 }).map((entries): FuzzJson => new FuzzObject(entries)),
  ),
})).value;

function nodeArbitrary(node: ZodNode, options: SchemaArbitraryOptions, key?: string): fc.Arbitrary<FuzzJson> {
  const own = defArbitrary(node._zod.def, options);
  const hint = key === undefined ? undefined : options.hints[key];
  if (!hint) return own;
  return fc.oneof({ weight: HINT_WEIGHT, arbitrary: hint }, { weight: 1, arbitrary: own });
}

function defArbitrary(def: ZodDef, options: SchemaArbitraryOptions): fc.Arbitrary<FuzzJson> {
  const inner = (name: string): ZodNode => def[name] as ZodNode;
  switch (def.type) {
    case 'object':
      return objectArbitrary(def.shape as Record<string, ZodNode>, options);
    case 'string':
      return stringArbitrary(checksOf(def));
    case 'number':
      return numberArbitrary(checksOf(def));
    case 'bigint':
      return fc.bigInt().map((value): FuzzJson => new RawNumber(value.toString()));
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'enum':
      return fc.constantFrom(...Object.values(def.entries as Record<string, string | number>));
    case 'literal':
      return fc.constantFrom(...(def.values as Array<string | number | boolean | null>).map((value) => value as FuzzJson));
    case 'union':
      return fc.oneof(...(def.options as ZodNode[]).map((option) => nodeArbitrary(option, options)));
    case 'optional': case 'default': case 'prefault': case 'readonly': case 'catch': case 'nonoptional':
      return nodeArbitrary(inner('innerType'), options);
    case 'nullable':
      return fc.oneof({ weight: 4, arbitrary: nodeArbitrary(inner('innerType'), options) }, { weight: 1, arbitrary: fc.constant(null) });
    case 'array':
      return arrayArbitrary(inner('element'), checksOf(def), options);
    case 'record':
      return fc.array(fc.tuple(fc.string({ maxLength: 12 }), nodeArbitrary(inner('valueType'), options)), { maxLength: 4 })
        .map((entries): FuzzJson => new FuzzObject(entries));
    case 'pipe':
      // A preprocess is a pipe from a transform: the shape lives in its output, also when a preprocessed value is
      // piped on into narrower checks. Otherwise the input is the shape.
      return startsWithTransform(inner('in')) ? nodeArbitrary(inner('out'), options) : nodeArbitrary(inner('in'), options);
    case 'custom':
      // Folio's only custom schema is instanceof(DecimalLiteral): a number held as exact text.
      return fc.tuple(fc.nat(), fc.nat({ max: 999_999 })).map(([whole, fraction]): FuzzJson => new RawNumber(`${whole}.${fraction}`));
    case 'lazy':
      return fc.constant(null).chain(() => nodeArbitrary((def.getter as () => ZodNode)(), options));
    default:
      return smallJson;
  }
}

/** Whether a property may be left out of its object. */
function startsWithTransform(node: ZodNode): boolean {
  const def = node._zod.def;
  return def.type === 'transform' || (def.type === 'pipe' && startsWithTransform(def.in as ZodNode));
}

function isOptional(node: ZodNode): boolean {
  const { type } = node._zod.def;
  if (type === 'optional' || type === 'default' || type === 'prefault') return true;
  if (type === 'nullable' || type === 'readonly' || type === 'catch') return isOptional(node._zod.def.innerType as ZodNode);
  if (type === 'pipe') return isOptional(node._zod.def.in as ZodNode) || isOptional(node._zod.def.out as ZodNode);
  return false;
}

function objectArbitrary(shape: Record<string, ZodNode>, options: SchemaArbitraryOptions): fc.Arbitrary<FuzzJson> {
  const fields = Object.entries(shape).map(([key, node]) => {
    const value = nodeArbitrary(node, options, key);
    const present = isOptional(node) ? fc.option(value, { nil: undefined, freq: 2 }) : value;
    return present.map((item) => [key, item] as const);
  });
  return fc.tuple(...fields).map((entries): FuzzJson =>
    new FuzzObject(entries.filter((entry): entry is readonly [string, FuzzJson] => entry[1] !== undefined)),
  );
}

function checksOf(def: ZodDef): CheckDef[] {
  const checks = (def.checks as Array<{ _zod: { def: CheckDef } }> | undefined) ?? [];
  return checks.map((check) => check._zod.def);
}

function numberCheck(checks: CheckDef[], name: string, field: string): number | undefined {
  const found = checks.find((check) => check.check === name);
  return found === undefined ? undefined : (found[field] as number);
}

function stringArbitrary(checks: CheckDef[]): fc.Arbitrary<FuzzJson> {
  const pattern = checks.find((check) => check.check === 'string_format' && check.format === 'regex')?.pattern as RegExp | undefined;
  if (pattern) return fc.stringMatching(pattern);
  const minLength = numberCheck(checks, 'min_length', 'minimum') ?? numberCheck(checks, 'length_equals', 'length') ?? 0;
  const maxLength = numberCheck(checks, 'max_length', 'maximum') ?? numberCheck(checks, 'length_equals', 'length');
  const typicalMax = Math.max(minLength, Math.min(maxLength ?? STRING_CHARS_TYPICAL, STRING_CHARS_TYPICAL));
  const typical = fc.string({ minLength, maxLength: typicalMax });
  if (maxLength === undefined) return typical;
  // Exactly at the limit: the longest value the schema accepts.
  return fc.oneof({ weight: 9, arbitrary: typical }, { weight: 1, arbitrary: fc.constant<FuzzJson>(new LongString('x', maxLength)) });
}

function numberArbitrary(checks: CheckDef[]): fc.Arbitrary<FuzzJson> {
  const integer = checks.some((check) => check.check === 'number_format' && (check.format === 'safeint' || check.format === 'int32'));
  const lower = checks.find((check) => check.check === 'greater_than');
  const upper = checks.find((check) => check.check === 'less_than');
  const min = lower?.value as number | undefined;
  const max = upper?.value as number | undefined;
  if (integer) {
    const low = min === undefined ? -1_000_000 : lower?.inclusive ? Math.ceil(min) : Math.floor(min) + 1;
    const high = max === undefined ? Math.max(low, 1_000_000) : upper?.inclusive ? Math.floor(max) : Math.ceil(max) - 1;
    return fc.integer({ min: low, max: Math.max(low, high) });
  }
  const low = min ?? -1e9;
  const high = max ?? 1e9;
  const lowExcluded = lower !== undefined && lower.inclusive !== true;
  const highExcluded = upper !== undefined && upper.inclusive !== true;
  // Mostly decimals of a few digits, as clients write them; sometimes any double in range.
  const lowCents = Math.ceil(low * 100) + (lowExcluded && Number.isInteger(low * 100) ? 1 : 0);
  const highCents = Math.floor(high * 100) - (highExcluded && Number.isInteger(high * 100) ? 1 : 0);
  const short = fc.integer({ min: lowCents, max: Math.max(lowCents, highCents) }).map((cents): FuzzJson => cents / 100);
  const any = fc.double({ noNaN: true, noDefaultInfinity: true, min: low, max: high, minExcluded: lowExcluded, maxExcluded: highExcluded });
  return fc.oneof({ weight: 3, arbitrary: short }, { weight: 1, arbitrary: any });
}

function arrayArbitrary(element: ZodNode, checks: CheckDef[], options: SchemaArbitraryOptions): fc.Arbitrary<FuzzJson> {
  const minLength = numberCheck(checks, 'min_length', 'minimum') ?? 0;
  const maxLength = Math.max(minLength, Math.min(numberCheck(checks, 'max_length', 'maximum') ?? ARRAY_ITEMS_MAX, ARRAY_ITEMS_MAX));
  return fc.array(nodeArbitrary(element, options), { minLength, maxLength });
}
