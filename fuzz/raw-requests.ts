// Requests no schema would produce: broken and truncated JSON, a byte-order mark, bytes that are not
// UTF-8, the wrong content type or none, compressed bodies that are not what they claim (and one that
// inflates past the body limit), bodies on GET and DELETE, unusual methods, odd paths and query strings,
// headers that are huge, numerous or odd (keys, Host, Connection, Expect), and smuggling attempts: a GET
// or DELETE whose body is a request of its own (whole, or a head left open at a header for the next
// request to complete), framed so that a proxy dropping hop-by-hop headers would forward it unframed.

import fc from 'fast-check';
import { deflateSync, gzipSync, brotliCompressSync } from 'node:zlib';
import { fuzzJsonText, type FuzzJson, type SendContext } from './fuzz-json.js';
import type { FuzzRequest } from './fuzz-request.js';
import { BODY_LIMIT_BYTES } from './hostile-values.js';
import { bodyArbitrary, filledPath, paramArbitrary, paramNames, type ParamChoice } from './route-requests.js';
import type { FuzzRoute } from './route-table.js';
import { smallJson } from './schema-arbitrary.js';

/** A route and its path parameters: where a raw case is sent. */
export interface Target {
  route: number;
  params: ParamChoice[];
}

export type RawCase =
  | { kind: 'garbage'; target: Target; text: string }
  | { kind: 'truncated'; target: Target; body: FuzzJson; keepPerMille: number }
  | { kind: 'bom'; target: Target; body: FuzzJson }
  | { kind: 'content-type'; target: Target; body: FuzzJson; contentType: string | null }
  | { kind: 'bytes'; target: Target; bytes: number[] }
  | { kind: 'encoding'; target: Target; body: FuzzJson; encoding: string; compressed: boolean }
  | { kind: 'inflates-past-limit'; target: Target }
  | { kind: 'method'; target: Target; method: string; body: FuzzJson | null }
  | { kind: 'odd-path'; method: string; path: string }
  | { kind: 'odd-query'; target: Target; query: string }
  | { kind: 'headers'; target: Target; body: FuzzJson | null; headers: Array<[string, string]> }
  | { kind: 'smuggle'; target: Target; method: 'GET' | 'DELETE'; trick: SmuggleTrick; inner: 'whole' | 'open' };

/** How a smuggled body is framed: a length the Connection header asks to drop, chunked (named in Connection, or plain). */
export type SmuggleTrick = 'connection-content-length' | 'connection-transfer-encoding' | 'chunked';
const SMUGGLE_TRICKS: readonly SmuggleTrick[] = ['connection-content-length', 'connection-transfer-encoding', 'chunked'];
/**
 * The requests a smuggling body carries, each with a request id of its own: a whole request, and the head
 * of an operator route left open at a header, which the next request on the same connection would end
 * (its request line becoming that header's value, its headers this request's).
 */
const SMUGGLED: Record<'whole' | 'open', string> = {
  whole: 'GET /ledgers HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: smuggled-whole\r\n\r\n',
  open: 'POST /admin/snapshots HTTP/1.1\r\nContent-Length: 0\r\nX-Request-Id: smuggled-open\r\nX-Smuggled: ',
};

