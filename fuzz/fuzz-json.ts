// The bodies the fuzzer sends, as a tree that can say what plain JSON values cannot: numbers written as
// exact text (`-0`, `1e308`, integers past 2^64), keys in any order and repeated (`__proto__` included,
// as an ordinary key), strings and arrays of megabytes and nesting thousands of levels deep held as a
// recipe rather than the bytes (so cases stay small to generate, shrink and print), and references to
// ids that exist on the server, resolved only when the request is sent.
//
// `fuzzJsonText` writes a tree as JSON text; `describeFuzzJson` writes the same text with every long
// part abbreviated, for reports.

/** The pools of ids and names the fuzzer keeps from the server's answers (see id-pools.ts). */
export const POOL_NAMES = [
  'ledger', 'balance', 'indicator', 'identity', 'transaction', 'hold', 'reference', 'apiKey', 'hook', 'record',
] as const;
export type PoolName = (typeof POOL_NAMES)[number];

/** An object as a list of entries: keys keep their order, may repeat, and `__proto__` is just a key. */
export class FuzzObject {
  constructor(readonly entries: ReadonlyArray<readonly [string, FuzzJson]>) {}
}

/** A number written exactly as this text (any literal JSON allows, and some it does not). */
export class RawNumber {
  constructor(readonly text: string) {}
}

/** A string of `unit` repeated `count` times. */
export class LongString {
  constructor(readonly unit: string, readonly count: number) {}
}

/** An array of `item` repeated `count` times. */
export class RepeatedArray {
  constructor(readonly item: FuzzJson, readonly count: number) {}
}

/** `leaf` wrapped in `depth` arrays or single-key objects. */
export class DeepNest {
  constructor(readonly depth: number, readonly kind: 'array' | 'object', readonly leaf: FuzzJson) {}
}

/** A string taken from a pool of live ids when the request is sent; `pick` chooses which. */
export class PoolRef {
  constructor(readonly pool: PoolName, readonly pick: number) {}
}

/** A time `offsetMs` from the moment the request is sent, in one of the input formats. */
export class TimeFromNow {
  constructor(readonly offsetMs: number, readonly style: 'iso' | 'space' | 'date' | 'offset') {}
}

export type FuzzJson =
  | null | boolean | number | string
  | FuzzJson[]
  | FuzzObject | RawNumber | LongString | RepeatedArray | DeepNest | PoolRef | TimeFromNow;

/** The JSON type a value is sent as. */
export type JsonKind = 'null' | 'boolean' | 'number' | 'string' | 'array' | 'object';

export function kindOf(value: FuzzJson): JsonKind {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'number' || value instanceof RawNumber) return 'number';
  if (typeof value === 'string' || value instanceof LongString || value instanceof PoolRef || value instanceof TimeFromNow) return 'string';
  if (Array.isArray(value) || value instanceof RepeatedArray) return 'array';
  if (value instanceof DeepNest) return value.kind;
  return 'object';
}

/** What a tree needs from the moment it is sent: live ids for its references, and the time. */
export interface SendContext {
  resolve(ref: PoolRef): string;
  nowMs: number;
}

/**
 * Longest text a repeated array is written out to: a little past the server's 10 MiB body limit. Past
 * it every size is refused alike, and mutations stacked on a grown array could otherwise ask for gigabytes.
 */
const REPEATED_TEXT_CHARS_MAX = 11 * 1024 * 1024;

/** Longest part `describeFuzzJson` writes out in full. */
const DESCRIBED_STRING_CHARS_MAX = 80;

/** The JSON text of a tree. */
export function fuzzJsonText(value: FuzzJson, context: SendContext): string {
  const parts: string[] = [];
  write(value, parts, { context, abbreviate: false });
  return parts.join('');
}

/** The tree as short text for a report: long strings, arrays and nests are written as recipes. */
export function describeFuzzJson(value: FuzzJson, context?: SendContext): string {
  const parts: string[] = [];
  write(value, parts, { context: context ?? DESCRIBING, abbreviate: true });
  return parts.join('');
}

interface WriteOptions {
  context: SendContext;
  abbreviate: boolean;
}

/** Without a live context, references are written as their recipe and times from the epoch. */
const DESCRIBING: SendContext = { resolve: (ref) => `<${ref.pool}#${ref.pick}>`, nowMs: 0 };

