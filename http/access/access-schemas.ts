// Request bodies for API keys and hooks, with their bounds. Hook bounds: `timeout` is seconds per attempt,
// more than 0 and at most HOOK_TIMEOUT_SECONDS_MAX; `retry_count` is a whole number of further attempts,
// 0 to HOOK_RETRY_COUNT_MAX (with backoff doubling from 1 s and capped at 60 s, ten retries span about
// five minutes). An API key's `rate_limit` (fair use, rate-buckets.ts): `requests_per_second` and
// `burst`, whole numbers from 1 to REQUESTS_PER_SECOND_MAX and RATE_BURST_MAX.

import { z } from 'zod';
import type { HookFields } from '../../engine/decide-registry.js';
import { IDENTIFIER_LENGTH_MAX, NAME_LENGTH_MAX, plainNumber } from '../schemas/common-schemas.js';
import { parseScope, SCOPES_PER_KEY_MAX } from './scopes.js';
import { parseTimeInput } from '../schemas/time-input.js';
import { RATE_BURST_MAX, REQUESTS_PER_SECOND_MAX } from './rate-buckets.js';

export const HOOK_TIMEOUT_SECONDS_MAX = 60;
export const HOOK_RETRY_COUNT_MAX = 10;
export const HOOK_URL_LENGTH_MAX = 2048;

const nameSchema = z.string().trim().min(1, 'must not be empty').max(NAME_LENGTH_MAX);

const scopeSchema = z.string().refine((text) => parseScope(text) !== undefined, {
  message: 'must be resource:action (resources: ledgers, balances, transactions, identities, hooks, api-keys, search, reconciliation, metadata or *; actions: read, write, delete or *)',
});

const timeSchema = z.string().transform((text, context) => {
  const parsed = parseTimeInput(text);
  if (!parsed.ok) {
    context.addIssue({ code: 'custom', message: parsed.rejection.message });
    return z.NEVER;
  }
  return parsed.value;
});

export const rateLimitSchema = z.object({
  requests_per_second: plainNumber().pipe(z.number().int('must be a whole number').min(1).max(REQUESTS_PER_SECOND_MAX))
    .meta({ description: 'Requests the key may make per second, on average (the bucket refills at this rate)' }),
  burst: plainNumber().pipe(z.number().int('must be a whole number').min(1).max(RATE_BURST_MAX))
    .meta({ description: 'Requests the key may make at once (the size of its bucket)' }),
}).meta({ id: 'RateLimit', description: 'A token bucket: past it, requests are refused 429 GEN_RATE_LIMITED with Retry-After' });

export const createApiKeySchema = z.object({
  name: nameSchema,
  owner: z.string().trim().min(1, 'must not be empty').max(IDENTIFIER_LENGTH_MAX),
  scopes: z.array(scopeSchema).min(1, 'must name at least one scope').max(SCOPES_PER_KEY_MAX)
    .transform((scopes) => [...new Set(scopes)]),
  expires_at: timeSchema.refine((epochMs) => epochMs > 0, 'must be a time'),
  rate_limit: rateLimitSchema.optional(),
});

export const listApiKeysQuerySchema = z.object({
  owner: z.string().max(IDENTIFIER_LENGTH_MAX).optional(),
});

const hookUrlSchema = z.string().trim().max(HOOK_URL_LENGTH_MAX).refine(isHookUrl, {
  message: 'must be an absolute http:// or https:// URL',
});

export const hookSchema = z.object({
  name: nameSchema,
  url: hookUrlSchema,
  type: z.enum(['PRE_TRANSACTION', 'POST_TRANSACTION']),
  active: z.boolean(),
  timeout: plainNumber().pipe(z.number().gt(0, 'must be more than 0 seconds').max(HOOK_TIMEOUT_SECONDS_MAX, `must be at most ${HOOK_TIMEOUT_SECONDS_MAX} seconds`)),
  retry_count: plainNumber().pipe(z.number().int('must be a whole number').min(0).max(HOOK_RETRY_COUNT_MAX)),
}).transform((input): HookFields => input);

export const listHooksQuerySchema = z.object({
  type: z.enum(['PRE_TRANSACTION', 'POST_TRANSACTION']).optional(),
});

function isHookUrl(text: string): boolean {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return false;
  }
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
}
