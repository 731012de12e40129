// The proxy: `/proxy/<core path>?instance_id=<id>` forwards the method, path, the rest of the query,
// the body and the answer (status, headers, body) to the deployment's core over keep-alive connections.
// The caller's credentials (X-svc-key, Authorization, X-Blnk-Key, Cookie) are dropped and one of the two
// API keys the control plane made on the core is sent instead (proxy-keys.ts): the read-only one for
// GET and HEAD, the read-write one for the rest; never the core's master key. Refused before anything
// is forwarded:
//   - a path that could escape (`.` or `..` segments, inner empty segments, percent-encoded dots,
//     slashes or backslashes, a backslash, `#` or a character outside printable ASCII, an absolute-form
//     request target): 400 PROXY_PATH_INVALID;
//   - a route not on the closed list of core routes a tenant may use (proxy-routes.ts: no operator
//     route, no API key route, in any letter case): 403 PROXY_ROUTE_FORBIDDEN;
//   - a `Connection` header naming a header the proxy relies on (framing, Host, credentials, the body's
//     type or coding), or a transfer coding other than plain `chunked`: 400 PROXY_HEADER_INVALID;
//   - a body on a method that takes none (GET, HEAD, DELETE): 400 PROXY_BODY_NOT_ALLOWED;
//   - an unknown or retired instance, or one whose deployment the token's user does not own: 404
//     INSTANCE_NOT_FOUND; a core that is restarting: 503 DEPLOYMENT_UNAVAILABLE with Retry-After;
//   - a deployment over its rate (its `rate_limit`, else the control plane's default; none unless set:
//     deployment-buckets.ts): 429 GEN_RATE_LIMITED with Retry-After and RateLimit-Limit, -Remaining and
//     -Reset, which every forwarded answer of a limited deployment carries too (the core's own, which
//     describe the control plane's keys, are dropped then).
// Scopes: GET/HEAD need proxy:read or proxy:write, other methods proxy:write (`*` covers both). Writes
// pass the deployment's write gate (write-gate.ts), which holds them during a cutover. A core that does
// not start its answer within proxy_timeout_ms gives 504 PROXY_TIMEOUT (an answer being streamed is not
// cut off); one that fails, 502 PROXY_UPSTREAM_FAILED.
//
// Framing is the proxy's own: the caller's Content-Length and Transfer-Encoding are never forwarded. A
// body read whole goes out with the Content-Length of what was read, a streamed one chunked, and a
// request without a body with none (POST and PUT say `Content-Length: 0`), so the core always knows
// where a request ends and no byte of a body can be read as a request of its own. An exchange that went
// wrong (the caller gone, the timeout, an upstream error, an answer not fully read, an answer that came
// before the body was fully sent) ends with the core's connection destroyed, never handed to the next
// request; and what is left of a body the core answered part way is read and dropped, never forwarded,
// so it cannot hold up the caller's next request on its connection.
// `Expect: 100-continue` is answered by the control plane's server and not forwarded.
//
// It runs on the raw Node request, ahead of Koa (cloud-service.ts routes /proxy there), because it is
// the busiest path and a second HTTP hop already costs as much CPU as the core's own handling. Bodies
// that declare at most SMALL_BODY_BYTES are read whole and sent in one write each way; longer or chunked
// ones are streamed, both ways. Timeouts are enforced by one sweep a second, not a timer per request.

import http from 'node:http';
import { CloudError } from './cloud-errors.js';
import { ApiError, EnvelopeError, BACKPRESSURE_RETRY_AFTER_SECONDS } from '../http/api-error.js';
import { envelopeText, toApiError } from '../http/middleware/error-envelope.js';
import { callerOf, requireScopesOf } from './cloud-auth.js';
import { CLOUD_LIMITS } from './cloud-config.js';
import { proxyScopesFor } from './cloud-scopes.js';
import type { Deployments, LiveInstance } from './deployments.js';
import { ProxyRoutes } from './proxy-routes.js';
import { DeploymentBuckets } from './deployment-buckets.js';
import { rateLimitHeaders } from '../http/access/rate-buckets.js';
import type { TokenService } from './token-service.js';

