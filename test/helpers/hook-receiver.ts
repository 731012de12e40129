// A real HTTP receiver for hook deliveries on 127.0.0.1. It records every request (headers, raw body,
// parsed body) and answers as the test says: a status, optionally after a delay, chosen per request so
// a test can fail the first attempts and accept the next. It can be stopped and started again on the
// same port to play a receiver that is down for a while.

import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedDelivery {
  headers: http.IncomingHttpHeaders;
  text: string;
  body: { event: string; hook_type: string; data: Record<string, unknown> };
  path: string;
  /** How many requests with this X-Event-ID had arrived before this one. */
  attempt: number;
}

export interface Answer {
  status: number;
  delayMs?: number;
}

export type Responder = (delivery: ReceivedDelivery) => Answer;

export class HookReceiver {
  readonly received: ReceivedDelivery[] = [];
  private server: http.Server | undefined;
  private readonly sockets = new Set<import('node:net').Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private waiters: Array<() => void> = [];
  port = 0;

  constructor(public respond: Responder = () => ({ status: 200 })) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(port = this.port): Promise<void> {
    const server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const eventId = String(request.headers['x-event-id']);
        const delivery: ReceivedDelivery = {
          headers: request.headers,
          text,
          body: JSON.parse(text),
          path: request.url ?? '/',
          attempt: this.received.filter((earlier) => earlier.headers['x-event-id'] === eventId).length,
        };
        this.received.push(delivery);
        for (const wake of this.waiters.splice(0)) wake();
        const answer = this.respond(delivery);
        const send = (): void => {
          if (!response.destroyed) response.writeHead(answer.status).end('{}');
        };
        if (answer.delayMs) {
          const timer = setTimeout(() => {
            this.timers.delete(timer);
            send();
          }, answer.delayMs);
          this.timers.add(timer);
        } else send();
      });
    });
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Distinct X-Event-IDs received. */
  eventIds(): Set<string> {
    return new Set(this.received.map((delivery) => String(delivery.headers['x-event-id'])));
  }

  /** Resolves once `predicate` holds over what was received; rejects after `timeoutMs`. */
  async waitFor(predicate: (received: ReceivedDelivery[]) => boolean, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.received)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`receiver: condition not met after ${timeoutMs} ms (${this.received.length} received)`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 200));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }
}

/** A free port on 127.0.0.1 with nothing listening on it (for a receiver that is down). */
export async function freePort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** How a receiver checks a delivery: HMAC-SHA256 over `<timestamp>.<body>` with the shared secret. */
export function signatureValid(secretKey: string, delivery: ReceivedDelivery): boolean {
  const timestamp = delivery.headers['x-folio-timestamp'];
  const signature = delivery.headers['x-folio-signature'];
  if (typeof timestamp !== 'string' || typeof signature !== 'string') return false;
  const expected = createHmac('sha256', secretKey).update(`${timestamp}.${delivery.text}`).digest();
  const given = Buffer.from(signature, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Replays older than this are refused, as Blnk's docs advise a receiver to (±5 minutes). */
const BLNK_TIMESTAMP_WINDOW_SECONDS = 300;

/**
 * How Blnk's docs tell a receiver to check a delivery (webhooks/overview, "Webhook security"): both
 * X-Blnk-Signature and X-Blnk-Timestamp present, the raw body's bytes, HMAC-SHA256 of
 * `<timestamp>.<raw body>` with the receiver's secret in hex, compared in constant time, and the
 * timestamp within a few minutes of now.
 */
export function blnkSignatureValid(secret: string, delivery: ReceivedDelivery, nowMs = Date.now()): boolean {
  const signature = delivery.headers['x-blnk-signature'];
  const timestamp = delivery.headers['x-blnk-timestamp'];
  if (typeof signature !== 'string' || typeof timestamp !== 'string') return false;
  if (!/^\d+$/.test(timestamp) || Math.abs(nowMs / 1000 - Number(timestamp)) > BLNK_TIMESTAMP_WINDOW_SECONDS) return false;
  const expected = createHmac('sha256', secret).update(`${timestamp}.${delivery.text}`).digest('hex');
  return signature.length === expected.length && timingSafeEqual(Buffer.from(signature), Buffer.from(expected));
}
