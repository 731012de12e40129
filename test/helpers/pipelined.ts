// Several HTTP/1.1 requests written to one connection in a single write, answers read back in order.
// The server then parses them all from one chunk and starts their handlers before any log flush can
// complete, so the second of two actions on the same hold reliably finds the first one still queued.
// Fetch cannot do this (it never pipelines), hence a raw socket.

import net from 'node:net';
import { parseJsonExact } from '../../http/schemas/lossless-json.js';
import { jsonWithBigInts } from './test-server.js';

export interface PipelinedRequest {
  method: string;
  path: string;
  body?: unknown;
}

export interface PipelinedResponse {
  status: number;
  text: string;
  body: any;
}

export async function pipelined(baseUrl: string, requests: PipelinedRequest[]): Promise<PipelinedResponse[]> {
  const { hostname, port } = new URL(baseUrl);
  const payload = requests.map((request) => {
    const body = request.body === undefined ? '' : jsonWithBigInts(request.body);
    const headers = [`${request.method} ${request.path} HTTP/1.1`, `Host: ${hostname}:${port}`, 'Connection: keep-alive'];
    if (body !== '') headers.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`);
    return `${headers.join('\r\n')}\r\n\r\n${body}`;
  }).join('');
  const socket = net.connect({ host: hostname, port: Number(port) });
  return new Promise<PipelinedResponse[]>((resolve, reject) => {
    let buffer = Buffer.alloc(0);
    const responses: PipelinedResponse[] = [];
    const fail = (error: Error): void => {
      socket.destroy();
      reject(error);
    };
    socket.setTimeout(20_000, () => fail(new Error('pipelined requests timed out')));
    socket.on('error', fail);
    socket.on('connect', () => socket.write(payload));
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        const headerEnd = buffer.indexOf('\r\n\r\n');
        if (headerEnd < 0) return;
        const head = buffer.subarray(0, headerEnd).toString('latin1');
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
        const length = /\r\ncontent-length: *(\d+)/i.exec(head);
        if (!length) return fail(new Error(`response without content-length:\n${head}`));
        const end = headerEnd + 4 + Number(length[1]);
        if (buffer.length < end) return;
        const text = buffer.subarray(headerEnd + 4, end).toString('utf8');
        buffer = buffer.subarray(end);
        responses.push({ status, text, body: text === '' ? undefined : parseJsonExact(text) });
        if (responses.length === requests.length) {
          socket.end();
          resolve(responses);
          return;
        }
      }
    });
  });
}
