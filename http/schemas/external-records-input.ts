// External (statement) records from what clients send: rows of an uploaded CSV file, items of an
// uploaded JSON array, items of an instant reconciliation's body. Every field is required and checked;
// nothing is ever defaulted: a blank amount is an error naming its line and field, not a zero (the
// public Blnk ledger stored zeros for unreadable amounts). Amounts are decimal text in the currency's
// unit (`152.75` USD) and become exact integers at the currency's precision (15275 at 100); an amount
// with more decimals than the currency has is refused, never rounded.

import { EXTERNAL_RECORDS_MAX, type ExternalRecord } from '../../engine/reconciliation-records.js';
import { PRECISE_AMOUNT_MAX } from '../../engine/money.js';
import { amountToPrecise, decimalTextOf, DecimalLiteral } from '../../wire/amounts.js';
import { minorUnitsOf, precisionOf } from '../../wire/currency-precision.js';
import { DESCRIPTION_LENGTH_MAX, IDENTIFIER_LENGTH_MAX, REFERENCE_LENGTH_MAX } from './common-schemas.js';
import { parseCsv, CsvSyntaxError } from '../views/csv-text.js';
import { parseJsonLossless } from './lossless-json.js';
import { parseTimeInput } from './time-input.js';

export const EXTERNAL_FIELDS = ['id', 'amount', 'currency', 'reference', 'description', 'date'] as const;
type ExternalField = (typeof EXTERNAL_FIELDS)[number];

const CURRENCY = /^[A-Za-z0-9_.:-]{1,32}$/;

export type RecordConversion = { ok: true; record: ExternalRecord } | { ok: false; field: string; message: string };

/** One record from its fields (strings from a CSV, JSON values from a JSON item). */
export function externalRecordFrom(fields: Record<string, unknown>): RecordConversion {
  const refuse = (field: ExternalField, message: string): RecordConversion => ({ ok: false, field, message });
  for (const field of EXTERNAL_FIELDS) {
    if (fields[field] === undefined || fields[field] === null) return refuse(field, 'is missing');
  }
  const id = textOf(fields.id, true);
  if (id === undefined || id.trim() === '') return refuse('id', 'must be a non-empty string');
  if (id.length > IDENTIFIER_LENGTH_MAX) return refuse('id', `must be at most ${IDENTIFIER_LENGTH_MAX} characters`);
  const currency = textOf(fields.currency, false)?.trim();
  if (currency === undefined || !CURRENCY.test(currency)) return refuse('currency', 'must be a currency code (1 to 32 letters, digits or _ . : -)');
  const amount = exactAmount(fields.amount, currency);
  if (typeof amount === 'string') return refuse('amount', amount);
  const reference = textOf(fields.reference, true);
  if (reference === undefined) return refuse('reference', 'must be a string');
  if (reference.length > REFERENCE_LENGTH_MAX) return refuse('reference', `must be at most ${REFERENCE_LENGTH_MAX} characters`);
  const description = textOf(fields.description, false);
  if (description === undefined) return refuse('description', 'must be a string');
  if (description.length > DESCRIPTION_LENGTH_MAX) return refuse('description', `must be at most ${DESCRIPTION_LENGTH_MAX} characters`);
  const dateText = textOf(fields.date, false);
  if (dateText === undefined || dateText.trim() === '') return refuse('date', 'must be a date and time');
  const date = parseTimeInput(dateText.trim().length === 10 ? `${dateText.trim()}T00:00:00Z` : dateText);
  if (!date.ok) return refuse('date', date.rejection.message);
  if (date.value === 0) return refuse('date', 'must be a date and time (the zero time is not one)');
  return {
    ok: true,
    record: { id: id.trim(), amount: amount.value, precision: amount.precision, currency, reference: reference.trim(), description, date: date.value },
  };
}

