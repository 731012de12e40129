// Errors as the API reports them. Every failure a client can cause becomes an ApiError with a stable
// code; the error middleware (error-envelope.ts) is the one place that turns them into responses.
// Where the public Blnk ledger has a code of its own for a condition, that code is used, with the
// status Blnk gives it (../shared/spec/decisions.md; docs/decisions-blnk.md lists the codes and where they apply).

import type { Rejection } from '../engine/rejections.js';
import { NODE_REFUSAL_RETRY_AFTER_SECONDS, type NodeRefusal } from './ports/node-refusal.js';

/** HTTP status of every code Folio answers with. A code missing here is a bug caught by the type. */
export const STATUS_BY_CODE = {
  GEN_BAD_REQUEST: 400,
  GEN_MALFORMED_REQUEST: 400,
  GEN_VALIDATION_ERROR: 400,
  GEN_FORBIDDEN_HOST: 403,
  GEN_REQUEST_TIMEOUT: 408,
  GEN_NOT_FOUND: 404,
  GEN_METHOD_NOT_ALLOWED: 405,
  GEN_CONFLICT: 409,
  GEN_PAYLOAD_TOO_LARGE: 413,
  GEN_UNSUPPORTED_MEDIA_TYPE: 415,
  GEN_EXPECTATION_FAILED: 417,
  GEN_RESOURCE_LOCKED: 423,
  // fair use: the API key's (or master key's) token bucket is empty (http/access/rate-buckets.ts)
  GEN_RATE_LIMITED: 429,
  GEN_INTERNAL_ERROR: 500,
  QUEUE_BACKPRESSURE: 503,
  GEN_SHUTTING_DOWN: 503,
  GEN_CONNECTIONS_EXCEEDED: 503,
  // the process's cap on request body bytes held at once (http/middleware/json-body.ts, http/server/body-bytes-in-flight.ts)
  GEN_BODY_BYTES_IN_FLIGHT_EXCEEDED: 503,
  LGR_NOT_FOUND: 404,
  BAL_NOT_FOUND: 404,
  BAL_DUPLICATE_INDICATOR: 409,
  BAL_INVALID_TIMESTAMP: 400,
  BAL_MONITOR_NOT_FOUND: 404,
  BAL_MONITOR_LIMIT_EXCEEDED: 400,
  BAL_LINEAGE_LIMIT_EXCEEDED: 400,
  TXN_NOT_FOUND: 404,
  TXN_VALIDATION_ERROR: 400,
  TXN_INVALID_AMOUNT: 400,
  TXN_PRECISION_NOT_INTEGER: 400,
  TXN_BULK_EMPTY: 400,
  TXN_BULK_LIMIT_EXCEEDED: 400,
  TXN_INSUFFICIENT_FUNDS: 400,
  TXN_OVERDRAFT_LIMIT_EXCEEDED: 400,
  TXN_DUPLICATE_REFERENCE: 409,
  TXN_CURRENCY_MISMATCH: 400,
  TXN_SAME_SOURCE_DESTINATION: 400,
  TXN_INVALID_DISTRIBUTION: 400,
  TXN_NOT_INFLIGHT: 400,
  TXN_INVALID_STATUS_ACTION: 400,
  TXN_COMMIT_AMOUNT_EXCEEDED: 400,
  TXN_PARTIAL_NOT_ALLOWED: 400,
  TXN_NOT_REFUNDABLE: 400,
  TXN_ALREADY_COMMITTED: 409,
  TXN_ALREADY_VOIDED: 409,
  // conditional writes (engine/preconditions.ts)
  TXN_PRECONDITION_FAILED: 409,
  IDT_NOT_FOUND: 404,
  IDT_VALIDATION_ERROR: 400,
  IDT_FIELD_NOT_TOKENIZABLE: 400,
  IDT_FIELD_ALREADY_TOKENIZED: 409,
  IDT_FIELD_NOT_TOKENIZED: 400,
  IDT_TOKENIZATION_DISABLED: 403,
  META_ENTITY_NOT_FOUND: 404,
  META_UNSUPPORTED_ENTITY: 400,
  META_TOO_LARGE: 400,
  APIKEY_NOT_FOUND: 404,
  APIKEY_OWNER_REQUIRED: 400,
  HOOK_NOT_FOUND: 404,
  // reconciliation (engine/decide-reconciliation.ts, http/routes/reconciliation-routes.ts)
  RECON_NOT_FOUND: 404,
  RECON_RULE_NOT_FOUND: 404,
  RECON_RULE_INVALID: 400,
  RECON_UPLOAD_NOT_FOUND: 404,
  RECON_UPLOAD_FAILED: 400,
  RECON_EXTERNAL_TXNS_REQUIRED: 400,
  RECON_MATCHING_RULES_REQUIRED: 400,
  AUTH_MISSING_API_KEY: 401,
  AUTH_INVALID_API_KEY: 401,
  AUTH_EXPIRED_API_KEY: 401,
  AUTH_INSUFFICIENT_PERMISSIONS: 403,
  AUTH_SCOPE_ESCALATION: 403,
  AUTH_MASTER_KEY_REQUIRED: 403,
  AUTH_CROSS_OWNER_ACCESS: 403,
  SRCH_QUERY_INVALID: 400,
  SRCH_REINDEX_IN_PROGRESS: 409,
  SNAPSHOT_UNAVAILABLE: 503,
  ADMIN_BACKUP_FAILED: 500,
  SRCH_INDEX_BEHIND: 503,
  SRCH_QUERY_TIMEOUT: 503,
  // moving a ledger to a new process (http/routes/cutover-routes.ts)
  CUTOVER_FENCED: 503,
  CUTOVER_CONFLICT: 409,
  // a replicated group (http/middleware/leader-redirect.ts, http/middleware/read-your-writes.ts, replication/replication-node.ts)
  REPL_NO_LEADER: 503,
  REPL_NOT_LEADER: 503,
  REPL_REJOINING: 503,
  REPL_SEQ_INVALID: 400,
  REPL_SEQ_NOT_APPLIED: 503,
  REPL_SEQ_BEYOND_LOG: 409,
  // the change feed (http/routes/event-routes.ts)
  FEED_CURSOR_INVALID: 400,
  FEED_CURSOR_AHEAD: 409,
  FEED_STREAMS_EXCEEDED: 503,
  // closed periods (engine/closed-periods.ts, http/routes/period-routes.ts)
  TXN_PERIOD_CLOSED: 409,
  PERIOD_CLOSES_AT_INVALID: 400,
  PERIOD_NOT_AFTER_LAST: 409,
  // exchanges between currencies (engine/exchange.ts)
  TXN_EXCHANGE_INEXACT: 400,
  // statements (http/routes/statement-routes.ts)
  BAL_STATEMENT_TOO_LONG: 400,
} as const;

