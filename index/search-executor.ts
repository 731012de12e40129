// Runs a search plan on one reader connection. The shape of the SQL depends on what the plan needs, so
// that no search pays for more than it uses:
// - no words: one filtered, sorted query on the table; `found` without filters is the collection size,
//   and with time clauses alone a sum of per-second counts;
// - words, nothing else: the FTS5 table alone answers `found` and (in log order or by relevance) the
//   page of row ids; the page's rows are then read by id;
// - words and filters: the matching row ids become an IN-list the table's own indexes filter and sort.
//   A filter on a term column (a balance) is not among them: it joins the words' FTS5 expression, and
//   the full-text index intersects the two lists itself (index-schema.ts termColumns).
// Relevance (bm25) is computed only when the words match at most RANK_MATCHES_MAX records; beyond that
// matches come in the field order (newest first by default), with or without filters.
// facet_by and group_by run after `found` is known, over the same records (search-facets.ts,
// search-groups.ts), each bounded by the number of records it must read.

import { ftsTable, INDEX_ID_KEY, LAYOUTS, ROW_ID, secondCountsTable, selectColumns, termColumnsTable, termRecordsTable, textChangesKey, textRowKey, vocabularyTable, type Collection } from './index-schema.js';
import type { SelectedRow } from './record-rows.js';
import { RANK_MATCHES_MAX, type SearchPlan, type SecondsWindow } from './search-compiler.js';
import { countFacets, type FacetCount } from './search-facets.js';
import { groupHits, type HitGroup } from './search-groups.js';
import { count, foundRecordsSql, rowsById } from './search-rows.js';
import type { SqliteConnection, SqlValue } from './sqlite-connection.js';

export interface SearchRows {
  /** Records found; with group_by, groups found (`found_records` holds the records). */
  found: number;
  out_of: number;
  rows: SelectedRow[];
  facets?: FacetCount[];
  groups?: HitGroup[];
  found_records?: number;
}

/**
 * Rows the indexed filter clauses may hold for the words to be checked row by row instead: each check
 * is a seek in the full-text index (about 15 µs), so at most this many cost a few milliseconds,
 * however many records the words match.
 */
export const PROBE_ROWS_MAX = 500;
/**
 * How far down a sort index a page may be looked for (twice the expected depth) before the filtered rows
 * are sorted instead: a few thousand row reads at most, where sorting every filtered row can cost tens
 * of thousands.
 */
export const SORT_SCAN_ROWS_MAX = 4_000;

/** Runs the plan inside one read transaction, so every count and page comes from the same commit. */
export async function runSearch(reader: SqliteConnection, collection: Collection, plan: SearchPlan): Promise<SearchRows> {
  return reader.inReadTransaction(async () => {
    // Grouped, the page is of groups: the records' plan only counts them.
    const answer = await searchIn(reader, collection, plan.group ? { ...plan, limit: 0, offset: 0 } : plan);
    if (!plan.facets && !plan.group) return answer;
    const words = plan.match === undefined ? undefined : await cheapestMatch(reader, collection, plan);
    const records = foundRecordsSql(collection, plan, words);
    if (plan.facets) answer.facets = await countFacets(reader, plan.facets, records, answer.found);
    if (plan.group) {
      const ranked = await rankedOrder(reader, collection, plan, words);
      const grouped = await groupHits(reader, collection, { plan, group: plan.group, records, words, ranked }, answer.found);
      answer.found_records = answer.found;
      answer.found = grouped.found;
      answer.groups = grouped.groups;
    }
    return answer;
  });
}

/** Whether relevance orders the hits: asked for, and the words match few enough records to rank. */
async function rankedOrder(reader: SqliteConnection, collection: Collection, plan: SearchPlan, words: string | undefined): Promise<'ASC' | 'DESC' | undefined> {
  if (words === undefined || plan.relevance === undefined) return undefined;
  const fts = ftsTable(collection);
  const upTo = await count(reader, `SELECT count(*) AS total FROM (SELECT rowid FROM ${fts} WHERE ${fts} MATCH ? LIMIT ${RANK_MATCHES_MAX + 1})`, [words]);
  return upTo <= RANK_MATCHES_MAX ? plan.relevance : undefined;
}

