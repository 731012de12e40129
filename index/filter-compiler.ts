// The filter API (POST /<collection>/filter) compiled to one parameterised SELECT and, when asked, one
// COUNT. Unknown fields, operators and sort fields are refused with a message listing what is allowed.
// Every sort ends with the row id in the same direction: rows with equal sort values come back in the
// order they first appeared in the log, so paging with offset never repeats or skips a row.

import { CATALOG, fieldNames, META_PREFIX, metaPath, OPERATORS, OPERATORS_BY_TYPE, sortableFields, type FieldSpec, type Operator } from './field-catalog.js';
import { convertValue } from './field-values.js';
import { hasMetaData, LAYOUTS, ROW_ID, selectColumns, type Collection } from './index-schema.js';
import { asciiLower, eitherColumnSql, likeToGlob, predicateSql, type Predicate, type SqlFragment } from './predicates.js';
import type { FilterCondition, FilterRequest } from '../wire/query-requests.js';
import type { SqlValue } from './sqlite-connection.js';

export type { FilterCondition, FilterRequest } from '../wire/query-requests.js';

export interface CompiledQuery {
  select: SqlFragment;
  count?: SqlFragment;
}

export type Compiled<T> = { ok: true; value: T } | { ok: false; message: string };

/** Values of one `in`. */
export const IN_VALUES_MAX = 1_000;

const fail = <T>(message: string): Compiled<T> => ({ ok: false, message });

export function compileFilter(collection: Collection, request: FilterRequest): Compiled<CompiledQuery> {
  const logical = (request.logical_operator ?? 'and').toLowerCase();
  if (logical !== 'and' && logical !== 'or') return fail(`logical_operator must be and or or, not ${JSON.stringify(request.logical_operator)}`);
  const order = orderBy(collection, request.sort_by ?? 'created_at', request.sort_order ?? 'desc');
  if (!order.ok) return order;

  const predicates: Predicate[] = [];
  for (const condition of request.filters) {
    const predicate = compileCondition(collection, condition);
    if (!predicate.ok) return predicate;
    predicates.push(predicate.value);
  }
  const where = joinWhere(predicates.map((predicate) => predicateSql(predicate)), logical === 'and' ? ' AND ' : ' OR ');
  const layout = LAYOUTS[collection];
  const select = (logical === 'and' ? eitherSideSelect(collection, predicates, order.value, request) : undefined) ?? {
    sql: `SELECT ${selectColumns(layout)} FROM ${layout.table} t${where.sql} ORDER BY ${order.value.sql} LIMIT ? OFFSET ?`,
    params: [...where.params, request.limit, request.offset],
  };
  const compiled: CompiledQuery = { select };
  if (request.include_count) compiled.count = { sql: `SELECT count(*) AS total FROM ${layout.table} t${where.sql}`, params: where.params };
  return { ok: true, value: compiled };
}

/**
 * The page of a filter whose conditions (joined with AND) include one on a field over two columns
 * (`balance_id`: source or destination), from the first `offset + limit` rows of each side in the
 * page's order, merged and cut to the page. SQLite runs `source = ? OR destination = ?` by collecting
 * every row of either side and sorting them all, so a page of a busy balance cost as much as its whole
 * history; each side alone reads its `(column, created_at)` index in order, stops at the page's end and
 * needs no table row (the row id and the sort value are in the index); only the page's rows are read.
 * The page is the same: each row among the first `offset + limit` of the whole is among the first
 * `offset + limit` of its side. Undefined when no condition is of that kind.
 */
function eitherSideSelect(collection: Collection, predicates: Predicate[], order: Order, request: FilterRequest): SqlFragment | undefined {
  const split = predicates.findIndex((predicate) => eitherColumnSql(predicate) !== undefined);
  if (split < 0) return undefined;
  const sides = eitherColumnSql(predicates[split] as Predicate) as SqlFragment[];
  const rest = predicates.filter((_, index) => index !== split).map((predicate) => predicateSql(predicate));
  const layout = LAYOUTS[collection];
  const branches = sides.map((side) => {
    const where = joinWhere([side, ...rest], ' AND ');
    return {
      sql: `SELECT * FROM (SELECT t.${ROW_ID}, t.${order.column} FROM ${layout.table} t${where.sql} ORDER BY ${order.sql} LIMIT ?)`,
      params: [...where.params, request.offset + request.limit],
    };
  });
  const page = `SELECT ${ROW_ID} FROM (${branches.map((branch) => branch.sql).join(' UNION ')}) t ORDER BY ${order.sql} LIMIT ? OFFSET ?`;
  return {
    sql: `SELECT ${selectColumns(layout)} FROM ${layout.table} t WHERE t.${ROW_ID} IN (${page}) ORDER BY ${order.sql}`,
    params: [...branches.flatMap((branch) => branch.params), request.limit, request.offset],
  };
}

