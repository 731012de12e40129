// Predicates as parameterised SQL. A predicate is a catalogue field (or a metadata path), an operator and
// values already converted to what SQLite stores. The SQL text is assembled only from the catalogue's
// column names and fixed templates; every client value, metadata paths included, is a `?` parameter.
//
// Semantics worth knowing (the in-memory model in the tests mirrors them):
// - `isnull` is true for unset values: '' text, the zero time (0), a missing or null metadata key.
// - `like` / `ilike` use SQL LIKE patterns (`%`, `_`, `\` escapes the next character). They run as GLOB,
//   which is case-sensitive; `ilike` lowercases both sides (ASCII letters, as SQLite's lower() does).
// - A field over two columns (`balance_id` on transactions) holds when either column satisfies the
//   predicate, except `ne` and `isnull`, which must hold for both (they negate `eq` and `isnotnull`).
// - Comparisons follow SQLite's typing: metadata numbers compare as numbers, strings as text (by byte
//   order), and a number never equals a string.

import type { FieldSpec, FieldType, Operator } from './field-catalog.js';
import type { SqlValue } from './sqlite-connection.js';

export interface Predicate {
  field: FieldSpec;
  /** Set for metadata fields: the bound JSON path. */
  metaPath?: string;
  operator: Operator;
  values: SqlValue[];
}

export interface SqlFragment {
  sql: string;
  params: SqlValue[];
}

const COMPARISONS: Partial<Record<Operator, string>> = { eq: '=', ne: '!=', gt: '>', gte: '>=', lt: '<', lte: '<=' };

export function predicateSql(predicate: Predicate, alias = 't'): SqlFragment {
  const { field } = predicate;
  if (predicate.metaPath !== undefined) {
    return single(`json_extract(${alias}.meta_data, ?)`, [predicate.metaPath], predicate);
  }
  const parts = field.columns.map((column) => single(`${alias}.${column}`, [], predicate));
  if (parts.length === 1) return parts[0] as SqlFragment;
  const joiner = holdsOnEitherColumn(predicate) ? ' OR ' : ' AND ';
  return { sql: '(' + parts.map((part) => part.sql).join(joiner) + ')', params: parts.flatMap((part) => part.params) };
}

/**
 * A predicate on a field over two columns that holds when either column satisfies it, as one fragment
 * per column (their OR is predicateSql's fragment); undefined for any other predicate.
 */
export function eitherColumnSql(predicate: Predicate, alias = 't'): SqlFragment[] | undefined {
  if (predicate.metaPath !== undefined || predicate.field.columns.length < 2 || !holdsOnEitherColumn(predicate)) return undefined;
  return predicate.field.columns.map((column) => single(`${alias}.${column}`, [], predicate));
}

/** `ne` and `isnull` negate `eq` and `isnotnull`, so they must hold for both columns; the rest for either. */
function holdsOnEitherColumn(predicate: Predicate): boolean {
  return predicate.operator !== 'ne' && predicate.operator !== 'isnull';
}

function single(expression: string, expressionParams: SqlValue[], predicate: Predicate): SqlFragment {
  const { operator, values } = predicate;
  const type = predicate.field.type;
  const comparison = COMPARISONS[operator];
  if (comparison) return { sql: `${expression} ${comparison} ?`, params: [...expressionParams, values[0] ?? null] };
  switch (operator) {
    case 'in':
      return { sql: `${expression} IN (${values.map(() => '?').join(', ')})`, params: [...expressionParams, ...values] };
    case 'between':
      return { sql: `${expression} BETWEEN ? AND ?`, params: [...expressionParams, values[0] ?? null, values[1] ?? null] };
    case 'like':
      return { sql: `${expression} GLOB ?`, params: [...expressionParams, values[0] ?? null] };
    case 'ilike':
      return { sql: `lower(${expression}) GLOB ?`, params: [...expressionParams, values[0] ?? null] };
    case 'isnull':
      return { sql: nullTest(expression, type, true), params: expressionParams };
    case 'isnotnull':
      return { sql: nullTest(expression, type, false), params: expressionParams };
    default:
      throw new Error(`operator ${operator} has no template`);
  }
}

/** What "unset" means per type; the expression appears once per template so its parameters bind once. */
function nullTest(expression: string, type: FieldType, isNull: boolean): string {
  const unset = type === 'text' ? `''` : type === 'time' ? '0' : undefined;
  if (unset === undefined) return `${expression} IS ${isNull ? '' : 'NOT '}NULL`;
  return isNull ? `coalesce(${expression}, ${unset}) = ${unset}` : `coalesce(${expression}, ${unset}) != ${unset}`;
}

/** A LIKE pattern (`%`, `_`, backslash escapes) as the equivalent GLOB pattern. */
export function likeToGlob(pattern: string): string {
  let glob = '';
  for (let index = 0; index < pattern.length; index += 1) {
    const char = pattern[index] as string;
    if (char === '\\' && index + 1 < pattern.length) {
      index += 1;
      glob += globLiteral(pattern[index] as string);
    } else if (char === '%') glob += '*';
    else if (char === '_') glob += '?';
    else glob += globLiteral(char);
  }
  return glob;
}

function globLiteral(char: string): string {
  return char === '*' || char === '?' || char === '[' ? `[${char}]` : char;
}

/** Lowercases ASCII letters only, as SQLite's built-in lower() does. */
export function asciiLower(text: string): string {
  return text.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}