const JSONISH_UNITS = ['{', '}', '[', ']', '"', ':', ',', '\\', '-', '+', '.', 'e', 'E', '0', '9', '1234567890123456789', 'null', 'true', 'fals', ' ', '\n', 'a', '\u0000', 'é', '\ud800', '\ufeff', '/*', '*/', 'NaN', 'Infinity', "'"];
const CONTENT_TYPES: ReadonlyArray<string | null> = [
  null, '', 'text/plain', 'text/plain; charset=utf-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x',
  'application/xml', 'text/html', 'application/json; charset=utf-16', 'application/json; charset=latin1', 'application/json; charset=bogus',
  'application/vnd.api+json', 'application/merge-patch+json', 'APPLICATION/JSON', 'application/jsonp', 'application/json, text/plain', '*/*', '/;;;',
];
const ENCODINGS = ['gzip', 'deflate', 'br', 'identity', 'bogus', 'gzip, gzip'] as const;
const ODD_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'PROPFIND', 'TRACE'] as const;
const PATH_SEGMENTS = [
  'ledgers', 'balances', 'transactions', 'inflight', 'bulk', 'commit', 'void', 'identities', 'hooks', 'api-keys', 'search', 'reindex',
  'admin', 'snapshots', 'metadata', 'filter', 'reference', 'indicator', 'currency', 'refund-transaction', 'at', 'general_ledger_id',
  '%00', '%ZZ', '%', '..', '%2e%2e', '%2F', '', '%F0%9F%98%80', '%ED%A0%80', '@world', ';', ',', '~', '*', '%25', 'x'.repeat(300), 'x'.repeat(9_000),
];
const ODD_QUERIES = [
  'limit=%ZZ', 'limit[]=1', 'limit=1&limit=2', 'offset=-1', 'offset=1e400', 'limit=0x10', 'limit=%20', 'limit=', '%', '&&&=&', '=',
  'from_source=true&from_source=false', 'from_source[]=true', 'from_source=TRUE', 'owner[a]=b', 'owner=%00', 'type=PRE_TRANSACTION&type=POST_TRANSACTION',
  `timestamp=${'9'.repeat(100)}`, 'timestamp=%ED%A0%80', '__proto__[polluted]=1', 'constructor[prototype][polluted]=1', `a=${'b'.repeat(12_000)}`,
  `${Array.from({ length: 1_500 }, (_, index) => `k${index}=v`).join('&')}`,
];
const HEADER_BYTES = [4_000, 12_000, 17_000, 70_000] as const;
const ODD_HEADERS: ReadonlyArray<[string, string]> = [
  ['x-svc-key', ''], ['x-svc-key', ' '], ['x-svc-key', 'k'.repeat(5_000)], ['x-blnk-key', 'nope'], ['authorization', 'Bearer '],
  ['authorization', 'Basic dXNlcjpwYXNz'], ['host', 'evil.example'], ['host', 'localhost'], ['host', '127.0.0.1:1'], ['host', '[::1]'],
  ['origin', 'https://evil.example'], ['x-forwarded-for', '1.2.3.4'], ['x-request-id', 'é\u00ff'], ['accept', 'text/html'],
  ['content-length', '0'], ['expect', '100-continue'], ['expect', 'nope'], ['transfer-encoding', 'chunked'], ['connection', 'content-length'],
  ['connection', 'close, x-svc-key'], ['connection', 'keep-alive, X-Fuzz-Hop'], ['x-fuzz-hop', '1'],
];

/** Draws a route by weight, then its parameters. */
export function targetArbitrary(routes: readonly FuzzRoute[]): fc.Arbitrary<Target> {
  return fc.oneof(...routes.map((route, index) => ({
    weight: route.weight,
    arbitrary: fc.tuple(...paramNames(route).map((name) => paramArbitrary(route.params![name]!)))
      .map((params): Target => ({ route: index, params })),
  })));
}

/** A body for the target's route: from its schema when it has one, else a small JSON value. */
function targetBody(routes: readonly FuzzRoute[], target: fc.Arbitrary<Target>): fc.Arbitrary<[Target, FuzzJson]> {
  return target.chain((chosen) => (bodyArbitrary(routes[chosen.route]!) ?? smallJson).map((body): [Target, FuzzJson] => [chosen, body]));
}

export function rawCaseArbitrary(routes: readonly FuzzRoute[]): fc.Arbitrary<RawCase> {
  const target = targetArbitrary(routes);
  const withBody = targetBody(routes, target);
  const garbageText = fc.oneof(
    fc.string({ unit: fc.constantFrom(...JSONISH_UNITS), maxLength: 40 }),
    fc.string({ unit: 'binary', maxLength: 60 }),
  );
  const headerSets = fc.oneof(
    fc.constantFrom(...HEADER_BYTES).map((bytes): Array<[string, string]> => [['x-fuzz-padding', 'p'.repeat(bytes)]]),
    fc.constantFrom(150, 3_000).map((count): Array<[string, string]> => Array.from({ length: count }, (_, index) => [`x-fuzz-${index}`, 'v'.repeat(90)])),
    fc.subarray([...ODD_HEADERS], { minLength: 1, maxLength: 3 }),
  );
  return fc.oneof(
    { weight: 4, arbitrary: fc.record({ kind: fc.constant('garbage' as const), target, text: garbageText }) },
    { weight: 4, arbitrary: fc.tuple(withBody, fc.nat({ max: 999 })).map(([[chosen, body], keepPerMille]): RawCase => ({ kind: 'truncated', target: chosen, body, keepPerMille })) },
    { weight: 1, arbitrary: withBody.map(([chosen, body]): RawCase => ({ kind: 'bom', target: chosen, body })) },
    { weight: 4, arbitrary: fc.tuple(withBody, fc.constantFrom(...CONTENT_TYPES)).map(([[chosen, body], contentType]): RawCase => ({ kind: 'content-type', target: chosen, body, contentType })) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('bytes' as const), target, bytes: fc.array(fc.nat({ max: 255 }), { maxLength: 64 }) }) },
    { weight: 2, arbitrary: fc.tuple(withBody, fc.constantFrom(...ENCODINGS), fc.boolean()).map(([[chosen, body], encoding, compressed]): RawCase => ({ kind: 'encoding', target: chosen, body, encoding, compressed })) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('inflates-past-limit' as const), target }) },
    { weight: 2, arbitrary: fc.tuple(withBody, fc.constantFrom(...ODD_METHODS), fc.boolean()).map(([[chosen, body], method, sendBody]): RawCase => ({ kind: 'method', target: chosen, method, body: sendBody ? body : null })) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('odd-path' as const), method: fc.constantFrom(...ODD_METHODS), path: fc.array(fc.constantFrom(...PATH_SEGMENTS), { minLength: 1, maxLength: 5 }).map((segments) => `/${segments.join('/')}`) }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('odd-query' as const), target, query: fc.constantFrom(...ODD_QUERIES) }) },
    { weight: 2, arbitrary: fc.tuple(withBody, headerSets, fc.boolean()).map(([[chosen, body], headers, sendBody]): RawCase => ({ kind: 'headers', target: chosen, body: sendBody ? body : null, headers })) },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('smuggle' as const), target, method: fc.constantFrom('GET' as const, 'DELETE' as const),
        trick: fc.constantFrom(...SMUGGLE_TRICKS), inner: fc.constantFrom('whole' as const, 'open' as const),
      }),
    },
  );
}

