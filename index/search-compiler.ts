// The search API (POST /search/<collection>) compiled to SQL over the FTS5 tables. It follows the
// Typesense conventions Blnk clients use:
//   q          words to find; `*` (or nothing searchable) matches everything. Each word must appear
//              (AND); the last word also matches as a prefix, so results narrow while typing.
//   filter_by  clauses joined by `&&`: `field:=v`, `field:v`, `field:!=v`, `field:>v` (>=, <, <=),
//              `field:[a..b]` (inclusive range), `field:[v1,v2]` (any of). Values may be `backquoted`.
//              Time fields take Unix seconds, as Typesense stores them.
//   sort_by    up to three `field:asc|desc`; `_text_match` first asks for relevance (bm25), which is
//              the default with words. Past RANK_MATCHES_MAX matches, matches come newest first.
// Words are bound as quoted FTS5 phrases, so no client text is ever parsed as FTS5 query syntax.

import type { SearchRequest } from '../wire/query-requests.js';
import { CATALOG, sortableFields, type FieldSpec } from './field-catalog.js';
import { convertValue } from './field-values.js';
import { resolveField, type Compiled } from './filter-compiler.js';
import { indexName, LAYOUTS, ROW_ID, termOf, type Collection } from './index-schema.js';
import { predicateSql, type Predicate, type SqlFragment } from './predicates.js';
import type { SqlValue } from './sqlite-connection.js';

export type { SearchRequest } from '../wire/query-requests.js';

/**
 * How to run a search. Without words it is a plain filtered, sorted query on the table. With words the
 * full-text index decides which rows match; relevance ordering (bm25) is applied when asked for and the
 * matches are few enough to rank (`RANK_MATCHES_MAX`); otherwise matches come in the field order.
 */
export interface SearchPlan {
  /** FTS5 expression of `q`; undefined when `q` matches everything. */
  match?: string;
  /**
   * When the last word is one plain token (ASCII letters, digits, `_`, `-`): that word in lower case
   * (as the index holds it) and the expression with the word matched exactly. If no other term in the
   * index starts with the word, the two expressions match the same rows with the same relevance, and the
   * exact one is far cheaper: FTS5 merges every term a prefix covers into one list in memory first.
   */
  prefixWord?: string;
  exactMatch?: string;
  /** Set when `prefixWord` is the only word: then the records the exact match finds can be counted in the vocabulary. */
  onlyWord?: boolean;
  /**
   * With words, the filter clauses the full-text index answers as terms (index-schema.ts termColumns):
   * their FTS5 expression, to be joined to the words' with AND, and the remaining clauses (`where` and
   * `indexed` of those alone). `where` above still holds every clause: it is what the request means.
   */
  terms?: { match: string; where: SqlFragment; indexed?: SqlFragment };
  /**
   * The filter clauses an index answers directly (`=` or a list on a field an index leads with), joined
   * with AND: when they hold few rows, those rows are checked against the words one by one instead of
   * listing every match of the words.
   */
  indexed?: SqlFragment;
  /** The index that leads with the first sort field, when the order is not the log order. */
  sortIndex?: string;
  /** Filter clauses joined with AND ('' when none). */
  where: SqlFragment;
  /**
   * When every clause is a window of whole seconds on the collection's counted time (index-schema.ts
   * secondCountsTable): the seconds they leave, first and last inclusive. Without words, `found` is then
   * a sum of per-second counts.
   */
  window?: SecondsWindow;
  /** `_text_match` leads the sort: order by bm25 (`ASC` = best first) when the matches allow it. */
  relevance?: 'ASC' | 'DESC';
  /** ORDER BY over table columns, ending with the row id. */
  order: string;
  /** The order is the log order (created_at, whose ties break by row id), newest first or oldest first. */
  logOrder?: 'ASC' | 'DESC';
  limit: number;
  offset: number;
}

export const SEARCH_TERMS_MAX = 32;
export const FILTER_CLAUSES_MAX = 32;
export const SORT_KEYS_MAX = 3;
const TEXT_MATCH = '_text_match';

const fail = <T>(message: string): Compiled<T> => ({ ok: false, message });

/** Matches beyond which relevance ordering gives way to the field order (ranking them all is slow). */
export const RANK_MATCHES_MAX = 5_000;

