// The proxy: `/proxy/<core path>?instance_id=<id>` forwards the method, path, the rest of the query,
// the body and the answer (status, headers, body) to the deployment's core over keep-alive connections.
// The caller's credentials (X-svc-key, Authorization, X-Blnk-Key, Cookie) are dropped and the core's own
// master key is sent instead. Refused before anything is forwarded:
//   - a path that could escape (`.` or `..` segments, inner empty segments, percent-encoded dots,
//     slashes or backslashes, a backslash, an absolute-form request target): 400 PROXY_PATH_INVALID;
//   - the core's operator routes (/admin/..., which include the cutover routes): 403 PROXY_ROUTE_FORBIDDEN;
//   - an unknown or retired instance, or one whose deployment the token's user does not own: 404
//     INSTANCE_NOT_FOUND; a core that is restarting: 503 DEPLOYMENT_UNAVAILABLE with Retry-After.
// Scopes: GET/HEAD need proxy:read or proxy:write, other methods proxy:write (`*` covers both). Writes
// pass the deployment's write gate (write-gate.ts), which holds them during a cutover. A core that does
// not start its answer within proxy_timeout_ms gives 504 PROXY_TIMEOUT (an answer being streamed is not
// cut off); one that fails, 502 PROXY_UPSTREAM_FAILED.
//
// It runs on the raw Node request, ahead of Koa (cloud-service.ts routes /proxy there), because it is
// the busiest path and a second HTTP hop already costs as much CPU as the core's own handling. Bodies
// that declare at most SMALL_BODY_BYTES are read whole and sent in one write each way; longer or chunked
// ones are streamed, both ways. Timeouts are enforced by one sweep a second, not a timer per request.

import http from 'node:http';
import { ApiError, BACKPRESSURE_RETRY_AFTER_SECONDS } from '../http/api-error.js';
import { envelopeText, toApiError } from '../http/error-envelope.js';
import { callerOf, requireScopesOf } from './cloud-auth.js';
import { CLOUD_LIMITS } from './cloud-config.js';
import { proxyScopesFor } from './cloud-scopes.js';
import type { Deployments, LiveInstance } from './deployments.js';
import type { TokenService } from './token-service.js';

export const PROXY_PREFIX = '/proxy';
/** Bodies up to this size are read whole and written in one piece; longer ones are streamed. */
const SMALL_BODY_BYTES = 64 * 1024;
const TIMEOUT_SWEEP_MS = 1_000;

const DROPPED_REQUEST_HEADERS = new Set([
  'connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host',
  'x-svc-key', 'authorization', 'x-blnk-key', 'cookie',
]);
const DROPPED_RESPONSE_HEADERS = new Set([
  'connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'set-cookie',
]);
const ESCAPING = /%2e|%2f|%5c|\\/i;

/** Whether a raw request target is the proxy's (an absolute-form target is too, to be refused there). */
export function isProxyTarget(rawTarget: string): boolean {
  return rawTarget.startsWith(`${PROXY_PREFIX}/`) || rawTarget === PROXY_PREFIX || rawTarget.startsWith(`${PROXY_PREFIX}?`) || !rawTarget.startsWith('/');
}

/** The core path and the query without instance_id, from the raw request target; throws on an escape. */
export function corePathOf(rawTarget: string): { path: string; instanceIds: string[] } {
  if (!rawTarget.startsWith(`${PROXY_PREFIX}/`)) throw new ApiError('PROXY_PATH_INVALID', 'the proxy takes /proxy/<core path>');
  const queryAt = rawTarget.indexOf('?');
  const rawPath = (queryAt < 0 ? rawTarget : rawTarget.slice(0, queryAt)).slice(PROXY_PREFIX.length);
  const rawQuery = queryAt < 0 ? '' : rawTarget.slice(queryAt + 1);
  const segments = rawPath.split('/').slice(1);
  if (rawPath === '/') throw new ApiError('PROXY_PATH_INVALID', 'name a core path after /proxy');
  // A trailing slash is a path of its own on the core (GET /identities/ lists them); inner empty segments are not.
  const escapes = ESCAPING.test(rawPath)
    || segments.some((segment, index) => segment === '.' || segment === '..' || (segment === '' && index < segments.length - 1));
  if (escapes) throw new ApiError('PROXY_PATH_INVALID', 'the core path must not contain dot segments, empty segments or encoded slashes, dots or backslashes');
  if (rawPath === '/admin' || rawPath.startsWith('/admin/')) {
    throw new ApiError('PROXY_ROUTE_FORBIDDEN', 'operator routes of a core cannot be reached through the proxy');
  }
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
  return { path: kept.length > 0 ? `${rawPath}?${kept.join('&')}` : rawPath, instanceIds };
}

