// What runs in front of each route once the router has matched it, decided by the route itself (its
// pattern and method), never by the text of the request's path. The app authenticates every request
// first (auth.ts: 401s, before anything is known of the route); a request for no route is answered 404 or
// 405 without its body being read. For a route, in this order:
//   1. its access check (auth.ts authorize, the route's entry in route-scopes.ts): 403
//   2. writes only (route-effects.ts): on a node that does not lead, 307 to the leader or 503
//      (leader-redirect.ts)
//   3. reads of the ledger's state only (not public routes): the X-Folio-Seq wait (read-your-writes.ts)
//   4. writes and the node's own operations: the cutover fence (not the cutover's own routes) and write
//      backpressure (backpressure.ts), both before the body is read
//   5. POST, PUT and PATCH: the body, read, counted against the process's cap, parsed (json-body.ts)
//   6. the record-creating routes: the API key's mark on what they create (generated-by.ts)
// So no body is read, inflated or parsed for a request that has no route or may not use it, and nothing
// waits on behalf of one. The steps are put in front of every route layer on the first request, and
// whenever the router has grown since (routes registered after the app was assembled are covered too).

import type { Layer, Router } from '@koa/router';
import type Koa from 'koa';
import { authorize, type Principal } from '../access/auth.js';
import { refuseWhenOverloaded } from './backpressure.js';
import type { BodyBytesInFlight } from '../server/body-bytes-in-flight.js';
import type { CutoverPort } from '../ports/cutover-port.js';
import { markGeneratedBy, marksGeneratedBy } from './generated-by.js';
import { jsonBody } from './json-body.js';
import type { LedgerCore } from '../ports/ledger-core.js';
import { sendWritesToLeader } from './leader-redirect.js';
import { waitForRequestedSeq } from './read-your-writes.js';
import type { ReplicationPort } from '../ports/replication-port.js';
import { routeAccess, ROUTE_ACCESS_TABLE, type RouteAccess } from '../access/route-scopes.js';
import { routeEffect } from './route-effects.js';
import { CUTOVER_PATH_PREFIX, fenceGuard } from '../routes/cutover-routes.js';

export interface RouteFrontOptions {
  core: Pick<LedgerCore, 'visibleSeq' | 'appliedSeqReached' | 'overloaded' | 'writeAdmission'>;
  /** The access table; the real one unless a test gives its own. */
  table?: Readonly<Record<string, string>>;
  /** A replicated node's replication: writes go to the leader. */
  replication?: ReplicationPort;
  cutover?: CutoverPort;
  bodyBytesMax?: number;
  bodyBytesInFlight?: BodyBytesInFlight;
  /** Route patterns that read multipart uploads themselves. */
  uploadRoutes?: ReadonlySet<string>;
}

/**
 * POST routes whose body is read (and counted) but never parsed: Blnk's handler binds an optional body
 * and carries on with its defaults when it is malformed (api/reindex.go StartReindex), and Folio's takes
 * no parameters, so a malformed body is accepted there as Blnk accepts it.
 */
const UNPARSED_BODY_ROUTES: ReadonlySet<string> = new Set(['/search/reindex']);

/** The steps in front of one route and method, as one middleware. */
function inOrder(steps: readonly Koa.Middleware[]): Koa.Middleware {
  return (ctx, next) => {
    const run = (index: number): Promise<unknown> => {
      const step = index < steps.length ? steps[index] as Koa.Middleware : next;
      return Promise.resolve(step(ctx, () => run(index + 1)));
    };
    return run(0);
  };
}

export class RouteFront {
  private readonly fronted = new WeakSet<Layer>();
  private frontedCount = 0;
  private readonly table: Readonly<Record<string, string>>;
  // One instance of each step serves every route that takes it.
  private readonly toLeader: Koa.Middleware | undefined;
  private readonly seqWait: Koa.Middleware;
  private readonly fence: Koa.Middleware | undefined;
  private readonly backpressure: Koa.Middleware;
  private readonly mark = markGeneratedBy();

  constructor(private readonly router: Router, private readonly options: RouteFrontOptions) {
    this.table = options.table ?? ROUTE_ACCESS_TABLE;
    this.toLeader = options.replication && sendWritesToLeader(options.replication);
    this.seqWait = waitForRequestedSeq(options.core);
    this.fence = options.cutover && fenceGuard(options.cutover);
    this.backpressure = refuseWhenOverloaded(options.core);
  }

  /** The router's dispatch, with every route fronted first. */
  routes(): Koa.Middleware {
    const dispatch = this.router.routes();
    return (ctx, next) => {
      this.ensure();
      return dispatch(ctx as never, next);
    };
  }

  private ensure(): void {
    if (this.router.stack.length === this.frontedCount) return;
    for (const layer of this.router.stack) {
      if (layer.methods.length === 0 || this.fronted.has(layer)) continue;
      this.fronted.add(layer);
      layer.stack.unshift(this.frontOf(layer));
    }
    this.frontedCount = this.router.stack.length;
  }

  private frontOf(layer: Layer): Koa.Middleware {
    const byMethod = new Map<string, Koa.Middleware>();
    for (const method of layer.methods) byMethod.set(method, inOrder(this.steps(method, String(layer.path))));
    // The router runs a layer only for one of its methods; anything else would be the master key's.
    const masterOnly = accessCheck({ kind: 'master' });
    return (ctx, next) => (byMethod.get(ctx.method) ?? masterOnly)(ctx, next);
  }

  /** What runs in front of `pattern` called with `method`, in the order the header gives. */
  private steps(method: string, pattern: string): Koa.Middleware[] {
    const access = routeAccess(method, pattern, this.table);
    const effect = routeEffect(method, pattern);
    const steps: Koa.Middleware[] = [accessCheck(access)];
    if (effect === 'write' && this.toLeader) steps.push(this.toLeader);
    if (effect === 'read' && access.kind !== 'public') steps.push(this.seqWait);
    if (effect !== 'read') {
      if (this.fence && !pattern.startsWith(CUTOVER_PATH_PREFIX)) steps.push(this.fence);
      steps.push(this.backpressure);
    }
    if (method === 'POST' || method === 'PUT' || method === 'PATCH') {
      steps.push(jsonBody({ bodyBytesMax: this.options.bodyBytesMax, inFlight: this.options.bodyBytesInFlight, multipart: this.options.uploadRoutes?.has(pattern), unparsed: method === 'POST' && UNPARSED_BODY_ROUTES.has(pattern) }));
    }
    if (marksGeneratedBy(method, pattern)) steps.push(this.mark);
    return steps;
  }
}

function accessCheck(access: RouteAccess): Koa.Middleware {
  return (ctx, next) => {
    authorize(ctx.state.principal as Principal | undefined, access, (ctx as unknown as { params?: Record<string, string> }).params ?? {});
    return next();
  };
}
