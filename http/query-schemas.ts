// Request bodies of the query side: filters (POST /<collection>/filter) and searches (POST
// /search/<collection>). These check shapes and bounds only; which fields, operators and expressions
// exist is the query side's judgement (index/field-catalog.ts), so the lists live in one place.

import { z } from 'zod';
import { ApiError } from './api-error.js';
import { LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX, plainNumber } from './common-schemas.js';
import { validate } from './validation.js';

/** Conditions per filter request. */
export const FILTER_CONDITIONS_MAX = 50;
/** Values of one `in` or `between`. */
export const FILTER_VALUES_MAX = 1_000;
/** Deepest offset a filter may page to; beyond it, narrow the filter (a created_at range) instead. */
export const FILTER_OFFSET_MAX = 10_000_000;
export const SEARCH_PER_PAGE_DEFAULT = 10;
export const SEARCH_PER_PAGE_MAX = 250;
export const SEARCH_PAGE_MAX = 100_000;
const QUERY_TEXT_LENGTH_MAX = 1_000;
const FILTER_BY_LENGTH_MAX = 8_000;

const conditionSchema = z.object({
  field: z.string().min(1, 'must not be empty').max(256),
  operator: z.string().min(1, 'must not be empty').max(32),
  value: z.unknown().optional(),
  values: z.array(z.unknown()).max(FILTER_VALUES_MAX).optional(),
});

export const filterSchema = z.object({
  filters: z.array(conditionSchema).max(FILTER_CONDITIONS_MAX),
  logical_operator: z.string().max(16).optional(),
  sort_by: z.string().max(256).optional(),
  sort_order: z.string().max(16).optional(),
  include_count: z.boolean().optional(),
  limit: plainNumber().pipe(z.number().int().min(1).max(LIST_LIMIT_MAX)).default(LIST_LIMIT_DEFAULT),
  offset: plainNumber().pipe(z.number().int().min(0).max(FILTER_OFFSET_MAX)).default(0),
});

export const searchSchema = z.object({
  q: z.string().max(QUERY_TEXT_LENGTH_MAX).default('*'),
  filter_by: z.string().max(FILTER_BY_LENGTH_MAX).default(''),
  sort_by: z.string().max(512).default(''),
  page: plainNumber().pipe(z.number().int().min(1).max(SEARCH_PAGE_MAX)).default(1),
  per_page: plainNumber().pipe(z.number().int().min(0).max(SEARCH_PER_PAGE_MAX)).default(SEARCH_PER_PAGE_DEFAULT),
});

export type SearchBody = z.output<typeof searchSchema>;

/** Search bodies are refused with the search error code, whatever is wrong with them. */
export function validateSearch(body: unknown): SearchBody {
  try {
    return validate(searchSchema, body ?? {});
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    throw new ApiError('SRCH_QUERY_INVALID', error.message, error.details);
  }
}
