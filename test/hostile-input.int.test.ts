// A sweep of hostile input against the real server: wrong types, nulls, arrays for objects, huge
// strings and numbers, deep nesting, broken encodings, odd paths and queries, and seeded random
// corruption of valid bodies. Whatever arrives, the answer must be below 500, a 4xx must carry the error
// envelope and leave no trace in the log, and afterwards the ledger must still be consistent.

import fs from 'node:fs';
import { gzipSync } from 'node:zlib';
import t, { type Test } from 'tap';
import { checkZeroSum, createBalance, fund, openServer, waitForEmptyQueue } from './helpers/http-fixture.js';
import { seededRandom } from './helpers/seeded-random.js';
import { jsonWithBigInts, startTestServer, tempDataDir, type TestResponse, type TestServer } from './helpers/test-server.js';

/** Values that are wrong for most fields, and a few that are right for some. */
function hostileValues(): Array<[string, unknown]> {
  let deepArray: unknown = 1;
  for (let depth = 0; depth < 60; depth += 1) deepArray = [deepArray];
  let deepObject: unknown = 'leaf';
  for (let depth = 0; depth < 60; depth += 1) deepObject = { nested: deepObject };
  return [
    ['null', null], ['true', true], ['false', false], ['zero', 0], ['minus one', -1], ['fraction', 1.5], ['huge float', 1e308],
    ['tiny float', 5e-324], ['2^64', 2n ** 64n], ['minus 2^64', -(2n ** 64n)], ['empty string', ''], ['space', ' '],
    ['digits string', '12345678901234567890123'], ['signed string', '-5'], ['NUL string', '\u0000'], ['lone surrogate', '\ud800'],
    ['emoji', '😀'], ['megabyte string', 'x'.repeat(1024 * 1024)], ['empty array', []], ['array', [1, 'two']],
    ['array of objects', [{ a: 1 }]], ['empty object', {}], ['object', { a: 1 }], ['proto object', JSON.parse('{"__proto__":{"polluted":true}}')],
    ['deep array', deepArray], ['deep object', deepObject],
  ];
}

interface Route {
  method: string;
  path: string;
  body: Record<string, unknown>;
}

function routes(balanceId: string): Route[] {
  return [
    { method: 'POST', path: '/ledgers', body: { name: 'hostile', meta_data: { a: 1 } } },
    { method: 'PUT', path: '/ledgers/general_ledger_id', body: { name: 'General Ledger', meta_data: { a: 1 } } },
    { method: 'PUT', path: '/ledgers/ldg_missing', body: { name: 'x' } },
    { method: 'POST', path: '/balances', body: { ledger_id: 'general_ledger_id', currency: 'USD', identity_id: 'idt_x', indicator: '', meta_data: { a: 1 } } },
    {
      method: 'POST', path: '/transactions', body: {
        precise_amount: 1, precision: 100, currency: 'USD', source: balanceId, destination: '@hostile-sink', reference: '',
        description: 'd', meta_data: { a: 1 }, allow_overdraft: false, skip_queue: true,
      },
    },
    {
      method: 'POST', path: '/transactions', body: {
        description: 'test', amount: 0.01, precision: 100, currency: 'USD', source: '@world', destination: '@hostile-sink', allow_overdraft: true, skip_queue: true,
      },
    },
  ];
}

/** Sends a request and checks the rules every answer must follow. */
async function probe(t: Test, server: TestServer, method: string, path: string, body: string | undefined, label: string, headers: Record<string, string> = {}): Promise<TestResponse | undefined> {
  await waitForEmptyQueue(server);
  const seqBefore = server.runtime.log.appendedSeq;
  let response: TestResponse;
  try {
    response = await server.request(method, path, body, headers);
  } catch (error) {
    t.fail(`${label}: request failed: ${String(error)}`);
    return undefined;
  }
  if (response.status >= 500 || response.status < 200) {
    t.fail(`${label}: status ${response.status}: ${response.text.slice(0, 300)}`);
    return response;
  }
  if (response.status >= 400) {
    const code = (response.body as { error_detail?: { code?: unknown } } | undefined)?.error_detail?.code;
    if (typeof code !== 'string' || typeof (response.body as { error?: unknown }).error !== 'string') {
      t.fail(`${label}: ${response.status} without the error envelope: ${response.text.slice(0, 300)}`);
    }
    if (server.runtime.log.appendedSeq !== seqBefore) t.fail(`${label}: a ${response.status} left events in the log`);
  }
  return response;
}

