// Unit tests for wire/amounts.ts: the one place wire amounts become exact bigints. The cases pin down
// which inputs convert exactly, which are refused because they would need rounding, and the limits that
// keep every amount inside what the engine and the log were sized for.

import t, { type Test } from 'tap';
import { PRECISE_AMOUNT_DIGITS_MAX, PRECISE_AMOUNT_MAX, PRECISION_MAX } from '../engine/money.js';
import {
  amountToPrecise,
  DecimalLiteral,
  parsePreciseAmount,
  parsePrecision,
  preciseToAmount,
  preciseToDecimalText,
  type Conversion,
} from '../wire/amounts.js';

function accepted(t: Test, conversion: Conversion, expected: bigint, label: string): void {
  t.same(conversion, { ok: true, value: expected }, label);
}

function refused(t: Test, conversion: Conversion, label: string, messagePattern?: RegExp): void {
  t.equal(conversion.ok, false, label);
  if (!conversion.ok) {
    t.type(conversion.rejection.message, 'string', `${label}: has a message`);
    if (messagePattern) t.match(conversion.rejection.message, messagePattern, `${label}: message says why`);
  }
}

const NINES = '9'.repeat(PRECISE_AMOUNT_DIGITS_MAX);

t.test('parsePreciseAmount', async (t) => {
  await t.test('safe integers, bigints and digit strings convert exactly', async (t) => {
    accepted(t, parsePreciseAmount(1), 1n, 'one');
    accepted(t, parsePreciseAmount(Number.MAX_SAFE_INTEGER), 9007199254740991n, 'largest safe integer');
    accepted(t, parsePreciseAmount(9007199254740993n), 9007199254740993n, 'bigint beyond 2^53');
    accepted(t, parsePreciseAmount('9007199254740993'), 9007199254740993n, 'string beyond 2^53');
    accepted(t, parsePreciseAmount('123456789012345678901234567890'), 123456789012345678901234567890n, 'thirty digits');
    accepted(t, parsePreciseAmount('000123'), 123n, 'leading zeros are harmless');
    accepted(t, parsePreciseAmount(100.0), 100n, 'a whole number written with .0 is still whole');
  });

  await t.test('the upper limit is PRECISE_AMOUNT_MAX', async (t) => {
    t.equal(PRECISE_AMOUNT_MAX, BigInt(NINES), 'the limit is forty nines');
    accepted(t, parsePreciseAmount(PRECISE_AMOUNT_MAX), PRECISE_AMOUNT_MAX, 'the limit as bigint');
    accepted(t, parsePreciseAmount(NINES), PRECISE_AMOUNT_MAX, 'the limit as string');
    refused(t, parsePreciseAmount(PRECISE_AMOUNT_MAX + 1n), 'one past the limit as bigint', /at most 40 digits/);
    refused(t, parsePreciseAmount('1' + '0'.repeat(PRECISE_AMOUNT_DIGITS_MAX)), 'forty-one digits as string', /at most/);
    refused(t, parsePreciseAmount('1' + '0'.repeat(5000)), 'a huge digit string');
    refused(t, parsePreciseAmount(10n ** 5000n), 'a huge bigint');
  });

  await t.test('zero and negatives', async (t) => {
    refused(t, parsePreciseAmount(0), 'zero', /greater than zero/);
    refused(t, parsePreciseAmount('0'), 'zero as string', /greater than zero/);
    refused(t, parsePreciseAmount(0n), 'zero as bigint', /greater than zero/);
    accepted(t, parsePreciseAmount(0, { allowZero: true }), 0n, 'zero when allowed');
    refused(t, parsePreciseAmount(-1), 'negative number', /negative/);
    refused(t, parsePreciseAmount(-1n), 'negative bigint', /negative/);
    refused(t, parsePreciseAmount(-1, { allowZero: true }), 'negative even when zero is allowed');
    refused(t, parsePreciseAmount('-1'), 'negative string');
  });

  await t.test('fractions, unsafe numbers and other shapes are refused', async (t) => {
    refused(t, parsePreciseAmount(1.5), 'a fraction', /whole number/);
    refused(t, parsePreciseAmount(2 ** 53), 'an unsafe integer (send digits instead)', /string of digits/);
    refused(t, parsePreciseAmount(1e20), 'an exponent number beyond 2^53');
    refused(t, parsePreciseAmount(Number.NaN), 'NaN');
    refused(t, parsePreciseAmount(Number.POSITIVE_INFINITY), 'Infinity');
    for (const text of ['', ' 1', '1 ', '1.0', '1e3', '0x10', '+1', '１２', 'abc', '1_000']) {
      refused(t, parsePreciseAmount(text), `string ${JSON.stringify(text)}`);
    }
    for (const value of [null, undefined, true, {}, [], [1], new DecimalLiteral('12345678901234567.5')]) {
      refused(t, parsePreciseAmount(value), `value ${String(value)}`);
    }
  });
});

