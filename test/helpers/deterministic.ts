// Deterministic stand-ins for seeded tests: a seeded random source, a clock the test moves by hand, ids
// counted in creation order, and a stable text form for deep comparisons. With these a seed replays the
// same history, so a failure reported with its seed can be reproduced with FOLIO_SEED=<seed>.

import type { Clock, IdPrefix, IdSource } from '../../engine/ports.js';

/** A small, fast generator: a Weyl sequence stirred by a 32-bit finaliser. Not for cryptography. */
export class SeededRandom {
  private state: number;

  constructor(readonly seed: number) {
    this.state = seed | 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x9e3779b9) | 0;
    let z = this.state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    z ^= z >>> 16;
    return (z >>> 0) / 0x1_0000_0000;
  }

  /** An integer in [0, maxExclusive). */
  int(maxExclusive: number): number {
    return Math.floor(this.next() * maxExclusive);
  }

  /** An integer in [min, max]. */
  between(min: number, max: number): number {
    return min + this.int(max - min + 1);
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[this.int(items.length)] as T;
  }

  /** A positive bigint with 1 to `digitsMax` decimal digits, built digit by digit so any size is exact. */
  bigAmount(digitsMax: number): bigint {
    const digits = this.between(1, digitsMax);
    let text = String(this.between(1, 9));
    for (let index = 1; index < digits; index += 1) text += String(this.int(10));
    return BigInt(text);
  }
}

/**
 * The seeds a seeded test runs: FOLIO_SEED (comma-separated) when set, so a reported failure replays;
 * otherwise the fixed ones plus one fresh seed per run, so repeated CI runs keep exploring.
 */
export function testSeeds(fixed: number[]): number[] {
  const fromEnv = process.env.FOLIO_SEED;
  if (fromEnv !== undefined && fromEnv.trim() !== '') {
    return fromEnv.split(',').map((text) => Number(text.trim())).filter((seed) => Number.isInteger(seed));
  }
  return [...fixed, Math.floor(Math.random() * 0x7fff_ffff)];
}

/** A clock that only moves when told to; it may be moved backwards, as a wall clock can be. */
export class ManualClock implements Clock {
  constructor(public ms = 1_750_000_000_000) {}

  now(): number {
    return this.ms;
  }

  advance(milliseconds: number): void {
    this.ms += milliseconds;
  }
}

/**
 * Ids `<prefix>_<tag><counter>`, zero-padded so they sort in creation order. A different tag per
 * process lifetime keeps ids unique when a test reopens a data directory with a fresh id source.
 */
export class CountingIds implements IdSource {
  private count = 0;

  constructor(private readonly tag = '') {}

  next(prefix: IdPrefix): string {
    this.count += 1;
    return `${prefix}_${this.tag}${String(this.count).padStart(10, '0')}`;
  }
}

/**
 * Text that is equal exactly when two values are deeply equal: object keys sorted, bigints tagged so
 * that 5 and 5n differ, Maps and Sets as sorted entries, undefined fields left out.
 */
export function stableText(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (value === null) return 'null';
  switch (typeof value) {
    case 'bigint':
      return `${value}n`;
    case 'number':
    case 'boolean':
      return String(value);
    case 'string':
      return JSON.stringify(value);
    case 'object': {
      if (Array.isArray(value)) return '[' + value.map(stableText).join(',') + ']';
      if (value instanceof Map) {
        return 'Map{' + [...value.entries()].map(([key, item]) => `${stableText(key)}=>${stableText(item)}`).sort().join(',') + '}';
      }
      if (value instanceof Set) return 'Set{' + [...value].map(stableText).sort().join(',') + '}';
      if (value instanceof Uint8Array) return `bytes(${Buffer.from(value).toString('hex')})`;
      const record = value as Record<string, unknown>;
      const keys = Object.keys(record).filter((key) => record[key] !== undefined).sort();
      return '{' + keys.map((key) => `${JSON.stringify(key)}:${stableText(record[key])}`).join(',') + '}';
    }
    default:
      return String(value);
  }
}
