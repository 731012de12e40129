// What a client may filter, search and sort on, per collection. Field names in requests are looked up
// here and only the catalogue's own column names ever reach SQL text; values always travel as bound
// parameters. `meta_data.<key>` fields are handled beside the catalogue (any key, bound as a JSON path).

import { hasMetaData, type Collection } from './index-schema.js';

/** How a field's values are written in requests and compared in SQLite. */
export type FieldType = 'text' | 'amount' | 'time' | 'integer' | 'boolean' | 'meta';

export interface FieldSpec {
  name: string;
  type: FieldType;
  /** The column compared; for `balance_id` on transactions, both sides. */
  columns: readonly string[];
  /** An index leads with this column, so sorting by it is cheap. */
  sortable: boolean;
}

export const OPERATORS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'between', 'like', 'ilike', 'isnull', 'isnotnull'] as const;
export type Operator = (typeof OPERATORS)[number];

/** Operators each type supports; ordering operators make no sense for flags, patterns only for text. */
export const OPERATORS_BY_TYPE: Record<FieldType, readonly Operator[]> = {
  text: OPERATORS,
  meta: OPERATORS,
  amount: ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'between', 'isnull', 'isnotnull'],
  time: ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'between', 'isnull', 'isnotnull'],
  integer: ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'between', 'isnull', 'isnotnull'],
  boolean: ['eq', 'ne', 'in', 'isnull', 'isnotnull'],
};

type FieldList = Array<[name: string, type: FieldType, sortable?: boolean]>;

const FIELDS: Record<Collection, FieldList> = {
  ledgers: [
    ['ledger_id', 'text', true],
    ['name', 'text', true],
    ['created_at', 'time', true],
  ],
  balances: [
    ['balance_id', 'text', true],
    ['ledger_id', 'text', true],
    ['identity_id', 'text', true],
    ['indicator', 'text', true],
    ['currency', 'text', true],
    ['balance', 'amount', true],
    ['credit_balance', 'amount'],
    ['debit_balance', 'amount'],
    ['inflight_balance', 'amount'],
    ['inflight_credit_balance', 'amount'],
    ['inflight_debit_balance', 'amount'],
    ['available_balance', 'amount'],
    ['version', 'integer'],
    ['created_at', 'time', true],
  ],
  transactions: [
    ['transaction_id', 'text', true],
    ['parent_transaction', 'text'],
    ['source', 'text', true],
    ['destination', 'text', true],
    ['reference', 'text', true],
    ['currency', 'text', true],
    ['precise_amount', 'amount', true],
    ['precision', 'amount'],
    ['description', 'text'],
    ['status', 'text', true],
    ['hash', 'text'],
    ['allow_overdraft', 'boolean'],
    ['inflight', 'boolean'],
    ['skip_queue', 'boolean'],
    ['created_at', 'time', true],
    ['scheduled_for', 'time'],
    ['inflight_expiry_date', 'time'],
    ['inflight_commit_date', 'time'],
    ['batch_id', 'text'],
  ],
  identities: [
    ['identity_id', 'text', true],
    ['identity_type', 'text', true],
    ['organization_name', 'text', true],
    ['first_name', 'text'],
    ['last_name', 'text', true],
    ['other_names', 'text'],
    ['gender', 'text'],
    ['dob', 'time'],
    ['email_address', 'text', true],
    ['phone_number', 'text'],
    ['nationality', 'text'],
    ['category', 'text'],
    ['street', 'text'],
    ['city', 'text'],
    ['state', 'text'],
    ['country', 'text'],
    ['post_code', 'text'],
    ['created_at', 'time', true],
  ],
  reconciliations: [
    ['reconciliation_id', 'text', true],
    ['upload_id', 'text', true],
    ['source', 'text'],
    ['strategy', 'text'],
    ['grouping_criteria', 'text'],
    ['is_dry_run', 'boolean'],
    ['status', 'text', true],
    ['started_at', 'time', true],
    ['completed_at', 'time'],
    ['matched_transactions', 'integer'],
    ['unmatched_transactions', 'integer'],
    ['processed_count', 'integer'],
    ['total_count', 'integer'],
    ['failure_reason', 'text'],
    ['attempts', 'integer'],
  ],
};

function buildCatalog(collection: Collection): Map<string, FieldSpec> {
  const catalog = new Map<string, FieldSpec>();
  for (const [name, type, sortable = false] of FIELDS[collection]) catalog.set(name, { name, type, columns: [name], sortable });
  // A transaction touches a balance on either side; filtering by it matches source or destination.
  if (collection === 'transactions') {
    catalog.set('balance_id', { name: 'balance_id', type: 'text', columns: ['source', 'destination'], sortable: false });
  }
  // A run is created when it starts: `created_at` (the default sort everywhere) is its start.
  if (collection === 'reconciliations') {
    catalog.set('created_at', { name: 'created_at', type: 'time', columns: ['started_at'], sortable: true });
  }
  return catalog;
}

export const CATALOG: Record<Collection, Map<string, FieldSpec>> = {
  ledgers: buildCatalog('ledgers'),
  balances: buildCatalog('balances'),
  transactions: buildCatalog('transactions'),
  identities: buildCatalog('identities'),
  reconciliations: buildCatalog('reconciliations'),
};

export const META_PREFIX = 'meta_data.';
export const META_PATH_SEGMENTS_MAX = 8;
export const META_KEY_LENGTH_MAX = 128;

/**
 * The JSON path for `meta_data.a.b`: `$."a"."b"`. Quoting each key keeps dots, spaces and brackets
 * inside it literal; a double quote cannot be quoted in SQLite's path syntax, so keys with one are
 * refused. The path is bound as a parameter like any value.
 */
export function metaPath(field: string): { ok: true; path: string } | { ok: false; message: string } {
  const keys = field.slice(META_PREFIX.length).split('.');
  if (keys.length > META_PATH_SEGMENTS_MAX) return { ok: false, message: `meta_data paths have at most ${META_PATH_SEGMENTS_MAX} keys` };
  for (const key of keys) {
    if (key === '') return { ok: false, message: `empty key in ${JSON.stringify(field)}` };
    if (key.length > META_KEY_LENGTH_MAX) return { ok: false, message: `meta_data keys have at most ${META_KEY_LENGTH_MAX} characters` };
    if (/["\u0000-\u001f]/.test(key)) return { ok: false, message: 'meta_data keys cannot contain double quotes or control characters' };
  }
  return { ok: true, path: '$' + keys.map((key) => `."${key}"`).join('') };
}

export function fieldNames(collection: Collection): string[] {
  return [...CATALOG[collection].keys(), ...(hasMetaData(collection) ? ['meta_data.<key>'] : [])];
}

export function sortableFields(collection: Collection): string[] {
  return [...CATALOG[collection].values()].filter((spec) => spec.sortable).map((spec) => spec.name);
}
