// filter_by, as Typesense reads it: clauses joined by `&&` and `||`, grouped with parentheses. The two
// operators have the same precedence and group from the left, as in Typesense (its parser says so), so
// `a || b && c` is `(a || b) && c`. Write parentheses to say otherwise.
//
// A clause: `field:=v`, `field:!=v`, `field:>v` (>=, <, <=), `field:[a..b]` (inclusive range),
// `field:[v1,v2]` (any of), `field:!=[v1,v2]` (none of). `field:v` is `=`, except on a column the
// full-text index searches, where it holds the words of v, as Typesense reads it on a string field. Values may be `backquoted` (needed for
// a value with `&&`, `||` or parentheses in it). Time fields take Unix seconds, as Typesense stores them.
//
// The expression compiles to the conjuncts of its top level: the clauses and groups joined by `&&` at
// the outside. Each keeps what the search plans need to know about it (search-executor.ts): whether an
// index finds its rows directly, its FTS5 term expression when it has one, the window of seconds it keeps.
// A `||` group is one conjunct whose SQL is the OR of its parts; it has a term expression when every part
// has one, and counts as indexed when every clause in it is.

import { CATALOG, type FieldSpec } from './field-catalog.js';
import { convertValue } from './field-values.js';
import { resolveField, type Compiled } from './filter-compiler.js';
import { ftsTable, LAYOUTS, ROW_ID, termOf, type Collection } from './index-schema.js';
import { predicateSql, type Predicate, type SqlFragment } from './predicates.js';
import type { SqlValue } from './sqlite-connection.js';

/** Clauses in one filter_by, however they are grouped. */
export const FILTER_CLAUSES_MAX = 32;
/** Parentheses nested inside one another. */
export const FILTER_DEPTH_MAX = 8;

const fail = <T>(message: string): Compiled<T> => ({ ok: false, message });

/** A top-level conjunct of filter_by as SQL, whether an index finds its rows directly, and its terms when it has them. */
export interface ClauseSql {
  fragment: SqlFragment;
  indexed: boolean;
  /** The conjunct as an FTS5 expression over term columns (index-schema.ts termColumns), when it can be one. */
  term?: string;
  /** The conjunct as the seconds it keeps of the counted time column, when it is one window of them. */
  window?: SecondsWindow;
}

/** Seconds of a time column, first and last inclusive (unbounded: the largest safe integers). */
export interface SecondsWindow {
  from_second: number;
  to_second: number;
}

/** filter_by parsed: a clause's text, or an operator over its two operands (left-grouped). */
export type FilterNode =
  | { kind: 'clause'; text: string }
  | { kind: 'and' | 'or'; left: FilterNode; right: FilterNode };

export function compileFilterBy(collection: Collection, filterBy: string): Compiled<ClauseSql[]> {
  if (filterBy.trim() === '') return { ok: true, value: [] };
  const tree = parseFilterBy(filterBy);
  if (!tree.ok) return tree;
  const conjuncts: ClauseSql[] = [];
  for (const node of topLevelConjuncts(tree.value)) {
    const compiled = nodeSql(collection, node);
    if (!compiled.ok) return compiled;
    conjuncts.push(compiled.value);
  }
  return { ok: true, value: conjuncts };
}

/** The operands of the `&&` chains at the top of the tree (parentheses around an `&&` chain change nothing). */
function topLevelConjuncts(node: FilterNode): FilterNode[] {
  return node.kind === 'and' ? [...topLevelConjuncts(node.left), ...topLevelConjuncts(node.right)] : [node];
}

function nodeSql(collection: Collection, node: FilterNode): Compiled<ClauseSql> {
  if (node.kind === 'clause') {
    const clause = parseClause(node.text);
    if (!clause.ok) return clause;
    const compiled = clauseSql(collection, clause.value);
    if (!compiled.ok) return compiled;
    const { fragment, term, window } = compiled.value;
    return { ok: true, value: { fragment, indexed: indexedClause(collection, clause.value), ...(term === undefined ? {} : { term }), ...(window === undefined ? {} : { window }) } };
  }
  const left = nodeSql(collection, node.left);
  if (!left.ok) return left;
  const right = nodeSql(collection, node.right);
  if (!right.ok) return right;
  const joiner = node.kind === 'and' ? 'AND' : 'OR';
  const parts = [left.value, right.value];
  const value: ClauseSql = {
    fragment: { sql: parts.map((part) => `(${part.fragment.sql})`).join(` ${joiner} `), params: parts.flatMap((part) => part.fragment.params) },
    indexed: parts.every((part) => part.indexed),
  };
  if (parts.every((part) => part.term !== undefined)) value.term = `(${parts.map((part) => part.term).join(` ${joiner} `)})`;
  return { ok: true, value };
}

