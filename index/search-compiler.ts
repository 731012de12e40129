// The search API (POST /search/<collection>) compiled to SQL over the FTS5 tables. It follows the
// Typesense conventions Blnk clients use:
//   q          words to find; `*` (or nothing searchable) matches everything. Each word must appear
//              (AND); the last word also matches as a prefix (unless `prefix` is false), so results
//              narrow while typing.
//   query_by   the fields the words are matched in (search-fields.ts): text columns, matched in the
//              full-text index, and ids, compared whole (the last word: or by their start).
//   filter_by  clauses joined by `&&` and `||`, grouped with parentheses (filter-by.ts).
//   sort_by    up to three `field:asc|desc`; `_text_match` first asks for relevance (bm25), which is
//              the default with words. Past RANK_MATCHES_MAX matches, matches come newest first.
//   facet_by, group_by  counts of values over every record found, and hits grouped by value: planned
//              here, run by search-facets.ts and search-groups.ts.
// Words are bound as quoted FTS5 phrases, so no client text is ever parsed as FTS5 query syntax.

import type { SearchRequest } from '../wire/query-requests.js';
import type { HighlightField, HighlightSpec } from '../wire/search-highlights.js';
import { CATALOG, sortableFields } from './field-catalog.js';
import { compileFilterBy, type ClauseSql, type SecondsWindow } from './filter-by.js';
import type { Compiled } from './filter-compiler.js';
import { ftsTable, indexName, LAYOUTS, ROW_ID, type Collection } from './index-schema.js';
import type { SqlFragment } from './predicates.js';
import { defaultSearchedFields, FACET_FIELDS_MAX, GROUP_FIELDS_MAX, searchedFields, valueFields, type ValueField } from './search-fields.js';
import type { SqlValue } from './sqlite-connection.js';

export type { SearchRequest } from '../wire/query-requests.js';
export type { SecondsWindow } from './filter-by.js';
export { FILTER_CLAUSES_MAX } from './filter-by.js';

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
  /** facet_by: the fields whose values are counted over every record found, and how many values each lists. */
  facets?: { fields: ValueField[]; values_max: number };
  /** group_by: hits grouped by these fields' values, `limit` hits a group; missing values one group or each their own. */
  group?: { fields: ValueField[]; limit: number; missing_together: boolean };
  /** What the hits' highlights look for (rendered at the HTTP edge, wire/search-highlights.ts). */
  highlight: HighlightSpec;
}

export const SEARCH_TERMS_MAX = 32;
export const SORT_KEYS_MAX = 3;
export const FACET_VALUES_DEFAULT = 10;
export const GROUP_LIMIT_DEFAULT = 3;
const TEXT_MATCH = '_text_match';

const fail = <T>(message: string): Compiled<T> => ({ ok: false, message });

/** Matches beyond which relevance ordering gives way to the field order (ranking them all is slow). */
export const RANK_MATCHES_MAX = 5_000;

