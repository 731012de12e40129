// JSON parsing that never loses a digit of a number. Plain JSON.parse turns 12345678901234567890 into
// 12345678901234567000 and 0.1000000000000000055 into 0.1; for money that is unacceptable. Bodies
// without a long run of digits are parsed natively (no literal there can lose precision); the others go
// through this small strict parser, which returns integers beyond 2^53 as bigint and long decimals as
// DecimalLiteral (their exact text) so money fields can convert them exactly.

import { DecimalLiteral } from './amounts.js';

/** Nesting deeper than this is refused: nothing Folio accepts needs it, and recursion must be bounded. */
export const JSON_DEPTH_MAX = 64;
/**
 * Sixteen or more digits (dots included) in a row can hold a number a double cannot represent. Matching
 * exactly sixteen finds the same bodies; an open `{16,}` made V8 overflow its stack on multi-megabyte runs.
 */
const LONG_NUMBER = /[0-9.]{16}/;
/** Number literals longer than this are refused: nothing Folio stores needs them, and converting a
 * multi-megabyte literal to a bigint would stall the server. */
export const NUMBER_LITERAL_LENGTH_MAX = 400;
/** More significant digits than this do not survive a trip through a double. */
const SAFE_SIGNIFICANT_DIGITS = 15;

export class JsonSyntaxError extends Error {
  override readonly name = 'JsonSyntaxError';
}

export function parseJsonLossless(text: string): unknown {
  const value = LONG_NUMBER.test(text) ? new Parser(text).parseDocument() : parseNative(text);
  checkDepth(value);
  return value;
}

function parseNative(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new JsonSyntaxError((error as Error).message);
  }
}

/**
 * Walks the parsed value once, iteratively so a hostile body cannot exhaust the stack: nesting is
 * bounded, and every string (keys included) must be well-formed Unicode. A lone surrogate cannot be
 * stored as UTF-8 without changing, so accepting one would acknowledge a value that replay alters.
 */
function checkDepth(root: unknown): void {
  const stack: Array<[unknown, number]> = [[root, 1]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop() as [unknown, number];
    if (typeof value === 'string') {
      if (!value.isWellFormed()) throw new JsonSyntaxError('a string holds a lone surrogate (not valid Unicode)');
      continue;
    }
    // A DecimalLiteral is a number held as an object, not a level of nesting.
    if (typeof value !== 'object' || value === null || value instanceof DecimalLiteral) continue;
    if (depth > JSON_DEPTH_MAX) throw new JsonSyntaxError(`nesting deeper than ${JSON_DEPTH_MAX} levels`);
    // Parsed JSON holds only own enumerable properties, so for...in needs no entries array.
    for (const key in value) {
      if (!key.isWellFormed()) throw new JsonSyntaxError('a property name holds a lone surrogate (not valid Unicode)');
      stack.push([(value as Record<string, unknown>)[key], depth + 1]);
    }
  }
}

class Parser {
  private position = 0;
  private depth = 0;

  constructor(private readonly text: string) {}

  parseDocument(): unknown {
    const value = this.parseValue();
    this.skipWhitespace();
    if (this.position !== this.text.length) this.fail('unexpected data after the JSON value');
    return value;
  }

  private parseValue(): unknown {
    this.skipWhitespace();
    const char = this.text[this.position];
    switch (char) {
      case '{':
        return this.parseObject();
      case '[':
        return this.parseArray();
      case '"':
        return this.parseString();
      case 't':
        return this.parseWord('true', true);
      case 'f':
        return this.parseWord('false', false);
      case 'n':
        return this.parseWord('null', null);
      default:
        if (char === '-' || (char !== undefined && char >= '0' && char <= '9')) return this.parseNumber();
        return this.fail(char === undefined ? 'unexpected end of input' : `unexpected character ${JSON.stringify(char)}`);
    }
  }

  private enter(): void {
    this.depth += 1;
    if (this.depth > JSON_DEPTH_MAX) this.fail(`nesting deeper than ${JSON_DEPTH_MAX} levels`);
  }

  private parseObject(): Record<string, unknown> {
    this.enter();
    this.position += 1;
    const result: Record<string, unknown> = {};
    this.skipWhitespace();
    if (this.text[this.position] === '}') {
      this.position += 1;
      this.depth -= 1;
      return result;
    }
    for (;;) {
      this.skipWhitespace();
      if (this.text[this.position] !== '"') this.fail('expected a property name');
      const key = this.parseString();
      this.skipWhitespace();
      this.expect(':');
      const value = this.parseValue();
      // defineProperty keeps a "__proto__" key an ordinary property, as JSON.parse does.
      Object.defineProperty(result, key, { value, enumerable: true, writable: true, configurable: true });
      this.skipWhitespace();
      const next = this.text[this.position];
      this.position += 1;
      if (next === '}') break;
      if (next !== ',') this.fail('expected , or }');
    }
    this.depth -= 1;
    return result;
  }

  private parseArray(): unknown[] {
    this.enter();
    this.position += 1;
    const result: unknown[] = [];
    this.skipWhitespace();
    if (this.text[this.position] === ']') {
      this.position += 1;
      this.depth -= 1;
      return result;
    }
    for (;;) {
      result.push(this.parseValue());
      this.skipWhitespace();
      const next = this.text[this.position];
      this.position += 1;
      if (next === ']') break;
      if (next !== ',') this.fail('expected , or ]');
    }
    this.depth -= 1;
    return result;
  }

  private parseString(): string {
    const start = this.position;
    this.position += 1;
    for (;;) {
      const char = this.text[this.position];
      if (char === undefined) this.fail('unterminated string');
      if (char === '"') break;
      if (char === '\\') this.position += 1;
      else if (char < ' ') this.fail('control character in string');
      this.position += 1;
    }
    this.position += 1;
    // The literal is delimited; the native parser decodes its escapes exactly.
    return parseNative(this.text.slice(start, this.position)) as string;
  }

  private parseNumber(): number | bigint | DecimalLiteral {
    const match = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;
    match.lastIndex = this.position;
    const found = match.exec(this.text);
    if (!found) return this.fail('malformed number');
    const literal = found[0];
    if (literal.length > NUMBER_LITERAL_LENGTH_MAX) this.fail(`number literal longer than ${NUMBER_LITERAL_LENGTH_MAX} characters`);
    this.position += literal.length;
    if (found[1] === undefined && found[2] === undefined) {
      const value = Number(literal);
      return Number.isSafeInteger(value) ? value : BigInt(literal);
    }
    const significant = literal.replace(/[eE].*$/, '').replace(/[-.]/g, '').replace(/^0+/, '').replace(/0+$/, '');
    return significant.length > SAFE_SIGNIFICANT_DIGITS ? new DecimalLiteral(literal) : Number(literal);
  }

  private parseWord<T>(word: string, value: T): T {
    if (!this.text.startsWith(word, this.position)) this.fail(`unexpected token at position ${this.position}`);
    this.position += word.length;
    return value;
  }

  private expect(char: string): void {
    if (this.text[this.position] !== char) this.fail(`expected ${char}`);
    this.position += 1;
  }

  private skipWhitespace(): void {
    for (;;) {
      const char = this.text[this.position];
      if (char !== ' ' && char !== '\n' && char !== '\r' && char !== '\t') return;
      this.position += 1;
    }
  }

  private fail(message: string): never {
    throw new JsonSyntaxError(`${message} (at position ${this.position})`);
  }
}
