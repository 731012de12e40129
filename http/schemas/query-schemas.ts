// Request bodies of the query side: filters (POST /<collection>/filter) and searches (POST
// /search/<collection>). These check shapes and bounds only; which fields, operators and expressions
// exist is the query side's judgement (index/field-catalog.ts), so the lists live in one place.

import { z } from 'zod';
import { ApiError } from '../api-error.js';
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
  // A bad logical operator is a validation error in Blnk (its body parser refuses it), unlike a bad field.
  logical_operator: z.string().max(16).optional()
    .refine((value) => value === undefined || ['', 'and', 'or'].includes(value.trim().toLowerCase()), "logical_operator must be 'and' or 'or'")
    .transform((value) => (value === undefined || value.trim() === '' ? undefined : value.trim().toLowerCase())),
  sort_by: z.string().max(256).optional(),
  sort_order: z.string().max(16).optional(),
  include_count: z.boolean().optional(),
  // As in Blnk: a limit of 0 or less, or over the maximum, means the default; a negative offset, 0.
  limit: plainNumber().pipe(z.number().int()).default(LIST_LIMIT_DEFAULT)
    .transform((limit) => (limit < 1 || limit > LIST_LIMIT_MAX ? LIST_LIMIT_DEFAULT : limit)),
  offset: plainNumber().pipe(z.number().int().max(FILTER_OFFSET_MAX)).default(0).transform((offset) => Math.max(0, offset)),
});

/** Where a search page may start when given as Typesense's `offset` (as deep as the deepest page). */
export const SEARCH_OFFSET_MAX = SEARCH_PAGE_MAX * SEARCH_PER_PAGE_MAX;
const FIELD_LIST_LENGTH_MAX = 2_000;
const HIGHLIGHT_TAG_LENGTH_MAX = 64;

const fieldList = z.string().max(FIELD_LIST_LENGTH_MAX);
const wholeNumber = (min: number, max: number) => plainNumber().pipe(z.number().int().min(min).max(max));
/** Typesense takes a value per query_by field as `a,b,c`; Folio serves one value for all of them. */
const perField = (accepted: string, message: string) => z.union([z.string().max(256), z.number(), z.boolean()])
  .transform((value) => String(value).split(',').map((item) => item.trim().toLowerCase()))
  .refine((values) => values.every((value) => value === accepted), message);

export const searchSchema = z.object({
  q: z.string().max(QUERY_TEXT_LENGTH_MAX).default('*'),
  query_by: fieldList.optional(),
  filter_by: z.string().max(FILTER_BY_LENGTH_MAX).default(''),
  sort_by: z.string().max(512).default(''),
  page: wholeNumber(1, SEARCH_PAGE_MAX).optional(),
  per_page: wholeNumber(0, SEARCH_PER_PAGE_MAX).optional(),
  offset: wholeNumber(0, SEARCH_OFFSET_MAX).optional(),
  limit: wholeNumber(0, SEARCH_PER_PAGE_MAX).optional(),
  // Typesense's form is `true`, `false` or one per query_by field (`true,false`): one value for all is served.
  prefix: z.union([z.boolean(), z.string().max(256)]).optional().transform((value, context) => {
    if (value === undefined || typeof value === 'boolean') return value;
    const values = [...new Set(value.split(',').map((item) => item.trim().toLowerCase()))];
    if (values.length === 1 && (values[0] === 'true' || values[0] === 'false')) return values[0] === 'true';
    context.addIssue({ code: 'custom', message: 'prefix takes true or false (one value for every query_by field)' });
    return z.NEVER;
  }),
  facet_by: fieldList.optional(),
  max_facet_values: wholeNumber(1, SEARCH_PER_PAGE_MAX).optional(),
  group_by: fieldList.optional(),
  group_limit: wholeNumber(1, 99).optional(),
  group_missing_values: z.boolean().optional(),
  include_fields: fieldList.optional(),
  exclude_fields: fieldList.optional(),
  highlight_fields: fieldList.optional(),
  highlight_full_fields: fieldList.optional(),
  highlight_start_tag: z.string().max(HIGHLIGHT_TAG_LENGTH_MAX).optional(),
  highlight_end_tag: z.string().max(HIGHLIGHT_TAG_LENGTH_MAX).optional(),
  highlight_affix_num_tokens: wholeNumber(0, 64).optional(),
  snippet_threshold: wholeNumber(0, 1_000).optional(),
  enable_highlight_v1: z.boolean().optional(),
  // What Folio always does, said explicitly: accepted with that value, refused with any other.
  num_typos: perField('0', 'num_typos: only 0 is served (words are matched exactly, without typos)').optional(),
  typo_tokens_threshold: perField('0', 'typo_tokens_threshold: only 0 is served (words are matched exactly, without typos)').optional(),
  drop_tokens_threshold: perField('0', 'drop_tokens_threshold: only 0 is served (every word must be found; none is dropped)').optional(),
  infix: perField('off', 'infix: only off is served (words match from their start)').optional(),
  split_join_tokens: perField('off', 'split_join_tokens: only off is served (words are never split or joined)').optional(),
  // Settings whose every value gives the answer Folio gives: no result cache to serve stale answers
  // from, no synonyms or overrides defined, every match always considered.
  use_cache: z.boolean().optional(),
  cache_ttl: wholeNumber(0, 86_400).optional(),
  enable_overrides: z.boolean().optional(),
  enable_synonyms: z.boolean().optional(),
  exhaustive_search: z.boolean().optional(),
}).transform(({ page, per_page, offset, limit, ...rest }, context) => {
  // Typesense's offset and limit stand in for page and per_page; both ways at once would be ambiguous.
  if (offset !== undefined && page !== undefined) context.addIssue({ code: 'custom', path: ['offset'], message: 'give page or offset, not both' });
  if (limit !== undefined && per_page !== undefined) context.addIssue({ code: 'custom', path: ['limit'], message: 'give per_page or limit, not both' });
  const size = limit ?? per_page ?? SEARCH_PER_PAGE_DEFAULT;
  const paging = offset === undefined
    ? { page: page ?? 1, per_page: size }
    : { page: size === 0 ? 1 : Math.floor(offset / size) + 1, per_page: size, offset };
  return { ...rest, ...paging };
});

