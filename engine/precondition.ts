// What a precondition of a transaction is, as requests give them and refusals report them (the judging
// is preconditions.ts). Kept apart, importing nothing, so the records, commands and rejections that carry
// preconditions can name them without depending on the code that judges them.

/** Preconditions one transaction may carry. */
export const PRECONDITIONS_MAX = 16;

export const PRECONDITION_FIELDS = [
  'balance', 'available_balance', 'credit_balance', 'debit_balance', 'inflight_balance', 'inflight_credit_balance', 'inflight_debit_balance',
] as const;
export type PreconditionField = (typeof PRECONDITION_FIELDS)[number];

export const PRECONDITION_OPERATORS = ['>=', '<=', '=='] as const;
export type PreconditionOperator = (typeof PRECONDITION_OPERATORS)[number];

/** One precondition as the request gave it: a version, a condition on a field, or both. */
export interface Precondition {
  /** The balance as the legs name one: an id or an `@name`. */
  balance_id: string;
  version?: number;
  field?: PreconditionField;
  operator?: PreconditionOperator;
  /** The threshold in the smallest unit, exactly (may be negative). */
  precise_value?: bigint;
}

/** A precondition that did not hold: which, on which balance, what it asked and what was found. */
export interface PreconditionFailure {
  /** Its place in the request's list. */
  index: number;
  /** The balance as the precondition named it. */
  balance_id: string;
  /** `version`, or the field compared. */
  field: 'version' | PreconditionField;
  operator: PreconditionOperator;
  expected: bigint | number;
  /** What the balance had (its version before, or the field after); null when no balance was found. */
  found: bigint | number | null;
}
