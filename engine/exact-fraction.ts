// Exact fractions from decimal text, for the allowable drift of matching rules: `0.01` is 1/100, never
// the double nearest to it, so a drift check is a comparison of integers (cross-multiplied bigints).

export interface Fraction {
  numerator: bigint;
  /** Always positive. */
  denominator: bigint;
}

const DECIMAL = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/;
/** Decimal text longer than this, or exponents beyond this, are not a drift anyone means. */
const TEXT_LENGTH_MAX = 64;
const EXPONENT_LIMIT = 30;

/** The exact value of decimal text (`12`, `0.015`, `1e-3`), or undefined when it is not one. */
export function parseDecimalFraction(text: string): Fraction | undefined {
  if (text.length > TEXT_LENGTH_MAX) return undefined;
  const match = DECIMAL.exec(text.trim());
  if (!match) return undefined;
  const [, sign = '', whole = '', fraction = '', exponentText = '0'] = match;
  const exponent = Number(exponentText) - fraction.length;
  if (Math.abs(exponent) > EXPONENT_LIMIT) return undefined;
  let numerator = BigInt(whole + fraction);
  if (sign === '-') numerator = -numerator;
  if (exponent >= 0) return { numerator: numerator * 10n ** BigInt(exponent), denominator: 1n };
  return reduced({ numerator, denominator: 10n ** BigInt(-exponent) });
}

function reduced(value: Fraction): Fraction {
  const divisor = gcd(value.numerator < 0n ? -value.numerator : value.numerator, value.denominator);
  return divisor <= 1n ? value : { numerator: value.numerator / divisor, denominator: value.denominator / divisor };
}

export function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

export function lcm(a: bigint, b: bigint): bigint {
  return (a / gcd(a, b)) * b;
}

/** a < b, for fractions with positive denominators. */
export function fractionLess(a: Fraction, b: Fraction): boolean {
  return a.numerator * b.denominator < b.numerator * a.denominator;
}

/** -1, 0 or 1 as a is less than, equal to or greater than b. */
export function compareFractions(a: Fraction, b: Fraction): number {
  const left = a.numerator * b.denominator;
  const right = b.numerator * a.denominator;
  return left < right ? -1 : left > right ? 1 : 0;
}