export type ErrorCode = keyof typeof STATUS_BY_CODE;

/**
 * A refusal with a stable code, answered in the error envelope (error-envelope.ts). The core's codes are
 * ApiErrors; the control plane's own codes are its own subclass (cloud/cloud-errors.ts), so neither
 * table names the other's.
 */
export class EnvelopeError extends Error {
  override readonly name: string = 'EnvelopeError';

  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
    readonly details?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

export class ApiError extends EnvelopeError {
  override readonly name = 'ApiError';
  declare readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>, headers?: Record<string, string>) {
    super(code, STATUS_BY_CODE[code], message, details, headers);
  }
}

/** Seconds a client should wait before retrying after QUEUE_BACKPRESSURE. */
export const BACKPRESSURE_RETRY_AFTER_SECONDS = 1;

/** A refusal of the node (ports/node-refusal.ts) as the API reports it: always with Retry-After. */
export function fromNodeRefusal(refusal: NodeRefusal): ApiError {
  return new ApiError(refusal.code, refusal.message, undefined, { 'Retry-After': String(NODE_REFUSAL_RETRY_AFTER_SECONDS) });
}

export function fromRejection(rejection: Rejection): ApiError {
  const headers = rejection.code === 'QUEUE_BACKPRESSURE'
    ? { 'Retry-After': String(BACKPRESSURE_RETRY_AFTER_SECONDS) }
    : undefined;
  const details: Record<string, unknown> = { reason: rejection.reason };
  if (rejection.field !== undefined) details.field = rejection.field;
  const failed = rejection.preconditions?.[0];
  if (failed) {
    // The first precondition that failed, flat (index, balance, what it asked, what was found), and all of them.
    Object.assign(details, failed, { failures: rejection.preconditions });
  }
  return new ApiError(rejection.code, rejection.message, details, headers);
}