// ---- reading the expression ----

type Token = { kind: 'clause'; text: string } | { kind: 'and' | 'or' | 'open' | 'close' };

/**
 * The tokens of filter_by. Outside backquotes and brackets, `&&` and `||` are operators, `(` opens a
 * group where a clause could start, and `)` closes one while a group is open; anything else is clause
 * text (so a value like `x(1)` outside any group still reads as it always did).
 */
function tokenize(text: string): Compiled<Token[]> {
  const tokens: Token[] = [];
  let current = '';
  let quoted = false;
  let brackets = 0;
  let open = 0;
  const endClause = (): void => {
    if (current.trim() !== '') tokens.push({ kind: 'clause', text: current });
    current = '';
  };
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index] as string;
    if (char === '`') quoted = !quoted;
    if (quoted) {
      current += char;
      continue;
    }
    if (char === '[') brackets += 1;
    if (char === ']' && brackets > 0) brackets -= 1;
    if (brackets === 0) {
      const pair = text.slice(index, index + 2);
      if (pair === '&&' || pair === '||') {
        endClause();
        tokens.push({ kind: pair === '&&' ? 'and' : 'or' });
        index += 1;
        continue;
      }
      if (char === '(' && current.trim() === '') {
        current = '';
        open += 1;
        if (open > FILTER_DEPTH_MAX) return fail(`filter_by nests parentheses more than ${FILTER_DEPTH_MAX} deep`);
        tokens.push({ kind: 'open' });
        continue;
      }
      if (char === ')' && open > 0) {
        endClause();
        open -= 1;
        tokens.push({ kind: 'close' });
        continue;
      }
    }
    current += char;
  }
  if (quoted) return fail('unclosed backquote in filter_by');
  endClause();
  return { ok: true, value: tokens };
}

/** filter_by as a tree: `&&` and `||` of equal precedence, grouped from the left; parentheses first. */
export function parseFilterBy(text: string): Compiled<FilterNode> {
  const tokens = tokenize(text);
  if (!tokens.ok) return tokens;
  const list = tokens.value;
  const clauses = list.filter((token) => token.kind === 'clause').length;
  if (clauses > FILTER_CLAUSES_MAX) return fail(`filter_by has more than ${FILTER_CLAUSES_MAX} clauses`);
  let position = 0;
  const operand = (): Compiled<FilterNode> => {
    const token = list[position];
    if (token === undefined || token.kind === 'and' || token.kind === 'or' || token.kind === 'close') {
      return fail('empty clause in filter_by');
    }
    position += 1;
    if (token.kind === 'clause') {
      if (token.text.trim().startsWith('$')) return fail('filter_by: joins ($collection(...)) are not served');
      return { ok: true, value: { kind: 'clause', text: token.text } };
    }
    const inner = expression();
    if (!inner.ok) return inner;
    if (list[position]?.kind !== 'close') return fail('unclosed ( in filter_by');
    position += 1;
    return inner;
  };
  const expression = (): Compiled<FilterNode> => {
    let left = operand();
    if (!left.ok) return left;
    for (let token = list[position]; token?.kind === 'and' || token?.kind === 'or'; token = list[position]) {
      position += 1;
      const right = operand();
      if (!right.ok) return right;
      left = { ok: true, value: { kind: token.kind, left: left.value, right: right.value } };
    }
    return left;
  };
  const tree = expression();
  if (!tree.ok) return tree;
  if (position < list.length) {
    const token = list[position] as Token;
    const near = token.kind === 'clause' ? ` near ${JSON.stringify(token.text.trim())}` : '';
    return fail(`cannot read filter_by${near}: join clauses and groups with && or ||`);
  }
  return tree;
}

// ---- one clause ----

interface Clause {
  field: string;
  operator: '=' | '!=' | '>' | '>=' | '<' | '<=';
  /** One value, a list (`[a,b]`) or a range (`[a..b]`). */
  values: string[];
  shape: 'single' | 'list' | 'range';
  /** Written `field:v`, no operator: on a searched text column Typesense reads it as "holds the words of v". */
  bare: boolean;
}

/** `field:=v` or `field:[a,b]` on a plain field an index leads with (times compare as ranges: not these). */
function indexedClause(collection: Collection, clause: Clause): boolean {
  if (clause.operator !== '=' || clause.shape === 'range') return false;
  if (clause.bare && LAYOUTS[collection].searchColumns.includes(clause.field)) return false;
  const spec = CATALOG[collection].get(clause.field);
  return spec !== undefined && spec.sortable && spec.type !== 'time' && spec.columns.length === 1;
}

const CLAUSE = /^\s*([A-Za-z0-9_.]+)\s*:\s*(>=|<=|!=|>|<|=)?\s*(.*?)\s*$/s;

