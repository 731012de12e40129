// Raw HTTP/1.1 over a net.Socket, for requests no client library would send (smuggling attempts, odd
// framing, pipelines): `exchange` writes the bytes given and collects everything the server sends until
// it closes the connection (or the time is up), and `splitResponses` cuts what came back into answers by
// their own framing (Content-Length or chunked), so a test can see how many answers a connection got
// and what each one said.

import net from 'node:net';

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends `bytes` on a new connection (from `localAddress` when given: all of 127.0.0.0/8 reaches a server on
 * 127.0.0.1) and resolves with all the server sent, once it closes or after `timeoutMs`, and how long that took.
 */
export function exchange(port: number, bytes: string | Buffer, timeoutMs = 10_000, localAddress?: string): Promise<{ text: string; closed: boolean; elapsedMs: number }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = net.connect({ port, host: '127.0.0.1', localAddress }, () => socket.write(bytes));
    let text = '';
    let settled = false;
    const finish = (closed: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ text, closed, elapsedMs: Date.now() - started });
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
  });
}

/** The answers in `text`, in order; a trailing incomplete one is left out. */
export function splitResponses(text: string): RawAnswer[] {
  const answers: RawAnswer[] = [];
  let at = 0;
  while (at < text.length) {
    const headEnd = text.indexOf('\r\n\r\n', at);
    if (headEnd < 0) break;
    const [statusLine, ...lines] = text.slice(at, headEnd).split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1] ?? 0);
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    let bodyAt = headEnd + 4;
    if (status >= 100 && status < 200) {
      at = bodyAt;
      continue;
    }
    let body = '';
    if (headers['transfer-encoding']?.toLowerCase() === 'chunked') {
      for (;;) {
        const sizeEnd = text.indexOf('\r\n', bodyAt);
        if (sizeEnd < 0) return answers;
        const size = Number.parseInt(text.slice(bodyAt, sizeEnd), 16);
        if (Number.isNaN(size)) return answers;
        bodyAt = sizeEnd + 2;
        if (size === 0) {
          bodyAt = text.indexOf('\r\n', bodyAt) + 2;
          break;
        }
        body += text.slice(bodyAt, bodyAt + size);
        bodyAt += size + 2;
      }
    } else {
      const length = Number(headers['content-length'] ?? 0);
      if (bodyAt + length > text.length) break;
      body = text.slice(bodyAt, bodyAt + length);
      bodyAt += length;
    }
    answers.push({ status, headers, body });
    at = bodyAt;
  }
  return answers;
}

/** The error code of an answer in the error envelope, if it is one. */
export function envelopeCodeOf(answer: RawAnswer | undefined): string | undefined {
  try {
    return (JSON.parse(answer?.body ?? '') as { error_detail?: { code?: string } }).error_detail?.code;
  } catch {
    return undefined;
  }
}

/**
 * A connection from `localAddress` that made one request (answered 200) and then sent part of the next
 * request's headers: a slow client the server has certainly taken on, which holds its place until it is
 * destroyed or the header deadline cuts it off. Undefined when the first request was not answered 200.
 */
export function slowConnection(port: number, localAddress = '127.0.0.1'): Promise<net.Socket | undefined> {
  return new Promise((resolve) => {
    const host = `Host: 127.0.0.1:${port}`;
    const socket = net.connect({ port, host: '127.0.0.1', localAddress }, () => socket.write(`GET /health HTTP/1.1\r\n${host}\r\n\r\n`));
    socket.setEncoding('latin1');
    socket.once('data', (chunk: string) => {
      if (!chunk.startsWith('HTTP/1.1 200')) {
        socket.destroy();
        resolve(undefined);
        return;
      }
      socket.write(`GET /health HTTP/1.1\r\n${host}\r\nX-Slow: `);
      resolve(socket);
    });
    socket.on('error', () => resolve(undefined));
    socket.on('close', () => resolve(undefined));
  });
}
