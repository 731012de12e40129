// The process's cap on request body bytes in flight (server.body_bytes_in_flight_max; http/middleware/json-body.ts,
// http/server/body-bytes-in-flight.ts), in both thread modes, on a test server whose cap is 2 MiB: while one
// request holds 1.9 MB of a body it has not finished sending, another whose declared length cannot fit
// is refused 503 GEN_BODY_BYTES_IN_FLIGHT_EXCEEDED with Retry-After before it is read, a chunked one is
// refused as its bytes come, and a gzip body of a few KB is refused for what it inflates to. The bytes
// are given back however a request ends: once the holder's client goes away, and once a holder that
// finished with a malformed body has been answered, the same bulk of transfers is read and carried out.
// The old code had no such cap: every one of them was read whole. And the setting: 128 MiB by default,
// from 10 MiB (one body of the largest size must fit) to 1 GiB.

import net from 'node:net';
import { gzipSync } from 'node:zlib';
import t from 'tap';
import { ConfigError, loadConfig } from '../server/config.js';
import { BODY_BYTES_IN_FLIGHT_MAX_DEFAULT, BODY_BYTES_IN_FLIGHT_MAX_LIMIT } from '../http/server/body-bytes-in-flight.js';
import { BODY_BYTES_MAX } from '../http/middleware/json-body.js';
import { splitResponses, type RawAnswer } from './helpers/raw-http.js';
import { startTestServer } from './helpers/test-server.js';

const CAP_BYTES = 2 * 1024 * 1024;
const HOLDER_BYTES = 1_900_000;
const WAIT_MS_MAX = 20_000;

interface OpenRequest {
  socket: net.Socket;
  answer: Promise<RawAnswer | undefined>;
  /** Whether the server has answered (or the connection ended) yet. */
  answered(): boolean;
}

/** A request whose head and first bytes are sent now; the rest is the caller's to send (or not). */
function openRequest(port: number, head: string, first: Buffer | string): OpenRequest {
  const socket = net.connect(port, '127.0.0.1');
  // Written now: a socket keeps what is written before it connects, in order, and what the caller writes next follows.
  socket.write(Buffer.concat([Buffer.from(`${head}\r\n\r\n`), Buffer.from(first)]));
  let text = '';
  socket.setEncoding('latin1');
  let answered = false;
  const answer = new Promise<RawAnswer | undefined>((resolve) => {
    const settle = (value: RawAnswer | undefined): void => {
      answered = true;
      resolve(value);
    };
    socket.on('data', (chunk: string) => {
      text += chunk;
      const [first] = splitResponses(text);
      if (first) settle(first);
    });
    socket.on('close', () => settle(splitResponses(text)[0]));
    socket.on('error', () => settle(undefined));
  });
  return { socket, answer, answered: () => answered };
}

