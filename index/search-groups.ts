// group_by: the hits in groups of records with the same values of the fields named, as Typesense groups
// them. Groups come in the order of their best hit (the search's order: relevance or the sort fields),
// a page is a page of groups, each with its first `limit` hits in that order, the number of records in
// it (`found`) and its key (the fields' values, a field the record lacks left out). `found` of the
// answer is the number of groups. Records missing a metadata value form one group
// (group_missing_values, the default) or a group each.
//
// One statement over every record found: each numbered in the search's order, grouped, the groups
// numbered by their first record, and the page's groups joined back to their first records. Its cost
// grows with the records found, so a search finding more than GROUP_RECORDS_MAX is refused, naming
// group_by (docs/decisions-query.md).

import { ftsTable, LAYOUTS, ROW_ID, type Collection } from './index-schema.js';
import type { SqlFragment } from './predicates.js';
import type { SelectedRow } from './record-rows.js';
import type { SearchPlan } from './search-compiler.js';
import type { ValueField } from './search-fields.js';
import { SearchRefusal } from './search-refusal.js';
import { rowsById } from './search-rows.js';
import { amountFromKey } from './sortable-amount.js';
import type { SqliteConnection, SqlValue } from './sqlite-connection.js';

/** Records found that one grouped search may group. */
export const GROUP_RECORDS_MAX = 250_000;

export interface HitGroup {
  /** The fields' values of the group, in group_by's order (a value the records lack is left out). */
  key: unknown[];
  /** Records in the group. */
  found: number;
  rows: SelectedRow[];
}

export interface GroupedSearch {
  plan: SearchPlan;
  group: NonNullable<SearchPlan['group']>;
  /** The records found (search-rows.ts foundRecordsSql). */
  records: SqlFragment;
  /** The words' cheapest expression, when the plan has words. */
  words: string | undefined;
  /** Relevance order when the hits are ranked (search-executor.ts rankedOrder). */
  ranked: 'ASC' | 'DESC' | undefined;
}

export async function groupHits(reader: SqliteConnection, collection: Collection, search: GroupedSearch, found: number): Promise<{ found: number; groups: HitGroup[] }> {
  if (found > GROUP_RECORDS_MAX) {
    throw new SearchRefusal(`group_by groups at most ${GROUP_RECORDS_MAX.toLocaleString('en')} records; this search finds ${found.toLocaleString('en')}: narrow it with filter_by`);
  }
  if (found === 0) return { found: 0, groups: [] };
  const { plan, group } = search;
  const values: string[] = [];
  const params: SqlValue[] = [];
  group.fields.forEach((field, index) => {
    values.push(`${field.value.sql} AS g${index}`);
    params.push(...field.value.params);
    if (field.kind) {
      values.push(`${field.kind.sql} AS k${index}`);
      params.push(...field.kind.params);
    }
  });
  const keys = group.fields.flatMap((field, index) => (field.kind ? [`g${index}`, `k${index}`] : [`g${index}`]));
  const missing = group.fields.map((_, index) => `g${index} IS NULL`).join(' OR ');
  const lone = group.missing_together ? 'NULL' : `CASE WHEN ${missing} THEN id END`;
  const partition = [...keys, 'lone'].join(', ');
  const joinOn = [...keys, 'lone'].map((key) => `h.${key} IS p.${key}`).join(' AND ');
  // Ranked: the hits' order is the full-text index's; otherwise the plan's order over the table.
  const fts = ftsTable(collection);
  const source = search.ranked
    ? { sql: `FROM ${fts} f JOIN ${LAYOUTS[collection].table} t ON t.${ROW_ID} = f.rowid WHERE ${fts} MATCH ?${plan.where.sql === '' ? '' : ` AND (${plan.where.sql})`}`, params: [search.words as string, ...plan.where.params] }
    : search.records;
  const order = search.ranked ? `f.rank ${search.ranked}, t.${ROW_ID} DESC` : plan.order;
  const rows = await reader.all<{ total: number; number: number | null; size: number | null; id: number | null; [key: string]: SqlValue }>(
    `WITH numbered_hits AS (
       SELECT t.${ROW_ID} AS id, ${values.join(', ')}, row_number() OVER (ORDER BY ${order}) AS position ${source.sql}
     ), keyed_hits AS (
       SELECT *, ${lone} AS lone FROM numbered_hits
     ), hits AS (
       SELECT *, row_number() OVER (PARTITION BY ${partition} ORDER BY position) AS member FROM keyed_hits
     ), groups AS (
       SELECT ${partition}, min(position) AS first, count(*) AS size FROM hits GROUP BY ${partition}
     ), page AS (
       SELECT * FROM (SELECT *, row_number() OVER (ORDER BY first) AS number FROM groups) WHERE number > ? AND number <= ?
     )
     SELECT (SELECT count(*) FROM groups) AS total, p.number, p.size, h.id, ${keys.map((key) => `h.${key} AS ${key}`).join(', ')}
       FROM (SELECT 1) LEFT JOIN (page p JOIN hits h ON ${joinOn} AND h.member <= ?) ON 1
      ORDER BY p.number, h.member`,
    [...params, ...source.params, plan.offset, plan.offset + plan.limit, group.limit],
  );
  const total = rows[0]?.total ?? 0;
  const members = rows.filter((row) => row.id !== null);
  const byId = new Map((await rowsById(reader, collection, members.map((row) => row.id as number))).map((row) => [row[ROW_ID] as number, row]));
  const groups: HitGroup[] = [];
  let current: HitGroup | undefined;
  let currentNumber: number | null = null;
  for (const row of members) {
    if (row.number !== currentNumber) {
      currentNumber = row.number;
      current = { key: groupKey(group.fields, row), found: row.size ?? 0, rows: [] };
      groups.push(current);
    }
    const record = byId.get(row.id as number);
    if (record) current?.rows.push(record);
  }
  return { found: total, groups };
}

/** The group's values as JSON values, as the documents hold them (a value the records lack left out). */
function groupKey(fields: ValueField[], row: Record<string, SqlValue>): unknown[] {
  const key: unknown[] = [];
  fields.forEach((field, index) => {
    const value = row[`g${index}`];
    if (value === null || value === undefined) return;
    if (field.kind) {
      const kind = row[`k${index}`];
      if (kind === 'true' || kind === 'false') key.push(kind === 'true');
      else if (kind === 'object' || kind === 'array') key.push(JSON.parse(String(value)));
      else key.push(value);
      return;
    }
    switch (field.type) {
      case 'boolean': key.push(value === 1); break;
      case 'amount': key.push(amountFromKey(String(value))); break;
      default: key.push(value);
    }
  });
  return key;
}