function safeDecode(text: string): string {
  if (!text.includes('%') && !text.includes('+')) return text;
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    throw new ApiError('PROXY_PATH_INVALID', 'the query is not valid percent-encoding');
  }
}

function unavailable(message: string): ApiError {
  return new ApiError('DEPLOYMENT_UNAVAILABLE', message, undefined, { 'Retry-After': String(BACKPRESSURE_RETRY_AFTER_SECONDS) });
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
      req.resume(); // whatever of the body was not read
      res.writeHead(apiError.status, { ...apiError.headers, 'content-type': 'application/json; charset=utf-8' });
      res.end(envelopeText(apiError));
    }
  }

  private async serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    this.parts.admit(req);
    const method = req.method ?? 'GET';
    const principal = requireScopesOf(callerOf(req.headers, this.parts.apiKeyHash, this.parts.tokens), proxyScopesFor(method));
    const target = corePathOf(req.url ?? '');
    if (target.instanceIds.length !== 1 || target.instanceIds[0] === '') {
      throw new ApiError('GEN_VALIDATION_ERROR', 'give exactly one instance_id in the query', { instance_id: 'required, once' });
    }
    const instanceId = target.instanceIds[0] as string;
    let instance = this.parts.deployments.instance(instanceId);
    const owner = instance && this.parts.deployments.get(instance.deploymentId)?.user_id;
    if (!instance || (principal.kind === 'token' && owner !== principal.holder.user_id)) {
      throw new ApiError('INSTANCE_NOT_FOUND', `no running deployment has instance_id ${instanceId}`);
    }
    const write = method !== 'GET' && method !== 'HEAD';
    if (write && (instance.successor || !instance.gate.tryAdmit())) instance = await admitWrite(instance);
    try {
      await this.forward(req, res, instance, method, target.path);
    } finally {
      if (write) instance.gate.done();
    }
  }

  private async forward(req: http.IncomingMessage, res: http.ServerResponse, instance: LiveInstance, method: string, path: string): Promise<void> {
    const address = instance.core.address;
    if (!address) throw unavailable('the deployment\'s core is restarting; retry shortly');
    const headers: http.OutgoingHttpHeaders = {};
    const connection = req.headers.connection;
    const connectionNamed = connection && connection !== 'keep-alive' && connection !== 'close'
      ? new Set(connection.toLowerCase().split(',').map((name) => name.trim()))
      : undefined;
    for (const name in req.headers) {
      if (DROPPED_REQUEST_HEADERS.has(name) || connectionNamed?.has(name)) continue;
      headers[name] = req.headers[name];
    }
    headers['x-svc-key'] = instance.core.masterKey;
    headers.host = address.host;
    const declared = req.headers['content-length'];
    const small = req.headers['transfer-encoding'] === undefined && (declared === undefined || Number(declared) <= SMALL_BODY_BYTES);
    const body = small && declared !== undefined && declared !== '0' ? await readBody(req) : undefined;
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
        reject(error instanceof ApiError ? error : new ApiError('PROXY_UPSTREAM_FAILED', `the core could not be reached: ${error.message}`));
      });
      upstream.on('response', (response) => {
        answered = true;
        this.inFlight.delete(entry); // the timeout bounds the wait for an answer, not its length
        const out: string[] = [];
        const raw = response.rawHeaders;
        for (let index = 0; index < raw.length; index += 2) {
          if (!DROPPED_RESPONSE_HEADERS.has((raw[index] as string).toLowerCase())) out.push(raw[index] as string, raw[index + 1] as string);
        }
        const length = response.headers['content-length'];
        res.on('close', () => {
          if (!response.complete) response.destroy();
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
      else if (small) upstream.end();
      else req.pipe(upstream);
    });
  }

  /** Ends requests the core has not started to answer within proxy_timeout_ms. */
  private expire(): void {
    const oldest = Date.now() - CLOUD_LIMITS.proxy_timeout_ms;
    for (const entry of this.inFlight) {
      if (entry.startedAt > oldest) continue;
      this.inFlight.delete(entry);
      entry.upstream.destroy(new ApiError('PROXY_TIMEOUT', `the core did not answer within ${CLOUD_LIMITS.proxy_timeout_ms} ms`));
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

/** A small body, whole (its declared length was checked by the caller). */
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
