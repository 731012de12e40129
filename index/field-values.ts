// Client values for filters turned into what the index stores for that field type: amounts into sortable
// text, times into epoch milliseconds, flags into 0/1. Anything that does not fit the field is refused
// with a message naming the field, never coerced into something else.

import type { FieldSpec } from './field-catalog.js';
import { AMOUNT_DIGITS_MAX, amountKey } from './sortable-amount.js';
import type { SqlValue } from './sqlite-connection.js';

export type Converted = { ok: true; value: SqlValue } | { ok: false; message: string };

const INTEGER_TEXT = new RegExp(`^-?[0-9]{1,${AMOUNT_DIGITS_MAX}}$`);
const TIME_TEXT = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})?)?$/i;
const TEXT_VALUE_LENGTH_MAX = 1024;

export function convertValue(field: FieldSpec, value: unknown): Converted {
  const refuse = (expected: string): Converted => ({ ok: false, message: `${field.name} takes ${expected}` });
  switch (field.type) {
    case 'text':
      if (typeof value === 'string') {
        return value.length <= TEXT_VALUE_LENGTH_MAX ? { ok: true, value } : refuse(`at most ${TEXT_VALUE_LENGTH_MAX} characters`);
      }
      if ((typeof value === 'number' && Number.isFinite(value)) || typeof value === 'bigint') return { ok: true, value: String(value) };
      return refuse('a string');
    case 'amount': {
      const amount = integerOf(value);
      return amount === undefined ? refuse('a whole number (a JSON integer or a string of digits)') : { ok: true, value: amountKey(amount) };
    }
    case 'integer': {
      const number = integerOf(value);
      return number === undefined || number > BigInt(Number.MAX_SAFE_INTEGER) || number < -BigInt(Number.MAX_SAFE_INTEGER)
        ? refuse('a whole number')
        : { ok: true, value: Number(number) };
    }
    case 'time': {
      const epochMs = typeof value === 'string' ? parseTime(value) : undefined;
      return epochMs === undefined ? refuse('an RFC 3339 time (e.g. 2026-01-31T12:00:00Z) or a date (2026-01-31)') : { ok: true, value: epochMs };
    }
    case 'boolean':
      if (value === true || value === 'true') return { ok: true, value: 1 };
      if (value === false || value === 'false') return { ok: true, value: 0 };
      return refuse('true or false');
    case 'meta':
      return metaValue(field, value);
  }
}

function metaValue(field: FieldSpec, value: unknown): Converted {
  if (typeof value === 'string') {
    return value.length <= TEXT_VALUE_LENGTH_MAX ? { ok: true, value } : { ok: false, message: `${field.name} values have at most ${TEXT_VALUE_LENGTH_MAX} characters` };
  }
  if (typeof value === 'number' && Number.isFinite(value)) return { ok: true, value };
  if (typeof value === 'boolean') return { ok: true, value: value ? 1 : 0 };
  if (typeof value === 'bigint' && value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= -BigInt(Number.MAX_SAFE_INTEGER)) {
    return { ok: true, value: Number(value) };
  }
  return { ok: false, message: `${field.name} takes a string, a number within ±2^53 or a boolean` };
}

/** An exact integer given as a bigint, a safe-integer number or decimal text (undefined for anything else). */
export function integerOf(value: unknown): bigint | undefined {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') return Number.isSafeInteger(value) ? BigInt(value) : undefined;
  if (typeof value === 'string' && INTEGER_TEXT.test(value)) return BigInt(value);
  return undefined;
}

/**
 * RFC 3339 (offsets allowed), `YYYY-MM-DD hh:mm:ss` and bare dates, all taken as UTC when no zone is
 * given; the zero time `0001-01-01T00:00:00Z` means unset (0), as it does on records.
 */
export function parseTime(text: string): number | undefined {
  const trimmed = text.trim();
  if (trimmed.startsWith('0001-01-01')) return 0;
  const match = TIME_TEXT.exec(trimmed);
  if (!match) return undefined;
  const [, year, month, day, hour = '0', minute = '0', second = '0', fraction = '', zone = 'Z'] = match;
  const milliseconds = fraction ? Number(fraction.slice(1, 4).padEnd(3, '0')) : 0;
  const utc = Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second), milliseconds);
  const check = new Date(utc);
  if (check.getUTCFullYear() !== Number(year) || check.getUTCMonth() !== Number(month) - 1 || check.getUTCDate() !== Number(day)
    || Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) return undefined;
  if (zone.toUpperCase() === 'Z') return utc;
  const sign = zone.startsWith('-') ? -1 : 1;
  const [hours, minutes] = zone.slice(1).split(':').map(Number) as [number, number];
  return utc - sign * (hours * 60 + minutes) * 60_000;
}