export const PROXY_PREFIX = '/proxy';
/** Bodies up to this size are read whole and written in one piece; longer ones are streamed. */
const SMALL_BODY_BYTES = 64 * 1024;
const TIMEOUT_SWEEP_MS = 1_000;

const DROPPED_REQUEST_HEADERS = new Set([
  'connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host',
  'content-length', 'expect', 'x-svc-key', 'authorization', 'x-blnk-key', 'cookie',
]);
const DROPPED_RESPONSE_HEADERS = new Set([
  'connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'set-cookie',
]);
/**
 * Headers a `Connection` header may not name: those the proxy frames the request with, authenticates it
 * with, routes it with, or that say how the core reads the body. Naming one asks the proxy to drop it.
 */
const PROTECTED_HEADERS = new Set(['content-length', 'transfer-encoding', 'host', 'authorization', 'x-svc-key', 'x-blnk-key', 'content-type', 'content-encoding']);
/** The methods whose requests carry a body to the core's routes (the routes forwarded are GET, HEAD, POST, PUT and DELETE). */
const BODY_METHODS = new Set(['POST', 'PUT']);
const ESCAPING = /%2e|%2f|%5c|\\/i;
/** Printable ASCII but `#`: what a core path and query may hold (Koa reads anything else through a full URL parse of its own). */
const PLAIN_TARGET = /^[\x21\x22\x24-\x7e]*$/;

/** Whether a raw request target is the proxy's (an absolute-form target is too, to be refused there). */
export function isProxyTarget(rawTarget: string): boolean {
  return rawTarget.startsWith(`${PROXY_PREFIX}/`) || rawTarget === PROXY_PREFIX || rawTarget.startsWith(`${PROXY_PREFIX}?`) || !rawTarget.startsWith('/');
}

export interface CoreTarget {
  /** The path alone, as the core's router reads it. */
  pathname: string;
  /** The path and the query without instance_id, as forwarded. */
  path: string;
  instanceIds: string[];
}

/** The core path and the query without instance_id, from the raw request target; throws on an escape. */
export function corePathOf(rawTarget: string): CoreTarget {
  if (!rawTarget.startsWith(`${PROXY_PREFIX}/`)) throw new CloudError('PROXY_PATH_INVALID', 'the proxy takes /proxy/<core path>');
  if (!PLAIN_TARGET.test(rawTarget)) throw new CloudError('PROXY_PATH_INVALID', 'the core path and query must be printable ASCII without #; percent-encode the rest');
  const queryAt = rawTarget.indexOf('?');
  const rawPath = (queryAt < 0 ? rawTarget : rawTarget.slice(0, queryAt)).slice(PROXY_PREFIX.length);
  const rawQuery = queryAt < 0 ? '' : rawTarget.slice(queryAt + 1);
  const segments = rawPath.split('/').slice(1);
  if (rawPath === '/') throw new CloudError('PROXY_PATH_INVALID', 'name a core path after /proxy');
  // A trailing slash is a path of its own on the core (GET /identities/ lists them); inner empty segments are not.
  const escapes = ESCAPING.test(rawPath)
    || segments.some((segment, index) => segment === '.' || segment === '..' || (segment === '' && index < segments.length - 1));
  if (escapes) throw new CloudError('PROXY_PATH_INVALID', 'the core path must not contain dot segments, empty segments or encoded slashes, dots or backslashes');
  const kept: string[] = [];
  const instanceIds: string[] = [];
  for (const pair of rawQuery.split('&')) {
    if (pair === '') continue;
    if (!pair.startsWith('instance_id') && !pair.includes('%')) {
      kept.push(pair);
      continue;
    }
    const equals = pair.indexOf('=');
    const name = safeDecode(equals < 0 ? pair : pair.slice(0, equals));
    if (name === 'instance_id') instanceIds.push(safeDecode(equals < 0 ? '' : pair.slice(equals + 1)));
    else kept.push(pair);
  }
  return { pathname: rawPath, path: kept.length > 0 ? `${rawPath}?${kept.join('&')}` : rawPath, instanceIds };
}

