// The arithmetic of an exchange between currencies (issue 41; docs/decisions-beyond.md, "Exchanges"):
// an exact rate as a reduced fraction, and an amount of one currency in its smallest unit converted to
// the smallest unit of another, exactly or by a rounding rule the caller names. Nothing here is a float.
//
//   destination = amount × rate × destination_precision / source_precision
//
// For a hold settled in parts, each part's destination amount is the difference of two conversions of
// running totals (convertedPart): the parts then add up to the conversion of their sum whatever the
// rounding, so partial commits, the void of the rest and refunds never lose or make a unit on either
// side. The transaction path (engine/exchange.ts) converts with `convert`, and takes a hold's parts as
// differences of running totals as convertedPart does, capped at the held destination amount.

/** Significant digits a decimal rate may have (the contract's bound). */
export const RATE_DIGITS_MAX = 18;
/** Digits of a rate's numerator or denominator given as a pair. */
export const RATE_PART_DIGITS_MAX = 36;

export const ROUNDING_RULES = ['down', 'half_even', 'up'] as const;
export type RoundingRule = (typeof ROUNDING_RULES)[number];

/** A rate as a fraction in lowest terms, both parts positive. */
export interface Rate {
  numerator: bigint;
  denominator: bigint;
}

export type RateResult = { ok: true; rate: Rate } | { ok: false; message: string };
export type Converted = { ok: true; amount: bigint; exact: boolean } | { ok: false; message: string };

function gcd(a: bigint, b: bigint): bigint {
  let [x, y] = [a, b];
  while (y !== 0n) [x, y] = [y, x % y];
  return x;
}

function reduced(numerator: bigint, denominator: bigint): RateResult {
  if (numerator <= 0n || denominator <= 0n) return { ok: false, message: 'must be greater than zero' };
  const divisor = gcd(numerator, denominator);
  return { ok: true, rate: { numerator: numerator / divisor, denominator: denominator / divisor } };
}

const DECIMAL_RATE = /^([0-9]+)(?:\.([0-9]+))?$/;
const WHOLE = /^[0-9]+$/;

/** A rate from decimal text ("1.0845"): digits with at most one point, at most RATE_DIGITS_MAX significant. */
export function parseDecimalRate(text: string): RateResult {
  const match = DECIMAL_RATE.exec(text);
  if (!match) return { ok: false, message: 'must be a decimal number such as "1.0845" (digits and at most one point)' };
  const digits = (match[1]! + (match[2] ?? '')).replace(/^0+/, '');
  const significant = digits.replace(/0+$/, '');
  if (significant.length > RATE_DIGITS_MAX) return { ok: false, message: `must have at most ${RATE_DIGITS_MAX} significant digits` };
  const places = match[2]?.length ?? 0;
  return reduced(BigInt(match[1]! + (match[2] ?? '')), 10n ** BigInt(places));
}

/** A rate from a numerator and a denominator given as whole numbers (numbers or digit strings). */
export function parseRatePair(numerator: unknown, denominator: unknown): RateResult {
  const part = (value: unknown): bigint | undefined => {
    if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
    if (typeof value === 'bigint') return value;
    if (typeof value === 'string' && WHOLE.test(value) && value.length <= RATE_PART_DIGITS_MAX) return BigInt(value);
    return undefined;
  };
  const top = part(numerator);
  const bottom = part(denominator);
  if (top === undefined || bottom === undefined) return { ok: false, message: `numerator and denominator must be whole numbers of at most ${RATE_PART_DIGITS_MAX} digits` };
  if (top.toString().length > RATE_PART_DIGITS_MAX || bottom.toString().length > RATE_PART_DIGITS_MAX) {
    return { ok: false, message: `numerator and denominator must be whole numbers of at most ${RATE_PART_DIGITS_MAX} digits` };
  }
  return reduced(top, bottom);
}

/** `numerator / denominator` of non-negative integers, rounded by `rule`. */
function divide(numerator: bigint, denominator: bigint, rule: RoundingRule): bigint {
  const quotient = numerator / denominator;
  const remainder = numerator % denominator;
  if (remainder === 0n) return quotient;
  switch (rule) {
    case 'down': return quotient;
    case 'up': return quotient + 1n;
    case 'half_even': {
      const twice = remainder * 2n;
      if (twice < denominator) return quotient;
      if (twice > denominator) return quotient + 1n;
      return quotient % 2n === 0n ? quotient : quotient + 1n;
    }
  }
}

/**
 * `amount` (smallest unit at `sourcePrecision`) in the smallest unit at `destinationPrecision`: exact, or
 * rounded by `rounding` when given, else refused (the caller answers TXN_EXCHANGE_INEXACT).
 */
export function convert(amount: bigint, rate: Rate, sourcePrecision: bigint, destinationPrecision: bigint, rounding?: RoundingRule): Converted {
  if (amount < 0n) return { ok: false, message: 'amount must not be negative' };
  const numerator = amount * rate.numerator * destinationPrecision;
  const denominator = rate.denominator * sourcePrecision;
  const exact = numerator % denominator === 0n;
  if (!exact && rounding === undefined) {
    return { ok: false, message: 'the converted amount is not a whole number of the destination\'s smallest unit: name a rounding (down, half_even, up)' };
  }
  return { ok: true, amount: divide(numerator, denominator, rounding ?? 'down'), exact };
}

/**
 * The destination amount of the part of an exchange between running totals `before` and `after` of its
 * source amount (a partial commit: committed before it and with it; the void of the rest: committed and
 * the whole). Parts computed so add up exactly to the conversion of the whole.
 */
export function convertedPart(before: bigint, after: bigint, rate: Rate, sourcePrecision: bigint, destinationPrecision: bigint, rounding?: RoundingRule): Converted {
  if (after < before) return { ok: false, message: 'a part must not be negative' };
  const upTo = convert(after, rate, sourcePrecision, destinationPrecision, rounding);
  if (!upTo.ok) return upTo;
  const until = convert(before, rate, sourcePrecision, destinationPrecision, rounding);
  if (!until.ok) return until;
  return { ok: true, amount: upTo.amount - until.amount, exact: upTo.exact && until.exact };
}
