// Reads the search plans share: rows by id in a given order, a count, and the records a plan finds as
// the plain reading of the request (every filter clause, the words through the full-text index), which
// facets and groups read once the faster plans have counted them.

import { ftsTable, LAYOUTS, ROW_ID, selectColumns, type Collection } from './index-schema.js';
import type { SqlFragment } from './predicates.js';
import type { SelectedRow } from './record-rows.js';
import type { SearchPlan } from './search-compiler.js';
import type { SqliteConnection, SqlValue } from './sqlite-connection.js';

/** Rows by row id, in the order of the ids given. */
export async function rowsById(reader: SqliteConnection, collection: Collection, ids: number[]): Promise<SelectedRow[]> {
  if (ids.length === 0) return [];
  const layout = LAYOUTS[collection];
  const rows = await reader.all<SelectedRow & { [ROW_ID]: number }>(
    `SELECT t.${ROW_ID}, ${selectColumns(layout)} FROM ${layout.table} t WHERE t.${ROW_ID} IN (SELECT value FROM json_each(?))`,
    [JSON.stringify(ids)],
  );
  const byId = new Map(rows.map((row) => [row[ROW_ID], row]));
  return ids.map((id) => byId.get(id)).filter((row): row is SelectedRow & { row_id: number } => row !== undefined);
}

export async function count(reader: SqliteConnection, sql: string, params: SqlValue[]): Promise<number> {
  return (await reader.all<{ total: number }>(sql, params))[0]?.total ?? 0;
}

/**
 * The records a plan finds, as SQL to follow `SELECT ...` (the table is `t`). `words`: the plan's words
 * as their cheapest expression (search-executor.ts cheapestMatch), undefined when it has none.
 */
export function foundRecordsSql(collection: Collection, plan: SearchPlan, words: string | undefined): SqlFragment {
  const table = LAYOUTS[collection].table;
  const conditions: string[] = [];
  const params: SqlValue[] = [];
  if (plan.where.sql !== '') {
    conditions.push(`(${plan.where.sql})`);
    params.push(...plan.where.params);
  }
  if (words !== undefined) {
    const fts = ftsTable(collection);
    conditions.push(`t.${ROW_ID} IN (SELECT rowid FROM ${fts} WHERE ${fts} MATCH ?)`);
    params.push(words);
  }
  return { sql: `FROM ${table} t${conditions.length > 0 ? ` WHERE ${conditions.join(' AND ')}` : ''}`, params };
}

