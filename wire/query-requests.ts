// Filter and search requests as the API takes them (interface.md 4.7 and 4.8): the shapes the HTTP edge
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

export interface SearchRequest {
  q: string;
  filter_by: string;
  sort_by: string;
  page: number;
  per_page: number;
}
