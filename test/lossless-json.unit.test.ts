// Unit tests for http/schemas/lossless-json.ts. Bodies take one of two paths (plain JSON.parse when no long run
// of digits appears, JSON.parse with the exact-number reviver otherwise), so most cases here run through both and
// must agree with JSON.parse wherever no digit is at stake. A seeded generator adds documents nobody
// thought to write down; its seed is printed on failure so the case replays.

import t from 'tap';
import { DecimalLiteral } from '../wire/amounts.js';
import { JSON_DEPTH_MAX, JsonSyntaxError, parseJsonExact, parseJsonLossless } from '../http/schemas/lossless-json.js';
import { seededRandom } from './helpers/seeded-random.js';

/** A string value holding sixteen digits: its presence sends a document down the reviver path. */
const SLOW_PATH_MARKER = '"1234567890123456"';

/** The same document in a form that takes the reviver path. */
function viaParser(json: string): string {
  return `{"marker":${SLOW_PATH_MARKER},"value":${json}}`;
}

function parsedValue(json: string): unknown {
  return (parseJsonLossless(viaParser(json)) as { value: unknown }).value;
}

t.test('integers beyond 2^53 become bigint, exactly', async (t) => {
  const cases: Array<[string, unknown]> = [
    ['12345678901234567890', 12345678901234567890n],
    ['-12345678901234567890', -12345678901234567890n],
    ['9007199254740993', 9007199254740993n],
    ['9007199254740992', 9007199254740992n],
    ['9007199254740991', 9007199254740991],
    ['-9007199254740991', -9007199254740991],
    ['1' + '0'.repeat(60), 10n ** 60n],
  ];
  for (const [literal, expected] of cases) {
    t.equal(parseJsonLossless(literal), expected, `top level ${literal}`);
    t.same(parseJsonLossless(`{"precise_amount":${literal}}`), { precise_amount: expected }, `in an object ${literal}`);
    t.same(parseJsonLossless(`[1,${literal},2]`), [1, expected, 2], `in an array ${literal}`);
  }
});

t.test('long decimals become DecimalLiteral holding their exact text', async (t) => {
  for (const literal of ['0.1000000000000000055', '1234567890.1234567', '-98765432109876543.21', '1.0000000000000001e2', '12345678901234567890e-2']) {
    const value = parseJsonLossless(`{"amount":${literal}}`) as { amount: unknown };
    t.ok(value.amount instanceof DecimalLiteral, `${literal} is a DecimalLiteral`);
    t.equal((value.amount as DecimalLiteral).text, literal, `${literal} keeps its text`);
  }
  await t.test('decimals a double holds exactly stay numbers', async (t) => {
    for (const literal of ['1.5', '0.1', '12345678901234.5', '1.0000000000000000', '0.0000000000000001', '1e-7', '-2.5E+3']) {
      t.equal(parsedValue(literal), Number(literal), `${literal} is a number on the parser path`);
      t.equal(parseJsonLossless(literal), Number(literal), `${literal} is a number on the native path`);
    }
  });
  await t.test('a decimal literal serialises back as its number', async (t) => {
    t.equal(JSON.stringify({ amount: new DecimalLiteral('0.1000000000000000055') }), '{"amount":0.1}');
  });
});

t.test('lone surrogates are refused on both paths, in values and in keys', async (t) => {
  for (const document of ['{"lone":"\\ud800"}', '{"lone2":"\\udc00x"}', '{"\\ud800":1}', '["\\ud800", 12345678901234567890]']) {
    t.throws(() => parseJsonLossless(document), JsonSyntaxError, printable(document));
  }
  t.same(parseJsonLossless('{"pair":"\\ud83d\\ude00"}'), { pair: '😀' }, 'a surrogate pair is fine');
});

t.test('ordinary bodies parse exactly as JSON.parse does', async (t) => {
  const documents = [
    '{}',
    '[]',
    '""',
    '0',
    '-0',
    'true',
    'false',
    'null',
    ' \t\r\n{ "a" : [ 1 , 2.5 , -3e-7 , 1E+2 ] , "b" : { } } \n',
    '{"amount":12.5,"precision":100,"currency":"USD","source":"@world","destination":"@alice","allow_overdraft":true}',
    '{"text":"quote \\" backslash \\\\ slash \\/ controls \\b\\f\\n\\r\\t unicode \\u00e9 \\u20ac pair \\ud83d\\ude00"}',
    '{"raw":"é € 😀 \u2028"}',
    '{"nested":{"deeper":{"deepest":[[[]],{}]}},"list":[null,true,false,"",0]}',
    '{"a":1,"a":2}',
    '{"__proto__":{"x":1},"constructor":"c","toString":"t"}',
    '[1e308,-1e308,5e-324,1e-400,123456789012345]',
  ];
  for (const document of documents) {
    t.same(parseJsonLossless(document), JSON.parse(document), `native path: ${printable(document)}`);
    t.same(parsedValue(document), JSON.parse(document), `parser path: ${printable(document)}`);
  }
});