t.test('hostile input never yields a 5xx', async (t) => {
  const server = await openServer(t);
  const funded = await createBalance(server);
  await fund(server, funded.balance_id, 1_000_000);
  const statuses = new Map<number, number>();
  const count = (response: TestResponse | undefined): void => {
    if (response) statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
  };

  await t.test('every field of every write route, replaced by each hostile value or left out', async (t) => {
    for (const route of routes(funded.balance_id)) {
      for (const field of Object.keys(route.body)) {
        const without = { ...route.body };
        delete without[field];
        count(await probe(t, server, route.method, route.path, jsonWithBigInts(without), `${route.method} ${route.path} without ${field}`));
        for (const [name, value] of hostileValues()) {
          const body = jsonWithBigInts({ ...route.body, [field]: value });
          count(await probe(t, server, route.method, route.path, body, `${route.method} ${route.path} ${field}=${name}`));
        }
      }
      count(await probe(t, server, route.method, route.path, jsonWithBigInts({ ...route.body, unexpected: { deep: [1, 2] } }), `${route.method} ${route.path} with an unknown field`));
    }
    t.pass('swept');
  });

  await t.test('every field of a split share, replaced by each hostile value', async (t) => {
    // A share's fields are read after the shape check failed too (to name every bad field at once):
    // a number as `distribution` once reached a string method there and answered 500.
    const share = { identifier: funded.balance_id, distribution: '50%' };
    const split = (changed: Record<string, unknown>, side: 'sources' | 'destinations') => ({
      precise_amount: 10, currency: 'USD', skip_queue: true,
      ...(side === 'sources' ? { sources: [changed, { identifier: '@hostile-other', distribution: 'left' }], destination: '@hostile-sink' }
        : { source: funded.balance_id, destinations: [changed, { identifier: '@hostile-sink', distribution: 'left' }] }),
    });
    for (const side of ['sources', 'destinations'] as const) {
      for (const field of ['identifier', 'distribution', 'precise_distribution']) {
        for (const [name, value] of hostileValues()) {
          const body = jsonWithBigInts(split({ ...share, [field]: value }, side));
          count(await probe(t, server, 'POST', '/transactions', body, `split ${side}[0].${field}=${name}`));
        }
      }
      for (const [name, value] of hostileValues()) {
        count(await probe(t, server, 'POST', '/transactions', jsonWithBigInts({ ...split(share, side), [side]: [value] }), `split ${side}=[${name}]`));
      }
    }
    t.pass('swept');
  });

  await t.test('whole bodies of the wrong shape', async (t) => {
    const bodies: Array<[string, string]> = [
      ['null', 'null'], ['true', 'true'], ['number', '42'], ['string', '"ledger"'], ['empty array', '[]'], ['array of the body', '[{"name":"x"}]'],
      ['empty', ''], ['whitespace', ' \n\t '], ['64 levels', `${'['.repeat(64)}${']'.repeat(64)}`], ['65 levels', `${'['.repeat(65)}${']'.repeat(65)}`],
      ['100k levels', `${'['.repeat(100_000)}${']'.repeat(100_000)}`], ['100k unclosed levels', '{"a":'.repeat(100_000)],
      ['deep with a long number', `${'['.repeat(100_000)}12345678901234567890${']'.repeat(100_000)}`],
      ['BOM', '\ufeff{"name":"x"}'], ['NUL byte', '{"name":"x"}\u0000'], ['duplicate keys', '{"name":"a","name":"b"}'],
      ['proto key', '{"name":"x","__proto__":{"polluted":true},"meta_data":{"__proto__":{"polluted":true}}}'],
      ['constructor key', '{"name":"x","meta_data":{"constructor":{"prototype":{"polluted":true}}}}'],
      ['metadata past its size limit', `{"name":"x","ledger_id":"general_ledger_id","currency":"USD","meta_data":{"big":"${'m'.repeat(100_000)}"}}`],
    ];
    // Big bodies cost seconds each; the body reader and parser are shared, so one route sees them.
    const bigBodies: Array<[string, string]> = [
      ['7 MB digit run in a string', `{"name":"${'7'.repeat(7_000_000)}"}`], ['7 MB of dots and digits', `{"name":"${'1.'.repeat(3_500_000)}"}`],
      ['9 MB string', `{"name":"${'n'.repeat(9 * 1024 * 1024)}"}`], ['half a million keys', `{${Array.from({ length: 500_000 }, (_, index) => `"k${index}":0`).join(',')}}`],
      ['a million-digit amount', `{"amount":${'9'.repeat(1_000_000)},"currency":"USD","source":"@a","destination":"@b"}`],
      ['a million-digit precise_amount', `{"precise_amount":${'9'.repeat(1_000_000)},"currency":"USD","source":"@a","destination":"@b"}`],
      ['metadata with a million-digit number', `{"name":"x","meta_data":{"n":${'1'.repeat(1_000_000)}}}`],
      ['a huge exponent', '{"amount":1e999999999,"currency":"USD","source":"@a","destination":"@b"}'],
      ['a tiny exponent', '{"amount":1e-999999999,"currency":"USD","source":"@a","destination":"@b"}'],
      ['a long exponent literal', `{"amount":1e${'9'.repeat(100_000)},"currency":"USD","source":"@a","destination":"@b"}`],
      ['a long fraction', `{"amount":0.${'0'.repeat(1_000_000)}1,"precision":100,"currency":"USD","source":"@a","destination":"@b"}`],
    ];
    for (const path of ['/ledgers', '/balances', '/transactions']) {
      for (const [name, body] of bodies) count(await probe(t, server, 'POST', path, body, `POST ${path} ${name}`));
    }
    for (const [name, body] of bigBodies) {
      const path = name.startsWith('metadata') ? '/ledgers' : '/transactions';
      count(await probe(t, server, 'POST', path, body, `POST ${path} ${name}`));
    }
    for (const [name, body] of bodies.slice(0, 12)) count(await probe(t, server, 'PUT', '/ledgers/general_ledger_id', body, `PUT ${name}`));
    t.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype was not polluted');
    t.equal((Object.prototype as unknown as Record<string, unknown>).polluted, undefined);
    t.pass('swept');
  });

  await t.test('odd headers and encodings', async (t) => {
    const body = '{"name":"encoded"}';
    const variants: Array<[string, Record<string, string>]> = [
      ['charset utf-16', { 'content-type': 'application/json; charset=utf-16' }],
      ['charset latin1', { 'content-type': 'application/json; charset=latin1' }],
      ['unknown charset', { 'content-type': 'application/json; charset=bogus-42' }],
      ['gzip that is not gzip', { 'content-type': 'application/json', 'content-encoding': 'gzip' }],
      ['deflate that is not deflate', { 'content-type': 'application/json', 'content-encoding': 'deflate' }],
      ['unknown encoding', { 'content-type': 'application/json', 'content-encoding': 'bogus' }],
      ['multipart type', { 'content-type': 'multipart/form-data; boundary=x' }],
      ['form type', { 'content-type': 'application/x-www-form-urlencoded' }],
      ['malformed type', { 'content-type': '/;;;' }],
      ['vendor json type', { 'content-type': 'application/vnd.api+json' }],
    ];
    for (const [name, headers] of variants) count(await probe(t, server, 'POST', '/ledgers', body, name, headers));
    const invalidUtf8 = await fetch(`${server.url}/ledgers`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: new Uint8Array([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc3, 0x22, 0x7d]),
    });
    t.ok(invalidUtf8.status < 500, `invalid UTF-8: ${invalidUtf8.status}`);
    await invalidUtf8.arrayBuffer();
    const gzipped = await fetch(`${server.url}/ledgers`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: gzipSync('{"name":"compressed"}'),
    });
    t.equal(gzipped.status, 201, 'a real gzip body is read');
    t.equal(((await gzipped.json()) as { name?: string }).name, 'compressed');
    t.pass('swept');
  });

  await t.test('odd paths and queries on the read routes', async (t) => {
    const paths = [
      '/ledgers/%00', '/ledgers/%ZZ', '/ledgers/..%2F..%2Fetc%2Fpasswd', `/ledgers/${'l'.repeat(8000)}`, '/ledgers/%F0%9F%98%80',
      '/balances/%E0%A4%A', '/balances/%', `/balances/${'b'.repeat(8000)}?from_source=true`, '/balances/x?from_source[]=true',
      '/balances/x?from_source=true&from_source=false', '/balances/indicator/%00/currency/%00', '/balances/indicator/@a/currency/%ZZ',
      '/transactions/%00', `/transactions/${'t'.repeat(8000)}`, '/transactions/reference/%ZZ', `/transactions/reference/${'r'.repeat(8000)}`, '/transactions/reference/',
      '/ledgers?limit=1e3', '/ledgers?limit=%00', '/ledgers?limit[]=1', '/ledgers?limit[a]=1', '/ledgers?offset=99999999999999999999999',
      '/ledgers?offset=1e400', '/ledgers?limit=Infinity', '/ledgers?limit=NaN', '/ledgers?limit=0x10', '/ledgers?limit=%20',
      '/balances?limit=-0', '/balances?offset=9007199254740993', '/transactions?limit=1&offset=1&limit=2', '/transactions?offset=%ZZ',
      '/health?x=%ZZ', '/metrics?name[]=x', '//ledgers', '/ledgers/', '/LEDGERS', '/ledgers/general_ledger_id/',
    ];
    for (const path of paths) count(await probe(t, server, 'GET', path, undefined, `GET ${path.slice(0, 80)}`));
    for (const method of ['HEAD', 'OPTIONS', 'PATCH', 'DELETE', 'PROPFIND']) {
      for (const path of ['/ledgers', '/ledgers/general_ledger_id', '/transactions', '/nope']) {
        const body = method === 'PATCH' || method === 'PROPFIND' ? '{"name":"x"}' : undefined;
        const response = await server.request(method, path, body);
        t.ok(response.status < 500, `${method} ${path}: ${response.status}`);
      }
    }
    t.pass('swept');
  });

  await t.test('seeded random corruption of valid bodies', async (t) => {
    const random = seededRandom(t, 'HOSTILE_INPUT_SEED');
    const alphabet = ['{', '}', '[', ']', '"', ':', ',', '\\', '-', '.', 'e', '0', '9', '1234567890123456789', ' ', 'null', 'true', '\u0000', '\ud800', 'é'];
    for (const route of routes(funded.balance_id)) {
      const valid = jsonWithBigInts(route.body);
      for (let round = 0; round < 60; round += 1) {
        let text = valid;
        for (let edits = 1 + random.int(4); edits > 0; edits -= 1) {
          const at = random.int(text.length + 1);
          const kind = random.int(3);
          if (kind === 0) text = text.slice(0, at) + random.pick(alphabet) + text.slice(at);
          else if (kind === 1) text = text.slice(0, at) + text.slice(at + 1 + random.int(3));
          else text = text.slice(0, at) + random.pick(alphabet) + text.slice(at + 1);
        }
        count(await probe(t, server, route.method, route.path, text, `${route.method} ${route.path} corrupted (seed ${random.seed}, round ${round}): ${JSON.stringify(text.slice(0, 120))}`));
      }
    }
    t.pass('swept');
  });

  t.comment(`statuses: ${[...statuses].sort(([a], [b]) => a - b).map(([status, n]) => `${status}x${n}`).join(' ')}`);
  await waitForEmptyQueue(server);

  await t.test('the ledger is consistent afterwards', async (t) => {
    t.equal((await server.request('GET', '/health')).status, 200, 'still up');
    checkZeroSum(t, server, 'after the sweep');
    for (const balanceId of [funded.balance_id, ...[...server.runtime.engine.state.balances.keys()].slice(-3)]) {
      const live = await server.request('GET', `/balances/${balanceId}`);
      const rebuilt = await server.request('GET', `/balances/${balanceId}?from_source=true`);
      t.same(rebuilt.body.balance, live.body, `${balanceId} equals its rebuild from the log`);
    }
    const transfer = await server.request('POST', '/transactions', { description: 'test', precise_amount: 5, currency: 'USD', source: funded.balance_id, destination: '@after', skip_queue: true });
    t.equal(transfer.status, 201, 'ordinary work continues');
  });
});