/** The search parameters Folio serves (searchSchema's keys). */
const SERVED_PARAMETERS = new Set([
  'q', 'query_by', 'filter_by', 'sort_by', 'page', 'per_page', 'offset', 'limit', 'prefix', 'facet_by', 'max_facet_values', 'group_by',
  'group_limit', 'group_missing_values', 'include_fields', 'exclude_fields', 'highlight_fields', 'highlight_full_fields',
  'highlight_start_tag', 'highlight_end_tag', 'highlight_affix_num_tokens', 'snippet_threshold', 'enable_highlight_v1', 'num_typos',
  'typo_tokens_threshold', 'drop_tokens_threshold', 'infix', 'split_join_tokens', 'use_cache', 'cache_ttl', 'enable_overrides',
  'enable_synonyms', 'exhaustive_search',
]);

/**
 * Typesense's other search parameters (its API's search parameters, typesense-go's SearchCollectionParams
 * and MultiSearchCollectionParameters, and its documentation's): each changes the answer in a way
 * Folio does not reproduce (typos, ranking knobs, curation, joins, vectors, conversations, presets), so
 * naming one is a 400 that says so rather than an answer that quietly differs.
 */
const TYPESENSE_PARAMETERS_NOT_SERVED = new Set([
  'conversation', 'conversation_id', 'conversation_model_id', 'drop_tokens_mode', 'enable_analytics', 'enable_lazy_filter',
  'enable_typos_for_alpha_numerical_tokens', 'enable_typos_for_numerical_tokens', 'facet_query', 'facet_query_num_typos',
  'facet_return_parent', 'facet_sample_percent', 'facet_sample_threshold', 'facet_strategy', 'filter_curated_hits', 'hidden_hits',
  'limit_hits', 'max_candidates', 'max_extra_prefix', 'max_extra_suffix', 'max_filter_by_candidates', 'max_hits', 'min_len_1typo',
  'min_len_2typo', 'nl_model_id', 'nl_query', 'override_tags', 'pinned_hits', 'pre_segmented_query', 'preset',
  'prioritize_exact_match', 'prioritize_num_matching_fields', 'prioritize_token_position', 'query_by_weights',
  'remote_embedding_num_tries', 'remote_embedding_timeout_ms', 'rerank_hybrid_matches', 'search_cutoff_ms', 'stopwords',
  'synonym_num_typos', 'synonym_prefix', 'synonym_sets', 'text_match_type', 'validate_field_names', 'vector_query', 'voice_query',
  'x-typesense-api-key',
]);

export type SearchBody = z.output<typeof searchSchema>;

/** Searches in one multi-search request. */
export const MULTI_SEARCHES_MAX = 50;

/** A multi-search: each search names its collection beside the fields of a search body (checked per search). */
export const multiSearchSchema = z.object({
  searches: z.array(z.looseObject({ collection: z.string().min(1).max(64) })).min(1).max(MULTI_SEARCHES_MAX),
});

/**
 * Search bodies are refused with the search error code, whatever is wrong with them. A parameter Folio
 * does not serve is named, never dropped: a client written for Blnk must not get a different answer
 * without being told.
 */
export function validateSearch(body: unknown): SearchBody {
  const given = body ?? {};
  if (typeof given === 'object' && !Array.isArray(given)) {
    const keys = Object.keys(given);
    const notServed = keys.filter((key) => TYPESENSE_PARAMETERS_NOT_SERVED.has(key));
    const unknown = keys.filter((key) => !SERVED_PARAMETERS.has(key) && !TYPESENSE_PARAMETERS_NOT_SERVED.has(key));
    const problems: string[] = [];
    if (notServed.length > 0) problems.push(`Typesense search parameter${notServed.length > 1 ? 's' : ''} not served: ${notServed.join(', ')}`);
    if (unknown.length > 0) problems.push(`unknown search parameter${unknown.length > 1 ? 's' : ''}: ${unknown.slice(0, 10).map((key) => JSON.stringify(key.slice(0, 64))).join(', ')}`);
    if (problems.length > 0) throw new ApiError('SRCH_QUERY_INVALID', problems.join('; '));
  }
  try {
    return validate(searchSchema, given);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    throw new ApiError('SRCH_QUERY_INVALID', error.message, error.details);
  }
}
