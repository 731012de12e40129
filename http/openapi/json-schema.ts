// zod schemas as JSON Schema 2020-12 (the dialect of OpenAPI 3.1), through zod's own z.toJSONSchema.
// Requests are documented in their input form (what a client sends, before transforms), responses in
// their output form. What JSON Schema cannot say on its own is mapped here, once:
//   - bigint: the lossless body parser hands big integers over as bigint; on the wire they are integers;
//   - DecimalLiteral: the exact text of a decimal the parser kept; on the wire it is a number;
//   - custom checks (z.custom) say what they accept through their metadata (`.meta({ type: 'object' })`),
//     and are otherwise any JSON value.
// Schemas named with `.meta({ id })` come out as `$defs`; the document moves those to components.

import { z } from 'zod';
import { DecimalLiteral } from '../../wire/amounts.js';

export type JsonSchema = Record<string, unknown>;
export type SchemaForm = 'input' | 'output';

export function jsonSchemaOf(schema: z.ZodType, form: SchemaForm): JsonSchema {
  const converted = z.toJSONSchema(schema, { io: form, unrepresentable: 'any', override: wireForm }) as JsonSchema;
  delete converted.$schema;
  return simplifiedUnions(converted) as JsonSchema;
}

function wireForm(context: { zodSchema: unknown; jsonSchema: JsonSchema }): void {
  const zod = (context.zodSchema as { _zod: { def: { type: string }; bag?: { Class?: unknown } } })._zod;
  if (zod.def.type === 'bigint') context.jsonSchema.type = 'integer';
  if (zod.def.type === 'custom' && zod.bag?.Class === DecimalLiteral) context.jsonSchema.type = 'number';
}

/**
 * `anyOf` members that say the same twice (number and a DecimalLiteral's number, integer beside number)
 * are dropped, and an `anyOf` of one is that one: the reference reads "number or string", as a client
 * sends it.
 */
function simplifiedUnions(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(simplifiedUnions);
  if (typeof value !== 'object' || value === null) return value;
  const result: JsonSchema = {};
  for (const [key, item] of Object.entries(value)) result[key] = simplifiedUnions(item);
  if (Array.isArray(result.type) && result.type.includes('number')) result.type = result.type.filter((type) => type !== 'integer');
  const members = result.anyOf;
  if (!Array.isArray(members)) return result;
  const texts = members.map((member) => JSON.stringify(member));
  const hasNumber = texts.includes('{"type":"number"}');
  const kept = members.filter((member, index) =>
    texts.indexOf(texts[index] as string) === index && !(hasNumber && texts[index] === '{"type":"integer"}'));
  if (kept.length !== 1) return { ...result, anyOf: kept };
  const { anyOf: _members, ...rest } = result;
  return { ...rest, ...(kept[0] as JsonSchema) };
}
