// The Koa application: a small stack of middleware, each with one concern, around the routers.
//   request log + metrics -> error envelope -> shutdown guard -> loopback Host check (when listening on
//   loopback only) -> authentication and the caller's rate limit (access/rate-buckets.ts) -> the router:
//   no route is 404 (405 for another method), and each route runs behind its front (route-front.ts):
//   its access check -> writes to the leader (a replicated node that does not lead) -> read-your-writes
//   wait (X-Folio-Seq, reads) -> cutover fence and write backpressure (writes) -> body reader (counted
//   against the process's body bytes in flight) -> API key mark on created records -> the route. No body
//   is read before the route is known and the caller may use it.

import { Router } from '@koa/router';
import Koa from 'koa';
import type { Logger } from 'pino';
import type { Clock } from '../engine/ports.js';
import { ApiKeyUsage } from './access/api-key-usage.js';
import { authenticate } from './access/auth.js';
import type { RateLimiting } from './access/rate-buckets.js';
import { errorEnvelope } from './middleware/error-envelope.js';
import { BodyBytesInFlight, BODY_BYTES_IN_FLIGHT_MAX_DEFAULT } from './server/body-bytes-in-flight.js';
import { isLoopback, loopbackHostOnly } from './middleware/loopback-host.js';
import type { LedgerCore } from './ports/ledger-core.js';
import type { Metrics } from './metrics.js';
import { requestLog } from './middleware/request-log.js';
import { ROUTER_OPTIONS } from './router-options.js';
import { refuseWhileShuttingDown } from './middleware/shutdown-guard.js';
import { RouteFront } from './middleware/route-front.js';
import type { ReplicationInspector, ReplicationPort, ReplicationStatus } from './ports/replication-port.js';
import { replicationRoutes } from './routes/replication-routes.js';
import { eventRoutes, type ChangeFeedPort, type FeedStreams } from './routes/event-routes.js';
import { apiKeyRoutes } from './routes/api-key-routes.js';
import { balanceMonitorRoutes } from './routes/balance-monitor-routes.js';
import { balanceRoutes } from './routes/balance-routes.js';
import { hookRoutes } from './routes/hook-routes.js';
import { balanceHistoryRoutes } from './routes/balance-history-routes.js';
import { identityRoutes } from './routes/identity-routes.js';
import { identityTokenRoutes } from './routes/identity-token-routes.js';
import { inflightRoutes } from './routes/inflight-routes.js';
import { ledgerRoutes } from './routes/ledger-routes.js';
import { periodRoutes } from './routes/period-routes.js';
import { statementRoutes } from './routes/statement-routes.js';
import { metadataRoutes } from './routes/metadata-routes.js';
import { queryRoutes } from './routes/query-routes.js';
import { reconciliationRoutes, UPLOAD_PATH } from './routes/reconciliation-routes.js';
import { refundRoutes } from './routes/refund-routes.js';
import { queueRecoveryRoutes } from './routes/queue-recovery-routes.js';
import { backupRoutes, type BackupPort } from './routes/backup-routes.js';
import { adminRoutes, type SnapshotAdmin } from './routes/admin-routes.js';
import type { CutoverPort } from './ports/cutover-port.js';
import { cutoverRoutes } from './routes/cutover-routes.js';
import { docsRoutes } from './routes/docs-routes.js';
import { consoleRoutes } from './routes/console-routes.js';
import { systemRoutes } from './routes/system-routes.js';
import { transactionRoutes } from './routes/transaction-routes.js';

export interface AppOptions {
  core: LedgerCore;
  logger: Logger;
  metrics: Metrics;
  version: string;
  bodyBytesMax?: number;
  /**
   * The process's count of request body bytes in flight (server.body_bytes_in_flight_max), shared by
   * every HTTP thread; absent, this app counts alone against the default cap.
   */
  bodyBytesInFlight?: BodyBytesInFlight;
  /** Operator snapshot routes (/admin/snapshots), guarded by the master key when one is set. */
  snapshots?: SnapshotAdmin;
  /** The master key (server.secret_key); empty or absent leaves authentication off. */
  secretKey?: string;
  /**
   * The address the server listens on. A loopback address turns on the Host check against DNS
   * rebinding (loopback-host.ts); absent, the check is on.
   */
  listenHost?: string;
  /** Time for API key expiry and last use; the system clock unless a test injects one. */
  clock?: Clock;
  /** How often noted API key uses are written to the log. */
  apiKeyUseFlushMs?: number;
  /** Fence, follow and promote for a control plane's cutover (/admin/cutover/*, master key only). */
  cutover?: CutoverPort;
  /** Backups to disk (Blnk's /backup); without it the route says none is configured. */
  backup?: BackupPort;
  /** The key identity fields are tokenized with (32 bytes); without it tokenization is refused. */
  tokenizationKey?: Buffer;
  /** This node's replicated group; absent, the server is a single node. */
  replication?: ReplicationPort;
  /** GET /admin/replication (role, term, lag, state hash); absent, the route is not served. */
  inspector?: ReplicationInspector;
  /** GET /events, the change feed; absent, the route is not served. */
  feed?: ChangeFeedPort;
  /** Fair use: the rate limits and the process's shared buckets (access/rate-buckets.ts); absent, none. */
  rateLimiting?: RateLimiting;
}