function headOf(port: number, path: string, headers: Record<string, string | number>): string {
  return [`POST ${path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)].join('\r\n');
}

let references = 0;
/** A bulk of transfers about `bytes` long, valid, with references of its own. */
function bulkOf(bytes: number): string {
  const transfers: string[] = [];
  let length = 40;
  while (length < bytes) {
    references += 1;
    const transfer = JSON.stringify({
      precise_amount: 1, currency: 'USD', source: '@world', destination: '@cap', allow_overdraft: true, reference: `cap-${process.pid}-${references}`, description: 'x'.repeat(100),
    });
    transfers.push(transfer);
    length += transfer.length + 1;
  }
  return JSON.stringify({ skip_queue: true, transactions: transfers.map((text) => JSON.parse(text)) });
}

async function eventually<T>(what: string, attempt: () => Promise<T | undefined>): Promise<T> {
  const deadline = performance.now() + WAIT_MS_MAX;
  for (;;) {
    const value = await attempt();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`${what}: not within ${WAIT_MS_MAX} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

for (const workers of [0, 1]) {
  t.test(`body bytes in flight are capped per process, and given back (workers ${workers})`, async (t) => {
    const server = await startTestServer({ index: false }, { workers, bodyBytesInFlightMax: CAP_BYTES });
    t.teardown(() => server.stop());
    const port = Number(new URL(server.url).port);
    const json = { 'Content-Type': 'application/json' };

    /** The bulk sent whole: 201 when its bytes fit, 503 when they do not. */
    const sendBulk = async (): Promise<RawAnswer | undefined> => {
      const body = bulkOf(300_000);
      const { socket, answer } = openRequest(port, headOf(port, '/transactions/bulk', { ...json, 'Content-Length': Buffer.byteLength(body) }), body);
      const answered = await answer;
      socket.destroy();
      return answered;
    };
    const first = await sendBulk();
    t.equal(first?.status, 201, 'with nothing else in flight the bulk is read and carried out');

    // A holder: 1.9 MB of a body declared 1.9 MB, all but its last byte sent. It is itself refused if a
    // bulk sent to find out whether it holds its bytes yet is read first: then it is sent again.
    const openHolder = (): OpenRequest => openRequest(port, headOf(port, '/transactions/bulk', { ...json, 'Content-Length': HOLDER_BYTES }), ' '.repeat(HOLDER_BYTES - 1));
    const heldBy = async (open: () => OpenRequest): Promise<{ holder: OpenRequest; refused: RawAnswer }> => {
      let holder = open();
      const refused = await eventually('a refusal while the holder\'s bytes are in flight', async () => {
        if (holder.answered()) {
          holder.socket.destroy();
          holder = open();
          return undefined;
        }
        const answer = await sendBulk();
        return answer?.status === 503 ? answer : undefined;
      });
      return { holder, refused };
    };
    const { holder, refused } = await heldBy(openHolder);
    t.match(JSON.parse(refused.body), { error_detail: { code: 'GEN_BODY_BYTES_IN_FLIGHT_EXCEEDED' } }, 'a body whose declared length cannot fit: 503 GEN_BODY_BYTES_IN_FLIGHT_EXCEEDED');
    t.equal(refused.headers['retry-after'], '1', 'with Retry-After');

    const chunked = openRequest(port, headOf(port, '/transactions/bulk', { ...json, 'Transfer-Encoding': 'chunked' }), '');
    for (let piece = 0; piece < 8; piece += 1) chunked.socket.write(`10000\r\n${' '.repeat(0x10000)}\r\n`);
    const chunkedAnswer = await chunked.answer;
    chunked.socket.destroy();
    t.equal(chunkedAnswer?.status, 503, 'a chunked body is refused as its bytes come past the cap');
    t.match(JSON.parse(chunkedAnswer?.body ?? '{}'), { error_detail: { code: 'GEN_BODY_BYTES_IN_FLIGHT_EXCEEDED' } });

    const compressed = gzipSync(' '.repeat(1024 * 1024));
    t.ok(compressed.length < 8 * 1024, `a gzip body of ${compressed.length} bytes`);
    const inflating = openRequest(port, headOf(port, '/transactions/bulk', { ...json, 'Content-Encoding': 'gzip', 'Content-Length': compressed.length }), compressed);
    const inflatingAnswer = await inflating.answer;
    inflating.socket.destroy();
    t.equal(inflatingAnswer?.status, 503, 'is refused for the 1 MiB it inflates to');

    // The holder's client goes away: its bytes are given back.
    holder.socket.destroy();
    const afterAbort = await eventually('the bulk read once the holder went away', async () => {
      const answer = await sendBulk();
      return answer?.status === 201 ? answer : undefined;
    });
    t.equal(afterAbort.status, 201, 'once the holder\'s client went away, the bulk is read and carried out');

    // A holder that finishes with a body that is not JSON is answered 400, and gives its bytes back.
    const { holder: malformed } = await heldBy(openHolder);
    malformed.socket.write('x');
    const malformedAnswer = await malformed.answer;
    malformed.socket.destroy();
    t.equal(malformedAnswer?.status, 400, 'the second holder, malformed, is answered 400');
    const afterError = await sendBulk();
    t.equal(afterError?.status, 201, 'and its bytes were given back with its answer');
  });
}

t.test('server.body_bytes_in_flight_max: 128 MiB by default, FOLIO_BODY_BYTES_IN_FLIGHT_MAX from 10 MiB to 1 GiB', async (t) => {
  t.equal(loadConfig(undefined, {}).server.body_bytes_in_flight_max, BODY_BYTES_IN_FLIGHT_MAX_DEFAULT);
  t.equal(BODY_BYTES_IN_FLIGHT_MAX_DEFAULT, 128 * 1024 * 1024);
  t.equal(loadConfig(undefined, { FOLIO_BODY_BYTES_IN_FLIGHT_MAX: String(BODY_BYTES_MAX) }).server.body_bytes_in_flight_max, BODY_BYTES_MAX, 'one body of the largest size');
  t.equal(loadConfig(undefined, { FOLIO_BODY_BYTES_IN_FLIGHT_MAX: String(BODY_BYTES_IN_FLIGHT_MAX_LIMIT) }).server.body_bytes_in_flight_max, BODY_BYTES_IN_FLIGHT_MAX_LIMIT, '1 GiB');
  for (const text of [String(BODY_BYTES_MAX - 1), String(BODY_BYTES_IN_FLIGHT_MAX_LIMIT + 1), '64MiB', '1e8', '-1', ' 20000000']) {
    t.throws(() => loadConfig(undefined, { FOLIO_BODY_BYTES_IN_FLIGHT_MAX: text }), ConfigError, `${JSON.stringify(text)} is refused`);
  }
});
