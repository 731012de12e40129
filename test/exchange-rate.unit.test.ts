// The arithmetic of exchanges (engine/exchange-rate.ts): rates parsed exactly (decimal text with at most
// 18 significant digits, or a numerator/denominator pair) and reduced; conversions between precisions
// exact or refused unless a rounding rule is named; half_even ties to even; and, for any split of a
// source amount into parts (partial commits, a void of the rest), the parts' destination amounts add up
// exactly to the conversion of the whole, under every rule. Seeded: a failure prints its seed.

import fc from 'fast-check';
import t from 'tap';
import { convert, convertedPart, parseDecimalRate, parseRatePair, ROUNDING_RULES, type Rate } from '../engine/exchange-rate.js';

function rate(text: string): Rate {
  const parsed = parseDecimalRate(text);
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.rate;
}

t.test('rates: decimal text and pairs, reduced; bad ones refused', async (t) => {
  t.same(rate('1.0845'), { numerator: 2169n, denominator: 2000n });
  t.same(rate('2'), { numerator: 2n, denominator: 1n });
  t.same(rate('0.000000000000000001'), { numerator: 1n, denominator: 10n ** 18n });
  t.same(rate('123456789012345678'), { numerator: 123456789012345678n, denominator: 1n }, '18 significant digits');
  t.same(rate('1.50000000000000000000'), { numerator: 3n, denominator: 2n }, 'trailing zeros are not significant');
  for (const bad of ['1234567890123456789', '0', '0.0', '-1', '1e3', '1.', '.5', '', ' 1', '1,5', 'NaN']) {
    t.notOk(parseDecimalRate(bad).ok, `refused: ${JSON.stringify(bad)}`);
  }
  const pair = parseRatePair('1085', 1000);
  t.same(pair.ok && pair.rate, { numerator: 217n, denominator: 200n });
  for (const [top, bottom] of [[0, 1], [1, 0], [1.5, 1], ['-1', 1], ['1'.repeat(37), 1], [null, 1]] as Array<[unknown, unknown]>) {
    t.notOk(parseRatePair(top, bottom).ok, `refused: ${String(top)}/${String(bottom)}`);
  }
});

t.test('conversions between precisions: exact, or by the rule named, else refused', async (t) => {
  // 100.00 USD at 1.5 into a currency with 3 places: 150.000.
  t.same(convert(10_000n, rate('1.5'), 100n, 1000n), { ok: true, amount: 150_000n, exact: true });
  // 0.01 USD at 1.0845 into cents: 1.0845 cents, not whole.
  t.notOk(convert(1n, rate('1.0845'), 100n, 100n).ok, 'inexact without a rule');
  t.same(convert(1n, rate('1.0845'), 100n, 100n, 'down'), { ok: true, amount: 1n, exact: false });
  t.same(convert(1n, rate('1.0845'), 100n, 100n, 'up'), { ok: true, amount: 2n, exact: false });
  t.same(convert(1n, rate('1.0845'), 100n, 100n, 'half_even'), { ok: true, amount: 1n, exact: false });
  t.same(convert(5n, rate('0.5'), 1n, 1n, 'half_even'), { ok: true, amount: 2n, exact: false }, '2.5 ties to 2');
  t.same(convert(7n, rate('0.5'), 1n, 1n, 'half_even'), { ok: true, amount: 4n, exact: false }, '3.5 ties to 4');
  // Amounts past 64 bits stay exact.
  const big = 10n ** 30n + 7n;
  t.same(convert(big, rate('3'), 1n, 1n), { ok: true, amount: 3n * big, exact: true });
  t.notOk(convert(-1n, rate('1'), 1n, 1n).ok, 'no negative amount');
});

t.test('parts add up to the whole on both sides, under every rule', async (t) => {
  const cases = fc.record({
    numerator: fc.bigInt({ min: 1n, max: 10n ** 18n }),
    denominator: fc.bigInt({ min: 1n, max: 10n ** 18n }),
    sourcePrecision: fc.constantFrom(1n, 100n, 1000n, 10n ** 8n, 10n ** 18n),
    destinationPrecision: fc.constantFrom(1n, 100n, 1000n, 10n ** 8n, 10n ** 18n),
    parts: fc.array(fc.bigInt({ min: 0n, max: 10n ** 20n }), { minLength: 1, maxLength: 8 }),
    rule: fc.constantFrom(...ROUNDING_RULES),
  });
  fc.assert(fc.property(cases, ({ numerator, denominator, sourcePrecision, destinationPrecision, parts, rule }) => {
    const exchange: Rate = { numerator, denominator };
    const whole = parts.reduce((sum, part) => sum + part, 0n);
    const expected = convert(whole, exchange, sourcePrecision, destinationPrecision, rule);
    if (!expected.ok) return false;
    let committed = 0n;
    let destination = 0n;
    for (const part of parts) {
      const converted = convertedPart(committed, committed + part, exchange, sourcePrecision, destinationPrecision, rule);
      if (!converted.ok || converted.amount < 0n) return false;
      committed += part;
      destination += converted.amount;
    }
    return destination === expected.amount;
  }), { numRuns: 500 }); // a failure's message carries fast-check's seed and path to replay it
  t.pass('every split of the source adds up exactly');
});