export interface FolioApp {
  koa: Koa;
  router: Router;
  /** Makes every new request answer 503 while the server drains for shutdown. */
  beginShutdown(): void;
  /** Last uses of API keys not yet written to the log. */
  apiKeyUsage: ApiKeyUsage;
  /** Ends the change feed's open streams (their clients reconnect, to this node or another). */
  endStreams(): void;
}

/** The shortest master key accepted: a short one can be guessed, and it can do everything. */
export const MASTER_KEY_LENGTH_MIN = 32;

/** Why a master key cannot be used, if it cannot; empty means authentication off. */
export function masterKeyRefusal(secretKey: string): string | undefined {
  if (secretKey === '' || secretKey.length >= MASTER_KEY_LENGTH_MIN) return undefined;
  return `server.secret_key must be at least ${MASTER_KEY_LENGTH_MIN} characters (it has ${secretKey.length}); for example: openssl rand -hex 32`;
}

export function createApp(options: AppOptions): FolioApp {
  const refusal = masterKeyRefusal(options.secretKey ?? '');
  if (refusal) throw new Error(refusal);
  const koa = new Koa();
  koa.proxy = false;
  // Errors are logged by the envelope; Koa's own printer would duplicate them without context.
  koa.silent = true;
  let shuttingDown = false;

  const router = new Router(ROUTER_OPTIONS);
  const single = (): ReplicationStatus => ({ role: 'single', term: 0, applied_seq: options.core.visibleSeq() });
  const replication = options.replication;
  systemRoutes(router, options.metrics, options.version, replication ? () => replication.status() : single);
  if (options.inspector) replicationRoutes(router, options.inspector);
  const streams: FeedStreams | undefined = options.feed ? eventRoutes(router, options.feed) : undefined;
  docsRoutes(router, options.version);
  consoleRoutes(router);
  ledgerRoutes(router, options.core);
  periodRoutes(router, options.core);
  balanceRoutes(router, options.core);
  balanceMonitorRoutes(router, options.core);
  transactionRoutes(router, options.core);
  inflightRoutes(router, options.core);
  refundRoutes(router, options.core);
  queueRecoveryRoutes(router, options.core);
  backupRoutes(router, options.backup ?? { dir: undefined, run: () => Promise.reject(new Error('not configured')) });
  if (options.snapshots) adminRoutes(router, options.snapshots);
  const clock = options.clock ?? { now: () => Date.now() };
  const apiKeyUsage = new ApiKeyUsage(options.core, options.apiKeyUseFlushMs);
  apiKeyRoutes(router, options.core, { usage: apiKeyUsage, clock, keyRateDefault: options.rateLimiting?.settings.keyDefault });
  if (options.cutover) {
    cutoverRoutes(router, options.cutover);
    options.cutover.holdWhileFenced(apiKeyUsage);
  }
  hookRoutes(router, options.core);
  identityRoutes(router, options.core);
  identityTokenRoutes(router, options.core, options.tokenizationKey);
  balanceHistoryRoutes(router, options.core);
  statementRoutes(router, options.core);
  if (options.core.query) {
    queryRoutes(router, options.core, options.core.query);
    options.metrics.watchIndex(options.core.query);
  }
  const bodyBytesInFlight = options.bodyBytesInFlight ?? BodyBytesInFlight.local(BODY_BYTES_IN_FLIGHT_MAX_DEFAULT);
  if (options.core.reconciliation) reconciliationRoutes(router, options.core, options.core.reconciliation, { bodyBytesMax: options.bodyBytesMax, bodyBytesInFlight });
  metadataRoutes(router, options.core); // last: its first path segment is a parameter

  koa.use(requestLog(options.logger, options.metrics));
  koa.use(errorEnvelope(options.logger));
  koa.use(refuseWhileShuttingDown(() => shuttingDown));
  if (isLoopback(options.listenHost ?? '127.0.0.1')) koa.use(loopbackHostOnly());
  koa.use(authenticate({ secretKey: options.secretKey ?? '', view: options.core.view, clock, usage: apiKeyUsage, rateLimiting: options.rateLimiting }));
  const front = new RouteFront(router, {
    core: options.core, replication, cutover: options.cutover,
    bodyBytesMax: options.bodyBytesMax, bodyBytesInFlight,
    uploadRoutes: new Set([UPLOAD_PATH]),
  });
  koa.use(front.routes());
  koa.use(router.allowedMethods({ throw: true }));

  return {
    koa,
    router,
    apiKeyUsage,
    beginShutdown() {
      shuttingDown = true;
      streams?.endAll();
      void apiKeyUsage.flush();
    },
    endStreams() {
      streams?.endAll();
    },
  };
}
