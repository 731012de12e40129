// A plain in-memory evaluation of the filter API, written independently of index/: records in a list,
// predicates as JavaScript comparisons with SQLite's typing rules (numbers before text, text by UTF-8
// bytes, null never compares), sorting by the field and then by first appearance. The differential test
// runs the same requests here and against the real index and expects identical pages.

import type { BalanceRecord, IdentityRecord, LedgerRecord, TransactionRecord } from '../../engine/records.js';

export type ModelCollection = 'ledgers' | 'balances' | 'transactions' | 'identities';
type Kind = 'text' | 'amount' | 'time' | 'integer' | 'boolean' | 'meta';
type Value = string | number | bigint | null;

export interface ModelCondition {
  field: string;
  operator: string;
  value?: unknown;
  values?: unknown[];
}

export interface ModelRequest {
  filters: ModelCondition[];
  logical_operator?: string;
  sort_by?: string;
  sort_order?: string;
  limit?: number;
  offset?: number;
}

type AnyRecord = LedgerRecord | BalanceRecord | TransactionRecord | IdentityRecord;
type Getter = (record: any) => Value[];

const text = (name: string): [Kind, Getter] => ['text', (record) => [record[name] ?? '']];
const time = (name: string): [Kind, Getter] => ['time', (record) => [record[name]]];
const flag = (name: string): [Kind, Getter] => ['boolean', (record) => [record[name] ? 1 : 0]];
const amount = (read: (record: any) => bigint): [Kind, Getter] => ['amount', (record) => [read(record)]];

export const MODEL_FIELDS: Record<ModelCollection, Record<string, [Kind, Getter]>> = {
  ledgers: { ledger_id: text('ledger_id'), name: text('name'), created_at: time('created_at') },
  balances: {
    balance_id: text('balance_id'), ledger_id: text('ledger_id'), identity_id: text('identity_id'), indicator: text('indicator'),
    currency: text('currency'),
    balance: amount((b: BalanceRecord) => b.credit_balance - b.debit_balance),
    credit_balance: amount((b: BalanceRecord) => b.credit_balance),
    debit_balance: amount((b: BalanceRecord) => b.debit_balance),
    inflight_balance: amount((b: BalanceRecord) => b.inflight_credit_balance - b.inflight_debit_balance),
    inflight_credit_balance: amount((b: BalanceRecord) => b.inflight_credit_balance),
    inflight_debit_balance: amount((b: BalanceRecord) => b.inflight_debit_balance),
    available_balance: amount((b: BalanceRecord) => b.credit_balance - b.debit_balance - b.inflight_debit_balance),
    version: ['integer', (b: BalanceRecord) => [b.version]],
    created_at: time('created_at'),
  },
  transactions: {
    transaction_id: text('transaction_id'), parent_transaction: text('parent_transaction'), source: text('source'),
    destination: text('destination'), reference: text('reference'), currency: text('currency'),
    precise_amount: amount((t: TransactionRecord) => t.precise_amount), precision: amount((t: TransactionRecord) => t.precision),
    description: text('description'), status: text('status'), hash: text('hash'), allow_overdraft: flag('allow_overdraft'),
    inflight: flag('inflight'), skip_queue: flag('skip_queue'), created_at: time('created_at'), scheduled_for: time('scheduled_for'),
    inflight_expiry_date: time('inflight_expiry_date'), inflight_commit_date: time('inflight_commit_date'), batch_id: text('batch_id'),
    balance_id: ['text', (t: TransactionRecord) => [t.source, t.destination]],
  },
  identities: Object.fromEntries([
    ...['identity_id', 'identity_type', 'organization_name', 'first_name', 'last_name', 'other_names', 'gender', 'email_address',
      'phone_number', 'nationality', 'category', 'street', 'city', 'state', 'country', 'post_code'].map((name) => [name, text(name)]),
    ['dob', time('dob')], ['created_at', time('created_at')],
  ]),
};

export const MODEL_SORTABLE: Record<ModelCollection, string[]> = {
  ledgers: ['ledger_id', 'name', 'created_at'],
  balances: ['balance_id', 'ledger_id', 'identity_id', 'indicator', 'currency', 'balance', 'created_at'],
  transactions: ['transaction_id', 'source', 'destination', 'reference', 'currency', 'precise_amount', 'status', 'created_at'],
  identities: ['identity_id', 'identity_type', 'organization_name', 'last_name', 'email_address', 'created_at'],
};

/** A metadata value as json_extract hands it to SQLite. */
function metaValue(record: AnyRecord, path: string[]): Value {
  let value: unknown = record.meta_data;
  for (const key of path) {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, key)) return null;
    value = (value as Record<string, unknown>)[key];
  }
  if (value === undefined || value === null) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'number' || typeof value === 'string') return value;
  return JSON.stringify(value);
}