export function compileSearch(collection: Collection, request: SearchRequest): Compiled<SearchPlan> {
  const searched = request.query_by === undefined ? { ok: true as const, value: undefined } : searchedFields(collection, 'query_by', request.query_by);
  if (!searched.ok) return searched;
  const fields = searched.value ?? defaultSearchedFields(collection);
  const words = wordsOf(request.q);
  if (words.length > SEARCH_TERMS_MAX) return fail(`q has more than ${SEARCH_TERMS_MAX} words`);
  const prefix = request.prefix ?? true;
  const textColumns = fields.filter((field) => field.kind !== 'value').map((field) => field.name);
  const idColumns = fields.filter((field) => field.kind === 'value').map((field) => field.name);
  // Words matched in ids are compared in SQL; words matched in text alone are one full-text expression.
  const match = idColumns.length > 0 ? undefined : matchExpression(collection, words, { columns: searched.value && textColumns, prefix });
  const filters = compileFilterBy(collection, request.filter_by);
  if (!filters.ok) return filters;
  const clauses: ClauseSql[] = [...filters.value];
  if (idColumns.length > 0 && words.length > 0) clauses.push({ fragment: wordsSql(collection, words, textColumns, idColumns, prefix), indexed: false });
  const order = searchOrder(collection, request.sort_by, match !== undefined);
  if (!order.ok) return order;
  const highlight = highlightSpec(collection, request, words, prefix, fields);
  if (!highlight.ok) return highlight;
  const offset = request.offset ?? (request.page - 1) * request.per_page;
  const plan: SearchPlan = { where: joined(clauses.map(({ fragment }) => fragment)), order: order.value.order, limit: request.per_page, offset, highlight: highlight.value };
  if (match !== undefined) Object.assign(plan, match);
  const indexed = clauses.filter((clause) => clause.indexed).map(({ fragment }) => fragment);
  if (indexed.length > 0) plan.indexed = joined(indexed);
  const windows = clauses.map((clause) => clause.window);
  if (match === undefined && windows.length > 0 && windows.every((window) => window !== undefined)) {
    plan.window = {
      from_second: Math.max(...windows.map((window) => (window as SecondsWindow).from_second)),
      to_second: Math.min(...windows.map((window) => (window as SecondsWindow).to_second)),
    };
  }
  const terms = clauses.filter((clause) => clause.term !== undefined);
  if (match !== undefined && terms.length > 0) {
    const rest = clauses.filter((clause) => clause.term === undefined);
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
  const grouping = groupingOf(collection, request);
  if (!grouping.ok) return grouping;
  Object.assign(plan, grouping.value);
  return { ok: true, value: plan };
}

/** facet_by and group_by as the plan holds them (absent when not asked for). */
function groupingOf(collection: Collection, request: SearchRequest): Compiled<Pick<SearchPlan, 'facets' | 'group'>> {
  const planned: Pick<SearchPlan, 'facets' | 'group'> = {};
  if (request.facet_by !== undefined && request.facet_by.trim() !== '') {
    const facets = valueFields(collection, 'facet_by', request.facet_by, FACET_FIELDS_MAX);
    if (!facets.ok) return facets;
    planned.facets = { fields: facets.value, values_max: request.max_facet_values ?? FACET_VALUES_DEFAULT };
  }
  if (request.group_by !== undefined && request.group_by.trim() !== '') {
    const groups = valueFields(collection, 'group_by', request.group_by, GROUP_FIELDS_MAX);
    if (!groups.ok) return groups;
    planned.group = { fields: groups.value, limit: request.group_limit ?? GROUP_LIMIT_DEFAULT, missing_together: request.group_missing_values ?? true };
  }
  return { ok: true, value: planned };
}

/** The highlights' words and fields: highlight_fields when given, else the searched fields. */
function highlightSpec(collection: Collection, request: SearchRequest, words: string[], prefix: boolean, searched: HighlightField[]): Compiled<HighlightSpec> {
  let fields = searched;
  if (request.highlight_fields !== undefined && request.highlight_fields.trim() !== '') {
    const named = searchedFields(collection, 'highlight_fields', request.highlight_fields);
    if (!named.ok) return named;
    fields = named.value;
  }
  let full: string[] = [];
  if (request.highlight_full_fields !== undefined && request.highlight_full_fields.trim() !== '') {
    const named = searchedFields(collection, 'highlight_full_fields', request.highlight_full_fields);
    if (!named.ok) return named;
    full = named.value.map((field) => field.name);
  }
  return { ok: true, value: { words, prefix, fields, full_fields: full } };
}

/**
 * Words matched in ids as well as text (query_by names an id field): each word must equal one of the
 * ids (the last, with prefixes on, may also start one: a range of the id's index) or, when text columns
 * are named too, be found in them. Ids are compared as written: ids are case-sensitive.
 */
function wordsSql(collection: Collection, words: string[], textColumns: string[], idColumns: string[], prefix: boolean): SqlFragment {
  const fts = ftsTable(collection);
  const parts = words.map((word, index): SqlFragment => {
    const asPrefix = prefix && index === words.length - 1;
    const alternatives: SqlFragment[] = [];
    if (textColumns.length > 0) {
      const phrase = '"' + word.replaceAll('"', '""') + '"' + (asPrefix ? '*' : '');
      alternatives.push({ sql: `t.${ROW_ID} IN (SELECT rowid FROM ${fts} WHERE ${fts} MATCH ?)`, params: [`{${textColumns.join(' ')}} : (${phrase})`] });
    }
    for (const column of idColumns) {
      alternatives.push(asPrefix
        ? { sql: `(t.${column} >= ? AND t.${column} < ?)`, params: [word, word + '\u{10FFFF}'] }
        : { sql: `t.${column} = ?`, params: [word] });
    }
    return { sql: alternatives.map((alternative) => alternative.sql).join(' OR '), params: alternatives.flatMap((alternative) => alternative.params as SqlValue[]) };
  });
  return joined(parts);
}

function joined(fragments: SqlFragment[]): SqlFragment {
  return fragments.length === 0
    ? { sql: '', params: [] }
    : { sql: fragments.map((fragment) => `(${fragment.sql})`).join(' AND '), params: fragments.flatMap((fragment) => fragment.params) };
}

/** A word the index holds as exactly one token, the same in lower case: a prefix of it can be checked in the vocabulary. */
const PLAIN_TOKEN = /^[A-Za-z0-9_-]+$/;

/** The words of `q`: split at whitespace and control characters, those without a letter or digit dropped. */
export function wordsOf(q: string): string[] {
  return q.split(/[\s\p{Cc}]+/u).filter((word) => /[\p{L}\p{N}]/u.test(word));
}

/**
 * Words as an FTS5 expression: each word becomes a quoted phrase (quotes doubled), the last phrase gets
 * a prefix `*` unless prefixes are off. Undefined = match all. Words are split at whitespace and at
 * control characters: the tokenizer separates at those too, and FTS5 reads a NUL inside a phrase as the
 * end of the query text (a syntax error). The expression names the columns searched (`columns`, from
 * query_by) or, where the full-text table also has term columns, all the searched ones: words match
 * text, never a term.
 */
export function matchExpression(
  collection: Collection,
  words: string[],
  options: { columns?: string[] | undefined; prefix?: boolean } = {},
): Pick<SearchPlan, 'match' | 'exactMatch' | 'prefixWord' | 'onlyWord'> | undefined {
  if (words.length === 0) return undefined;
  const layout = LAYOUTS[collection];
  const columns = options.columns ?? (layout.termColumns ? layout.searchColumns : undefined);
  const inText = (expression: string): string => (columns ? `{${columns.join(' ')}} : (${expression})` : expression);
  const phrases = words.map((word) => '"' + word.replaceAll('"', '""') + '"');
  const exact = inText(phrases.join(' AND '));
  if (options.prefix !== false) phrases[phrases.length - 1] += '*';
  const terms: Pick<SearchPlan, 'match' | 'exactMatch' | 'prefixWord' | 'onlyWord'> = { match: inText(phrases.join(' AND ')) };
  const last = words[words.length - 1] as string;
  // The vocabulary counts a word's records over every column: only for a search of all of them.
  const allColumns = options.columns === undefined || sameSet(options.columns, layout.searchColumns);
  if (PLAIN_TOKEN.test(last)) Object.assign(terms, { exactMatch: exact, prefixWord: last.toLowerCase(), onlyWord: words.length === 1 && allColumns });
  return terms;
}

function sameSet(left: readonly string[], right: readonly string[]): boolean {
  return left.length === right.length && left.every((item) => right.includes(item));
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