export function compileSearch(collection: Collection, request: SearchRequest): Compiled<SearchPlan> {
  const match = matchExpression(collection, request.q);
  if (!match.ok) return match;
  const filters = compileFilterBy(collection, request.filter_by);
  if (!filters.ok) return filters;
  const order = searchOrder(collection, request.sort_by, match.value !== undefined);
  if (!order.ok) return order;
  const plan: SearchPlan = { where: joined(filters.value.map(({ fragment }) => fragment)), order: order.value.order, limit: request.per_page, offset: (request.page - 1) * request.per_page };
  if (match.value !== undefined) Object.assign(plan, match.value);
  const indexed = filters.value.filter((clause) => clause.indexed).map(({ fragment }) => fragment);
  if (indexed.length > 0) plan.indexed = joined(indexed);
  const windows = filters.value.map((clause) => clause.window);
  if (match.value === undefined && windows.length > 0 && windows.every((window) => window !== undefined)) {
    plan.window = {
      from_second: Math.max(...windows.map((window) => (window as SecondsWindow).from_second)),
      to_second: Math.min(...windows.map((window) => (window as SecondsWindow).to_second)),
    };
  }
  const terms = filters.value.filter((clause) => clause.term !== undefined);
  if (match.value !== undefined && terms.length > 0) {
    const rest = filters.value.filter((clause) => clause.term === undefined);
    const restIndexed = rest.filter((clause) => clause.indexed).map(({ fragment }) => fragment);
    plan.terms = { match: terms.map((clause) => clause.term).join(' AND '), where: joined(rest.map(({ fragment }) => fragment)) };
    if (restIndexed.length > 0) plan.terms.indexed = joined(restIndexed);
  }
  if (order.value.relevance) plan.relevance = order.value.relevance;
  if (order.value.logOrder) plan.logOrder = order.value.logOrder;
  else if (order.value.firstColumn !== undefined) {
    const index = LAYOUTS[collection].indexes.find((columns) => columns[0] === order.value.firstColumn);
    if (index) plan.sortIndex = indexName(collection, index);
  }
  return { ok: true, value: plan };
}

function joined(fragments: SqlFragment[]): SqlFragment {
  return fragments.length === 0
    ? { sql: '', params: [] }
    : { sql: fragments.map((fragment) => `(${fragment.sql})`).join(' AND '), params: fragments.flatMap((fragment) => fragment.params) };
}

/** A word the index holds as exactly one token, the same in lower case: a prefix of it can be checked in the vocabulary. */
const PLAIN_TOKEN = /^[A-Za-z0-9_-]+$/;

/**
 * `q` as an FTS5 expression: each word becomes a quoted phrase (quotes doubled), words without a
 * letter or digit are dropped, the last phrase gets a prefix `*`. Undefined = match all. Words are
 * split at whitespace and at control characters: the tokenizer separates at those too, and FTS5 reads
 * a NUL inside a phrase as the end of the query text (a syntax error). Where the full-text table also
 * has term columns, the expression names the searched columns: words match text, never a term.
 */
export function matchExpression(collection: Collection, q: string): Compiled<Pick<SearchPlan, 'match' | 'exactMatch' | 'prefixWord' | 'onlyWord'> | undefined> {
  const words = q.split(/[\s\p{Cc}]+/u).filter((word) => /[\p{L}\p{N}]/u.test(word));
  if (words.length === 0) return { ok: true, value: undefined };
  if (words.length > SEARCH_TERMS_MAX) return fail(`q has more than ${SEARCH_TERMS_MAX} words`);
  const layout = LAYOUTS[collection];
  const inText = (expression: string): string => (layout.termColumns ? `{${layout.searchColumns.join(' ')}} : (${expression})` : expression);
  const phrases = words.map((word) => '"' + word.replaceAll('"', '""') + '"');
  const exact = inText(phrases.join(' AND '));
  phrases[phrases.length - 1] += '*';
  const terms: Pick<SearchPlan, 'match' | 'exactMatch' | 'prefixWord' | 'onlyWord'> = { match: inText(phrases.join(' AND ')) };
  const last = words[words.length - 1] as string;
  if (PLAIN_TOKEN.test(last)) Object.assign(terms, { exactMatch: exact, prefixWord: last.toLowerCase(), onlyWord: words.length === 1 });
  return { ok: true, value: terms };
}

// ---- filter_by ----

interface Clause {
  field: string;
  operator: '=' | '!=' | '>' | '>=' | '<' | '<=';
  /** One value, a list (`[a,b]`) or a range (`[a..b]`). */
  values: string[];
  shape: 'single' | 'list' | 'range';
}

/** A filter_by clause as SQL, whether an index finds its rows directly, and its terms when it has them. */
interface ClauseSql {
  fragment: SqlFragment;
  indexed: boolean;
  /** The clause as an FTS5 expression over term columns (index-schema.ts termColumns), when it can be one. */
  term?: string;
  /** The clause as the seconds it keeps of the counted time column, when it is one window of them. */
  window?: SecondsWindow;
}

/** Seconds of a time column, first and last inclusive (unbounded: the largest safe integers). */
export interface SecondsWindow {
  from_second: number;
  to_second: number;
}