async function searchIn(reader: SqliteConnection, collection: Collection, plan: SearchPlan): Promise<SearchRows> {
  const layout = LAYOUTS[collection];
  const table = layout.table;
  const columns = selectColumns(layout);
  const outOf = await count(reader, outOfSql(collection), []);

  if (plan.match === undefined) {
    const filtered = plan.where.sql !== '';
    const where = filtered ? ` WHERE ${plan.where.sql}` : '';
    const found = !filtered ? outOf
      : plan.window ? await countInWindow(reader, collection, plan.window)
      : await count(reader, `SELECT count(*) AS total FROM ${table} t${where}`, plan.where.params);
    if (plan.limit === 0 || plan.offset >= found) return { found, out_of: outOf, rows: [] };
    const scanned = await pageDownSortIndex(reader, collection, plan, found, outOf);
    const rows = scanned ?? await reader.all<SelectedRow>(
      `SELECT ${columns} FROM ${table} t${where} ORDER BY ${plan.order} LIMIT ? OFFSET ?`,
      [...plan.where.params, plan.limit, plan.offset],
    );
    return { found, out_of: outOf, rows };
  }

  // With words, filter clauses on term columns are answered inside the full-text index: the rest are filters.
  const words = plan.terms ? { ...plan, where: plan.terms.where, indexed: plan.terms.indexed } : plan;
  const wordsFiltered = words.where.sql !== '';
  const fts = ftsTable(collection);
  const cheapest = await cheapestMatch(reader, collection, plan);
  const match = plan.terms ? `${cheapest} AND ${plan.terms.match}` : cheapest;
  const matching = `SELECT rowid FROM ${fts} WHERE ${fts} MATCH ?`;
  // Whether the words match few records decides the plan; counting up to the bound reads no further.
  // (The words alone, terms or not: ranking costs what the words' own lists cost.)
  const wordsUpTo = await count(reader, `SELECT count(*) AS total FROM (${matching} LIMIT ${RANK_MATCHES_MAX + 1})`, [cheapest]);
  const few = wordsUpTo <= RANK_MATCHES_MAX;
  const rank = plan.relevance && few ? plan.relevance : undefined;

  if (!wordsFiltered) {
    const order = rank ? `rank ${rank}, rowid DESC` : plan.logOrder ? `rowid ${plan.logOrder}` : undefined;
    if (plan.terms && order) {
      // Words and terms match one balance's share of the words' records, usually few: listed whole in
      // the page's order, their number is `found` and the page a slice of them, in one read. Newest
      // first is listed oldest first and turned round here: FTS5 reads a long list backwards by first
      // loading all of it (at a million transactions that took twice as long).
      const listed = await reader.all<{ rowid: number }>(`${matching} ORDER BY ${rank ? order : 'rowid ASC'} LIMIT ${RANK_MATCHES_MAX + 1}`, [match]);
      if (!rank && plan.logOrder === 'DESC') listed.reverse();
      if (listed.length <= RANK_MATCHES_MAX) {
        const page = plan.limit === 0 ? [] : listed.slice(plan.offset, plan.offset + plan.limit);
        return { found: listed.length, out_of: outOf, rows: await rowsById(reader, collection, page.map((row) => row.rowid)) };
      }
    }
    const found = plan.terms
      ? await count(reader, `SELECT count(*) AS total FROM ${fts} WHERE ${fts} MATCH ?`, [match])
      : few ? wordsUpTo : await countMatches(reader, collection, plan, match);
    if (plan.limit === 0 || plan.offset >= found) return { found, out_of: outOf, rows: [] };
    if (order) {
      const page = await reader.all<{ rowid: number }>(`${matching} ORDER BY ${order} LIMIT ? OFFSET ?`, [match, plan.limit, plan.offset]);
      return { found, out_of: outOf, rows: await rowsById(reader, collection, page.map((row) => row.rowid)) };
    }
  } else if (rank) {
    // Few matches: the filtered ones are ranked. `+rowid` and `+rank` keep SQLite from handing the
    // id list and the ordering to FTS5, which would probe or rank every match one by one.
    const ids = (await reader.all<{ row_id: number }>(
      `SELECT t.${ROW_ID} FROM ${table} t WHERE ${words.where.sql} AND t.${ROW_ID} IN (${matching})`,
      [...words.where.params, match],
    )).map((row) => row.row_id);
    const found = ids.length;
    if (plan.limit === 0 || plan.offset >= found) return { found, out_of: outOf, rows: [] };
    const page = await reader.all<{ rowid: number }>(
      `SELECT rowid FROM ${fts} WHERE ${fts} MATCH ? AND +rowid IN (SELECT value FROM json_each(?)) ORDER BY +rank ${rank}, rowid DESC LIMIT ? OFFSET ?`,
      [match, JSON.stringify(ids), plan.limit, plan.offset],
    );
    return { found, out_of: outOf, rows: await rowsById(reader, collection, page.map((row) => row.rowid)) };
  }

  // The field order over the matches, `found` from the window count in the same pass. When the indexed
  // filter clauses hold few rows, each is checked against the words (a seek in the full-text index);
  // otherwise the matching ids become an IN-list that the table's indexes filter and sort.
  const where = wordsFiltered ? `${words.where.sql} AND ` : '';
  const probe = cheapest !== plan.match && wordsFiltered && (await fewIndexedRows(reader, table, words));
  const matches = probe
    ? `EXISTS (SELECT 1 FROM ${fts} f WHERE f.rowid = t.${ROW_ID} AND ${fts} MATCH ?)`
    : `t.${ROW_ID} IN (${matching})`;
  const rows = await reader.all<SelectedRow & { search_found: number }>(
    `SELECT ${columns}, count(*) OVER () AS search_found FROM ${table} t WHERE ${where}${matches} ORDER BY ${plan.order} LIMIT ? OFFSET ?`,
    [...words.where.params, match, Math.max(plan.limit, 1), plan.offset],
  );
  let found = rows[0]?.search_found;
  if (found === undefined) {
    found = plan.offset === 0 ? 0 : await count(reader, `SELECT count(*) AS total FROM ${table} t WHERE ${where}${matches}`, [...words.where.params, match]);
  }
  return { found, out_of: outOf, rows: plan.limit === 0 ? [] : rows };
}

