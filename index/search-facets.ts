// facet_by: for each field named, how many of the records found hold each value, the commonest first
// (ties by value), at most `values_max` values, and how many distinct values there are. Counted over
// every record found, not the page, as Typesense counts. Values are text as Typesense gives them:
// flags `true`/`false`, numbers and exact amounts in decimal. A record counts for a value it has: an
// empty text, a missing metadata key and a metadata object or list hold none.
//
// Each field is one GROUP BY over the records found, so its cost grows with them; a search that would
// count more than FACET_RECORDS_MAX (records found times fields) is refused, naming facet_by, rather than
// left to run for seconds (docs/decisions-query.md).

import type { SqlFragment } from './predicates.js';
import type { ValueField } from './search-fields.js';
import { SearchRefusal } from './search-refusal.js';
import { amountFromKey } from './sortable-amount.js';
import type { SqliteConnection, SqlValue } from './sqlite-connection.js';

/** Records found times facet fields that one search may count. */
export const FACET_RECORDS_MAX = 1_000_000;

export interface FacetCount {
  field_name: string;
  counts: Array<{ count: number; value: string }>;
  /** Distinct values among the records found. */
  total_values: number;
}

/** JSON types of metadata values that are counted (objects, lists and nulls are not values). */
const META_VALUE_KINDS = ['text', 'integer', 'real', 'true', 'false'];

export async function countFacets(
  reader: SqliteConnection,
  facets: { fields: ValueField[]; values_max: number },
  records: SqlFragment,
  found: number,
): Promise<FacetCount[]> {
  if (found * facets.fields.length > FACET_RECORDS_MAX) {
    throw new SearchRefusal(`facet_by counts at most ${FACET_RECORDS_MAX.toLocaleString('en')} values (records found times fields); this search finds ${found.toLocaleString('en')} records for ${facets.fields.length} field(s): narrow it with filter_by`);
  }
  const counted: FacetCount[] = [];
  for (const field of facets.fields) counted.push(await countField(reader, field, facets.values_max, records, found));
  return counted;
}

async function countField(reader: SqliteConnection, field: ValueField, valuesMax: number, records: SqlFragment, found: number): Promise<FacetCount> {
  const facet: FacetCount = { field_name: field.name, counts: [], total_values: 0 };
  if (found === 0) return facet;
  const kind = field.kind;
  const select = kind ? `${field.value.sql} AS value, ${kind.sql} AS kind` : `${field.value.sql} AS value`;
  const having = kind
    ? `HAVING kind IN (${META_VALUE_KINDS.map(() => '?').join(', ')})`
    : field.type === 'text' ? `HAVING value != ''` : '';
  const rows = await reader.all<{ value: SqlValue; kind?: string; size: number; total: number }>(
    `SELECT ${select}, count(*) AS size, count(*) OVER () AS total ${records.sql}
      GROUP BY value${kind ? ', kind' : ''} ${having} ORDER BY size DESC, value ASC LIMIT ?`,
    [...field.value.params, ...(kind?.params ?? []), ...records.params, ...(kind ? META_VALUE_KINDS : []), valuesMax],
  );
  facet.total_values = rows[0]?.total ?? 0;
  facet.counts = rows.map((row) => ({ count: row.size, value: facetText(field, row.value, row.kind) }));
  return facet;
}

/** A stored value as Typesense writes a facet value: text. */
function facetText(field: ValueField, value: SqlValue, kind: string | undefined): string {
  if (kind === 'true' || kind === 'false') return kind;
  switch (field.type) {
    case 'boolean': return value === 1 ? 'true' : 'false';
    case 'amount': return amountFromKey(String(value)).toString();
    default: return String(value);
  }
}
