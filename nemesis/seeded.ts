// A seeded source of choices for the nemesis: the fault schedule and every client's writes are drawn
// from it, so a seed names one schedule and one workload (bench/mulberry32.ts underneath).

import { mulberry32 } from '../bench/mulberry32.js';

export class Seeded {
  private readonly next: () => number;

  constructor(readonly seed: number) {
    this.next = mulberry32(seed);
  }

  /** A new source for one part of the run (a client, the schedule), independent of the others' draws. */
  static derive(seed: number, part: number): Seeded {
    return new Seeded((Math.imul(seed ^ 0x9e3779b9, 31) + Math.imul(part + 1, 0x85ebca6b)) >>> 0);
  }

  /** Uniform in [0, 1). */
  fraction(): number {
    return this.next();
  }

  /** A whole number in [min, max]. */
  between(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from nothing');
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** One of `weights`' keys, each as likely as its weight. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
    const entries = Object.entries(weights) as Array<[K, number]>;
    const total = entries.reduce((sum, [, weight]) => sum + weight, 0);
    let draw = this.next() * total;
    for (const [key, weight] of entries) {
      draw -= weight;
      if (draw < 0) return key;
    }
    return entries[entries.length - 1]![0];
  }
}
