// A small seeded random source for property tests. The seed comes from an environment variable when
// given (to replay a failure) or is drawn fresh; it is printed whenever the test that used it fails.

import type { Test } from 'tap';

export interface SeededRandom {
  readonly seed: number;
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [0, bound). */
  int(bound: number): number;
  pick<T>(items: readonly T[]): T;
}

export function seededRandom(t: Test, envName: string): SeededRandom {
  const fromEnv = process.env[envName];
  const seed = fromEnv !== undefined && fromEnv !== '' ? Number(fromEnv) >>> 0 : Math.floor(Math.random() * 2 ** 32);
  t.teardown(() => {
    if (!t.passing()) process.stderr.write(`${t.fullname} failed with seed ${seed}; replay with ${envName}=${seed}\n`);
  });
  let state = seed;
  // mulberry32: tiny, fast and good enough to spread test cases.
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = state;
    mixed = Math.imul(mixed ^ (mixed >>> 15), mixed | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 2 ** 32;
  };
  return {
    seed,
    next,
    int: (bound) => Math.floor(next() * bound),
    pick: (items) => items[Math.floor(next() * items.length)] as (typeof items)[number],
  };
}
