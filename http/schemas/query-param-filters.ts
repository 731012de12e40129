// Filters written in the query string of a list GET, as Blnk takes them: `?<field>_<operator>=<value>`
// (`?name_eq=Savings`, `?currency_in=USD,EUR`, `?created_at_between=2024-01-01|2024-12-31`,
// `?meta_data.tier_eq=gold`), with `logical_operator=and|or`. The last `_` segment of a parameter is its
// operator; a parameter whose last segment is not one (limit, offset, include, from_source, ...) is not
// a filter. The result is the same FilterRequest the filter endpoints take, so the query side judges
// fields and values once, the same way for both.

import { ApiError } from '../api-error.js';
import type { FilterCondition, FilterRequest } from '../../wire/query-requests.js';

/** Filters one query string may carry. */
export const QUERY_FILTERS_MAX = 20;
/** Values of one `in`. */
export const QUERY_IN_VALUES_MAX = 100;
/** Characters of one filter value. */
export const QUERY_VALUE_LENGTH_MAX = 1_000;

/** Operator spellings, as Blnk reads them, to the query side's names. */
const OPERATORS: Record<string, string> = {
  eq: 'eq', ne: 'ne', neq: 'ne', gt: 'gt', gte: 'gte', gteq: 'gte', lt: 'lt', lte: 'lte', lteq: 'lte',
  in: 'in', between: 'between', like: 'like', ilike: 'ilike', isnull: 'isnull', isnotnull: 'isnotnull',
};

/** Paging and such: never filters, whatever they end with. */
const RESERVED = new Set(['page', 'pagesize', 'per_page', 'limit', 'offset', 'sort', 'order', 'order_by', 'order_dir', 'logical_operator', 'instance_id', 'org_id']);

type Query = Record<string, string | string[] | undefined>;

/**
 * The filters a query string asks for, or undefined when it asks for none (the plain list). Problems
 * are 400 GEN_VALIDATION_ERROR naming each parameter (Blnk's "invalid filter parameters").
 */
export function filtersFromQuery(query: Query, page: { limit: number; offset: number }): FilterRequest | undefined {
  const problems: Record<string, string> = {};
  const filters: FilterCondition[] = [];
  for (const [key, raw] of Object.entries(query)) {
    if (raw === undefined || RESERVED.has(key.toLowerCase())) continue;
    const cut = key.lastIndexOf('_');
    if (cut <= 0) continue;
    const operator = OPERATORS[key.slice(cut + 1).toLowerCase()];
    if (!operator) continue;
    const field = key.slice(0, cut);
    const value = Array.isArray(raw) ? (raw[0] ?? '') : raw;
    if (filters.length >= QUERY_FILTERS_MAX) {
      problems[key] = `exceeded maximum number of filters (${QUERY_FILTERS_MAX})`;
      continue;
    }
    if (value.length > QUERY_VALUE_LENGTH_MAX) {
      problems[key] = `value exceeds maximum length (${QUERY_VALUE_LENGTH_MAX} chars)`;
      continue;
    }
    const condition = conditionOf(field, operator, value);
    if (typeof condition === 'string') problems[key] = condition;
    else filters.push(condition);
  }
  const logical = logicalOperator(query.logical_operator);
  if (logical === null) problems.logical_operator = "invalid logical_operator: must be 'and' or 'or'";
  const fields = Object.keys(problems);
  if (fields.length > 0) {
    throw new ApiError('GEN_VALIDATION_ERROR', `invalid filter parameters: ${fields.map((field) => `${field}: ${problems[field]}`).join('; ')}`, problems);
  }
  if (filters.length === 0) return undefined;
  const request: FilterRequest = { filters, limit: page.limit, offset: page.offset };
  if (logical) request.logical_operator = logical;
  return request;
}

function conditionOf(field: string, operator: string, value: string): FilterCondition | string {
  const meta = field.startsWith('meta_data.');
  switch (operator) {
    case 'between': {
      const bounds = value.split('|');
      if (bounds.length !== 2) return 'between operator requires exactly 2 pipe-separated values (value1|value2)';
      return { field, operator, values: bounds.map((bound) => valueOf(bound, meta)) };
    }
    case 'in': {
      const values = value.split(',');
      if (values.length > QUERY_IN_VALUES_MAX) return `IN operator exceeds maximum values (${QUERY_IN_VALUES_MAX})`;
      return { field, operator, values: values.map((item) => valueOf(item.trim(), meta)) };
    }
    case 'isnull':
    case 'isnotnull':
      return { field, operator };
    default:
      return { field, operator, value: valueOf(value, meta) };
  }
}

/**
 * Query values are text. Record fields are typed, and the query side reads text in each field's type;
 * metadata values are not, so there numbers and true/false are read as such, as Blnk reads them.
 */
function valueOf(text: string, meta: boolean): unknown {
  if (!meta) return text;
  if (text === 'true') return true;
  if (text === 'false') return false;
  if (/^-?[0-9]+(\.[0-9]+)?$/.test(text) && Number.isFinite(Number(text)) && Math.abs(Number(text)) <= Number.MAX_SAFE_INTEGER) return Number(text);
  return text;
}

/** 'and' | 'or', undefined when not given, null when it is neither. */
function logicalOperator(raw: string | string[] | undefined): string | undefined | null {
  const text = (Array.isArray(raw) ? raw[0] : raw)?.trim().toLowerCase();
  if (text === undefined || text === '') return undefined;
  return text === 'and' || text === 'or' ? text : null;
}