function safeDecode(text: string): string {
  if (!text.includes('%') && !text.includes('+')) return text;
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    throw new CloudError('PROXY_PATH_INVALID', 'the query is not valid percent-encoding');
  }
}

/** How the caller framed the body: none, a length, or chunked. */
type Framing = { kind: 'none' } | { kind: 'length'; bytes: number } | { kind: 'chunked' };

/**
 * The body's framing, after refusing what the proxy does not forward: a transfer coding other than
 * plain chunked, and a body on a method that takes none. Node's parser has already refused a
 * Content-Length given twice or together with Transfer-Encoding, and obs-fold.
 */
export function framingOf(method: string, headers: http.IncomingHttpHeaders): Framing {
  const coding = headers['transfer-encoding'];
  let framing: Framing = { kind: 'none' };
  if (coding !== undefined) {
    if (coding.trim().toLowerCase() !== 'chunked') {
      throw new CloudError('PROXY_HEADER_INVALID', 'the proxy takes no transfer coding but chunked (send Content-Encoding for a compressed body)', { header: 'transfer-encoding' });
    }
    framing = { kind: 'chunked' };
  } else if (headers['content-length'] !== undefined && Number(headers['content-length']) > 0) {
    framing = { kind: 'length', bytes: Number(headers['content-length']) };
  }
  if (framing.kind !== 'none' && !BODY_METHODS.has(method)) {
    throw new CloudError('PROXY_BODY_NOT_ALLOWED', `${method} takes no body through the proxy`);
  }
  return framing;
}

/** The headers the caller's Connection headers name (lower case); throws when one is a header the proxy relies on. */
export function connectionNamed(rawHeaders: readonly string[]): Set<string> | undefined {
  let named: Set<string> | undefined;
  for (let index = 0; index < rawHeaders.length; index += 2) {
    if ((rawHeaders[index] as string).toLowerCase() !== 'connection') continue;
    for (const token of (rawHeaders[index + 1] as string).split(',')) {
      const name = token.trim().toLowerCase();
      if (name === '' || name === 'keep-alive' || name === 'close') continue;
      if (PROTECTED_HEADERS.has(name)) {
        throw new CloudError('PROXY_HEADER_INVALID', `the Connection header may not name ${name}: the proxy relies on it`, { header: 'connection' });
      }
      named ??= new Set();
      named.add(name);
    }
  }
  return named;
}

function unavailable(message: string): CloudError {
  return new CloudError('DEPLOYMENT_UNAVAILABLE', message, undefined, { 'Retry-After': String(BACKPRESSURE_RETRY_AFTER_SECONDS) });
}

interface InFlight {
  upstream: http.ClientRequest;
  startedAt: number;
}

export interface ProxyParts {
  deployments: Deployments;
  tokens: TokenService;
  apiKeyHash: string;
  /** Refuses the request before anything else (a bad Host, shutdown), or returns. */
  admit(req: http.IncomingMessage): void;
}

export class Proxy {
  private readonly inFlight = new Set<InFlight>();
  private readonly sweep: NodeJS.Timeout;
  private readonly routes = new ProxyRoutes();
  private readonly buckets = new DeploymentBuckets();

  constructor(private readonly parts: ProxyParts) {
    this.sweep = setInterval(() => this.expire(), TIMEOUT_SWEEP_MS);
    this.sweep.unref();
  }

  close(): void {
    clearInterval(this.sweep);
  }

