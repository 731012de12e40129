// What a web page in the user's browser could do to a local Folio with no key (the default): post a
// body the browser sends without asking first (text/plain, a form, multipart, or no type at all), or
// reach it through a DNS name rebound to 127.0.0.1. Both are refused, and write nothing. Also the
// master key's minimum length and the warning for a server listening beyond loopback without a key.

import http from 'node:http';
import t from 'tap';
import { createApp, MASTER_KEY_LENGTH_MIN } from '../http/app.js';
import { exposureWarning } from '../server/serve-parts.js';
import { loadConfig, ConfigError } from '../server/config.js';
import { startTestServer, type TestServer } from './helpers/test-server.js';

interface RawResponse {
  status: number;
  body: any;
}

/** A request exactly as given: no content type or host is added for us. */
function raw(server: TestServer, method: string, path: string, headers: Record<string, string>, body?: string): Promise<RawResponse> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const request = http.request({ host: url.hostname, port: url.port, method, path, headers, setHost: !('host' in headers) }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text === '' ? undefined : JSON.parse(text) }));
    });
    request.on('error', reject);
    request.end(body);
  });
}

t.test('bodies that are not declared JSON are 415 and write nothing', async (t) => {
  const server = await startTestServer();
  t.teardown(() => server.stop());
  const transfer = JSON.stringify({ description: 'test', precise_amount: 1, currency: 'USD', source: '@victim', destination: '@thief', allow_overdraft: true, skip_queue: true });
  const hook = JSON.stringify({ name: 'h', url: 'http://127.0.0.1:9/x', type: 'POST_TRANSACTION', active: true, timeout: 1, retry_count: 0 });
  const seq = server.runtime.log.appendedSeq;
  for (const [label, type] of [
    ['text/plain', 'text/plain'], ['text/plain with charset', 'text/plain;charset=UTF-8'], ['a form', 'application/x-www-form-urlencoded'],
    ['multipart', 'multipart/form-data; boundary=x'], ['no type', undefined],
  ] as const) {
    for (const [path, body] of [['/transactions', transfer], ['/hooks', hook], ['/refund-transaction/txn_x', '{}']] as const) {
      const headers: Record<string, string> = { 'content-length': String(Buffer.byteLength(body)) };
      if (type !== undefined) headers['content-type'] = type;
      const response = await raw(server, 'POST', path, headers, body);
      t.equal(response.status, 415, `${label} to ${path}`);
      t.equal(response.body?.error_detail?.code, 'GEN_UNSUPPORTED_MEDIA_TYPE');
    }
  }
  t.equal(server.runtime.log.appendedSeq, seq, 'nothing was written');
  for (const type of ['application/json', 'application/json; charset=utf-8', 'application/vnd.folio+json']) {
    const response = await raw(server, 'POST', '/ledgers', { 'content-type': type }, '{"name":"declared"}');
    t.equal(response.status, 201, `${type} is JSON`);
  }
});

t.test('a loopback server answers only loopback Host names (DNS rebinding)', async (t) => {
  const server = await startTestServer();
  t.teardown(() => server.stop());
  const port = new URL(server.url).port;
  const seq = server.runtime.log.appendedSeq;
  for (const host of [`rebind.attacker.example:${port}`, 'attacker.example', `10.0.0.1:${port}`, `[2001:db8::1]:${port}`, 'localhost.attacker.example']) {
    const response = await raw(server, 'POST', '/ledgers', { host, 'content-type': 'application/json' }, '{"name":"rebound"}');
    t.equal(response.status, 403, host);
    t.equal(response.body?.error_detail?.code, 'GEN_FORBIDDEN_HOST');
    t.equal((await raw(server, 'GET', '/ledgers', { host })).status, 403, `GET with ${host}`);
  }
  t.equal(server.runtime.log.appendedSeq, seq, 'nothing was written');
  for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, 'localhost', `[::1]:${port}`, `app.localhost:${port}`, `127.1.2.3:${port}`, `LOCALHOST:${port}`]) {
    t.equal((await raw(server, 'GET', '/ledgers', { host })).status, 200, host);
  }
});

t.test('a server listening beyond loopback does not check Host, and warns without a key', async (t) => {
  t.equal(exposureWarning('127.0.0.1', ''), undefined, 'loopback without a key: no warning');
  t.equal(exposureWarning('0.0.0.0', 'k'.repeat(MASTER_KEY_LENGTH_MIN)), undefined, 'beyond loopback with a key: no warning');
  t.match(exposureWarning('0.0.0.0', ''), /no secret key/, 'beyond loopback without a key: a warning');
  t.match(exposureWarning('192.168.1.10', ''), /no secret key/);
});

t.test('the master key has a minimum length', async (t) => {
  const short = 'k'.repeat(MASTER_KEY_LENGTH_MIN - 1);
  t.throws(() => loadConfig(undefined, { FOLIO_SECRET_KEY: short }), ConfigError, 'from the environment');
  t.throws(() => createApp({ secretKey: short } as never), /at least 32 characters/, 'and in the app itself');
  t.doesNotThrow(() => loadConfig(undefined, { FOLIO_SECRET_KEY: 'k'.repeat(MASTER_KEY_LENGTH_MIN) }));
  t.doesNotThrow(() => loadConfig(undefined, { FOLIO_SECRET_KEY: '' }), 'empty leaves authentication off');
});
