// Wire amounts to exact money. The engine only ever sees bigint counts of the smallest unit
// (`precise_amount`); this is the one place a decimal or float `amount` becomes one, and the conversion
// refuses anything that would need rounding. Display floats are derived from exact decimal text, so they
// are the double nearest to the true value.

import { RawJson } from '../engine/exact-json.js';
import { refuse, type Result } from '../engine/result.js';
import { PRECISE_AMOUNT_DIGITS_MAX, PRECISE_AMOUNT_MAX, PRECISION_MAX } from '../engine/money.js';
/** Decimal exponents outside this range are refused before any bigint is built from them. */
const DECIMAL_EXPONENT_LIMIT = 80;

/** A wire value turned into an exact count, in the one result shape (engine/result.ts). */
export type Conversion = Result<bigint, { code: 'AMOUNT_INVALID'; message: string }>;

const fail = (message: string): Conversion => refuse({ code: 'AMOUNT_INVALID', message });
const DIGITS = /^[0-9]+$/;
const DECIMAL = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/;
/** Decimal text longer than this cannot be a sensible amount; refusing it early bounds the work. */
const DECIMAL_TEXT_LENGTH_MAX = 200;

/**
 * A precise amount given as a safe integer number, a bigint (from lossless JSON parsing) or a string of
 * digits. Must be a whole number from 1 to PRECISE_AMOUNT_MAX.
 */
export function parsePreciseAmount(value: unknown, options: { allowZero?: boolean } = {}): Conversion {
  let amount: bigint;
  if (typeof value === 'bigint') amount = value;
  else if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) return fail('must be a whole number (send large values as a string of digits)');
    amount = BigInt(value);
  } else if (typeof value === 'string') {
    if (!DIGITS.test(value) || value.length > PRECISE_AMOUNT_DIGITS_MAX + 20) return fail('must be a string of digits');
    amount = BigInt(value);
  } else return fail('must be an integer or a string of digits');
  return checkRange(amount, options.allowZero === true);
}

/** A leading minus taken off (the amount conversions take non-negative amounts only). */
export function signed(value: unknown): [negative: boolean, magnitude: unknown] {
  if (typeof value === 'number') return [value < 0, Math.abs(value)];
  if (typeof value === 'bigint') return [value < 0n, value < 0n ? -value : value];
  const text = typeof value === 'string' ? value.trim() : value instanceof DecimalLiteral ? value.text : undefined;
  if (text?.startsWith('-')) return [true, text.slice(1)];
  return [false, value];
}

/** A whole amount that may be negative (a threshold on a balance, which can go below zero), as parsePreciseAmount reads its magnitude. */
export function parseSignedPreciseAmount(value: unknown): Conversion {
  const [negative, magnitude] = signed(value);
  const parsed = parsePreciseAmount(magnitude, { allowZero: true });
  return parsed.ok && negative ? { ok: true, value: -parsed.value } : parsed;
}

function checkRange(amount: bigint, allowZero: boolean): Conversion {
  if (amount < 0n) return fail('must not be negative');
  if (amount === 0n && !allowZero) return fail('must be greater than zero');
  if (amount > PRECISE_AMOUNT_MAX) return fail(`must have at most ${PRECISE_AMOUNT_DIGITS_MAX} digits`);
  return { ok: true, value: amount };
}

/** A precision multiplier: a positive whole number up to PRECISION_MAX. */
export function parsePrecision(value: unknown): Conversion {
  let precision: bigint;
  if (typeof value === 'bigint') precision = value;
  else if (typeof value === 'number' && Number.isSafeInteger(value)) precision = BigInt(value);
  else if (typeof value === 'string' && DIGITS.test(value) && value.length <= 20) precision = BigInt(value);
  else return fail('must be a positive whole number');
  if (precision < 1n) return fail('must be at least 1');
  if (precision > PRECISION_MAX) return fail(`must be at most ${PRECISION_MAX}`);
  return { ok: true, value: precision };
}

/**
 * Decimal text of an amount as the client meant it. For a JS number this is the shortest text that
 * round-trips to the same double, which is the literal the client wrote for any amount of up to 15
 * significant digits; longer literals reach us as text through the lossless JSON parser.
 */
export function decimalTextOf(value: unknown): string | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : undefined;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'string') return value.trim();
  if (value instanceof DecimalLiteral) return value.text;
  return undefined;
}

/** `amount × precision`, exactly, or a refusal when the product is not a whole number. */
export function amountToPrecise(amount: unknown, precision: bigint, options: { allowZero?: boolean } = {}): Conversion {
  const text = decimalTextOf(amount);
  if (text === undefined) return fail('must be a finite number');
  if (text.length > DECIMAL_TEXT_LENGTH_MAX) return fail(`must be at most ${DECIMAL_TEXT_LENGTH_MAX} characters`);
  const match = DECIMAL.exec(text);
  if (!match) return fail('must be a decimal number');
  const [, sign, whole = '', fraction = '', exponentText = '0'] = match;
  if (sign === '-') return fail('must not be negative');
  const exponent = Number(exponentText) - fraction.length;
  if (Math.abs(exponent) > DECIMAL_EXPONENT_LIMIT) return fail('is out of range');
  const mantissa = BigInt(whole + fraction);
  let precise: bigint;
  if (exponent >= 0) precise = mantissa * 10n ** BigInt(exponent) * precision;
  else {
    const scaled = mantissa * precision;
    const divisor = 10n ** BigInt(-exponent);
    if (scaled % divisor !== 0n) {
      return fail(`has more decimal places than precision ${precision} allows (it would need rounding)`);
    }
    precise = scaled / divisor;
  }
  return checkRange(precise, options.allowZero === true);
}

/** The display float for an exact amount: the double nearest to precise_amount / precision. */
export function preciseToAmount(precise: bigint, precision: bigint): number {
  return Number(preciseToDecimalText(precise, precision));
}

/** Exact decimal text of precise_amount / precision when precision is a power of ten. */
export function preciseToDecimalText(precise: bigint, precision: bigint): string {
  const places = powerOfTenExponent(precision);
  if (places === undefined) return String(Number(precise) / Number(precision));
  const negative = precise < 0n;
  const digits = (negative ? -precise : precise).toString().padStart(places + 1, '0');
  const whole = digits.slice(0, digits.length - places);
  const fraction = digits.slice(digits.length - places).replace(/0+$/, '');
  return (negative ? '-' : '') + whole + (fraction ? '.' + fraction : '');
}

function powerOfTenExponent(value: bigint): number | undefined {
  const text = value.toString();
  return /^10*$/.test(text) ? text.length - 1 : undefined;
}

/**
 * A JSON number literal that a double cannot hold exactly (more than 15 significant digits and not an
 * integer). The lossless JSON parser hands these over as text so money fields can convert them exactly.
 */
export class DecimalLiteral extends RawJson {
  toJSON(): number {
    return Number(this.text);
  }
}
