// The one retry rule: a delay doubling from the first one with each further attempt, up to a cap. Used
// where something outside the ledger is tried again (hook deliveries, the index projector and its
// thread, the cloud's restarts of a core); pure, so every caller's schedule is the same arithmetic.

/** The delay before attempt `attempt` (1: the first retry), doubling from `firstMs`, at most `maxMs`. */
export function backoffMs(firstMs: number, maxMs: number, attempt: number): number {
  // Past 2^30 the product is far beyond any cap, and the exponent must not overflow into Infinity.
  return Math.min(firstMs * 2 ** Math.min(Math.max(attempt - 1, 0), 30), maxMs);
}
