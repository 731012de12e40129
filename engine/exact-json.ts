// The one JSON writer of the project, for every place that must not lose a digit: bigints are written
// whole (JSON.stringify refuses them), undefined members are left out, and text prepared ahead of time
// (RawJson) is embedded as it is. Two forms:
//   wire       keys in insertion order, bigints as plain digits: responses, hook payloads, metadata rows
//              in the index, bytes counted against limits;
//   canonical  keys sorted, bigints tagged as the string "<digits>n" (so 5 and 5n differ): fingerprints
//              and the state hash, where the same value must always give the same text.
// It sits on every response and runs over every record of a state hash (a million balances and more), so
// it keeps what made the specialised writers fast: quoted keys cached, plain strings not escaped, and
// for the canonical form the sorted key order worked out once per object shape and reused.

/** JSON text prepared ahead of time, embedded as it is (a transaction rendered by its own writer, say). */
export class RawJson {
  constructor(readonly text: string) {}
}

export interface JsonForm {
  sortKeys: boolean;
  bigints: 'digits' | 'tagged';
}

export const WIRE_FORM: JsonForm = { sortKeys: false, bigints: 'digits' };
export const CANONICAL_FORM: JsonForm = { sortKeys: true, bigints: 'tagged' };

/** Characters JSON.stringify would escape (controls, quote, backslash, surrogates). */
const NEEDS_ESCAPING = /[\u0000-\u001f"\\\ud800-\udfff]/;
/** Keys remembered with their quoted prefix; keys of client metadata are unbounded, so only so many. */
const QUOTED_KEYS_MAX = 10_000;
/** Object shapes whose sorted order is remembered; records have a handful, metadata may bring many. */
const SHAPES_MAX = 10_000;
/** Key lists kept per first key for the allocation-free shape check. */
const RECENT_PER_FIRST_KEY = 8;

interface Shape {
  /** Keys in writing order with their quoted `"key":` prefixes. */
  keys: string[];
  prefixes: string[];
}

const EMPTY_SHAPE: Shape = { keys: [], prefixes: [] };

/** A JSON string literal. */
export function jsonString(value: string): string {
  return NEEDS_ESCAPING.test(value) ? JSON.stringify(value) : '"' + value + '"';
}

export class JsonWriter {
  private readonly quotedKeys = new Map<string, string>();
  private readonly shapes = new Map<string, Shape>();
  /** Recently seen key lists by first key, checked element by element before anything is allocated. */
  private readonly recent = new Map<string, Array<{ keys: string[]; shape: Shape }>>();

  constructor(readonly form: JsonForm) {}

  text(value: unknown): string {
    switch (typeof value) {
      case 'string':
        return jsonString(value);
      case 'number':
        return Number.isFinite(value) ? String(value) : 'null';
      case 'bigint':
        return this.form.bigints === 'digits' ? value.toString() : '"' + value.toString() + 'n"';
      case 'boolean':
        return value ? 'true' : 'false';
      case 'object':
        return value === null ? 'null' : this.objectText(value);
      default:
        return 'null';
    }
  }

  private objectText(value: object): string {
    if (Array.isArray(value)) {
      let text = '[';
      for (let index = 0; index < value.length; index += 1) {
        if (index > 0) text += ',';
        const item: unknown = value[index];
        text += item === undefined || typeof item === 'function' ? 'null' : this.text(item);
      }
      return text + ']';
    }
    if (value instanceof RawJson) return value.text;
    if (value instanceof Date) return JSON.stringify(value.toISOString());
    return this.form.sortKeys ? this.sortedText(value as Record<string, unknown>) : this.orderedText(value as Record<string, unknown>);
  }

  private orderedText(record: Record<string, unknown>): string {
    let text = '{';
    let first = true;
    for (const key of Object.keys(record)) {
      const item = record[key];
      if (item === undefined || typeof item === 'function') continue;
      text += (first ? '' : ',') + this.quotedKey(key) + this.text(item);
      first = false;
    }
    return text + '}';
  }

  private sortedText(record: Record<string, unknown>): string {
    const shape = this.shapeOf(record);
    let text = '{';
    let first = true;
    for (let index = 0; index < shape.keys.length; index += 1) {
      const item = record[shape.keys[index] as string];
      if (item === undefined || typeof item === 'function') continue;
      if (!first) text += ',';
      text += (shape.prefixes[index] as string) + this.text(item);
      first = false;
    }
    return text + '}';
  }

  private quotedKey(key: string): string {
    let quoted = this.quotedKeys.get(key);
    if (quoted === undefined) {
      quoted = JSON.stringify(key) + ':';
      if (this.quotedKeys.size < QUOTED_KEYS_MAX) this.quotedKeys.set(key, quoted);
    }
    return quoted;
  }

  private shapeOf(record: Record<string, unknown>): Shape {
    const keys = Object.keys(record);
    if (keys.length === 0) return EMPTY_SHAPE;
    const first = keys[0] as string;
    const candidates = this.recent.get(first);
    if (candidates) {
      for (const candidate of candidates) if (sameKeys(candidate.keys, keys)) return candidate.shape;
    }
    const signature = keys.join('\u0000');
    let shape = this.shapes.get(signature);
    if (!shape) {
      const sorted = keys.slice().sort();
      shape = { keys: sorted, prefixes: sorted.map((key) => JSON.stringify(key) + ':') };
      if (this.shapes.size < SHAPES_MAX) this.shapes.set(signature, shape);
    }
    if (!candidates) this.recent.set(first, [{ keys, shape }]);
    else if (candidates.length < RECENT_PER_FIRST_KEY) candidates.push({ keys, shape });
    return shape;
  }
}

function sameKeys(a: string[], b: string[]): boolean {
  if (a.length !== b.length) return false;
  for (let index = 0; index < a.length; index += 1) if (a[index] !== b[index]) return false;
  return true;
}

const wireWriter = new JsonWriter(WIRE_FORM);
const canonicalWriter = new JsonWriter(CANONICAL_FORM);

/** The wire form: insertion order, bigints as digits. */
export function toJsonText(value: unknown): string {
  return wireWriter.text(value);
}

/** The canonical form: keys sorted, bigints tagged, for fingerprints. */
export function canonicalJson(value: unknown): string {
  return canonicalWriter.text(value);
}