export function compileFilterBy(collection: Collection, filterBy: string): Compiled<ClauseSql[]> {
  if (filterBy.trim() === '') return { ok: true, value: [] };
  const parts = splitOutsideBackticks(filterBy);
  if (!parts.ok) return parts;
  if (parts.value.length > FILTER_CLAUSES_MAX) return fail(`filter_by has more than ${FILTER_CLAUSES_MAX} clauses`);
  const clauses: ClauseSql[] = [];
  for (const text of parts.value) {
    const clause = parseClause(text);
    if (!clause.ok) return clause;
    const compiled = clauseSql(collection, clause.value);
    if (!compiled.ok) return compiled;
    const { fragment, term, window } = compiled.value;
    clauses.push({ fragment, indexed: indexedClause(collection, clause.value), ...(term === undefined ? {} : { term }), ...(window === undefined ? {} : { window }) });
  }
  return { ok: true, value: clauses };
}

/** `field:=v` or `field:[a,b]` on a plain field an index leads with (times compare as ranges: not these). */
function indexedClause(collection: Collection, clause: Clause): boolean {
  if (clause.operator !== '=' || clause.shape === 'range') return false;
  const spec = CATALOG[collection].get(clause.field);
  return spec !== undefined && spec.sortable && spec.type !== 'time' && spec.columns.length === 1;
}

/** Splits on `&&` outside backquotes; `||` is refused rather than misread. */
function splitOutsideBackticks(text: string): Compiled<string[]> {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index] as string;
    if (char === '`') quoted = !quoted;
    if (!quoted && char === '&' && text[index + 1] === '&') {
      parts.push(current);
      current = '';
      index += 1;
      continue;
    }
    if (!quoted && char === '|' && text[index + 1] === '|') return fail('filter_by supports && only, not ||');
    current += char;
  }
  if (quoted) return fail('unclosed backquote in filter_by');
  parts.push(current);
  if (parts.some((part) => part.trim() === '')) return fail('empty clause in filter_by');
  return { ok: true, value: parts };
}

const CLAUSE = /^\s*([A-Za-z0-9_.]+)\s*:\s*(>=|<=|!=|>|<|=)?\s*(.*?)\s*$/s;

function parseClause(text: string): Compiled<Clause> {
  const match = CLAUSE.exec(text);
  if (!match) return fail(`cannot read filter_by clause ${JSON.stringify(text.trim())}; write field:value, field:>value or field:[a..b]`);
  const [, field = '', operator = '=', valueText = ''] = match;
  if (valueText === '') return fail(`filter_by clause ${JSON.stringify(text.trim())} has no value`);
  const base = { field, operator: operator as Clause['operator'] };
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

// ---- sort_by ----

interface SearchOrder {
  order: string;
  relevance?: 'ASC' | 'DESC';
  logOrder?: 'ASC' | 'DESC';
  /** The column of the first sort field. */
  firstColumn?: string;
}

/**
 * `field:dir` entries. `_text_match` may only lead (relevance first, ties newest first). Sorting by
 * created_at is sorting by log order: event times never decrease along the log and a record's row
 * follows its first appearance there, so `created_at, row id` and `row id` order rows alike.
 */
function searchOrder(collection: Collection, sortBy: string, hasTerms: boolean): Compiled<SearchOrder> {
  const text = sortBy.trim();
  const entries = text === '' ? (hasTerms ? [`${TEXT_MATCH}:desc`, 'created_at:desc'] : ['created_at:desc']) : text.split(',');
  if (entries.length > SORT_KEYS_MAX) return fail(`sort_by takes at most ${SORT_KEYS_MAX} fields`);
  const result: SearchOrder = { order: '' };
  const keys: string[] = [];
  const fields: string[] = [];
  for (const [position, entry] of entries.entries()) {
    const [field = '', direction = '', extra] = entry.trim().split(':');
    const order = direction.trim().toLowerCase();
    if (extra !== undefined || (order !== 'asc' && order !== 'desc')) {
      return fail(`sort_by entries are field:asc or field:desc, not ${JSON.stringify(entry.trim())}`);
    }
    const name = field.trim();
    if (name === TEXT_MATCH) {
      if (position !== 0) return fail(`${TEXT_MATCH} can only be the first sort_by field`);
      // bm25 scores better matches lower.
      if (hasTerms) result.relevance = order === 'desc' ? 'ASC' : 'DESC';
      continue;
    }
    const spec = CATALOG[collection].get(name);
    if (!spec || !spec.sortable) {
      return fail(`cannot sort ${collection} by ${JSON.stringify(name)}; sortable fields: ${[...sortableFields(collection), TEXT_MATCH].join(', ')}`);
    }
    keys.push(`t.${spec.columns[0]} ${order.toUpperCase()}`);
    fields.push(`${name}:${order}`);
    result.firstColumn ??= spec.columns[0];
  }
  if (fields.length === 0 || (fields.length === 1 && fields[0]?.startsWith('created_at:'))) {
    result.logOrder = fields[0] === 'created_at:asc' ? 'ASC' : 'DESC';
  }
  keys.push(`t.${ROW_ID} ${result.logOrder ?? 'DESC'}`);
  result.order = keys.join(', ');
  return { ok: true, value: result };
}
