// A small deterministic random source for property and simulation tests. Every random test takes its
// seed from FOLIO_SEED when set (to replay a failure) and reports the seed when it fails.

import { mulberry32 } from '../../bench/mulberry32.js';
import type { Test } from 'tap';

export class SeededRandom {
  /** Uniform in [0, 1); mulberry32, which is plenty for test inputs. */
  readonly next: () => number;

  constructor(readonly seed: number) {
    this.next = mulberry32(seed >>> 0 || 0x9e3779b9);
  }

  /** Integer in [min, max] inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[this.int(0, items.length - 1)] as T;
  }

  /** A bigint with exactly `digits` decimal digits (no leading zero). */
  bigDigits(digits: number): bigint {
    let text = String(this.int(1, 9));
    for (let index = 1; index < digits; index += 1) text += String(this.int(0, 9));
    return BigInt(text);
  }

  /** A bigint in [min, max] inclusive (for ranges of any size). */
  bigInt(min: bigint, max: bigint): bigint {
    const span = max - min + 1n;
    const digits = span.toString().length + 2;
    let value = 0n;
    for (let index = 0; index < digits; index += 1) value = value * 10n + BigInt(this.int(0, 9));
    return min + (value % span);
  }
}

/**
 * The seeds a random test runs with: FOLIO_SEED alone when given, else the fixed ones plus fresh ones
 * (one, or FOLIO_FRESH_SEEDS of them for a longer soak).
 */
export function seedsToRun(fixed: number[]): number[] {
  const forced = process.env.FOLIO_SEED;
  if (forced !== undefined && forced !== '') return [Number(forced)];
  const fresh = Math.max(1, Number(process.env.FOLIO_FRESH_SEEDS ?? 1) || 1);
  const base = (Date.now() ^ (process.pid << 16)) >>> 0;
  return [...fixed, ...Array.from({ length: fresh }, (_, index) => (base + index * 0x9e3779b1) >>> 0)];
}

/**
 * Runs a seeded body as a subtest. A thrown error becomes a failure; any failure ends with a comment
 * naming the seed and how to replay it.
 */
export async function seededTest(
  t: Test,
  name: string,
  seed: number,
  body: (t: Test, random: SeededRandom) => void | Promise<void>,
): Promise<void> {
  await t.test(`${name} (seed ${seed})`, async (t) => {
    try {
      await body(t, new SeededRandom(seed));
    } catch (error) {
      t.fail(`seed ${seed}: ${error instanceof Error ? error.stack ?? error.message : String(error)}`);
    }
    if (!t.passing()) t.comment(`failed with seed ${seed}; replay with FOLIO_SEED=${seed}`);
  });
}

/** The small interface the property tests use: integers below a bound. */
export interface BoundedRandom {
  readonly seed: number;
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [0, bound). */
  int(bound: number): number;
  pick<T>(items: readonly T[]): T;
}

/**
 * A seeded source for one test: the seed comes from `envName` when set (to replay a failure) or is
 * drawn fresh, and is printed if the test fails.
 */
export function seededRandom(t: Test, envName: string): BoundedRandom {
  const fromEnv = process.env[envName];
  const seed = fromEnv !== undefined && fromEnv !== '' ? Number(fromEnv) >>> 0 : Math.floor(Math.random() * 2 ** 32);
  t.teardown(() => {
    if (!t.passing()) process.stderr.write(`${t.fullname} failed with seed ${seed}; replay with ${envName}=${seed}\n`);
  });
  const random = new SeededRandom(seed);
  return {
    seed,
    next: () => random.next(),
    int: (bound) => Math.floor(random.next() * bound),
    pick: (items) => random.pick(items),
  };
}
