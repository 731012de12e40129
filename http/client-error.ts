// Requests Node's HTTP parser refuses before Koa sees them (both Content-Length and chunked encoding,
// headers over the size limit, a malformed request line) still get an answer in the error envelope,
// instead of Node's bare `400 Bad Request` with no body: every 4xx a client sees has a code. So does an
// `Expect` header other than `100-continue`, which Node's server answers with a bare 417 of its own
// (`100-continue` it answers with `100 Continue` and passes the request on).
//
// The refusal waits for the answers still owed on the connection. HTTP answers requests in the order
// they came, and the bytes the parser refused came after every request it read before them: a request
// with `Content-Length: 0` followed by a body, or pipelined requests, are read (and carried out) first.
// Written at once, the refusal would take the place of the first request's answer, and a client would
// read a 400 for a write that was done (Node's own default does the same when the answer's headers are
// not written yet).

import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { envelopeText } from './error-envelope.js';
import { ApiError } from './api-error.js';

/** The answer for an error Node's parser raised (its codes start with HPE_). */
function answerFor(error: NodeJS.ErrnoException): { status: number; text: string } {
  const code = error.code ?? '';
  if (code === 'HPE_HEADER_OVERFLOW') {
    return { status: 431, text: 'Request Header Fields Too Large' };
  }
  return { status: 400, text: 'Bad Request' };
}

/** Answers owed on each connection, and what to do once none is. */
interface Owed {
  answers: number;
  then?: () => void;
}

export function answerClientErrors(server: http.Server): void {
  server.on('checkExpectation', (_request: http.IncomingMessage, response: http.ServerResponse) => {
    const body = envelopeText(new ApiError('GEN_EXPECTATION_FAILED', 'the only expectation this server meets is Expect: 100-continue'));
    // The body was not read: the connection ends with the answer.
    response.writeHead(417, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), connection: 'close' });
    response.end(body);
  });
  const owed = new WeakMap<Duplex, Owed>();
  server.on('request', (request: http.IncomingMessage, response: http.ServerResponse) => {
    const socket = request.socket;
    const entry = owed.get(socket) ?? { answers: 0 };
    entry.answers += 1;
    owed.set(socket, entry);
    // 'close' comes once the answer is written, or once the connection is gone: either way it is not owed.
    response.once('close', () => {
      entry.answers -= 1;
      if (entry.answers === 0) entry.then?.();
    });
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // A connection reset or timed out has nobody left to answer.
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const entry = owed.get(socket);
    // The parser has failed for good: bytes arriving meanwhile raise it again, and are not answered.
    if (entry?.then) return;
    const refuse = (): void => {
      if (!socket.writable) {
        socket.destroy();
        return;
      }
      const { status, text } = answerFor(error);
      const apiError = new ApiError('GEN_MALFORMED_REQUEST', `the request could not be parsed: ${error.code ?? error.message}`);
      const body = envelopeText(apiError);
      socket.end(
        `HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    };
    if (entry === undefined || entry.answers === 0) {
      refuse();
      return;
    }
    entry.then = refuse;
  });
}
