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
// Only answers to requests received whole, or already written, are waited for. A request whose body was
// still arriving when the parser failed or its time ran out will never be received whole, and its handler
// may be waiting for that body: the refusal is its answer. Unless the route answered it already, before
// reading its body (a 401, say): then nothing more is written, since a request gets one answer, and the
// connection is closed once that answer is out. The wait is bounded: for bytes the parser refused, by
// owedAnswersWaitMs; for a request out of time, by OWED_ANSWERS_AFTER_DEADLINE_MS, so the connection
// closes at the request's deadline whatever the routes before it are doing. Past the wait the connection
// is closed without a refusal. Once a connection is refusing, no request that still reaches the app on it
// is carried out (`takesRequests`).

import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { envelopeText } from '../middleware/error-envelope.js';
import { ApiError } from '../api-error.js';

/** After the refusal is written the client gets this long to read it before the connection is destroyed. */
export const LINGER_MS = 1_000;
/** Past a request's deadline, answers owed to the requests before it get this long to be written. */
const OWED_ANSWERS_AFTER_DEADLINE_MS = 1_000;

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

/** A whole answer in the error envelope, as bytes for a socket no response object is attached to; it closes the connection. */
export function rawErrorAnswer(status: number, text: string, apiError: ApiError, headers: Record<string, string> = {}): string {
  const body = envelopeText(apiError);
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  return `HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}Connection: close\r\n\r\n${body}`;
}

interface Exchange {
  request: http.IncomingMessage;
  response: http.ServerResponse;
}

/** The exchanges a connection has not finished answering, and what to do once the awaited ones are. */
interface Connection {
  open: Set<Exchange>;
  /** The last request the parser read the headers of: the one whose body is arriving, if any is. */
  latest?: Exchange;
  /** Nothing more is answered: the parser failed for good, or an answer that closes the connection was given. */
  refusing: boolean;
  settled?: () => void;
}

export interface ClientErrorAnswers {
  /** Counts the exchange as owed on its connection; false when the connection is refusing and it must not be carried out. */
  takesRequests(request: http.IncomingMessage, response: http.ServerResponse): boolean;
}

export function answerClientErrors(server: http.Server, owedAnswersWaitMs: number): ClientErrorAnswers {
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
    // The request cut off, when the route answered it before its body was in.
    const latest = connection.latest;
    const answered = latest !== undefined && !latest.request.complete && latest.response.writableEnded ? latest : undefined;
    const owed = (exchange: Exchange): boolean => exchange.request.complete || exchange.response.writableEnded;
    const awaited = (): number => [...connection.open].filter(owed).length;
    const waitMs = error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? Math.min(owedAnswersWaitMs, OWED_ANSWERS_AFTER_DEADLINE_MS) : owedAnswersWaitMs;
    const deadline = setTimeout(() => socket.destroy(), waitMs);
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
      if (answered) socket.end();
      else {
        const { status, text, apiError } = answerFor(error);
        socket.end(rawErrorAnswer(status, text, apiError));
      }
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
  return {
    takesRequests(request, response) {
      const connection = connectionOf(request.socket);
      if (connection.refusing) {
        response.destroy();
        return false;
      }
      const exchange: Exchange = { request, response };
      connection.open.add(exchange);
      connection.latest = exchange;
      // 'close' comes once the answer is written, or once the connection is gone: either way it is not owed.
      response.once('close', () => {
        connection.open.delete(exchange);
        connection.settled?.();
      });
      return true;
    },
  };
}