t.test('seeded random documents agree with JSON.parse on both paths', async (t) => {
  const random = seededRandom(t, 'LOSSLESS_JSON_SEED');
  const strings = ['', 'a', 'é', '😀', '"', '\\', '\n', '\u0001', '__proto__', ' 12 '];
  const generate = (depth: number): unknown => {
    const kind = random.int(depth > 4 ? 5 : 7);
    switch (kind) {
      case 0: return null;
      case 1: return random.int(2) === 0;
      case 2: return random.pick([0, -1, 7, 123456789012345, -0.5, 1e-7, 3.14, 1e300, Number.MAX_SAFE_INTEGER]);
      case 3: return random.pick(strings) + random.pick(strings);
      case 4: return random.int(1_000_000) / 1000;
      case 5: return Array.from({ length: random.int(4) }, () => generate(depth + 1));
      default: {
        const record: Record<string, unknown> = {};
        for (let index = random.int(4); index > 0; index -= 1) record[random.pick(strings) + index] = generate(depth + 1);
        return record;
      }
    }
  };
  for (let round = 0; round < 300; round += 1) {
    const document = JSON.stringify(generate(0), null, random.int(2) === 0 ? undefined : 1);
    const expected = JSON.parse(document);
    if (!isSameJson(parseJsonLossless(document), expected) || !isSameJson(parsedValue(document), expected)) {
      t.fail(`round ${round} disagrees with JSON.parse: ${document}`);
      return;
    }
  }
  t.pass('300 documents agree');
});

t.test('malformed input throws JsonSyntaxError on both paths', async (t) => {
  const malformed = [
    '', ' ', '{', '}', '[', '{"a":1,}', '[1,]', '[,1]', '01', '1.', '.5', '+1', '--1', '-', '1e', '1e+', 'NaN',
    'Infinity', '-Infinity', "{'a':1}", '{"a" 1}', '{a:1}', '{"a":1}}', '[1]]', '1 2', '[1 2]', '"abc', '"\u0001"',
    '"tab\there"', '"\\x41"', '"\\u12"', 'tru', 'nul', 'True', 'undefined', '{"a":}', '{,}', '\ufeff{}', '{"a":1}x',
  ];
  for (const text of malformed) {
    t.throws(() => JSON.parse(text), `sanity: JSON.parse refuses ${JSON.stringify(text)}`);
    t.throws(() => parseJsonLossless(text), JsonSyntaxError, `native path refuses ${JSON.stringify(text)}`);
  }
  const malformedLong = [
    '[1234567890123456,]', '{"a":1234567890123456,}', '01234567890123456', '1234567890123456.', '{"a" 1234567890123456}',
    '[1234567890123456 2]', '"1234567890123456', '1234567890123456 2', '-1234567890123456e', '{1234567890123456:1}',
    '[1234567890123456]]', '[1234567890123456', '{"a":1234567890123456', '{"a":"1234567890123456\u0001"}',
    '{"a":"\\x1234567890123456"}', '[tru,1234567890123456]', '[1234567890123456,nul]', '1234567890123456.5.5',
    '[.1234567890123456]', '[-.1234567890123456]', '[12345678901234567e]', "{'a':1234567890123456}",
  ];
  for (const text of malformedLong) {
    t.throws(() => JSON.parse(text), `sanity: JSON.parse refuses ${JSON.stringify(text)}`);
    t.throws(() => parseJsonLossless(text), JsonSyntaxError, `parser path refuses ${JSON.stringify(text)}`);
  }
  await t.test('malformed documents cut at every position', async (t) => {
    const document = viaParser('{"amount":12345678901234567890.5,"list":[1,"two",{"three":null}],"ok":true}');
    let refusedWell = 0;
    for (let end = 0; end < document.length; end += 1) {
      try {
        parseJsonLossless(document.slice(0, end));
        t.fail(`a truncated document parsed: ${document.slice(0, end)}`);
      } catch (error) {
        if (error instanceof JsonSyntaxError) refusedWell += 1;
        else t.fail(`truncated at ${end}: threw ${String(error)}`);
      }
    }
    t.equal(refusedWell, document.length, 'every prefix is refused with JsonSyntaxError');
  });
});