/**
 * The plan's words as the cheapest expression that matches the same rows: the last word exactly when no
 * other term in the index starts with it (see SearchPlan.prefixWord). The vocabulary is searched from
 * just past the word itself: stepping over a common word's own entries would cost as much as the merge.
 */
async function cheapestMatch(reader: SqliteConnection, collection: Collection, plan: SearchPlan): Promise<string> {
  const match = plan.match as string;
  if (plan.prefixWord === undefined || plan.exactMatch === undefined) return match;
  const longer = await reader.get(
    `SELECT term FROM ${vocabularyTable(collection)} WHERE term >= ? AND term < ? LIMIT 1`,
    [plan.prefixWord + '\u0001', plan.prefixWord + '\u{10FFFF}'],
  );
  return longer ? match : plan.exactMatch;
}

/**
 * The number of records the words match. One word matched exactly is counted from the vocabulary's count
 * of the records that word is in: the same number (both read the same merged index), read from the
 * word's list without a match cursor stepping through every record, which is 2-3 times faster for a
 * word in a tenth of a million records. That count is then kept (wordCounts), and a later search of the
 * same word, while no searched text of the collection has been changed or deleted since, counts only
 * the matches among records added after it: a common word costs what the new records cost, however
 * many old ones it is in.
 */
async function countMatches(reader: SqliteConnection, collection: Collection, plan: SearchPlan, match: string): Promise<number> {
  const fts = ftsTable(collection);
  const word = plan.prefixWord;
  if (!plan.onlyWord || match !== plan.exactMatch || word === undefined) {
    return count(reader, `SELECT count(*) AS total FROM ${fts} WHERE ${fts} MATCH ?`, [match]);
  }
  // A SELECT of scalar subqueries without FROM: always exactly one row.
  const now = await reader.get<Omit<WordCount, 'records'>>(
    // up_to: the highest row id the full-text index holds (it follows the rows, and may trail them).
    `SELECT (SELECT value FROM index_state WHERE key = ?) AS index_id, (SELECT value FROM index_state WHERE key = ?) AS changes,
            (SELECT value FROM index_state WHERE key = ?) AS up_to`,
    [INDEX_ID_KEY, textChangesKey(collection), textRowKey(collection)],
  ) as Omit<WordCount, 'records'>;
  const key = `${reader.file}\u0000${collection}\u0000${word}`;
  const known = wordCounts.get(key);
  let records: number;
  if (known && known.index_id === now.index_id && known.changes === now.changes && known.up_to <= now.up_to) {
    records = known.records;
    if (now.up_to > known.up_to) {
      records += await count(reader, `SELECT count(*) AS total FROM ${fts} WHERE ${fts} MATCH ? AND rowid > ?`, [match, known.up_to]);
    }
  } else if (await inTermColumns(reader, collection, word)) {
    records = await count(reader, `SELECT count(*) AS total FROM ${fts} WHERE ${fts} MATCH ?`, [match]);
  } else {
    const row = await reader.get<{ doc: number }>(`SELECT doc FROM ${termRecordsTable(collection)} WHERE term = ?`, [word]);
    records = row?.doc ?? 0;
  }
  wordCounts.delete(key); // re-inserted last: the map's order is the order of use
  wordCounts.set(key, { ...now, records });
  if (wordCounts.size > WORD_COUNTS_MAX) wordCounts.delete(wordCounts.keys().next().value as string);
  return records;
}

/**
 * Whether a word is also a term of a term column (index-schema.ts termColumns): the vocabulary counts
 * the records a term is in whatever the column, while the words match the searched columns alone.
 * Terms there are hex, so only a word of hex digits needs the look.
 */
