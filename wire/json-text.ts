// JSON output that writes bigints as plain digits, whatever their size, and exact decimal literals as
// they were received. JSON.stringify cannot emit an unquoted bigint, so this small writer does. It sits
// on every response, so it avoids work where it can: quoted keys are cached and plain strings skip the
// escaper.

import { DecimalLiteral } from './amounts.js';

/** Characters JSON.stringify would escape (controls, quote, backslash, surrogates). */
const NEEDS_ESCAPING = /[\u0000-\u001f"\\\ud800-\udfff]/;
const QUOTED_KEYS_MAX = 10_000;
const quotedKeys = new Map<string, string>();

/** JSON text rendered ahead of time (by a specialised writer) to be embedded as it is. */
export class RawJson {
  constructor(readonly text: string) {}
}

/** A JSON string literal. */
export function jsonString(value: string): string {
  return NEEDS_ESCAPING.test(value) ? JSON.stringify(value) : '"' + value + '"';
}

export function toJsonText(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return jsonString(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'bigint':
      return value.toString();
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      return objectText(value);
    default:
      return 'null';
  }
}

function objectText(value: object | null): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) {
    let text = '[';
    for (let index = 0; index < value.length; index += 1) {
      if (index > 0) text += ',';
      const item: unknown = value[index];
      text += item === undefined || typeof item === 'function' ? 'null' : toJsonText(item);
    }
    return text + ']';
  }
  if (value instanceof RawJson || value instanceof DecimalLiteral) return value.text;
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  let text = '{';
  let first = true;
  for (const key of Object.keys(value)) {
    const item = (value as Record<string, unknown>)[key];
    if (item === undefined || typeof item === 'function') continue;
    text += (first ? '' : ',') + quotedKey(key) + toJsonText(item);
    first = false;
  }
  return text + '}';
}

function quotedKey(key: string): string {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    quoted = JSON.stringify(key) + ':';
    // Keys of client metadata are unbounded; only remember a bounded number of them.
    if (quotedKeys.size < QUOTED_KEYS_MAX) quotedKeys.set(key, quoted);
  }
  return quoted;
}