/** A gzip body that inflates to past the body limit (built once: compressing it takes a moment). */
let inflatingBody: Buffer | undefined;
function bodyInflatingPastLimit(): Buffer {
  inflatingBody ??= gzipSync(Buffer.from(`{"name":"${'a'.repeat(BODY_LIMIT_BYTES * 3)}"}`));
  return inflatingBody;
}

function compress(text: string, encoding: string): Buffer {
  if (encoding.startsWith('gzip')) return gzipSync(text);
  if (encoding === 'deflate') return deflateSync(text);
  if (encoding === 'br') return brotliCompressSync(text);
  return Buffer.from(text);
}

export function rawRequest(rawCase: RawCase, routes: readonly FuzzRoute[], context: SendContext): FuzzRequest {
  if (rawCase.kind === 'odd-path') return { method: rawCase.method, path: rawCase.path, headers: {} };
  const route = routes[rawCase.target.route]!;
  const path = filledPath(route, rawCase.target.params, context);
  const json = { 'content-type': 'application/json' };
  const method = route.method;
  switch (rawCase.kind) {
    case 'garbage':
      return { method, path, headers: json, body: rawCase.text };
    case 'truncated': {
      const text = fuzzJsonText(rawCase.body, context);
      return { method, path, headers: json, body: text.slice(0, Math.floor((text.length * rawCase.keepPerMille) / 1000)) };
    }
    case 'bom':
      return { method, path, headers: json, body: `\ufeff${fuzzJsonText(rawCase.body, context)}` };
    case 'content-type':
      return { method, path, headers: rawCase.contentType === null ? {} : { 'content-type': rawCase.contentType }, body: fuzzJsonText(rawCase.body, context) };
    case 'bytes':
      return { method, path, headers: json, body: Buffer.concat([Buffer.from('{"name":"'), Buffer.from(rawCase.bytes), Buffer.from('"}')]) };
    case 'encoding': {
      const text = fuzzJsonText(rawCase.body, context);
      const body = rawCase.compressed ? compress(text, rawCase.encoding) : Buffer.from(text);
      return { method, path, headers: { ...json, 'content-encoding': rawCase.encoding }, body };
    }
    case 'inflates-past-limit':
      return { method: 'POST', path, headers: { ...json, 'content-encoding': 'gzip' }, body: bodyInflatingPastLimit() };
    case 'method':
      return { method: rawCase.method, path, headers: rawCase.body === null ? {} : json, body: rawCase.body === null ? undefined : fuzzJsonText(rawCase.body, context) };
    case 'odd-query':
      return { method, path: `${path}?${rawCase.query}`, headers: {} };
    case 'headers': {
      const headers: Record<string, string> = rawCase.body === null ? {} : { ...json };
      for (const [name, value] of rawCase.headers) headers[name] = value;
      return { method, path, headers, body: rawCase.body === null ? undefined : fuzzJsonText(rawCase.body, context) };
    }
    case 'smuggle': {
      const body = SMUGGLED[rawCase.inner];
      // With a Transfer-Encoding header the sender lets Node's client frame the body in chunks.
      if (rawCase.trick === 'chunked') return { method: rawCase.method, path, headers: { 'transfer-encoding': 'chunked' }, body };
      if (rawCase.trick === 'connection-transfer-encoding') return { method: rawCase.method, path, headers: { connection: 'keep-alive, Transfer-Encoding', 'transfer-encoding': 'chunked' }, body };
      return { method: rawCase.method, path, headers: { connection: 'keep-alive, Content-Length' }, body };
    }
  }
}
