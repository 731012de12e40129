// Small statistics helpers: medians across rounds and percentiles of latency samples.

export function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Nearest-rank percentile (0 < p <= 100) of samples that are already sorted ascending. */
export function percentileOfSorted(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

/** A growable array of float samples that does not box each number. */
export class Samples {
  private values = new Float64Array(1 << 16);
  private count = 0;

  push(value: number): void {
    if (this.count === this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.count++] = value;
  }

  get length(): number {
    return this.count;
  }

  sorted(): Float64Array {
    return this.values.slice(0, this.count).sort();
  }
}
