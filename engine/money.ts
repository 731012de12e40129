// Limits on exact amounts. Every amount in the engine is a bigint count of the smallest unit; these
// bounds keep any single amount, and so every sum the engine forms, far inside what the log encodes.

/** Largest accepted precise amount: 40 decimal digits, beyond any real currency total. */
export const PRECISE_AMOUNT_DIGITS_MAX = 40;
export const PRECISE_AMOUNT_MAX = 10n ** BigInt(PRECISE_AMOUNT_DIGITS_MAX) - 1n;
/** Largest accepted precision multiplier (10^18, the scale of the finest-grained tokens). */
export const PRECISION_MAX = 10n ** 18n;