t.test('lone surrogates are refused; well-formed text survives a restart unchanged', async (t) => {
  const dataDir = tempDataDir();
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const first = await startTestServer({ dataDir });
  const seqBefore = first.runtime.log.appendedSeq;
  // UTF-8 in the log cannot hold a lone surrogate unchanged, so it is refused rather than altered.
  for (const body of ['{"name":"a\\ud800b"}', '{"name":"x","meta_data":{"k":"\\udc00"}}', '{"name":"x","meta_data":{"\\ud800":1}}']) {
    const refused = await first.request('POST', '/ledgers', body);
    t.equal(refused.status, 400, `refused: ${body}`);
    t.equal(refused.body.error_detail.code, 'GEN_MALFORMED_REQUEST');
  }
  t.equal(first.runtime.log.appendedSeq, seqBefore, 'nothing was written');
  const created = await first.request('POST', '/ledgers', { name: 'a\u{1F600}b é 中', meta_data: { k: '\ud83d\ude00' } });
  await first.stop();
  t.equal(created.status, 201);
  const second = await startTestServer({ dataDir });
  try {
    const read = await second.request('GET', `/ledgers/${created.body.ledger_id}`);
    t.same(read.body, created.body, 'what was acknowledged is what comes back');
  } finally {
    await second.stop();
  }
});
