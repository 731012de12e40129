// Runs a search plan on one reader connection. The shape of the SQL depends on what the plan needs, so
// that no search pays for more than it uses:
// - no words: one filtered, sorted query on the table; `found` without filters is the collection size;
// - words, nothing else: the FTS5 table alone answers `found` and (in log order or by relevance) the
//   page of row ids; the page's rows are then read by id;
// - words and filters: the matching row ids become an IN-list the table's own indexes filter and sort.
// Relevance (bm25) is computed only when the matches number at most RANK_MATCHES_MAX.

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
  const candidates = filtered ? `SELECT t.${ROW_ID} FROM ${table} t WHERE ${plan.where.sql} AND t.${ROW_ID} IN (${matching})` : undefined;
  const candidateParams = [...plan.where.params, plan.match];
  const found = candidates
    ? await count(reader, `SELECT count(*) AS total FROM (${candidates})`, candidateParams)
    : await count(reader, `SELECT count(*) AS total FROM ${fts} WHERE ${fts} MATCH ?`, [plan.match]);
  if (plan.limit === 0 || plan.offset >= found) return { found, out_of: outOf, rows: [] };

  if (plan.relevance && found <= RANK_MATCHES_MAX) {
    let ranked: Array<{ rowid: number }>;
    if (candidates) {
      const ids = (await reader.all<{ row_id: number }>(candidates, candidateParams)).map((row) => row.row_id);
      ranked = await reader.all(
        `SELECT rowid FROM ${fts} WHERE ${fts} MATCH ? AND rowid IN (SELECT value FROM json_each(?)) ORDER BY rank ${plan.relevance}, rowid DESC LIMIT ? OFFSET ?`,
        [plan.match, JSON.stringify(ids), plan.limit, plan.offset],
      );
    } else {
      ranked = await reader.all(`${matching} ORDER BY rank ${plan.relevance}, rowid DESC LIMIT ? OFFSET ?`, [plan.match, plan.limit, plan.offset]);
    }
    return { found, out_of: outOf, rows: await rowsById(reader, collection, ranked.map((row) => row.rowid)) };
  }

  if (!candidates && plan.logOrder) {
    const page = await reader.all<{ rowid: number }>(`${matching} ORDER BY rowid ${plan.logOrder} LIMIT ? OFFSET ?`, [plan.match, plan.limit, plan.offset]);
    return { found, out_of: outOf, rows: await rowsById(reader, collection, page.map((row) => row.rowid)) };
  }
  const where = filtered ? `${plan.where.sql} AND ` : '';
  const rows = await reader.all<SelectedRow>(
    `SELECT ${columns} FROM ${table} t WHERE ${where}t.${ROW_ID} IN (${matching}) ORDER BY ${plan.order} LIMIT ? OFFSET ?`,
    [...plan.where.params, plan.match, plan.limit, plan.offset],
  );
  return { found, out_of: outOf, rows };
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