/** Text of a field: strings as they are; (whole) numbers too where an identifier may be numeric. */
function textOf(value: unknown, numbersAllowed: boolean): string | undefined {
  if (typeof value === 'string') return value;
  if (numbersAllowed && typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  if (numbersAllowed && typeof value === 'bigint') return value.toString();
  return undefined;
}

function exactAmount(value: unknown, currency: string): { value: bigint; precision: bigint } | string {
  if (typeof value === 'boolean' || (typeof value === 'object' && !(value instanceof DecimalLiteral))) return 'must be a number';
  const text = decimalTextOf(value);
  if (text === undefined || text === '') return 'must be a number (it is empty)';
  const negative = text.startsWith('-');
  const magnitude = negative ? text.slice(1) : text.startsWith('+') ? text.slice(1) : text;
  const precision = precisionOf(currency);
  const converted = amountToPrecise(magnitude, precision, { allowZero: true });
  if (!converted.ok) {
    if (converted.rejection.message.includes('decimal places')) return `has more decimal places than ${currency} has (${minorUnitsOf(currency)})`;
    return converted.rejection.message === 'must not be negative' ? 'must be a decimal number' : converted.rejection.message;
  }
  if (converted.value > PRECISE_AMOUNT_MAX) return 'is too large';
  return { value: negative ? -converted.value : converted.value, precision };
}

/** A refused upload: where, and why. */
export class UploadRefusal extends Error {
  override readonly name = 'UploadRefusal';
  constructor(message: string, readonly details: Record<string, unknown>) {
    super(message);
  }
}

export type FileKind = 'csv' | 'json';

/** Which format an uploaded file is in: its name, then its declared type, then its first character. */
export function fileKind(name: string, type: string, text: string): FileKind {
  const lower = name.toLowerCase();
  if (lower.endsWith('.csv')) return 'csv';
  if (lower.endsWith('.json')) return 'json';
  if (type.includes('json')) return 'json';
  if (type.includes('csv')) return 'csv';
  return text.trimStart().startsWith('[') ? 'json' : 'csv';
}

/** Every record of an uploaded file, or an UploadRefusal naming the first bad line and field. */
export function recordsOfFile(kind: FileKind, text: string): ExternalRecord[] {
  const records = kind === 'csv' ? recordsOfCsv(text) : recordsOfJson(text);
  if (records.length === 0) throw new UploadRefusal('the file holds no records', { line: 1 });
  return records;
}

function recordsOfCsv(text: string): ExternalRecord[] {
  let rows;
  try {
    rows = parseCsv(text);
  } catch (error) {
    if (error instanceof CsvSyntaxError) throw new UploadRefusal(`line ${error.line}: ${error.message}`, { line: error.line });
    throw error;
  }
  const header = rows.shift();
  if (!header) throw new UploadRefusal('the file is empty', { line: 1 });
  const columns = header.fields.map((name) => name.trim().toLowerCase());
  for (const field of EXTERNAL_FIELDS) {
    if (!columns.includes(field)) throw new UploadRefusal(`line ${header.line}: no ${field} column (columns: ${EXTERNAL_FIELDS.join(', ')}, any case and order)`, { line: header.line, field });
  }
  const duplicate = columns.find((name, index) => name !== '' && columns.indexOf(name) !== index);
  if (duplicate !== undefined) throw new UploadRefusal(`line ${header.line}: the column ${duplicate} appears twice`, { line: header.line, field: duplicate });
  limitCount(rows.length);
  const lines: number[] = [];
  const records = rows.map((row) => {
    if (row.fields.length !== columns.length) {
      throw new UploadRefusal(`line ${row.line}: ${row.fields.length} fields where the header has ${columns.length}`, { line: row.line });
    }
    const fields: Record<string, unknown> = {};
    columns.forEach((name, index) => {
      if ((EXTERNAL_FIELDS as readonly string[]).includes(name)) fields[name] = row.fields[index];
    });
    lines.push(row.line);
    return converted(fields, row.line);
  });
  refuseDuplicateIds(records, lines);
  return records;
}

function recordsOfJson(text: string): ExternalRecord[] {
  let items: unknown;
  try {
    items = parseJsonLossless(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (error) {
    throw new UploadRefusal(`the file is not valid JSON: ${(error as Error).message}`, { line: 1 });
  }
  if (!Array.isArray(items)) throw new UploadRefusal('a JSON upload must be an array of records', { line: 1 });
  limitCount(items.length);
  const lines = itemLines(text);
  const records = items.map((item, index) => {
    const line = lines[index] ?? 1;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      throw new UploadRefusal(`line ${line}: record ${index + 1} is not an object`, { line, item: index + 1 });
    }
    return converted(item as Record<string, unknown>, line);
  });
  refuseDuplicateIds(records, lines);
  return records;
}

function converted(fields: Record<string, unknown>, line: number): ExternalRecord {
  const result = externalRecordFrom(fields);
  if (!result.ok) throw new UploadRefusal(`line ${line}: ${result.field}: ${result.message}`, { line, field: result.field, reason: result.message });
  return result.record;
}

function limitCount(count: number): void {
  if (count > EXTERNAL_RECORDS_MAX) throw new UploadRefusal(`the file holds ${count} records; at most ${EXTERNAL_RECORDS_MAX} per upload`, { records_max: EXTERNAL_RECORDS_MAX });
}

/** An external id names one line of an upload: a second line with it is refused, naming both. */
function refuseDuplicateIds(records: ExternalRecord[], lines: number[]): void {
  const seen = new Map<string, number>();
  records.forEach((record, index) => {
    const line = lines[index] ?? index + 1;
    const first = seen.get(record.id);
    if (first !== undefined) {
      throw new UploadRefusal(`line ${line}: id: ${JSON.stringify(record.id)} is already used on line ${first}`, { line, field: 'id', first_line: first });
    }
    seen.set(record.id, line);
  });
}

/** The line on which each item of a top-level JSON array starts (the text is valid JSON). */
function itemLines(text: string): number[] {
  const lines: number[] = [];
  let line = 1;
  let depth = 0;
  let inString = false;
  let expectingItem = false;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index];
    if (char === '\n') line += 1;
    if (inString) {
      if (char === '\\') index += 1;
      else if (char === '"') inString = false;
      continue;
    }
    if (char === ' ' || char === '\t' || char === '\r' || char === '\n') continue;
    if (depth === 1 && expectingItem && char !== ']') {
      lines.push(line);
      expectingItem = false;
    }
    if (char === '"') inString = true;
    else if (char === '[' || char === '{') {
      depth += 1;
      if (depth === 1) expectingItem = true;
    } else if (char === ']' || char === '}') depth -= 1;
    else if (char === ',' && depth === 1) expectingItem = true;
  }
  return lines;
}