export function joinWhere(fragments: SqlFragment[], joiner: string): SqlFragment {
  if (fragments.length === 0) return { sql: '', params: [] };
  return {
    sql: ' WHERE ' + fragments.map((fragment) => `(${fragment.sql})`).join(joiner),
    params: fragments.flatMap((fragment) => fragment.params),
  };
}

/** The field a request names: a catalogue field, or a metadata path typed as `meta`. */
export function resolveField(collection: Collection, name: string): Compiled<{ spec: FieldSpec; metaPath?: string }> {
  if (typeof name === 'string' && name.startsWith(META_PREFIX) && hasMetaData(collection)) {
    const path = metaPath(name);
    if (!path.ok) return fail(path.message);
    return { ok: true, value: { spec: { name, type: 'meta', columns: ['meta_data'], sortable: false }, metaPath: path.path } };
  }
  const spec = CATALOG[collection].get(name);
  if (!spec) {
    return fail(`unknown field ${JSON.stringify(name)} for ${collection}; allowed fields: ${fieldNames(collection).join(', ')}`);
  }
  return { ok: true, value: { spec } };
}

function compileCondition(collection: Collection, condition: FilterCondition): Compiled<Predicate> {
  const resolved = resolveField(collection, condition.field);
  if (!resolved.ok) return resolved;
  const { spec, metaPath: path } = resolved.value;
  const operator = String(condition.operator).toLowerCase() as Operator;
  if (!(OPERATORS as readonly string[]).includes(operator)) {
    return fail(`unknown operator ${JSON.stringify(condition.operator)}; allowed operators: ${OPERATORS.join(', ')}`);
  }
  const allowed = OPERATORS_BY_TYPE[spec.type];
  if (!allowed.includes(operator)) {
    return fail(`operator ${operator} does not apply to ${spec.name}; allowed operators for it: ${allowed.join(', ')}`);
  }
  const operands = operandsOf(spec, operator, condition);
  if (!operands.ok) return operands;
  const predicate: Predicate = { field: spec, operator, values: operands.value };
  if (path !== undefined) predicate.metaPath = path;
  return { ok: true, value: predicate };
}

function operandsOf(spec: FieldSpec, operator: Operator, condition: FilterCondition): Compiled<SqlValue[]> {
  const name = spec.name;
  if (operator === 'isnull' || operator === 'isnotnull') return { ok: true, value: [] };
  const list = condition.values ?? (Array.isArray(condition.value) ? condition.value : undefined);
  if (operator === 'in') {
    if (!list || list.length === 0) return fail(`${name} ${operator} needs "values": a non-empty array`);
    if (list.length > IN_VALUES_MAX) return fail(`${name} ${operator} takes at most ${IN_VALUES_MAX} values`);
    return convertAll(spec, list);
  }
  if (operator === 'between') {
    if (!list || list.length !== 2) return fail(`${name} between needs "values": [low, high]`);
    return convertAll(spec, list);
  }
  if (condition.value === undefined || condition.value === null || Array.isArray(condition.value)) {
    return fail(`${name} ${operator} needs a single "value"`);
  }
  if (operator === 'like' || operator === 'ilike') {
    if (typeof condition.value !== 'string') return fail(`${name} ${operator} takes a string pattern`);
    const pattern = operator === 'ilike' ? asciiLower(condition.value) : condition.value;
    return { ok: true, value: [likeToGlob(pattern)] };
  }
  return convertAll(spec, [condition.value]);
}

function convertAll(spec: FieldSpec, values: unknown[]): Compiled<SqlValue[]> {
  const converted: SqlValue[] = [];
  for (const value of values) {
    const result = convertValue(spec, value);
    if (!result.ok) return result;
    converted.push(result.value);
  }
  return { ok: true, value: converted };
}

/** A filter's order: the `ORDER BY` text, and the column it sorts by before the row id. */
interface Order {
  sql: string;
  column: string;
}

/** `ORDER BY` text from a sortable field and a direction; both are checked against fixed lists. */
export function orderBy(collection: Collection, sortBy: string, sortOrder: string): Compiled<Order> {
  const direction = String(sortOrder).toLowerCase();
  if (direction !== 'asc' && direction !== 'desc') return fail(`sort_order must be asc or desc, not ${JSON.stringify(sortOrder)}`);
  const spec = CATALOG[collection].get(sortBy);
  if (!spec || !spec.sortable) {
    return fail(`cannot sort ${collection} by ${JSON.stringify(sortBy)}; sortable (indexed) fields: ${sortableFields(collection).join(', ')}`);
  }
  const keyword = direction.toUpperCase();
  const column = spec.columns[0] as string;
  return { ok: true, value: { sql: `t.${column} ${keyword}, t.${ROW_ID} ${keyword}`, column } };
}
