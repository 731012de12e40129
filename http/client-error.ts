// Requests Node's HTTP parser refuses before Koa sees them (both Content-Length and chunked encoding,
// headers over the size limit, a malformed request line) still get an answer in the error envelope,
// instead of Node's bare `400 Bad Request` with no body: every 4xx a client sees has a code.

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

export function answerClientErrors(server: http.Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // A connection reset or timed out has nobody left to answer.
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const { status, text } = answerFor(error);
    const apiError = new ApiError('GEN_MALFORMED_REQUEST', `the request could not be parsed: ${error.code ?? error.message}`);
    const body = envelopeText(apiError);
    socket.end(
      `HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