async function inTermColumns(reader: SqliteConnection, collection: Collection, word: string): Promise<boolean> {
  const terms = LAYOUTS[collection].termColumns;
  if (!terms || !/^[0-9a-f]+$/.test(word)) return false;
  const row = await reader.get(
    `SELECT 1 FROM ${termColumnsTable(collection)} WHERE term = ? AND col IN (${terms.map(() => '?').join(', ')}) LIMIT 1`,
    [word, ...terms.map((term) => term.name)],
  );
  return row !== undefined;
}

/** A word's count of records as of one index file, one number of text changes and one highest row id. */
interface WordCount {
  index_id: number;
  changes: number;
  up_to: number;
  records: number;
}

/** Counts kept, the least recently used dropped first (about 100 bytes each). */
const WORD_COUNTS_MAX = 1_000;
/** Keyed by index file, collection and word; shared by every reader of the process. */
const wordCounts = new Map<string, WordCount>();

/**
 * Records whose counted time falls in a window of whole seconds, summed from the per-second counts
 * (index-schema.ts secondCountsTable): as many rows read as the window has busy seconds, however many
 * records they hold.
 */
async function countInWindow(reader: SqliteConnection, collection: Collection, window: SecondsWindow): Promise<number> {
  return count(reader, `SELECT coalesce(sum(records), 0) AS total FROM ${secondCountsTable(collection)} WHERE second BETWEEN ? AND ?`, [window.from_second, window.to_second]);
}

/** Whether the indexed filter clauses hold at most PROBE_ROWS_MAX rows (read no further than that). */
async function fewIndexedRows(reader: SqliteConnection, table: string, plan: SearchPlan): Promise<boolean> {
  if (!plan.indexed) return false;
  const rows = await count(reader, `SELECT count(*) AS total FROM (SELECT 1 FROM ${table} t WHERE ${plan.indexed.sql} LIMIT ${PROBE_ROWS_MAX + 1})`, plan.indexed.params);
  return rows <= PROBE_ROWS_MAX;
}

/**
 * A page sorted by a field other than the log order, read down the index that leads with that field
 * instead of sorting every filtered row, when the filtered rows are common enough that the page lies
 * near the top of that index (the expected depth is the page's end over the share of rows filtered in).
 * The read stops at twice that depth (at most SORT_SCAN_ROWS_MAX entries); a page not complete by then
 * (the filtered rows cluster elsewhere in that order) is left to the sort: undefined. Either way the
 * page is the same: the first rows of the filtered set in that order lie within any prefix of the
 * index that holds enough of them.
 */
async function pageDownSortIndex(reader: SqliteConnection, collection: Collection, plan: SearchPlan, found: number, outOf: number): Promise<SelectedRow[] | undefined> {
  if (!plan.sortIndex || plan.where.sql === '') return undefined;
  const wanted = Math.min(plan.limit, found - plan.offset);
  const depth = Math.ceil(((plan.offset + wanted) * outOf) / found) * 2;
  if (depth > SORT_SCAN_ROWS_MAX || depth >= found) return undefined;
  // The read down the index takes only the columns the filter and the order name (every row read
  // would otherwise decode all of its columns, metadata included); the page's rows are read by id.
  const needed = [...new Set([ROW_ID, ...columnsNamed(plan.order), ...columnsNamed(plan.where.sql)])].map((column) => `t.${column}`);
  const page = await reader.all<{ row_id: number }>(
    `SELECT t.${ROW_ID} FROM (SELECT ${needed.join(', ')} FROM ${LAYOUTS[collection].table} t INDEXED BY ${plan.sortIndex} ORDER BY ${plan.order} LIMIT ?) t
      WHERE ${plan.where.sql} ORDER BY ${plan.order} LIMIT ? OFFSET ?`,
    [depth, ...plan.where.params, plan.limit, plan.offset],
  );
  return page.length === wanted ? rowsById(reader, collection, page.map((row) => row.row_id)) : undefined;
}

/**
 * The columns a compiled fragment names (`t.<column>`). Its text is the compilers' own: column names
 * from the catalogue and fixed templates, every client value a parameter.
 */
function columnsNamed(sql: string): string[] {
  return [...sql.matchAll(/\bt\.([a-z_][a-z0-9_]*)/g)].map((match) => match[1] as string);
}

/** Collection sizes: tables that never lose rows count by their highest row id; identities can be deleted. */
function outOfSql(collection: Collection): string {
  const table = LAYOUTS[collection].table;
  return collection === 'identities'
    ? `SELECT count(*) AS total FROM ${table}`
    : `SELECT coalesce(max(${ROW_ID}), 0) AS total FROM ${table}`;
}