  async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    try {
      await this.serve(req, res);
    } catch (error) {
      const apiError = toApiError(error);
      if (res.headersSent) {
        res.destroy();
        return;
      }
      // A body not read to its end is not worth reading: the connection goes with the answer.
      const headers: Record<string, string> = { ...apiError.headers, 'content-type': 'application/json; charset=utf-8' };
      if (!req.complete) headers.connection = 'close';
      req.resume();
      res.writeHead(apiError.status, headers);
      res.end(envelopeText(apiError));
    }
  }

  private async serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    this.parts.admit(req);
    const method = req.method ?? 'GET';
    const principal = requireScopesOf(callerOf(req.headers, this.parts.apiKeyHash, this.parts.tokens), proxyScopesFor(method));
    const target = corePathOf(req.url ?? '');
    if (!this.routes.forwards(method, target.pathname)) {
      throw new CloudError('PROXY_ROUTE_FORBIDDEN', `${method} ${target.pathname} is not a route the proxy forwards (operator routes of a core are not reachable through it)`);
    }
    const named = req.headers.connection === undefined ? undefined : connectionNamed(req.rawHeaders);
    const framing = framingOf(method, req.headers);
    if (target.instanceIds.length !== 1 || target.instanceIds[0] === '') {
      throw new ApiError('GEN_VALIDATION_ERROR', 'give exactly one instance_id in the query', { instance_id: 'required, once' });
    }
    const instanceId = target.instanceIds[0] as string;
    let instance = this.parts.deployments.instance(instanceId);
    const record = instance && this.parts.deployments.get(instance.deploymentId);
    if (!instance || (principal.kind === 'token' && record?.user_id !== principal.holder.user_id)) {
      throw new CloudError('INSTANCE_NOT_FOUND', `no running deployment has instance_id ${instanceId}`);
    }
    // The deployment's bucket: once the caller may reach it, before a body is read or anything forwarded.
    const limit = record && this.parts.deployments.rateLimitOf(record);
    let rateHeaders: Record<string, string> | undefined;
    if (limit) {
      const decision = this.buckets.take(instanceId, limit);
      rateHeaders = rateLimitHeaders(decision);
      if (!decision.admitted) throw new ApiError('GEN_RATE_LIMITED', `this deployment has used up its request rate: retry after ${decision.retryAfterSeconds} s`, undefined, rateHeaders);
    }
    const write = method !== 'GET' && method !== 'HEAD';
    if (write && (instance.successor || !instance.gate.tryAdmit())) instance = await admitWrite(instance);
    try {
      await this.forward(req, res, instance, { method, path: target.path, write, framing, named, rateHeaders });
    } finally {
      if (write) instance.gate.done();
    }
  }

  private async forward(
    req: http.IncomingMessage, res: http.ServerResponse, instance: LiveInstance,
    request: { method: string; path: string; write: boolean; framing: Framing; named: Set<string> | undefined; rateHeaders?: Record<string, string> },
  ): Promise<void> {
    const { method, path, framing, named, rateHeaders } = request;
    const address = instance.core.address;
    const key = instance.core.proxyKey(request.write ? 'write' : 'read');
    if (!address || !key) throw unavailable('the deployment\'s core is restarting; retry shortly');
    const headers: http.OutgoingHttpHeaders = {};
    for (const name in req.headers) {
      if (DROPPED_REQUEST_HEADERS.has(name) || named?.has(name)) continue;
      headers[name] = req.headers[name];
    }
    headers['x-svc-key'] = key;
    headers.host = address.host;
    let body: Buffer | undefined;
    if (framing.kind === 'length' && framing.bytes <= SMALL_BODY_BYTES) {
      body = await readBody(req);
      headers['content-length'] = String(body.length);
    } else if (framing.kind !== 'none') {
      headers['transfer-encoding'] = 'chunked';
    } else if (BODY_METHODS.has(method)) {
      headers['content-length'] = '0';
    }
    await new Promise<void>((resolve, reject) => {
      const upstream = http.request({ agent: instance.core.agent, host: address.hostname, port: address.port, method, path, headers });
      const entry: InFlight = { upstream, startedAt: Date.now() };
      this.inFlight.add(entry);
      let answered = false;
      const finish = (): void => {
        this.inFlight.delete(entry);
        resolve();
      };
      upstream.on('error', (error) => {
        this.inFlight.delete(entry);
        if (answered) {
          res.destroy(error);
          resolve();
          return;
        }
        req.unpipe(upstream);
        reject(error instanceof EnvelopeError ? error : new CloudError('PROXY_UPSTREAM_FAILED', `the core could not be reached: ${error.message}`));
      });
      upstream.on('response', (response) => {
        answered = true;
        this.inFlight.delete(entry); // the timeout bounds the wait for an answer, not its length
        // An answer that came before the whole body was sent: the connection closes after it, unreused.
        if (!upstream.writableFinished) upstream.shouldKeepAlive = false;
        const out: string[] = [];
        const raw = response.rawHeaders;
        for (let index = 0; index < raw.length; index += 2) {
          const name = (raw[index] as string).toLowerCase();
          if (DROPPED_RESPONSE_HEADERS.has(name) || (rateHeaders && name.startsWith('ratelimit-'))) continue;
          out.push(raw[index] as string, raw[index + 1] as string);
        }
        if (rateHeaders) for (const [name, value] of Object.entries(rateHeaders)) out.push(name, value);
        // One that came before the caller's body was read to its end (the core refused it part way): the
        // rest is not forwarded but read and dropped, as Node does with a body nobody reads (bounded by
        // the server's request timeout). Left paused, it would hold the caller's connection still, and
        // the next request the caller sent on it would never be read; closing the connection instead
        // would cut off a caller still writing its body before it reads the answer (EPIPE).
        if (!req.complete) {
          req.unpipe(upstream);
          req.resume();
        }
        const length = response.headers['content-length'];
        res.on('close', () => {
          // The caller went away before the answer was read to its end: its connection to the core goes too.
          if (!response.complete) upstream.destroy();
          finish();
        });
        if (length !== undefined && Number(length) <= SMALL_BODY_BYTES) {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            res.writeHead(response.statusCode ?? 502, out);
            res.end(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
          });
        } else {
          res.writeHead(response.statusCode ?? 502, out);
          response.pipe(res);
        }
        response.on('error', (error) => res.destroy(error));
      });
      // The caller went away before the answer was written: let go of the core's connection too.
      res.once('close', () => {
        if (!res.writableFinished) upstream.destroy();
      });
      if (body !== undefined) upstream.end(body);
      else if (framing.kind === 'none') upstream.end();
      else {
        // A body that stops short (the caller gone) must not end as if it were whole: the chunked
        // stream is cut, and the core sees the request aborted.
        req.once('close', () => {
          if (!req.complete) upstream.destroy();
        });
        req.pipe(upstream);
      }
    });
  }

  /** Ends requests the core has not started to answer within proxy_timeout_ms. */
  private expire(): void {
    const oldest = Date.now() - CLOUD_LIMITS.proxy_timeout_ms;
    for (const entry of this.inFlight) {
      if (entry.startedAt > oldest) continue;
      this.inFlight.delete(entry);
      entry.upstream.destroy(new CloudError('PROXY_TIMEOUT', `the core did not answer within ${CLOUD_LIMITS.proxy_timeout_ms} ms`));
    }
  }
}

/** Passes the write gate, following the deployment to its successor if a cutover happened meanwhile. */
async function admitWrite(first: LiveInstance): Promise<LiveInstance> {
  let instance = first;
  for (;;) {
    const admission = await instance.gate.admit();
    if (admission !== 'admitted') throw unavailable('the deployment is being upgraded; retry shortly');
    if (!instance.successor) return instance;
    instance.gate.done();
    instance = instance.successor;
  }
}

/** A small body, whole (Node's parser holds it to its declared length; a caller gone before its end is an error). */
function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    req.on('data', (chunk: Buffer) => {
      length += chunk.length;
      if (length > SMALL_BODY_BYTES) req.destroy(new ApiError('GEN_PAYLOAD_TOO_LARGE', 'the body is longer than it declared'));
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0] as Buffer : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
