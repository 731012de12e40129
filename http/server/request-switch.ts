// The HTTP server's one request listener when the ledger behind it can change while the server keeps its
// port (a replicated node that rejoins its group closes its ledger and opens it again): requests go to
// the current app, or, while there is none, are refused in the error envelope with the error given
// (503 REPL_REJOINING, with Retry-After). It counts the requests under way, so the owner can wait for
// them to finish before it closes the ledger they are using. An HTTP worker of a replicated node
// (http-worker.ts) switches the same way on what the engine's thread tells it.

import type http from 'node:http';
import type { FolioApp } from '../app.js';
import { fromNodeRefusal } from '../api-error.js';
import type { NodeRefusal } from '../ports/node-refusal.js';
import { envelopeText } from '../middleware/error-envelope.js';

export class RequestSwitch {
  private handler: http.RequestListener;
  private app: FolioApp | undefined;
  private inFlight = 0;
  private drained: Array<() => void> = [];

  constructor(refusal: NodeRefusal) {
    this.handler = refusingWith(refusal);
  }

  readonly listener: http.RequestListener = (request, response) => {
    this.inFlight += 1;
    response.once('close', () => {
      this.inFlight -= 1;
      if (this.inFlight === 0) for (const done of this.drained.splice(0)) done();
    });
    this.handler(request, response);
  };

  /** The app now serving, if any. */
  get current(): FolioApp | undefined {
    return this.app;
  }

  serve(app: FolioApp): void {
    this.app = app;
    this.handler = app.koa.callback();
  }

  /** Refuses every new request with `refusal` from now on. */
  refuse(refusal: NodeRefusal): void {
    this.app = undefined;
    this.handler = refusingWith(refusal);
  }

  /** Resolves once no request is under way, or after `timeoutMs`; whether they all finished. */
  drain(timeoutMs: number): Promise<boolean> {
    if (this.inFlight === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.drained = this.drained.filter((done) => done !== finish);
        resolve(false);
      }, timeoutMs);
      const finish = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      this.drained.push(finish);
    });
  }
}

function refusingWith(nodeRefusal: NodeRefusal): http.RequestListener {
  const refusal = fromNodeRefusal(nodeRefusal);
  const body = envelopeText(refusal);
  return (request, response) => {
    request.resume(); // whatever body it has is read and dropped
    response.statusCode = refusal.status;
    for (const [name, value] of Object.entries(refusal.headers ?? {})) response.setHeader(name, value);
    response.setHeader('Content-Type', 'application/json; charset=utf-8');
    response.end(body);
  };
}