t.test('nesting is limited to JSON_DEPTH_MAX levels', async (t) => {
  const arrays = (depth: number, inner = ''): string => '['.repeat(depth) + inner + ']'.repeat(depth);
  const objects = (depth: number, inner = '1'): string => '{"a":'.repeat(depth) + inner + '}'.repeat(depth);
  t.doesNotThrow(() => parseJsonLossless(arrays(JSON_DEPTH_MAX)), 'arrays at the limit, native path');
  t.doesNotThrow(() => parseJsonLossless(arrays(JSON_DEPTH_MAX, '12345678901234567890')), 'arrays at the limit, parser path');
  t.doesNotThrow(() => parseJsonLossless(objects(JSON_DEPTH_MAX)), 'objects at the limit, native path');
  t.throws(() => parseJsonLossless(arrays(JSON_DEPTH_MAX + 1)), JsonSyntaxError, 'one array too deep, native path');
  t.throws(() => parseJsonLossless(arrays(JSON_DEPTH_MAX + 1, '12345678901234567890')), JsonSyntaxError, 'one array too deep, parser path');
  t.throws(() => parseJsonLossless(objects(JSON_DEPTH_MAX + 1)), JsonSyntaxError, 'one object too deep, native path');
  t.throws(() => parseJsonLossless(objects(JSON_DEPTH_MAX + 1, '12345678901234567890')), JsonSyntaxError, 'one object too deep, parser path');
  t.throws(() => parseJsonLossless(arrays(200_000)), JsonSyntaxError, 'hostile depth, native path: refused, not a stack overflow');
  t.throws(() => parseJsonLossless(arrays(200_000, '12345678901234567890')), JsonSyntaxError, 'hostile depth, parser path');
  t.throws(() => parseJsonLossless('['.repeat(200_000) + '12345678901234567890'), JsonSyntaxError, 'hostile unclosed depth');
  await t.test('the limit counts containers, however a number inside is held', async (t) => {
    t.doesNotThrow(() => parseJsonLossless(arrays(JSON_DEPTH_MAX, '0.5')), 'a short decimal at the deepest level');
    t.doesNotThrow(() => parseJsonLossless(arrays(JSON_DEPTH_MAX, '12345678901234567890')), 'a bigint at the deepest level');
    t.doesNotThrow(() => parseJsonLossless(arrays(JSON_DEPTH_MAX, '0.1000000000000000055')), 'a long decimal at the deepest level');
  });
});

t.test('a "__proto__" key stays an own property and changes no prototype', async (t) => {
  for (const text of ['{"__proto__":{"polluted":true},"a":1}', '{"__proto__":{"polluted":true},"a":12345678901234567890}']) {
    const value = parseJsonLossless(text) as Record<string, unknown>;
    t.equal(Object.getPrototypeOf(value), Object.prototype, 'prototype unchanged');
    t.ok(Object.hasOwn(value, '__proto__'), '__proto__ is an own property');
    t.same(Object.getOwnPropertyDescriptor(value, '__proto__')?.value, { polluted: true }, 'holding the value sent');
    t.equal(value.polluted, undefined, 'nothing inherited from it');
    t.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype untouched');
    t.same(Object.keys(value), ['__proto__', 'a'], 'key order kept');
  }
});

t.test('duplicate keys: the last one wins, as with JSON.parse', async (t) => {
  t.same(parseJsonLossless('{"a":1,"a":12345678901234567890}'), { a: 12345678901234567890n });
  t.same(parseJsonLossless('{"a":12345678901234567890,"a":2}'), { a: 2 });
});

t.test('a very long run of digits is parsed or refused, never a RangeError', async (t) => {
  // A regular expression scanning for long digit runs overflowed V8's backtracking stack on runs of a
  // few million characters, which surfaced as a 500 for a body within the size limit.
  for (const document of [`{"name":"${'7'.repeat(7_000_000)}"}`, `{"amount":0.${'0'.repeat(7_000_000)}1}`, `"${'1.'.repeat(4_000_000)}"`]) {
    let outcome: string;
    try {
      parseJsonLossless(document);
      outcome = 'parsed';
    } catch (error) {
      outcome = error instanceof JsonSyntaxError ? 'refused' : `threw ${String(error)}`;
    }
    // A number literal that long is refused (NUMBER_LITERAL_LENGTH_MAX); strings of digits are fine.
    t.equal(outcome, document.includes('"amount"') ? 'refused' : 'parsed', `a ${document.length}-character document`);
  }
});

/** A label for a document that stays on one line whatever characters the document holds. */
function printable(text: string): string {
  return JSON.stringify(text.slice(0, 60)).replace(/[^\x20-\x7e]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Deep equality that tells -0 from 0 and compares own keys including "__proto__". */
function isSameJson(actual: unknown, expected: unknown): boolean {
  if (typeof actual !== typeof expected) return false;
  if (typeof expected !== 'object' || expected === null) return Object.is(actual, expected);
  if (actual === null || Array.isArray(actual) !== Array.isArray(expected)) return false;
  const actualKeys = Object.keys(actual as object);
  const expectedKeys = Object.keys(expected);
  if (actualKeys.join('\u0000') !== expectedKeys.join('\u0000')) return false;
  return expectedKeys.every((key) => isSameJson(
    Object.getOwnPropertyDescriptor(actual, key)?.value,
    Object.getOwnPropertyDescriptor(expected, key)?.value,
  ));
}

t.test('answers are read with exact numbers and without the request limits', async (t) => {
  // A list answer nests stored metadata one level deeper than the request that stored it; the fuzzer's
  // checks read such listings (a 300,000-request run stopped on one before this).
  let nested = '1';
  for (let level = 0; level < JSON_DEPTH_MAX - 1; level += 1) nested = `{"a":${nested}}`;
  const answer = `[{"precise_balance":123456789012345678901234,"meta_data":${nested}}]`;
  t.throws(() => parseJsonLossless(answer), JsonSyntaxError, 'a request this deep is refused');
  const read = parseJsonExact(answer) as Array<{ precise_balance: unknown }>;
  t.equal(read[0]?.precise_balance, 123456789012345678901234n, 'and an answer keeps its exact numbers');
});
