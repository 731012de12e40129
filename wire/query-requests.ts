// Filter and search requests as the API takes them (../shared/spec/interface.md 4.7 and 4.8): the shapes the HTTP edge
// checks and the query side compiles, declared once for both. The HTTP edge has applied the defaults and
// bounds (limit, page); the query side judges fields, operators and expressions.

export interface FilterCondition {
  field: string;
  operator: string;
  value?: unknown;
  values?: unknown[];
}

export interface FilterRequest {
  filters: FilterCondition[];
  logical_operator?: string;
  sort_by?: string;
  sort_order?: string;
  include_count?: boolean;
  limit: number;
  offset: number;
}

/** A search (Typesense's parameters that Folio serves; the HTTP edge refuses the others by name). */
export interface SearchRequest {
  q: string;
  filter_by: string;
  sort_by: string;
  page: number;
  per_page: number;
  /** Where the page starts, when the request gave Typesense's `offset` instead of a page. */
  offset?: number;
  /** The fields words are matched in (default: every searched text column). */
  query_by?: string;
  /** Whether the last word also matches the start of a word (default true). */
  prefix?: boolean;
  highlight_fields?: string;
  highlight_full_fields?: string;
  facet_by?: string;
  max_facet_values?: number;
  group_by?: string;
  group_limit?: number;
  group_missing_values?: boolean;
}
