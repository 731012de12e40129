// A search's answer in Typesense's shape, as Blnk passes it through (typesense-go's SearchResult):
// `facet_counts` (always; empty without facet_by), `found`, `hits` or, with group_by, `grouped_hits`
// (Typesense sends one or the other), `out_of`, `page`, `request_params`, `search_cutoff` (always
// false: a search is answered whole or refused) and `search_time_ms`. Each hit is `{document,
// highlights, highlight}`: the document is the record as its GET route shows it, cut to
// include_fields and exclude_fields; the highlights are wire/search-highlights.ts's.
//
// include_fields and exclude_fields name the document's own fields (and `meta_data.<key>`); any other
// name is refused, naming the parameter, so a field a Blnk document has and Folio's does not is never
// silently left out.

import { ApiError } from '../api-error.js';
import type { SearchBody } from '../schemas/query-schemas.js';
import type { QueryRecord, SearchCollection, SearchResult } from '../ports/query-port.js';
import { recordView } from './query-answers.js';
import { RawJson, toJsonText } from '../../wire/json-text.js';
import { DEFAULT_HIGHLIGHT_OPTIONS, Highlighter, type HighlightOptions } from '../../wire/search-highlights.js';

/** Names one of include_fields or exclude_fields may list. */
export const DOCUMENT_FIELDS_MAX = 64;

/** A field of the document to keep or drop: a top-level name, or a path inside meta_data. */
type FieldPath = readonly string[];

export function searchAnswer(collection: SearchCollection, body: SearchBody, result: SearchResult, documentFields: ReadonlySet<string>): Record<string, unknown> {
  const include = fieldPaths('include_fields', body.include_fields, documentFields);
  const exclude = fieldPaths('exclude_fields', body.exclude_fields, documentFields);
  const options: HighlightOptions = {
    start_tag: body.highlight_start_tag ?? DEFAULT_HIGHLIGHT_OPTIONS.start_tag,
    end_tag: body.highlight_end_tag ?? DEFAULT_HIGHLIGHT_OPTIONS.end_tag,
    affix_tokens: body.highlight_affix_num_tokens ?? DEFAULT_HIGHLIGHT_OPTIONS.affix_tokens,
    snippet_threshold: body.snippet_threshold ?? DEFAULT_HIGHLIGHT_OPTIONS.snippet_threshold,
    first_form: body.enable_highlight_v1 ?? DEFAULT_HIGHLIGHT_OPTIONS.first_form,
  };
  const highlighter = new Highlighter(result.highlight, options);
  const hit = (record: QueryRecord): Record<string, unknown> => {
    const view = recordView(collection, record);
    const document = include.length === 0 && exclude.length === 0 ? view : pruned(view, include, exclude);
    return { document, ...highlighter.highlight(record as unknown as Record<string, unknown>) };
  };
  const answer: Record<string, unknown> = {
    facet_counts: (result.facet_counts ?? []).map((facet) => ({
      counts: facet.counts.map(({ count, value }) => ({ count, highlighted: value, value })),
      field_name: facet.field_name,
      stats: { total_values: facet.total_values },
    })),
    found: result.found,
  };
  if (result.groups) {
    answer.grouped_hits = result.groups.map((group) => ({ found: group.found, group_key: group.key, hits: group.records.map(hit) }));
  } else {
    answer.hits = result.records.map(hit);
  }
  Object.assign(answer, {
    out_of: result.out_of,
    page: body.page,
    request_params: { collection_name: collection, per_page: body.per_page, q: body.q },
    search_cutoff: false,
    search_time_ms: result.search_time_ms,
  });
  return answer;
}

function fieldPaths(parameter: string, list: string | undefined, documentFields: ReadonlySet<string>): FieldPath[] {
  if (list === undefined || list.trim() === '') return [];
  const names = [...new Set(list.split(',').map((name) => name.trim()))];
  if (names.length > DOCUMENT_FIELDS_MAX) throw invalid(`${parameter} names at most ${DOCUMENT_FIELDS_MAX} fields`);
  return names.map((name) => {
    if (name === '') throw invalid(`${parameter} has an empty field name`);
    if (name.startsWith('$')) throw invalid(`${parameter}: joins (${name}) are not served`);
    const path = name.split('.');
    const top = path[0] as string;
    if (!documentFields.has(top) || (path.length > 1 && top !== 'meta_data') || path.some((part) => part === '')) {
      throw invalid(`${parameter}: the documents have no field ${JSON.stringify(name)}; fields: ${[...documentFields].join(', ')} (and meta_data.<key>)`);
    }
    return path;
  });
}

function invalid(message: string): ApiError {
  return new ApiError('SRCH_QUERY_INVALID', message);
}

/**
 * The document with only the included fields (all when none are named), less the excluded ones, as
 * Typesense applies them. It goes through its JSON text, numbers kept as the exact text they were
 * written with, so no amount loses a digit on the way.
 */
function pruned(view: unknown, include: FieldPath[], exclude: FieldPath[]): unknown {
  const document = JSON.parse(toJsonText(view), (_key, value, context?: { source?: string }) =>
    typeof value === 'number' && context?.source !== undefined ? new RawJson(context.source) : value) as Record<string, unknown>;
  let kept: Record<string, unknown> = document;
  if (include.length > 0) {
    kept = {};
    for (const path of include) copyPath(document, kept, path);
  }
  for (const path of exclude) dropPath(kept, path);
  return kept;
}

function copyPath(from: Record<string, unknown>, to: Record<string, unknown>, path: FieldPath): void {
  const [key, ...rest] = path as [string, ...string[]];
  if (!Object.hasOwn(from, key)) return;
  const value = from[key];
  if (rest.length === 0) {
    setOwn(to, key, value);
    return;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return;
  if (!Object.hasOwn(to, key)) setOwn(to, key, {});
  copyPath(value as Record<string, unknown>, to[key] as Record<string, unknown>, rest);
}

/** Sets an own property whatever its name (a metadata key may be `__proto__`, which plain assignment would not set). */
function setOwn(object: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}

function dropPath(document: Record<string, unknown>, path: FieldPath): void {
  const [key, ...rest] = path as [string, ...string[]];
  if (!Object.hasOwn(document, key)) return;
  if (rest.length === 0) {
    delete document[key];
    return;
  }
  const value = document[key];
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) dropPath(value as Record<string, unknown>, rest);
}
