// Sending one fuzz request over node:http, which (unlike fetch) sends a body with GET and DELETE, any
// method name, and headers as given. Every request is bounded by a timeout: a server that does not
// answer in time is a hang, reported as such. Requests that could leave a connection in a strange state
// (raw cases: odd framing headers, truncated bodies) go on a connection of their own.

import http from 'node:http';
import type { RouteVia } from './route-table.js';

export interface FuzzRequest {
  method: string;
  /** Path and query, already percent-encoded. */
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** Send the body in two chunks without a Content-Length (chunked transfer encoding). */
  chunked?: boolean;
  /** Use a new connection, closed after the answer. */
  ownConnection?: boolean;
}

/**
 * `resent`: the answer is to a second sending of the request, after the first met a kept-alive connection
 * reset before any answer (see createSender). The first may still have reached the server and done its
 * work, so a refusal of the second (a delete answered 404) does not say the first did nothing.
 */
export type FuzzAnswer =
  | { kind: 'answer'; status: number; headers: http.IncomingHttpHeaders; text: string; ms: number; resent?: boolean }
  | { kind: 'no-answer'; error: string; timedOut: boolean; ms: number; staleConnection?: boolean; resent?: boolean };

/**
 * Answer bytes kept by default; the rest is read and dropped. Whole pages must fit: 100 records with
 * 64 KiB of metadata each are over 6 MB.
 */
const ANSWER_BYTES_KEPT_DEFAULT = 64 * 1024 * 1024;

export interface Sender {
  send(request: FuzzRequest): Promise<FuzzAnswer>;
  close(): void;
}

export interface SenderOptions {
  timeoutMs: number;
  connections: number;
  /** Answer bytes kept (the checks after a run read whole pages of records with large metadata). */
  answerBytesKept?: number;
}

export function createSender(baseUrl: string, options: SenderOptions): Sender {
  const url = new URL(baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.connections });
  const kept = options.answerBytesKept ?? ANSWER_BYTES_KEPT_DEFAULT;
  return {
    send: async (request) => {
      const answer = await sendOne(url, request.ownConnection ? false : agent, request, options.timeoutMs, kept);
      // A kept-alive connection reset before any answer, most often one the server closed as idle just as
      // this request went out (Node's documented race, see request.reusedSocket). Sent again on a new
      // connection, and marked as resent: a reset is no proof that the first sending did nothing (a long
      // run met a delete carried out whose second sending was answered 404).
      if (answer.kind === 'no-answer' && answer.staleConnection) return { ...(await sendOne(url, false, request, options.timeoutMs, kept)), resent: true };
      return answer;
    },
    close: () => agent.destroy(),
  };
}

function sendOne(url: URL, agent: http.Agent | false, request: FuzzRequest, timeoutMs: number, bytesKept: number): Promise<FuzzAnswer> {
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    let settled = false;
    const finish = (answer: FuzzAnswer): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(answer);
    };
    const headers: Record<string, string | number> = { ...request.headers };
    // A request that names its own framing (a Content-Length, or a Transfer-Encoding Node then encodes) keeps it.
    const framed = hasHeader(headers, 'content-length') || hasHeader(headers, 'transfer-encoding');
    if (request.body !== undefined && !request.chunked && !framed) headers['content-length'] = Buffer.byteLength(request.body);
    let outgoing: http.ClientRequest;
    try {
      outgoing = http.request({ host: url.hostname, port: url.port, method: request.method, path: request.path, headers, agent });
    } catch (error) {
      // The client refused to send it (a character HTTP cannot carry): not the server's doing.
      finish({ kind: 'no-answer', error: `not sendable: ${(error as Error).message}`, timedOut: false, ms: 0 });
      return;
    }
    const timer = setTimeout(() => {
      outgoing.destroy();
      finish({ kind: 'no-answer', error: `no answer within ${timeoutMs} ms`, timedOut: true, ms: elapsed() });
    }, timeoutMs);
    let answered = false;
    outgoing.on('error', (error) => {
      const code = (error as NodeJS.ErrnoException).code;
      const staleConnection = outgoing.reusedSocket && !answered && code === 'ECONNRESET';
      finish({ kind: 'no-answer', error: `${code ?? ''} ${error.message}`.trim(), timedOut: false, ms: elapsed(), staleConnection });
    });
    outgoing.on('response', (response) => {
      answered = true;
      const chunks: Buffer[] = [];
      let kept = 0;
      response.on('data', (chunk: Buffer) => {
        if (kept < bytesKept) chunks.push(chunk);
        kept += chunk.length;
      });
      response.on('end', () => finish({ kind: 'answer', status: response.statusCode ?? 0, headers: response.headers, text: Buffer.concat(chunks).toString('utf8'), ms: elapsed() }));
      response.on('error', (error) => finish({ kind: 'no-answer', error: `answer cut off: ${error.message}`, timedOut: false, ms: elapsed() }));
    });
    writeBody(outgoing, request);
  });
}

function writeBody(outgoing: http.ClientRequest, request: FuzzRequest): void {
  const { body } = request;
  if (body === undefined) {
    outgoing.end();
    return;
  }
  if (request.chunked && body.length > 1) {
    // Split the bytes, not the text: a cut inside a surrogate pair would change what is sent.
    const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body);
    const middle = Math.floor(bytes.length / 2);
    outgoing.write(bytes.subarray(0, middle));
    outgoing.end(bytes.subarray(middle));
    return;
  }
  outgoing.end(body);
}

function hasHeader(headers: Record<string, unknown>, name: string): boolean {
  return Object.keys(headers).some((key) => key.toLowerCase() === name);
}

/** The request as it goes out by `via`: prefixed path, the extra query parameter, headers the request does not set itself. */
export function applyVia(request: FuzzRequest, via: RouteVia | undefined): FuzzRequest {
  if (!via) return request;
  let path = via.prefix + request.path;
  if (via.query) path += `${path.includes('?') ? '&' : '?'}${via.query}`;
  const headers = { ...request.headers };
  const present = new Set(Object.keys(headers).map((name) => name.toLowerCase()));
  for (const [name, value] of Object.entries(via.headers ?? {})) if (!present.has(name.toLowerCase())) headers[name] = value;
  return { ...request, path, headers };
}

/** A sender whose requests all go by `via` (the checks after a run reach a core through the proxy this way). */
export function viaSender(sender: Sender, via: RouteVia): Sender {
  return { send: (request) => sender.send(applyVia(request, via)), close: () => sender.close() };
}
