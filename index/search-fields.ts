// Which fields a search may name beyond filter_by and sort_by, per parameter, and what each becomes:
//   query_by, highlight_fields, highlight_full_fields  the searched text columns (words, full-text index)
//              and the id fields (compared whole, or by their start: ids are not words in the index);
//   facet_by, group_by  fields with a value per record to count or group by: text, flags, whole numbers,
//              exact amounts and `meta_data.<key>`; times are left out (a count per second says little),
//              and so is `balance_id` on transactions (two columns, not one value).
// Every name a request gives is resolved here or refused with a message naming the parameter, so a
// field Folio does not serve is never silently dropped.

import { CATALOG, META_PREFIX, type FieldType } from './field-catalog.js';
import { resolveField, type Compiled } from './filter-compiler.js';
import { LAYOUTS, type Collection } from './index-schema.js';
import type { SqlFragment } from './predicates.js';
import type { HighlightField } from '../wire/search-highlights.js';

/** Fields one list parameter may name. */
export const SEARCH_FIELDS_MAX = 16;
/** Fields facet_by may name (each is one more count over every record found). */
export const FACET_FIELDS_MAX = 8;
/** Fields group_by may name. */
export const GROUP_FIELDS_MAX = 3;

/** Ids a search may match whole (query_by): found exactly through their indexes, never as words. */
const ID_FIELDS: Record<Collection, readonly string[]> = {
  ledgers: ['ledger_id'],
  balances: ['balance_id', 'ledger_id', 'identity_id'],
  transactions: ['transaction_id', 'parent_transaction', 'source', 'destination', 'batch_id'],
  identities: ['identity_id'],
  reconciliations: ['reconciliation_id', 'upload_id'],
};

const fail = <T>(message: string): Compiled<T> => ({ ok: false, message });

/** A comma-separated list of field names, trimmed and without repeats. */
function names(parameter: string, list: string, max: number): Compiled<string[]> {
  const items = list.split(',').map((item) => item.trim());
  if (items.some((item) => item === '')) return fail(`${parameter} has an empty field name`);
  const unique = [...new Set(items)];
  if (unique.length > max) return fail(`${parameter} names at most ${max} fields`);
  const join = unique.find((item) => item.startsWith('$'));
  if (join !== undefined) return fail(`${parameter}: joins (${join}) are not served`);
  return { ok: true, value: unique };
}

/** The fields words are matched in: query_by or highlight_fields, resolved. */
export function searchedFields(collection: Collection, parameter: string, list: string): Compiled<HighlightField[]> {
  const listed = names(parameter, list, SEARCH_FIELDS_MAX);
  if (!listed.ok) return listed;
  const layout = LAYOUTS[collection];
  const fields: HighlightField[] = [];
  for (const name of listed.value) {
    if (layout.searchColumns.includes(name)) fields.push({ name, kind: name === 'meta_data' ? 'meta' : 'text' });
    else if (ID_FIELDS[collection].includes(name)) fields.push({ name, kind: 'value' });
    else if (name.startsWith(META_PREFIX) && layout.searchColumns.includes('meta_data')) {
      return fail(`${parameter}: ${name} is not served; words are matched in all of meta_data (${parameter}: meta_data), and filter_by ${name}:=<value> matches one key's value`);
    } else if (CATALOG[collection].has(name)) {
      return fail(`${parameter}: ${name} is not searched by words; filter it with filter_by. Fields searched: ${searchableNames(collection).join(', ')}`);
    } else return fail(`${parameter}: unknown field ${JSON.stringify(name)} for ${collection}; fields searched: ${searchableNames(collection).join(', ')}`);
  }
  return { ok: true, value: fields };
}

/** The collection's searched text columns and id fields (what query_by may name). */
export function searchableNames(collection: Collection): string[] {
  return [...LAYOUTS[collection].searchColumns, ...ID_FIELDS[collection]];
}

/** The default searched fields: every text column (ids are matched only when query_by names them). */
export function defaultSearchedFields(collection: Collection): HighlightField[] {
  return LAYOUTS[collection].searchColumns.map((name) => ({ name, kind: name === 'meta_data' ? 'meta' as const : 'text' as const }));
}

/** A field counted (facet_by) or grouped by (group_by): its value per record in SQL. */
export interface ValueField {
  name: string;
  type: FieldType;
  /** The value; for metadata `json_extract` with the path bound. */
  value: SqlFragment;
  /** For metadata: the JSON type of the value (`json_type`), which tells `true` from 1 and text from numbers. */
  kind?: SqlFragment;
}

const VALUE_TYPES: readonly FieldType[] = ['text', 'boolean', 'integer', 'amount', 'meta'];

/** facet_by or group_by, resolved. */
export function valueFields(collection: Collection, parameter: string, list: string, max: number): Compiled<ValueField[]> {
  const listed = names(parameter, list, max);
  if (!listed.ok) return listed;
  const fields: ValueField[] = [];
  for (const name of listed.value) {
    if (name.includes('(')) return fail(`${parameter}: ${name} asks for ranges or options, which are not served; name plain fields`);
    const resolved = resolveField(collection, name);
    if (!resolved.ok) return fail(`${parameter}: ${resolved.message}`);
    const { spec, metaPath } = resolved.value;
    if (!VALUE_TYPES.includes(spec.type) || spec.columns.length !== 1) {
      return fail(`${parameter}: ${name} is not served (${spec.type === 'time' ? 'a time' : 'not one value per record'}); name fields of text, flags, numbers, amounts or meta_data.<key>`);
    }
    if (metaPath !== undefined) {
      fields.push({ name, type: 'meta', value: { sql: 'json_extract(t.meta_data, ?)', params: [metaPath] }, kind: { sql: 'json_type(t.meta_data, ?)', params: [metaPath] } });
    } else {
      fields.push({ name, type: spec.type, value: { sql: `t.${spec.columns[0]}`, params: [] } });
    }
  }
  return { ok: true, value: fields };
}
