// The precise amount a transaction request implies, worked out from the request as sent, independently
// of the server's own conversion: `precise_amount` as digits, or `amount` × `precision` in exact decimal
// arithmetic. An accepted transaction must carry exactly this amount, digit for digit. Requests whose
// amount fields are not in a plain form (mutated into other types, exponents past any sensible scale)
// imply nothing here, and only the read-back check applies to them.

import { entryOf, RawNumber, type FuzzJson } from './fuzz-json.js';

const DECIMAL_LITERAL = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/;
const DIGITS = /^[0-9]+$/;
/** Exponents beyond this are not plain amounts; the server refuses them, and bigints that large are slow. */
const EXPONENT_LIMIT = 100;

/** A decimal as digits × 10^exponent. */
interface Decimal {
  digits: bigint;
  exponent: number;
}

function literalText(value: FuzzJson | undefined): string | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : undefined;
  if (value instanceof RawNumber) return value.text;
  return undefined;
}

function decimalOf(text: string): Decimal | undefined {
  const match = DECIMAL_LITERAL.exec(text);
  if (!match) return undefined;
  const [, sign, whole, fraction = '', exponentText = '0'] = match;
  const exponent = Number(exponentText) - fraction.length;
  if (!Number.isSafeInteger(exponent) || Math.abs(exponent) > EXPONENT_LIMIT) return undefined;
  const digits = BigInt(`${whole}${fraction}`);
  return { digits: sign === '-' ? -digits : digits, exponent };
}

/** An integer from a JSON number or a digit string; undefined when it is not a whole number. */
function wholeNumber(value: FuzzJson | undefined, allowStrings: boolean): bigint | undefined {
  if (typeof value === 'string') return allowStrings && DIGITS.test(value) ? BigInt(value) : undefined;
  const text = literalText(value);
  if (text === undefined) return undefined;
  const decimal = decimalOf(text);
  if (!decimal) return undefined;
  return scaled(decimal, 1n);
}

/** decimal × factor when that is a whole number. */
function scaled(decimal: Decimal, factor: bigint): bigint | undefined {
  const product = decimal.digits * factor;
  if (decimal.exponent >= 0) return product * 10n ** BigInt(decimal.exponent);
  const divisor = 10n ** BigInt(-decimal.exponent);
  return product % divisor === 0n ? product / divisor : undefined;
}

/**
 * The precise amount the body implies, or undefined when it implies none this check can trust.
 * Keys that repeat count by their last occurrence, as JSON parsers read them.
 */
export function impliedPreciseAmount(body: FuzzJson | undefined): bigint | undefined {
  const precise = entryOf(body, 'precise_amount');
  const amount = entryOf(body, 'amount');
  const precisionValue = entryOf(body, 'precision');
  if (precise !== undefined) return wholeNumber(precise, true);
  if (amount === undefined) return undefined;
  const precision = precisionValue === undefined ? 1n : wholeNumber(precisionValue, true);
  if (precision === undefined) return undefined;
  const text = typeof amount === 'string' ? amount : literalText(amount);
  const decimal = text === undefined ? undefined : decimalOf(text);
  return decimal ? scaled(decimal, precision) : undefined;
}

/** The `precise_amount` digits of a transaction answer, read from its text (the first one is the record's own). */
export function answeredPreciseAmount(text: string): string | undefined {
  return /"precise_amount":(-?[0-9]+)[,}]/.exec(text)?.[1];
}