function write(value: FuzzJson, parts: string[], options: WriteOptions): void {
  if (value === null || typeof value === 'boolean') {
    parts.push(String(value));
  } else if (typeof value === 'number') {
    parts.push(Number.isFinite(value) ? String(value) : 'null');
  } else if (typeof value === 'string') {
    parts.push(options.abbreviate && value.length > DESCRIBED_STRING_CHARS_MAX ? abbreviated(value) : JSON.stringify(value));
  } else if (Array.isArray(value)) {
    writeList(value, parts, options);
  } else if (value instanceof FuzzObject) {
    parts.push('{');
    value.entries.forEach(([key, item], index) => {
      if (index > 0) parts.push(',');
      parts.push(JSON.stringify(key), ':');
      write(item, parts, options);
    });
    parts.push('}');
  } else if (value instanceof RawNumber) {
    parts.push(options.abbreviate && value.text.length > DESCRIBED_STRING_CHARS_MAX ? `${value.text.slice(0, 20)}…(${value.text.length} chars)` : value.text);
  } else if (value instanceof LongString) {
    writeLongString(value, parts, options);
  } else if (value instanceof RepeatedArray) {
    writeRepeated(value, parts, options);
  } else if (value instanceof DeepNest) {
    writeNest(value, parts, options);
  } else if (value instanceof TimeFromNow) {
    parts.push(JSON.stringify(options.context === DESCRIBING ? `<now${value.offsetMs >= 0 ? '+' : ''}${value.offsetMs}ms ${value.style}>` : timeText(value, options.context.nowMs)));
  } else {
    parts.push(JSON.stringify(options.context.resolve(value)));
  }
}

/** The time as text in the chosen input format. */
export function timeText(value: TimeFromNow, nowMs: number): string {
  const iso = new Date(Math.max(-62135596800000, Math.min(253402300799000, nowMs + value.offsetMs))).toISOString();
  if (value.style === 'iso') return iso;
  if (value.style === 'space') return `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
  if (value.style === 'date') return iso.slice(0, 10);
  return `${iso.slice(0, 19)}+01:00`;
}

function writeList(items: FuzzJson[], parts: string[], options: WriteOptions): void {
  parts.push('[');
  items.forEach((item, index) => {
    if (index > 0) parts.push(',');
    write(item, parts, options);
  });
  parts.push(']');
}

function writeLongString(value: LongString, parts: string[], options: WriteOptions): void {
  const unit = JSON.stringify(value.unit).slice(1, -1);
  if (options.abbreviate) parts.push(`"${unit}"×${value.count}`);
  else parts.push('"', unit.repeat(value.count), '"');
}

function writeRepeated(value: RepeatedArray, parts: string[], options: WriteOptions): void {
  if (value.count === 0) {
    parts.push('[]');
    return;
  }
  const itemParts: string[] = [];
  write(value.item, itemParts, options);
  const item = itemParts.join('');
  if (options.abbreviate) {
    parts.push(`[${item}]×${value.count}`);
    return;
  }
  const count = Math.max(1, Math.min(value.count, Math.floor(REPEATED_TEXT_CHARS_MAX / (item.length + 1))));
  parts.push('[', `${item},`.repeat(count - 1), item, ']');
}

function writeNest(value: DeepNest, parts: string[], options: WriteOptions): void {
  const leafParts: string[] = [];
  write(value.leaf, leafParts, options);
  const [open, close] = value.kind === 'array' ? ['[', ']'] : ['{"n":', '}'];
  if (options.abbreviate) parts.push(`${open}×${value.depth} ${leafParts.join('')} ${close}×${value.depth}`);
  else parts.push(open.repeat(value.depth), ...leafParts, close.repeat(value.depth));
}

function abbreviated(text: string): string {
  return `${JSON.stringify(text.slice(0, DESCRIBED_STRING_CHARS_MAX))}…(${text.length} chars)`;
}

/** About how many bytes the tree's text takes, without writing it (recipes are multiplied out). */
export function approximateBytes(value: FuzzJson): number {
  if (value === null || typeof value === 'boolean' || typeof value === 'number') return 8;
  if (typeof value === 'string') return value.length + 2;
  if (Array.isArray(value)) return value.reduce<number>((sum, item) => sum + approximateBytes(item) + 1, 2);
  if (value instanceof FuzzObject) return value.entries.reduce<number>((sum, [key, item]) => sum + key.length + 4 + approximateBytes(item), 2);
  if (value instanceof RawNumber) return value.text.length;
  if (value instanceof LongString) return value.unit.length * value.count + 2;
  if (value instanceof RepeatedArray) return (approximateBytes(value.item) + 1) * value.count + 2;
  if (value instanceof DeepNest) return value.depth * 6 + approximateBytes(value.leaf);
  return 40;
}

/** Plain JSON-like values (from a schema default or a fixed example) as a tree. */
export function fromPlain(value: unknown): FuzzJson {
  if (value === null || value === undefined) return null;
  if (typeof value === 'boolean' || typeof value === 'number' || typeof value === 'string') return value;
  if (typeof value === 'bigint') return new RawNumber(value.toString());
  if (Array.isArray(value)) return value.map(fromPlain);
  if (typeof value === 'object') {
    return new FuzzObject(Object.entries(value as Record<string, unknown>).map(([key, item]) => [key, fromPlain(item)] as const));
  }
  return null;
}

/** The value at `key` of an object tree (the last one when the key repeats, as JSON.parse reads it). */
export function entryOf(value: FuzzJson | undefined, key: string): FuzzJson | undefined {
  if (!(value instanceof FuzzObject)) return undefined;
  let found: FuzzJson | undefined;
  for (const [name, item] of value.entries) if (name === key) found = item;
  return found;
}
