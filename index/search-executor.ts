// Runs a search plan on one reader connection. The shape of the SQL depends on what the plan needs, so
// that no search pays for more than it uses:
// - no words: one filtered, sorted query on the table; `found` without filters is the collection size;
// - words, nothing else: the FTS5 table alone answers `found` and (in log order or by relevance) the
//   page of row ids; the page's rows are then read by id;
// - words and filters: the matching row ids become an IN-list the table's own indexes filter and sort.
// Relevance (bm25) is computed only when the words match at most RANK_MATCHES_MAX records; beyond that
// matches come in the field order (newest first by default), with or without filters.

import { ftsTable, LAYOUTS, ROW_ID, selectColumns, type Collection } from './index-schema.js';
import type { SelectedRow } from './record-rows.js';
import { RANK_MATCHES_MAX, type SearchPlan } from './search-compiler.js';
import type { SqliteConnection, SqlValue } from './sqlite-connection.js';

export interface SearchRows {
  found: number;
  out_of: number;
  rows: SelectedRow[];
}

export async function runSearch(reader: SqliteConnection, collection: Collection, plan: SearchPlan): Promise<SearchRows> {
  const layout = LAYOUTS[collection];
  const table = layout.table;
  const columns = selectColumns(layout);
  const outOf = await count(reader, outOfSql(collection), []);
  const filtered = plan.where.sql !== '';

  if (plan.match === undefined) {
    const where = filtered ? ` WHERE ${plan.where.sql}` : '';
    const found = filtered ? await count(reader, `SELECT count(*) AS total FROM ${table} t${where}`, plan.where.params) : outOf;
    const rows = plan.limit === 0 ? [] : await reader.all<SelectedRow>(
      `SELECT ${columns} FROM ${table} t${where} ORDER BY ${plan.order} LIMIT ? OFFSET ?`,
      [...plan.where.params, plan.limit, plan.offset],
    );
    return { found, out_of: outOf, rows };
  }

  const fts = ftsTable(collection);
  const matching = `SELECT rowid FROM ${fts} WHERE ${fts} MATCH ?`;
  // Counting the words' matches reads only the full-text index: cheap, and it decides the plan.
  const matchCount = await count(reader, `SELECT count(*) AS total FROM ${fts} WHERE ${fts} MATCH ?`, [plan.match]);
  const rank = plan.relevance && matchCount <= RANK_MATCHES_MAX ? plan.relevance : undefined;

  if (!filtered) {
    const found = matchCount;
    if (plan.limit === 0 || plan.offset >= found) return { found, out_of: outOf, rows: [] };
    if (rank || plan.logOrder) {
      const order = rank ? `rank ${rank}, rowid DESC` : `rowid ${plan.logOrder}`;
      const page = await reader.all<{ rowid: number }>(`${matching} ORDER BY ${order} LIMIT ? OFFSET ?`, [plan.match, plan.limit, plan.offset]);
      return { found, out_of: outOf, rows: await rowsById(reader, collection, page.map((row) => row.rowid)) };
    }
  } else if (rank) {
    // Few matches: the filtered ones are ranked. `+rowid` and `+rank` keep SQLite from handing the
    // id list and the ordering to FTS5, which would probe or rank every match one by one.
    const ids = (await reader.all<{ row_id: number }>(
      `SELECT t.${ROW_ID} FROM ${table} t WHERE ${plan.where.sql} AND t.${ROW_ID} IN (${matching})`,
      [...plan.where.params, plan.match],
    )).map((row) => row.row_id);
    const found = ids.length;
    if (plan.limit === 0 || plan.offset >= found) return { found, out_of: outOf, rows: [] };
    const page = await reader.all<{ rowid: number }>(
      `SELECT rowid FROM ${fts} WHERE ${fts} MATCH ? AND +rowid IN (SELECT value FROM json_each(?)) ORDER BY +rank ${rank}, rowid DESC LIMIT ? OFFSET ?`,
      [plan.match, JSON.stringify(ids), plan.limit, plan.offset],
    );
    return { found, out_of: outOf, rows: await rowsById(reader, collection, page.map((row) => row.rowid)) };
  }

  // The field order over the matches: the matching ids become an IN-list that the table's indexes
  // filter and sort; the window count gives `found` in the same pass.
  const where = filtered ? `${plan.where.sql} AND ` : '';
  const rows = await reader.all<SelectedRow & { search_found: number }>(
    `SELECT ${columns}, count(*) OVER () AS search_found FROM ${table} t WHERE ${where}t.${ROW_ID} IN (${matching}) ORDER BY ${plan.order} LIMIT ? OFFSET ?`,
    [...plan.where.params, plan.match, Math.max(plan.limit, 1), plan.offset],
  );
  let found = rows[0]?.search_found;
  if (found === undefined) {
    found = plan.offset === 0 ? 0 : await count(reader, `SELECT count(*) AS total FROM ${table} t WHERE ${where}t.${ROW_ID} IN (${matching})`, [...plan.where.params, plan.match]);
  }
  return { found, out_of: outOf, rows: plan.limit === 0 ? [] : rows };
}

/** Rows by row id, in the order of the ids given. */
async function rowsById(reader: SqliteConnection, collection: Collection, ids: number[]): Promise<SelectedRow[]> {
  if (ids.length === 0) return [];
  const layout = LAYOUTS[collection];
  const rows = await reader.all<SelectedRow & { [ROW_ID]: number }>(
    `SELECT t.${ROW_ID}, ${selectColumns(layout)} FROM ${layout.table} t WHERE t.${ROW_ID} IN (SELECT value FROM json_each(?))`,
    [JSON.stringify(ids)],
  );
  const byId = new Map(rows.map((row) => [row[ROW_ID], row]));
  return ids.map((id) => byId.get(id)).filter((row): row is SelectedRow & { row_id: number } => row !== undefined);
}

async function count(reader: SqliteConnection, sql: string, params: SqlValue[]): Promise<number> {
  return (await reader.all<{ total: number }>(sql, params))[0]?.total ?? 0;
}

/** Collection sizes: tables that never lose rows count by their highest row id; identities can be deleted. */
function outOfSql(collection: Collection): string {
  const table = LAYOUTS[collection].table;
  return collection === 'identities'
    ? `SELECT count(*) AS total FROM ${table}`
    : `SELECT coalesce(max(${ROW_ID}), 0) AS total FROM ${table}`;
}
