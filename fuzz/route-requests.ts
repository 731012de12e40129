// The parts of a request every case shares: path parameters (a live id, an unknown id with the right
// prefix, odd text, or one of a fixed list), query strings from a query schema, and body arbitraries
// from the route table's schemas, built once per route.

import fc from 'fast-check';
import { FuzzObject, LongString, PoolRef, RawNumber, RepeatedArray, DeepNest, TimeFromNow, timeText, type FuzzJson, type SendContext } from './fuzz-json.js';
import { FIELD_HINTS } from './field-hints.js';
import { ODD_STRINGS } from './hostile-values.js';
import type { FuzzRoute, ParamFill } from './route-table.js';
import { schemaArbitrary } from './schema-arbitrary.js';

export type ParamChoice =
  | { mode: 'live'; pick: number }
  | { mode: 'unknown'; uuid: string }
  | { mode: 'listed'; index: number }
  | { mode: 'odd'; text: string };

/** Longest text a query value is written with: past Node's 16 KiB header limit, well short of a body's. */
const QUERY_VALUE_CHARS_MAX = 20_000;

const oddParam = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...ODD_STRINGS.filter((text) => text !== '')) },
  { weight: 1, arbitrary: fc.constantFrom('x'.repeat(129), 'x'.repeat(300), 'x'.repeat(5_000)) },
  { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 20 }) },
);

export function paramArbitrary(fill: ParamFill): fc.Arbitrary<ParamChoice> {
  if ('values' in fill) {
    return fc.oneof(
      { weight: 6, arbitrary: fc.nat({ max: fill.values.length - 1 }).map((index): ParamChoice => ({ mode: 'listed', index })) },
      { weight: 1, arbitrary: oddParam.map((text): ParamChoice => ({ mode: 'odd', text })) },
    );
  }
  return fc.oneof(
    { weight: 6, arbitrary: fc.nat().map((pick): ParamChoice => ({ mode: 'live', pick })) },
    { weight: 2, arbitrary: fc.uuid().map((uuid): ParamChoice => ({ mode: 'unknown', uuid })) },
    { weight: 1, arbitrary: oddParam.map((text): ParamChoice => ({ mode: 'odd', text })) },
  );
}

/** The text of one path parameter, before percent-encoding. */
export function paramText(fill: ParamFill, choice: ParamChoice, context: SendContext): string {
  switch (choice.mode) {
    case 'odd':
      return choice.text;
    case 'listed':
      return 'values' in fill ? fill.values[choice.index % fill.values.length]! : '';
    case 'unknown':
      return 'pool' in fill ? `${fill.unknownPrefix}_${choice.uuid}` : choice.uuid;
    case 'live':
      return 'pool' in fill ? context.resolve(new PoolRef(fill.pool, choice.pick)) : '';
  }
}

/** The route's path with its parameters filled in and percent-encoded, in the order the pattern names them. */
export function filledPath(route: FuzzRoute, choices: readonly ParamChoice[], context: SendContext): string {
  let index = 0;
  return route.path.replace(/:([A-Za-z_]+)/g, (_match, name: string) => {
    const fill = route.params?.[name];
    const choice = choices[index];
    index += 1;
    if (!fill || !choice) return 'missing';
    return percentEncode(paramText(fill, choice, context));
  });
}

/** Names of a route's path parameters, in order. */
export function paramNames(route: FuzzRoute): string[] {
  return [...route.path.matchAll(/:([A-Za-z_]+)/g)].map((match) => match[1]!);
}

/**
 * encodeURIComponent, except that a lone surrogate (which it refuses) is written as the bytes WTF-8 would
 * give it: percent-escapes that decode to invalid UTF-8, a fair thing to send a server.
 */
export function percentEncode(text: string): string {
  let encoded = '';
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (code >= 0xd800 && code <= 0xdfff) {
      encoded += `%${(0xe0 | (code >> 12)).toString(16).toUpperCase()}%${(0x80 | ((code >> 6) & 0x3f)).toString(16).toUpperCase()}%${(0x80 | (code & 0x3f)).toString(16).toUpperCase()}`;
    } else encoded += encodeURIComponent(char);
  }
  return encoded;
}

/** A query string (with its `?`, or empty) from a generated query tree. */
export function queryString(query: FuzzJson | undefined, context: SendContext): string {
  if (!(query instanceof FuzzObject) || query.entries.length === 0) return '';
  const pairs: string[] = [];
  for (const [key, value] of query.entries) addQueryPairs(pairs, percentEncode(key), value, context);
  return pairs.length === 0 ? '' : `?${pairs.join('&')}`;
}

function addQueryPairs(pairs: string[], key: string, value: FuzzJson, context: SendContext): void {
  if (value === null) pairs.push(key);
  else if (Array.isArray(value)) for (const item of value) addQueryPairs(pairs, key, item, context);
  else if (value instanceof RepeatedArray) for (let index = 0; index < Math.min(value.count, 200); index += 1) addQueryPairs(pairs, key, value.item, context);
  else if (value instanceof FuzzObject) for (const [name, item] of value.entries) addQueryPairs(pairs, `${key}[${percentEncode(name)}]`, item, context);
  else if (value instanceof DeepNest) pairs.push(`${key}${'[a]'.repeat(Math.min(value.depth, 100))}=1`);
  else pairs.push(`${key}=${percentEncode(scalarText(value, context))}`);
}

function scalarText(value: FuzzJson, context: SendContext): string {
  if (value instanceof LongString) return value.unit.repeat(Math.min(value.count, Math.ceil(QUERY_VALUE_CHARS_MAX / value.unit.length)));
  if (value instanceof RawNumber) return value.text;
  if (value instanceof PoolRef) return context.resolve(value);
  if (value instanceof TimeFromNow) return timeText(value, context.nowMs);
  return String(value);
}

const bodyArbitraries = new Map<FuzzRoute, fc.Arbitrary<FuzzJson>>();
const queryArbitraries = new Map<FuzzRoute, fc.Arbitrary<FuzzJson>>();

/** Bodies from the route's schema (with the field hints), or undefined for a route that takes none. */
export function bodyArbitrary(route: FuzzRoute): fc.Arbitrary<FuzzJson> | undefined {
  if (!route.body) return undefined;
  let arbitrary = bodyArbitraries.get(route);
  if (!arbitrary) {
    arbitrary = schemaArbitrary(route.body, { hints: FIELD_HINTS });
    bodyArbitraries.set(route, arbitrary);
  }
  return arbitrary;
}

export function queryArbitrary(route: FuzzRoute): fc.Arbitrary<FuzzJson> | undefined {
  if (!route.query) return undefined;
  let arbitrary = queryArbitraries.get(route);
  if (!arbitrary) {
    arbitrary = schemaArbitrary(route.query, { hints: FIELD_HINTS });
    queryArbitraries.set(route, arbitrary);
  }
  return arbitrary;
}