function convert(kind: Kind, value: unknown): Value {
  switch (kind) {
    case 'text': return String(value);
    case 'amount': return BigInt(value as string);
    case 'integer': return Number(value);
    case 'time': return (value as string).startsWith('0001-01-01') ? 0 : Date.parse(value as string);
    case 'boolean': return value === true || value === 'true' ? 1 : 0;
    case 'meta': return typeof value === 'boolean' ? (value ? 1 : 0) : typeof value === 'bigint' ? Number(value) : (value as Value);
  }
}

/** SQLite's ordering: NULL, then numbers, then text (by bytes); undefined when either side is NULL. */
export function compareValues(a: Value, b: Value): number | undefined {
  if (a === null || b === null) return undefined;
  const rank = (value: Value): number => (typeof value === 'string' ? 2 : 1);
  if (rank(a) !== rank(b)) return rank(a) - rank(b);
  if (typeof a === 'string') return Buffer.compare(Buffer.from(a), Buffer.from(b as string));
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  const x = Number(a);
  const y = Number(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

function likeRegex(pattern: string, caseless: boolean): RegExp {
  let source = '';
  const chars = [...pattern];
  for (let index = 0; index < chars.length; index += 1) {
    const char = chars[index] as string;
    if (char === '\\' && index + 1 < chars.length) source += escapeRegex(chars[++index] as string);
    else if (char === '%') source += '[\\s\\S]*';
    else if (char === '_') source += '[\\s\\S]';
    else source += escapeRegex(caseless ? asciiLower(char) : char);
  }
  return new RegExp(`^${source}$`, 'u');
}

const escapeRegex = (char: string): string => char.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const asciiLower = (value: string): string => value.replace(/[A-Z]/g, (letter) => letter.toLowerCase());

function holds(kind: Kind, value: Value, condition: ModelCondition): boolean {
  const operator = condition.operator.toLowerCase();
  const list = condition.values ?? (Array.isArray(condition.value) ? condition.value : []);
  const operand = (): Value => convert(kind, condition.value);
  const compared = (other: Value): number | undefined => compareValues(value, other);
  switch (operator) {
    case 'eq': return compared(operand()) === 0;
    case 'ne': { const c = compared(operand()); return c !== undefined && c !== 0; }
    case 'gt': { const c = compared(operand()); return c !== undefined && c > 0; }
    case 'gte': { const c = compared(operand()); return c !== undefined && c >= 0; }
    case 'lt': { const c = compared(operand()); return c !== undefined && c < 0; }
    case 'lte': { const c = compared(operand()); return c !== undefined && c <= 0; }
    case 'in': return list.some((item) => compared(convert(kind, item)) === 0);
    case 'between': {
      const low = compared(convert(kind, list[0]));
      const high = compared(convert(kind, list[1]));
      return low !== undefined && high !== undefined && low >= 0 && high <= 0;
    }
    case 'like':
    case 'ilike': {
      if (value === null) return false;
      const subject = typeof value === 'string' ? value : String(value);
      const caseless = operator === 'ilike';
      return likeRegex(condition.value as string, caseless).test(caseless ? asciiLower(subject) : subject);
    }
    case 'isnull':
    case 'isnotnull': {
      const unset = value === null || (kind === 'text' && value === '') || (kind === 'time' && value === 0);
      return operator === 'isnull' ? unset : !unset;
    }
    default:
      throw new Error(`model has no operator ${operator}`);
  }
}

function matches(collection: ModelCollection, record: AnyRecord, condition: ModelCondition): boolean {
  if (condition.field.startsWith('meta_data.')) {
    return holds('meta', metaValue(record, condition.field.slice('meta_data.'.length).split('.')), condition);
  }
  const [kind, get] = MODEL_FIELDS[collection][condition.field] as [Kind, Getter];
  const values = get(record);
  const results = values.map((value) => holds(kind, value, condition));
  // A field over two columns: either side, except the negations, which need both.
  const operator = condition.operator.toLowerCase();
  return operator === 'ne' || operator === 'isnull' ? results.every(Boolean) : results.some(Boolean);
}

/** The page a filter request should return, and the total count, from records in first-appearance order. */
export function evaluateFilter<T extends AnyRecord>(collection: ModelCollection, records: T[], request: ModelRequest): { page: T[]; total: number } {
  const any = (request.logical_operator ?? 'and').toLowerCase() === 'or';
  const selected = records
    .map((record, position) => ({ record, position }))
    .filter(({ record }) => {
      if (request.filters.length === 0) return true;
      const results = request.filters.map((condition) => matches(collection, record, condition));
      return any ? results.some(Boolean) : results.every(Boolean);
    });
  const sortBy = request.sort_by ?? 'created_at';
  const direction = (request.sort_order ?? 'desc').toLowerCase() === 'asc' ? 1 : -1;
  const get = (MODEL_FIELDS[collection][sortBy] as [Kind, Getter])[1];
  selected.sort((a, b) => {
    const order = compareValues(get(a.record)[0] as Value, get(b.record)[0] as Value) ?? 0;
    return direction * (order !== 0 ? order : a.position - b.position);
  });
  const offset = request.offset ?? 0;
  const limit = request.limit ?? 20;
  return { page: selected.slice(offset, offset + limit).map(({ record }) => record), total: selected.length };
}
