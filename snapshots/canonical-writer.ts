// A fast writer of the canonical JSON text that engine/canonical-json.ts defines (keys sorted, undefined
// dropped, bigints tagged), streamed into a SHA-256. The state hash runs it over every record in the
// working state, a million balances and more, so it avoids what makes the simple version slow: the
// sorted key order and the quoted key prefixes are worked out once per object shape and reused, and the
// text is handed to the hash in large pieces instead of one string per record. The output is byte for
// byte what canonicalJson gives (a unit test holds the two together).

import { createHash, type Hash } from 'node:crypto';

interface Shape {
  /** Keys in sorted order with their JSON-quoted `"key":` prefixes. */
  keys: string[];
  prefixes: string[];
}

/** Text gathered before it is passed to the hash; big enough that hashing runs in long native calls. */
const PENDING_CHARS_MAX = 1 << 20;
/** Distinct shapes remembered; records have a handful, metadata may bring many. */
const SHAPES_MAX = 10_000;
/** Key lists kept per first key for the allocation-free check. */
const RECENT_PER_FIRST_KEY = 8;
const EMPTY_SHAPE: Shape = { keys: [], prefixes: [] };

function sameKeys(a: string[], b: string[]): boolean {
  if (a.length !== b.length) return false;
  for (let index = 0; index < a.length; index += 1) if (a[index] !== b[index]) return false;
  return true;
}

export class CanonicalHasher {
  private readonly hash: Hash = createHash('sha256');
  private pending = '';
  private readonly shapes = new Map<string, Shape>();
  /** Recently seen key lists by first key, checked element by element before anything is allocated. */
  private readonly recent = new Map<string, Array<{ keys: string[]; shape: Shape }>>();

  /** Adds one value's canonical text followed by a newline. */
  add(value: unknown): void {
    this.pending += this.text(value) + '\n';
    if (this.pending.length >= PENDING_CHARS_MAX) this.drain();
  }

  /** Adds a plain line (a section title, a count). */
  line(text: string): void {
    this.pending += text + '\n';
  }

  /** Adds raw bytes (after any text still pending). */
  bytes(bytes: Uint8Array): void {
    this.drain();
    this.hash.update(bytes);
  }

  digestHex(): string {
    this.drain();
    return this.hash.digest('hex');
  }

  text(value: unknown): string {
    if (value === null || value === undefined) return 'null';
    switch (typeof value) {
      case 'string':
        return JSON.stringify(value);
      case 'number':
        return Number.isFinite(value) ? String(value) : 'null';
      case 'boolean':
        return value ? 'true' : 'false';
      case 'bigint':
        return '"' + value.toString() + 'n"';
      case 'object':
        return Array.isArray(value) ? this.arrayText(value) : this.objectText(value as Record<string, unknown>);
      default:
        return 'null';
    }
  }

  private arrayText(items: unknown[]): string {
    let out = '[';
    for (let index = 0; index < items.length; index += 1) {
      if (index > 0) out += ',';
      out += this.text(items[index]);
    }
    return out + ']';
  }

  private objectText(record: Record<string, unknown>): string {
    const shape = this.shapeOf(record);
    let out = '{';
    let first = true;
    for (let index = 0; index < shape.keys.length; index += 1) {
      const item = record[shape.keys[index] as string];
      if (item === undefined) continue;
      if (!first) out += ',';
      out += (shape.prefixes[index] as string) + this.text(item);
      first = false;
    }
    return out + '}';
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

  private drain(): void {
    if (this.pending.length === 0) return;
    this.hash.update(this.pending);
    this.pending = '';
  }
}
