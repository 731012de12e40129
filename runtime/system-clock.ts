// The clocks a process reads: the wall clock, the engine's Clock (the engine itself guards against it
// stepping back), and the monotonic clock a replicated node measures its lease on (performance.now()'s
// scale; replication/replication-node.ts, and the HTTP workers' check of how long this node may take
// writes, workers/remote-ledger.ts). Nothing else in the process reads time for those purposes.
//
// A test can skew both, and nothing else can: only when FOLIO_TEST_HOOKS=1 *and* FOLIO_TEST_CLOCK_FILE
// names a file does any thread read a skew from that file (JSON, ClockSkew below; read again every
// SKEW_READ_EVERY_MS, so a running process's clock can be stepped or made to drift: the nemesis,
// nemesis/faults.ts, does). Every thread computes the same skew from the same real time, so the engine's
// thread and the workers agree. Without both variables the skew is never read, the functions below are
// Date.now() and performance.now(), and no configuration file can turn it on (docs/operations.md).

import fs from 'node:fs';
import type { Clock } from '../engine/ports.js';
import { testHookFile } from '../threads/test-hooks.js';

/** A clock of performance.now()'s scale: milliseconds, never stepped back by the system. */
export interface MonotonicClock {
  now(): number;
}

/**
 * A test's skew, as the file holds it: from `anchor_ms` (real epoch ms) both clocks run at `rate` of
 * real time (1.01: 1 % fast) on top of `monotonic_offset_ms` (the drift accumulated before the anchor,
 * so a new rate continues the clock instead of stepping it); the wall clock is also stepped by
 * `wall_offset_ms`.
 */
export interface ClockSkew {
  anchor_ms: number;
  monotonic_offset_ms: number;
  rate: number;
  wall_offset_ms: number;
}

const SKEW_READ_EVERY_MS = 50;
/** A skew file asking for a rate outside this is ignored: a typo must not stop a clock. */
const RATE_MIN = 0.5;
const RATE_MAX = 1.5;

let skew: ClockSkew | undefined;

/** The skew file, when the process runs with test hooks on; undefined otherwise (always, in production). */
export function testClockFile(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return testHookFile('FOLIO_TEST_CLOCK_FILE', env);
}

/** A skew read from text, or undefined when the text is not one. */
export function parseClockSkew(text: string): ClockSkew | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const candidate = value as Partial<ClockSkew> | null;
  if (candidate === null || typeof candidate !== 'object') return undefined;
  const { anchor_ms, monotonic_offset_ms, rate, wall_offset_ms } = candidate;
  if (![anchor_ms, monotonic_offset_ms, rate, wall_offset_ms].every((number) => typeof number === 'number' && Number.isFinite(number))) return undefined;
  if ((rate as number) < RATE_MIN || (rate as number) > RATE_MAX) return undefined;
  return { anchor_ms, monotonic_offset_ms, rate, wall_offset_ms } as ClockSkew;
}

/** How far a skewed monotonic clock is from the real one at real epoch time `realMs`. */
export function skewAt(at: ClockSkew, realMs: number): number {
  return at.monotonic_offset_ms + (realMs - at.anchor_ms) * (at.rate - 1);
}

function readSkew(file: string): void {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    skew = undefined; // no file: real time
    return;
  }
  skew = parseClockSkew(text) ?? skew;
}

const skewFile = testClockFile();
if (skewFile !== undefined) {
  readSkew(skewFile);
  setInterval(() => readSkew(skewFile), SKEW_READ_EVERY_MS).unref();
}

export const systemClock: Clock = {
  now: () => {
    const real = Date.now();
    return skew === undefined ? real : Math.round(real + skew.wall_offset_ms + skewAt(skew, real));
  },
};

export const monotonicClock: MonotonicClock = {
  now: () => {
    const real = performance.now();
    return skew === undefined ? real : real + skewAt(skew, performance.timeOrigin + real);
  },
};
