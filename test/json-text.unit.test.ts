// Unit tests for wire/json-text.ts, the response writer: bigints must come out as bare digits of any
// size, exact decimal literals verbatim, and everything else exactly as JSON.stringify would write it,
// so that clients parsing with an ordinary JSON parser see the same document.

import t from 'tap';
import { DecimalLiteral } from '../wire/amounts.js';
import { toJsonText } from '../wire/json-text.js';
import { parseJsonLossless } from '../http/schemas/lossless-json.js';
import { seededRandom } from './helpers/seeded-random.js';

t.test('bigints are written as bare digits, whatever their size', async (t) => {
  t.equal(toJsonText(0n), '0');
  t.equal(toJsonText(9007199254740993n), '9007199254740993');
  t.equal(toJsonText(-9007199254740993n), '-9007199254740993');
  const huge = 10n ** 80n + 7n;
  t.equal(toJsonText({ precise_amount: huge }), `{"precise_amount":${huge}}`);
  t.equal(toJsonText([1n, -2n, 3]), '[1,-2,3]');
  await t.test('and read back by the lossless parser unchanged', async (t) => {
    const value = { a: 123456789012345678901234567890n, b: [9007199254740993n, -1n, 2], c: { d: 10n ** 40n } };
    t.same(parseJsonLossless(toJsonText(value)), { ...value, b: [9007199254740993n, -1n, 2] });
  });
});

t.test('a DecimalLiteral is written as the text it was read from', async (t) => {
  t.equal(toJsonText(new DecimalLiteral('0.1000000000000000055')), '0.1000000000000000055');
  t.equal(toJsonText({ amount: new DecimalLiteral('-12345678901234567890.5e-3') }), '{"amount":-12345678901234567890.5e-3}');
  t.equal(toJsonText([new DecimalLiteral('1.00000000000000001')]), '[1.00000000000000001]');
});

t.test('strings and keys are escaped as JSON.stringify escapes them', async (t) => {
  const strings = ['', 'plain', 'quote " and \\ backslash', 'controls \b\f\n\r\t\u0000\u001f', 'é € 😀', '\u2028\u2029', '\ud800 lone', 'lone \udc00', '</script>'];
  for (const [index, text] of strings.entries()) {
    t.equal(toJsonText(text), JSON.stringify(text), `value ${index}`);
    t.equal(toJsonText({ [text]: 1 }), JSON.stringify({ [text]: 1 }), `key ${index}`);
  }
});

t.test('undefined, functions and non-finite numbers', async (t) => {
  t.equal(toJsonText({ a: undefined, b: 1, c: () => 1 }), '{"b":1}', 'undefined and function members are left out');
  t.equal(toJsonText([undefined, () => 1, 2]), '[null,null,2]', 'in arrays they become null');
  t.equal(toJsonText({ a: undefined }), '{}', 'an object of only undefined members is empty');
  t.equal(toJsonText(undefined), 'null', 'a bare undefined becomes null (a body is always a document)');
  t.equal(toJsonText([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]), '[null,null,null]', 'as JSON.stringify does');
  t.equal(toJsonText(-0), '0', 'negative zero as JSON.stringify writes it');
  t.equal(toJsonText(null), 'null');
  t.equal(toJsonText({ a: null }), '{"a":null}', 'null members stay');
});

t.test('other values', async (t) => {
  t.equal(toJsonText(true), 'true');
  t.equal(toJsonText(false), 'false');
  t.equal(toJsonText(1e21), JSON.stringify(1e21));
  t.equal(toJsonText(5e-324), JSON.stringify(5e-324));
  t.equal(toJsonText(new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 6))), '"2024-01-02T03:04:05.006Z"', 'dates as ISO text');
  t.equal(toJsonText([]), '[]');
  t.equal(toJsonText({}), '{}');
  t.equal(toJsonText({ a: { b: { c: [[], {}] } } }), '{"a":{"b":{"c":[[],{}]}}}');
});

t.test('own "__proto__" members are written; inherited members are not', async (t) => {
  const value = parseJsonLossless('{"__proto__":{"x":1},"a":2}');
  t.equal(toJsonText(value), '{"__proto__":{"x":1},"a":2}');
  const child = Object.create({ inherited: 1 }) as Record<string, unknown>;
  child.own = 2;
  t.equal(toJsonText(child), '{"own":2}');
});

t.test('seeded random bigint-free values are written exactly as JSON.stringify writes them', async (t) => {
  const random = seededRandom(t, 'JSON_TEXT_SEED');
  const leaves: unknown[] = [null, true, false, 0, -1, 3.5, 1e-7, 1e300, Number.NaN, '', 'x', '"\\\n', 'é😀', undefined];
  const generate = (depth: number): unknown => {
    const kind = random.int(depth > 4 ? 1 : 3);
    if (kind === 0) return random.pick(leaves);
    if (kind === 1) return Array.from({ length: random.int(4) }, () => generate(depth + 1));
    const record: Record<string, unknown> = {};
    for (let index = random.int(4); index > 0; index -= 1) record[`k${random.int(6)}${random.pick(['', '"', 'é'])}`] = generate(depth + 1);
    return record;
  };
  for (let round = 0; round < 500; round += 1) {
    const value = generate(0);
    const expected = JSON.stringify(value) ?? 'null';
    if (toJsonText(value) !== expected) {
      t.fail(`round ${round}: ${toJsonText(value)} !== ${expected}`);
      return;
    }
  }
  t.pass('500 values agree');
});
