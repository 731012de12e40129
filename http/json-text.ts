// JSON output that writes bigints as plain digits, whatever their size, and exact decimal literals as
// they were received. JSON.stringify cannot emit an unquoted bigint, so this small writer does; strings
// still go through JSON.stringify for correct escaping.

import { DecimalLiteral } from './amounts.js';

export function toJsonText(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
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
      const item = value[index];
      text += item === undefined || typeof item === 'function' ? 'null' : toJsonText(item);
    }
    return text + ']';
  }
  if (value instanceof DecimalLiteral) return value.text;
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  let text = '{';
  let first = true;
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
    const item = (value as Record<string, unknown>)[key];
    if (item === undefined || typeof item === 'function') continue;
    text += (first ? '' : ',') + JSON.stringify(key) + ':' + toJsonText(item);
    first = false;
  }
  return text + '}';
}