t.test('parsePrecision', async (t) => {
  accepted(t, parsePrecision(1), 1n, 'one');
  accepted(t, parsePrecision(100), 100n, 'a power of ten');
  accepted(t, parsePrecision(3), 3n, 'not a power of ten is still a multiplier');
  accepted(t, parsePrecision('100'), 100n, 'digit string');
  accepted(t, parsePrecision(10n ** 17n), 10n ** 17n, 'bigint');
  accepted(t, parsePrecision(PRECISION_MAX), PRECISION_MAX, 'the limit');
  accepted(t, parsePrecision(PRECISION_MAX.toString()), PRECISION_MAX, 'the limit as string');
  refused(t, parsePrecision(PRECISION_MAX + 1n), 'past the limit', /at most/);
  refused(t, parsePrecision('1' + '0'.repeat(19)), 'past the limit as string', /at most/);
  refused(t, parsePrecision('1' + '0'.repeat(30)), 'a long digit string');
  refused(t, parsePrecision(0), 'zero', /at least 1/);
  refused(t, parsePrecision(-100), 'negative');
  refused(t, parsePrecision(1.5), 'fraction');
  refused(t, parsePrecision('1e2'), 'exponent text');
  refused(t, parsePrecision(''), 'empty string');
  for (const value of [null, undefined, true, {}, [], Number.NaN]) refused(t, parsePrecision(value), `value ${String(value)}`);
});

t.test('amountToPrecise', async (t) => {
  await t.test('exact conversions', async (t) => {
    accepted(t, amountToPrecise(0.1, 100n), 10n, '0.1 at precision 100');
    accepted(t, amountToPrecise(12.5, 100n), 1250n, '12.5 at precision 100');
    accepted(t, amountToPrecise(10.05, 100n), 1005n, '10.05 at precision 100 (the double is not exact; the literal is)');
    accepted(t, amountToPrecise(7, 1n), 7n, 'a whole amount at precision 1');
    accepted(t, amountToPrecise(12n, 100n), 1200n, 'a bigint amount');
    accepted(t, amountToPrecise('12.50', 100n), 1250n, 'a string with a trailing zero');
    accepted(t, amountToPrecise(' 12.5 ', 100n), 1250n, 'surrounding spaces are trimmed');
    accepted(t, amountToPrecise(2.5, 4n), 10n, 'precision that is not a power of ten, exact');
    accepted(t, amountToPrecise(1.5, 2n), 3n, 'half at precision 2');
  });

  await t.test('amounts that would need rounding are refused', async (t) => {
    refused(t, amountToPrecise(10.005, 100n), '10.005 at precision 100', /rounding/);
    refused(t, amountToPrecise('10.005', 100n), '10.005 as string at precision 100', /rounding/);
    refused(t, amountToPrecise(0.1 + 0.2, 100n), '0.30000000000000004 (a float artifact) at precision 100', /rounding/);
    refused(t, amountToPrecise(0.5, 1n), 'a fraction at precision 1', /rounding/);
    refused(t, amountToPrecise(0.1, 3n), '0.1 at precision 3', /rounding/);
    accepted(t, amountToPrecise(10.005, 1000n), 10005n, 'the same 10.005 fits precision 1000');
  });

  await t.test('exponent forms', async (t) => {
    accepted(t, amountToPrecise(1e-7, 10_000_000n), 1n, 'number 1e-7 at precision 1e7');
    accepted(t, amountToPrecise('1e-7', 10_000_000n), 1n, 'string 1e-7');
    accepted(t, amountToPrecise('1E-7', 10_000_000n), 1n, 'string 1E-7');
    accepted(t, amountToPrecise('0.0000001', 10_000_000n), 1n, 'the same written out');
    accepted(t, amountToPrecise(new DecimalLiteral('1e-7'), 10_000_000n), 1n, 'as a decimal literal');
    refused(t, amountToPrecise(1e-7, 1_000_000n), '1e-7 at precision 1e6', /rounding/);
    accepted(t, amountToPrecise(1.5e-10, 10n ** 11n), 15n, '1.5e-10 at precision 1e11');
    accepted(t, amountToPrecise('1.5e3', 1n), 1500n, 'positive exponent');
    accepted(t, amountToPrecise('1.5e+3', 1n), 1500n, 'explicit plus sign');
    accepted(t, amountToPrecise('15e-1', 10n), 15n, 'negative exponent cancelled by precision');
    accepted(t, amountToPrecise(1e21, 1n), 10n ** 21n, 'a number JavaScript prints as 1e+21');
    refused(t, amountToPrecise('1e81', 1n), 'exponent past the range', /out of range/);
    refused(t, amountToPrecise('1e-81', 10n ** 18n), 'negative exponent past the range', /out of range/);
    refused(t, amountToPrecise('1e999999999999', 1n), 'an absurd exponent', /out of range/);
    refused(t, amountToPrecise('1e41', 1n), 'within the exponent range but past the amount limit', /at most/);
  });

  await t.test('long literals keep every digit', async (t) => {
    accepted(t, amountToPrecise(new DecimalLiteral('12345678901234567890.12'), 100n), 1234567890123456789012n, 'decimal literal');
    accepted(t, amountToPrecise('12345678901234567890.12', 100n), 1234567890123456789012n, 'the same as string');
    accepted(t, amountToPrecise(123456789012345678901234567890n, 1n), 123456789012345678901234567890n, 'bigint');
    refused(t, amountToPrecise(new DecimalLiteral('0.1000000000000000055'), 10n ** 18n), 'one digit too many for 1e18', /rounding/);
    accepted(t, amountToPrecise(new DecimalLiteral('0.100000000000000005'), 10n ** 18n), 100000000000000005n, 'eighteen places at 1e18');
  });

  await t.test('limits', async (t) => {
    accepted(t, amountToPrecise(NINES, 1n), PRECISE_AMOUNT_MAX, 'the largest amount at precision 1');
    accepted(t, amountToPrecise('9999999999999999999999.999999999999999999', PRECISION_MAX), PRECISE_AMOUNT_MAX, 'the largest amount at the largest precision');
    refused(t, amountToPrecise('10000000000000000000000', PRECISION_MAX), 'one unit past the limit after scaling', /at most/);
    refused(t, amountToPrecise('1' + '0'.repeat(100), 1n), 'a hundred-digit amount', /at most/);
    refused(t, amountToPrecise('0.' + '0'.repeat(100) + '1', 10n ** 18n), 'a hundred decimal places', /out of range/);
  });

  await t.test('zero, negatives and junk', async (t) => {
    refused(t, amountToPrecise(0, 100n), 'zero', /greater than zero/);
    refused(t, amountToPrecise(-0, 100n), 'negative zero', /greater than zero/);
    accepted(t, amountToPrecise(0, 100n, { allowZero: true }), 0n, 'zero when allowed');
    refused(t, amountToPrecise(-1, 100n), 'negative', /negative/);
    refused(t, amountToPrecise('-0.5', 100n), 'negative string', /negative/);
    refused(t, amountToPrecise(-1n, 1n), 'negative bigint', /negative/);
    refused(t, amountToPrecise(Number.NaN, 1n), 'NaN', /finite/);
    refused(t, amountToPrecise(Number.POSITIVE_INFINITY, 1n), 'Infinity', /finite/);
    for (const text of ['', '.', '.5', '1.', '+1', '1..2', '1e', '0x10', 'Infinity', '1,5', '12.5abc', '--1']) {
      refused(t, amountToPrecise(text, 100n), `string ${JSON.stringify(text)}`);
    }
    for (const value of [null, undefined, true, {}, [], [1], { text: '1' }]) {
      refused(t, amountToPrecise(value, 100n), `value ${JSON.stringify(value) ?? 'undefined'}`, /finite/);
    }
  });
});

