// Requests Node's HTTP parser refuses before Koa sees them (both Content-Length and chunked encoding,
// headers over the size limit, a malformed request line), and requests whose headers or body did not
// arrive in time (server-limits.ts), still get an answer in the error envelope, instead of Node's bare
// `400 Bad Request` with no body: every 4xx a client sees has a code. The connection is then closed. So
// does an `Expect` header other than `100-continue`, which Node's server answers with a bare 417 of its
// own (`100-continue` it answers with `100 Continue` and passes the request on).
//
// The refusal waits for the answers still owed on the connection. HTTP answers requests in the order
// they came, and the bytes the parser refused came after every request it read before them: a request
// with `Content-Length: 0` followed by a body, or pipelined requests, are read (and carried out) first.
// Written at once, the refusal would take the place of the first request's answer, and a client would
// read a 400 for a write that was done (Node's own default does the same when the answer's headers are
// not written yet).
//
// Only answers to requests received whole are waited for. A request whose body was still arriving when
// the parser failed or its time ran out will never be received whole, and its handler may be waiting
// for that body: the refusal is its answer. The wait is bounded too (owedAnswersWaitMs): past it the
// connection is closed without a refusal.

import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { envelopeText } from './error-envelope.js';
import { ApiError } from './api-error.js';

/** After the refusal is written the client gets this long to read it before the connection is destroyed. */
const LINGER_MS = 1_000;

/** The answer for an error Node's parser raised (its codes start with HPE_), or a request out of time. */
function answerFor(error: NodeJS.ErrnoException): { status: number; text: string; apiError: ApiError } {
  const code = error.code ?? '';
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return { status: 408, text: 'Request Timeout', apiError: new ApiError('GEN_REQUEST_TIMEOUT', 'the request\'s headers or body did not arrive in time') };
  }
  const apiError = new ApiError('GEN_MALFORMED_REQUEST', `the request could not be parsed: ${error.code ?? error.message}`);
  if (code === 'HPE_HEADER_OVERFLOW') return { status: 431, text: 'Request Header Fields Too Large', apiError };
  return { status: 400, text: 'Bad Request', apiError };
}

interface Exchange {
  request: http.IncomingMessage;
  response: http.ServerResponse;
}

/** The exchanges a connection has not finished answering, and what to do once the awaited ones are. */
interface Connection {
  open: Set<Exchange>;
  /** Nothing more is answered: the parser failed for good, or an answer that closes the connection was given. */
  refusing: boolean;
  settled?: () => void;
}

export function answerClientErrors(server: http.Server, owedAnswersWaitMs: number): void {
  const connections = new WeakMap<Duplex, Connection>();
  const connectionOf = (socket: Duplex): Connection => {
    let connection = connections.get(socket);
    if (!connection) {
      connection = { open: new Set(), refusing: false };
      connections.set(socket, connection);
    }
    return connection;
  };
  server.on('checkExpectation', (request: http.IncomingMessage, response: http.ServerResponse) => {
    const body = envelopeText(new ApiError('GEN_EXPECTATION_FAILED', 'the only expectation this server meets is Expect: 100-continue'));
    // The body was not read: the connection ends with the answer, and nothing after it is answered
    // (bytes that follow, a body sent anyway, would otherwise be refused in a second answer after
    // `Connection: close`, which a client cannot read).
    connectionOf(request.socket).refusing = true;
    response.writeHead(417, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), connection: 'close' });
    response.end(body);
  });
  server.on('request', (request: http.IncomingMessage, response: http.ServerResponse) => {
    const connection = connectionOf(request.socket);
    const exchange: Exchange = { request, response };
    connection.open.add(exchange);
    // 'close' comes once the answer is written, or once the connection is gone: either way it is not owed.
    response.once('close', () => {
      connection.open.delete(exchange);
      connection.settled?.();
    });
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // A connection reset has nobody left to answer.
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const connection = connectionOf(socket);
    // The parser has failed for good: bytes arriving meanwhile raise it again, and are not answered.
    if (connection.refusing) return;
    connection.refusing = true;
    const awaited = (): number => [...connection.open].filter((exchange) => exchange.request.complete).length;
    const deadline = setTimeout(() => socket.destroy(), owedAnswersWaitMs);
    deadline.unref();
    const refuse = (): void => {
      clearTimeout(deadline);
      connection.settled = undefined;
      // An answer already started on this connection cannot be followed by another one.
      const started = [...connection.open].some((exchange) => exchange.response.headersSent);
      if (!socket.writable || started) {
        socket.destroy();
        return;
      }
      const { status, text, apiError } = answerFor(error);
      const body = envelopeText(apiError);
      socket.end(
        `HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
      // Node's HTTP server keeps half-open connections: one whose client never closes its side would stay.
      setTimeout(() => socket.destroy(), LINGER_MS).unref();
    };
    if (awaited() === 0) {
      refuse();
      return;
    }
    connection.settled = () => {
      if (awaited() === 0) refuse();
    };
  });
}
