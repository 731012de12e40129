// Rejections are values from a closed set, not thrown errors: `decide` returns one when a command cannot
// be carried out. Each code has a stable machine reason; the HTTP edge maps codes to statuses.

import type { PreconditionFailure } from './precondition.js';

export const REJECTION_REASONS = {
  LGR_NOT_FOUND: 'ledger_not_found',
  BAL_NOT_FOUND: 'balance_not_found',
  BAL_DUPLICATE_INDICATOR: 'duplicate_indicator',
  TXN_NOT_FOUND: 'transaction_not_found',
  TXN_VALIDATION_ERROR: 'invalid_transaction',
  TXN_INSUFFICIENT_FUNDS: 'insufficient_funds',
  TXN_OVERDRAFT_LIMIT_EXCEEDED: 'overdraft_limit_exceeded',
  TXN_DUPLICATE_REFERENCE: 'duplicate_reference',
  TXN_CURRENCY_MISMATCH: 'currency_mismatch',
  TXN_SAME_SOURCE_DESTINATION: 'same_source_destination',
  TXN_INVALID_DISTRIBUTION: 'invalid_distribution',
  TXN_NOT_INFLIGHT: 'not_inflight',
  TXN_COMMIT_AMOUNT_EXCEEDED: 'commit_amount_exceeded',
  TXN_ALREADY_COMMITTED: 'already_committed',
  TXN_ALREADY_VOIDED: 'already_voided',
  TXN_PARTIAL_NOT_ALLOWED: 'partial_not_allowed',
  TXN_NOT_REFUNDABLE: 'not_refundable',
  GEN_CONFLICT: 'conflict',
  GEN_RESOURCE_LOCKED: 'resource_locked',
  QUEUE_BACKPRESSURE: 'queue_full',
  IDT_NOT_FOUND: 'identity_not_found',
  META_ENTITY_NOT_FOUND: 'entity_not_found',
  META_UNSUPPORTED_ENTITY: 'unsupported_entity',
  META_TOO_LARGE: 'metadata_too_large',
  APIKEY_NOT_FOUND: 'api_key_not_found',
  HOOK_NOT_FOUND: 'hook_not_found',
  RECON_RULE_INVALID: 'rule_invalid',
  RECON_RULE_NOT_FOUND: 'rule_not_found',
  RECON_UPLOAD_NOT_FOUND: 'upload_not_found',
  RECON_NOT_FOUND: 'reconciliation_not_found',
  BAL_MONITOR_NOT_FOUND: 'monitor_not_found',
  BAL_MONITOR_LIMIT_EXCEEDED: 'monitor_limit_exceeded',
  BAL_LINEAGE_LIMIT_EXCEEDED: 'lineage_limit_exceeded',
  TXN_PRECONDITION_FAILED: 'precondition_failed',
  // closed periods (engine/closed-periods.ts)
  TXN_PERIOD_CLOSED: 'period_closed',
  PERIOD_CLOSES_AT_INVALID: 'closes_at_invalid',
  PERIOD_NOT_AFTER_LAST: 'period_not_after_last',
  // exchanges (engine/exchange.ts)
  TXN_EXCHANGE_INEXACT: 'exchange_inexact',
} as const;

export type RejectionCode = keyof typeof REJECTION_REASONS;

export interface Rejection {
  code: RejectionCode;
  reason: string;
  message: string;
  /** For a request of many items (a bulk), the index of the item refused. */
  item?: number;
  /** The field at fault, when one is (a reused reference: the field that differs from the original). */
  field?: string;
  /** TXN_PRECONDITION_FAILED: every precondition that did not hold (preconditions.ts). */
  preconditions?: PreconditionFailure[];
}

export function reject(code: RejectionCode, message: string): Rejection {
  return { code, reason: REJECTION_REASONS[code], message };
}