t.test('preciseToDecimalText', async (t) => {
  const cases: Array<[bigint, bigint, string]> = [
    [1250n, 100n, '12.5'],
    [1200n, 100n, '12'],
    [5n, 100n, '0.05'],
    [100n, 100n, '1'],
    [0n, 100n, '0'],
    [-5n, 100n, '-0.05'],
    [-1250n, 100n, '-12.5'],
    [123n, 1n, '123'],
    [1n, 10n ** 18n, '0.000000000000000001'],
    [9007199254740993n, 1n, '9007199254740993'],
    [PRECISE_AMOUNT_MAX, PRECISION_MAX, '9999999999999999999999.999999999999999999'],
    [PRECISE_AMOUNT_MAX * 3n, 1n, (PRECISE_AMOUNT_MAX * 3n).toString()],
  ];
  for (const [precise, precision, text] of cases) {
    t.equal(preciseToDecimalText(precise, precision), text, `${precise} / ${precision}`);
  }
  await t.test('round trip through amountToPrecise at powers of ten', async (t) => {
    for (const [precise, precision] of cases) {
      if (precise <= 0n || precise > PRECISE_AMOUNT_MAX) continue;
      accepted(t, amountToPrecise(preciseToDecimalText(precise, precision), precision), precise, `${precise} / ${precision}`);
    }
  });
  await t.test('a precision that is not a power of ten falls back to a float quotient', async (t) => {
    t.equal(preciseToDecimalText(10n, 4n), '2.5', 'exact when the quotient is');
    t.equal(preciseToDecimalText(10n, 3n), String(10 / 3), 'the nearest double otherwise');
  });
});

t.test('preciseToAmount', async (t) => {
  t.equal(preciseToAmount(1250n, 100n), 12.5);
  t.equal(preciseToAmount(1n, 10n), 0.1, 'the double nearest 0.1, not 1 * 0.1');
  t.equal(preciseToAmount(3n, 10n), 0.3, 'the double nearest 0.3, not 3 / 10 computed in floats');
  t.equal(preciseToAmount(1005n, 100n), 10.05);
  t.equal(preciseToAmount(1n, 10n ** 18n), 1e-18);
  t.equal(preciseToAmount(9007199254740993n, 1n), 9007199254740992, 'beyond 2^53 the nearest double');
  t.equal(preciseToAmount(-5n, 100n), -0.05);
  t.equal(preciseToAmount(0n, 100n), 0);
});