function parseClause(text: string): Compiled<Clause> {
  const match = CLAUSE.exec(text);
  if (!match) return fail(`cannot read filter_by clause ${JSON.stringify(text.trim())}; write field:value, field:>value or field:[a..b]`);
  const [, field = '', given, valueText = ''] = match;
  const operator = given ?? '=';
  if (valueText === '') return fail(`filter_by clause ${JSON.stringify(text.trim())} has no value`);
  const base = { field, operator: operator as Clause['operator'], bare: given === undefined };
  if (!valueText.startsWith('[')) return { ok: true, value: { ...base, values: [unquote(valueText)], shape: 'single' } };
  if (!valueText.endsWith(']')) return fail(`unclosed [ in filter_by clause ${JSON.stringify(text.trim())}`);
  const inner = valueText.slice(1, -1);
  const range = splitTopLevel(inner, '..');
  if (range.length === 2) {
    if (operator !== '=') return fail(`a range cannot follow ${operator} in ${JSON.stringify(text.trim())}`);
    return { ok: true, value: { ...base, values: range.map((item) => unquote(item.trim())), shape: 'range' } };
  }
  const items = splitTopLevel(inner, ',').map((item) => unquote(item.trim()));
  if (items.some((item) => item === '')) return fail(`empty value in list ${JSON.stringify(valueText)}`);
  if (operator !== '=' && operator !== '!=') return fail(`a list cannot follow ${operator} in ${JSON.stringify(text.trim())}`);
  return { ok: true, value: { ...base, values: items, shape: 'list' } };
}

function splitTopLevel(text: string, separator: string): string[] {
  const items: string[] = [];
  let current = '';
  let quoted = false;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index] as string;
    if (char === '`') quoted = !quoted;
    if (!quoted && text.startsWith(separator, index)) {
      items.push(current);
      current = '';
      index += separator.length - 1;
      continue;
    }
    current += char;
  }
  items.push(current);
  return items;
}

function unquote(text: string): string {
  return text.length >= 2 && text.startsWith('`') && text.endsWith('`') ? text.slice(1, -1) : text;
}

const OPERATOR_NAMES = { '=': 'eq', '!=': 'ne', '>': 'gt', '>=': 'gte', '<': 'lt', '<=': 'lte' } as const;

function clauseSql(collection: Collection, clause: Clause): Compiled<{ fragment: SqlFragment; term?: string; window?: SecondsWindow }> {
  const resolved = resolveField(collection, clause.field);
  if (!resolved.ok) return resolved;
  const { spec, metaPath } = resolved.value;
  if (spec.type === 'time') {
    const time = timeClauseSql(spec, clause);
    if (!time.ok) return time;
    // Only the counted time column has its records counted per second.
    const counted = spec.columns[0] === LAYOUTS[collection].countedTime;
    return { ok: true, value: counted ? time.value : { fragment: time.value.fragment } };
  }
  const values: SqlValue[] = [];
  for (const text of clause.values) {
    const converted = convertValue(spec, searchValue(spec, text));
    if (!converted.ok) return fail(converted.message);
    values.push(converted.value);
  }
  const make = (operator: Predicate['operator'], operands: SqlValue[]): SqlFragment => {
    const predicate: Predicate = { field: spec, operator, values: operands };
    if (metaPath !== undefined) predicate.metaPath = metaPath;
    return predicateSql(predicate);
  };
  if (clause.shape === 'range') return { ok: true, value: { fragment: make('between', values) } };
  const words = clause.bare && metaPath === undefined ? wordsClauseSql(collection, spec, clause.values) : undefined;
  if (words) return { ok: true, value: { fragment: words } };
  const term = clause.operator === '=' && metaPath === undefined ? termExpression(collection, spec, values) : undefined;
  const withTerm = (fragment: SqlFragment): Compiled<{ fragment: SqlFragment; term?: string }> => ({ ok: true, value: term === undefined ? { fragment } : { fragment, term } });
  if (clause.shape === 'list') {
    const inList = make('in', values);
    return clause.operator === '!=' ? { ok: true, value: { fragment: negate(inList) } } : withTerm(inList);
  }
  const operator = OPERATOR_NAMES[clause.operator];
  if (spec.type === 'boolean' && operator !== 'eq' && operator !== 'ne') return fail(`${spec.name} takes = or != only`);
  return withTerm(make(operator, values));
}

/**
 * `field:v` (no operator) on a column the full-text index searches: the records whose field holds every
 * word of v (any of the values, for a list), case and diacritics folded, as Typesense reads a filter on a
 * string field without `=` (Blnk's `description:payment`). Found in the full-text index, confined to the
 * column. Undefined for other fields, and for values without a word (those compare as `=`).
 */
