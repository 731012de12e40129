// Rejections are values from a closed set, not thrown errors: `decide` returns one when a command cannot
// be carried out. Each code has a stable machine reason; the HTTP edge maps codes to statuses.

export const REJECTION_REASONS = {
  LDG_NOT_FOUND: 'ledger_not_found',
  BAL_NOT_FOUND: 'balance_not_found',
  BAL_DUPLICATE_INDICATOR: 'duplicate_indicator',
  TXN_NOT_FOUND: 'transaction_not_found',
  TXN_INSUFFICIENT_FUNDS: 'insufficient_funds',
  TXN_DUPLICATE_REFERENCE: 'duplicate_reference',
  TXN_CURRENCY_MISMATCH: 'currency_mismatch',
  TXN_SAME_SOURCE_DESTINATION: 'same_source_destination',
  QUEUE_BACKPRESSURE: 'queue_full',
} as const;

export type RejectionCode = keyof typeof REJECTION_REASONS;

export interface Rejection {
  code: RejectionCode;
  reason: string;
  message: string;
}

export function reject(code: RejectionCode, message: string): Rejection {
  return { code, reason: REJECTION_REASONS[code], message };
}
