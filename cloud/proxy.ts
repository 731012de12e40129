// The proxy: `/proxy/<core path>?instance_id=<id>` forwards the method, path, the rest of the query,
// the body and the answer (status, headers, body), streamed both ways over keep-alive connections to
// the deployment's core. The caller's credentials (X-svc-key, Authorization, X-Blnk-Key, Cookie) are
// dropped and the core's own master key is sent instead. Refused before anything is forwarded:
//   - a path that could escape (`.` or `..` segments, empty segments, percent-encoded dots, slashes or
//     backslashes, a backslash, an absolute-form request target): 400 PROXY_PATH_INVALID;
//   - the core's operator routes (/admin/..., which include the cutover routes): 403 PROXY_ROUTE_FORBIDDEN;
//   - an unknown or retired instance, or one whose deployment the token's user does not own: 404
//     INSTANCE_NOT_FOUND; a core that is restarting: 503 DEPLOYMENT_UNAVAILABLE with Retry-After.
// Scopes: GET/HEAD need proxy:read or proxy:write, other methods proxy:write (`*` covers both). Writes
// pass the deployment's write gate (write-gate.ts), which holds them during a cutover. A core that does
// not answer within proxy_timeout_ms gives 504 PROXY_TIMEOUT; one that fails, 502 PROXY_UPSTREAM_FAILED.

import http from 'node:http';
import type Koa from 'koa';
import { ApiError, BACKPRESSURE_RETRY_AFTER_SECONDS } from '../http/api-error.js';
import { requireScopes } from './cloud-auth.js';
import { CLOUD_LIMITS } from './cloud-config.js';
import { proxyScopesFor } from './cloud-scopes.js';
import type { Deployments, LiveInstance } from './deployments.js';

export const PROXY_PREFIX = '/proxy';

const DROPPED_REQUEST_HEADERS = new Set([
  'connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host',
  'x-svc-key', 'authorization', 'x-blnk-key', 'cookie',
]);
const DROPPED_RESPONSE_HEADERS = new Set([
  'connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'set-cookie',
]);
const ESCAPING = /%2e|%2f|%5c|\\/i;

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
    const equals = pair.indexOf('=');
    const name = safeDecode(equals < 0 ? pair : pair.slice(0, equals));
    if (name === 'instance_id') instanceIds.push(safeDecode(equals < 0 ? '' : pair.slice(equals + 1)));
    else kept.push(pair);
  }
  return { path: kept.length > 0 ? `${rawPath}?${kept.join('&')}` : rawPath, instanceIds };
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    throw new ApiError('PROXY_PATH_INVALID', 'the query is not valid percent-encoding');
  }
}

function unavailable(message: string): ApiError {
  return new ApiError('DEPLOYMENT_UNAVAILABLE', message, undefined, { 'Retry-After': String(BACKPRESSURE_RETRY_AFTER_SECONDS) });
}

export function proxyMiddleware(deployments: Deployments): Koa.Middleware {
  return async (ctx, next) => {
    if (ctx.path !== PROXY_PREFIX && !ctx.path.startsWith(`${PROXY_PREFIX}/`)) return next();
    const principal = requireScopes(ctx, proxyScopesFor(ctx.method));
    const target = corePathOf(ctx.req.url ?? '');
    if (target.instanceIds.length !== 1 || target.instanceIds[0] === '') {
      throw new ApiError('GEN_VALIDATION_ERROR', 'give exactly one instance_id in the query', { instance_id: 'required, once' });
    }
    const instanceId = target.instanceIds[0] as string;
    let instance = deployments.instance(instanceId);
    const owner = instance && deployments.get(instance.deploymentId)?.user_id;
    if (!instance || (principal.kind === 'token' && owner !== principal.holder.user_id)) {
      throw new ApiError('INSTANCE_NOT_FOUND', `no running deployment has instance_id ${instanceId}`);
    }
    const write = ctx.method !== 'GET' && ctx.method !== 'HEAD';
    if (write) instance = await admitWrite(instance);
    try {
      await forward(ctx, instance, target.path);
    } finally {
      if (write) instance.gate.done();
    }
  };
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

function forward(ctx: Koa.Context, instance: LiveInstance, path: string): Promise<void> {
  const base = instance.core.url;
  if (!base) throw unavailable('the deployment\'s core is restarting; retry shortly');
  const { hostname, port } = new URL(base);
  const headers: http.OutgoingHttpHeaders = {};
  const connectionNamed = new Set((ctx.get('connection') || '').toLowerCase().split(',').map((name) => name.trim()));
  for (const [name, value] of Object.entries(ctx.req.headers)) {
    if (value === undefined || DROPPED_REQUEST_HEADERS.has(name) || connectionNamed.has(name)) continue;
    headers[name] = value;
  }
  headers['x-svc-key'] = instance.core.masterKey;
  headers.host = `${hostname}:${port}`;
  return new Promise<void>((resolve, reject) => {
    const upstream = http.request({ agent: instance.core.agent, host: hostname, port, method: ctx.method, path, headers });
    let answered = false;
    upstream.setTimeout(CLOUD_LIMITS.proxy_timeout_ms, () => {
      upstream.destroy(new ApiError('PROXY_TIMEOUT', `the core did not answer within ${CLOUD_LIMITS.proxy_timeout_ms} ms`));
    });
    upstream.on('error', (error) => {
      if (answered) {
        ctx.res.destroy(error);
        return;
      }
      ctx.req.unpipe(upstream);
      reject(error instanceof ApiError ? error : new ApiError('PROXY_UPSTREAM_FAILED', `the core could not be reached: ${error.message}`));
    });
    upstream.on('response', (response) => {
      answered = true;
      const out: http.OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(response.headers)) {
        if (value !== undefined && !DROPPED_RESPONSE_HEADERS.has(name)) out[name] = value;
      }
      ctx.respond = false;
      ctx.status = response.statusCode ?? 502; // for the request log; the response itself is written below
      ctx.res.writeHead(response.statusCode ?? 502, out);
      response.pipe(ctx.res);
      response.on('end', () => resolve());
      response.on('error', (error) => {
        ctx.res.destroy(error);
        resolve();
      });
      ctx.res.on('close', () => {
        if (!response.complete) response.destroy();
        resolve();
      });
    });
    ctx.req.on('aborted', () => upstream.destroy());
    ctx.req.pipe(upstream);
  });
}