function wordsClauseSql(collection: Collection, spec: FieldSpec, values: string[]): SqlFragment | undefined {
  const column = spec.columns[0] as string;
  if (spec.type !== 'text' || spec.columns.length !== 1 || !LAYOUTS[collection].searchColumns.includes(column)) return undefined;
  const expressions: string[] = [];
  for (const value of values) {
    const words = value.split(/[\s\p{Cc}]+/u).filter((word) => /[\p{L}\p{N}]/u.test(word));
    if (words.length === 0) return undefined;
    expressions.push(`(${words.map((word) => '"' + word.replaceAll('"', '""') + '"').join(' AND ')})`);
  }
  const fts = ftsTable(collection);
  return { sql: `t.${ROW_ID} IN (SELECT rowid FROM ${fts} WHERE ${fts} MATCH ?)`, params: [`{${column}} : (${expressions.join(' OR ')})`] };
}

/** Longest value looked up as a term (bytes; its term is twice as long): balance ids are a fraction of it. */
const TERM_VALUE_BYTES_MAX = 256;

/**
 * `field = any of values` as an FTS5 expression over the term columns of the field's columns (a field
 * over two columns holds when either does, as its SQL does); undefined when a column has no term
 * column, or a value is empty or longer than TERM_VALUE_BYTES_MAX.
 */
function termExpression(collection: Collection, spec: FieldSpec, values: SqlValue[]): string | undefined {
  const termColumns = LAYOUTS[collection].termColumns ?? [];
  const columns = spec.columns.map((column) => termColumns.find((term) => term.of === column)?.name);
  if (columns.length === 0 || columns.some((column) => column === undefined)) return undefined;
  if (values.some((value) => typeof value !== 'string' || value === '' || Buffer.byteLength(value) > TERM_VALUE_BYTES_MAX)) return undefined;
  const alternatives = values.flatMap((value) => columns.map((column) => `${column} : "${termOf(value as string)}"`));
  return `(${alternatives.join(' OR ')})`;
}

/** Text in filter_by as the JSON-like value convertValue expects for the field's type. */
function searchValue(spec: FieldSpec, text: string): unknown {
  if (spec.type === 'meta') return /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
  return text;
}

/**
 * Time clauses in Unix seconds over millisecond columns: second `s` covers [s*1000, s*1000+999], so a
 * record stamped 12:00:00.250 matches `created_at:=<12:00:00>` as Typesense's truncated seconds would.
 * A clause that keeps one window of seconds says which (a list or `!=` keeps several).
 */
function timeClauseSql(spec: FieldSpec, clause: Clause): Compiled<{ fragment: SqlFragment; window?: SecondsWindow }> {
  const seconds: number[] = [];
  for (const text of clause.values) {
    if (!/^-?\d{1,12}$/.test(text)) return fail(`${spec.name} takes Unix seconds in filter_by, not ${JSON.stringify(text)}`);
    seconds.push(Number(text));
  }
  const column = `t.${spec.columns[0]}`;
  const within = (from: number, to: number): { fragment: SqlFragment; window: SecondsWindow } => ({
    fragment: { sql: `${column} BETWEEN ? AND ?`, params: [from * 1000, to * 1000 + 999] },
    window: { from_second: from, to_second: to },
  });
  const from = (second: number): { fragment: SqlFragment; window: SecondsWindow } => ({
    fragment: { sql: `${column} >= ?`, params: [second * 1000] },
    window: { from_second: second, to_second: Number.MAX_SAFE_INTEGER },
  });
  const until = (second: number): { fragment: SqlFragment; window: SecondsWindow } => ({
    fragment: { sql: `${column} < ?`, params: [(second + 1) * 1000] },
    window: { from_second: Number.MIN_SAFE_INTEGER, to_second: second },
  });
  const first = seconds[0] as number;
  switch (clause.shape) {
    case 'range':
      return { ok: true, value: within(first, seconds[1] as number) };
    case 'list': {
      const any = seconds.map((second) => within(second, second).fragment);
      const fragment = { sql: '(' + any.map((part) => part.sql).join(' OR ') + ')', params: any.flatMap((part) => part.params) };
      return { ok: true, value: { fragment: clause.operator === '!=' ? negate(fragment) : fragment } };
    }
    case 'single':
      switch (clause.operator) {
        case '=': return { ok: true, value: within(first, first) };
        case '!=': return { ok: true, value: { fragment: negate(within(first, first).fragment) } };
        case '>': return { ok: true, value: from(first + 1) };
        case '>=': return { ok: true, value: from(first) };
        case '<': return { ok: true, value: until(first - 1) };
        case '<=': return { ok: true, value: until(first) };
      }
  }
}

function negate(fragment: SqlFragment): SqlFragment {
  return { sql: `NOT (${fragment.sql})`, params: fragment.params };
}

