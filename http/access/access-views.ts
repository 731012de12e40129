// API keys and hooks as clients see them. A key's secret hash never leaves the server; the key itself
// is added to the creation response only.

import type { ApiKeyRateLimit, ApiKeyRecord, HookRecord } from '../../engine/records.js';
import { z } from 'zod';
import { timeText, timeTextSchema } from '../../wire/views.js';

/** What apiKeyView renders; the creation answer adds `key`, shown that once. */
export const apiKeyJsonSchema = z.object({
  api_key_id: z.string(),
  name: z.string(),
  owner_id: z.string(),
  scopes: z.array(z.string()),
  expires_at: timeTextSchema,
  created_at: timeTextSchema,
  last_used_at: timeTextSchema,
  is_revoked: z.boolean(),
  rate_limit: z.object({ requests_per_second: z.number().int(), burst: z.number().int() }).nullable()
    .meta({ description: "The key's rate limit in effect: its own, else the server's default; null: unlimited" }),
}).meta({ id: 'ApiKey' });

/** What hookView renders; creation and rotation add `signing_secret`, shown then only. */
export const hookJsonSchema = z.object({
  hook_id: z.string(),
  name: z.string(),
  url: z.string(),
  type: z.enum(['PRE_TRANSACTION', 'POST_TRANSACTION']),
  active: z.boolean(),
  timeout: z.number(),
  retry_count: z.number().int(),
  created_at: timeTextSchema,
}).meta({ id: 'Hook' });

/** `rateDefault`: the server's default for keys made without a rate (rate_limits.key_requests_per_second_default). */
export function apiKeyView(key: ApiKeyRecord, lastUsedAt = key.last_used_at, rateDefault?: ApiKeyRateLimit): Record<string, unknown> {
  const limit = key.rate_limit ?? rateDefault;
  return {
    api_key_id: key.api_key_id,
    name: key.name,
    owner_id: key.owner_id,
    scopes: key.scopes,
    expires_at: timeText(key.expires_at),
    created_at: timeText(key.created_at),
    last_used_at: timeText(lastUsedAt),
    is_revoked: key.is_revoked,
    rate_limit: limit ? { requests_per_second: limit.requests_per_second, burst: limit.burst } : null,
  };
}

export function hookView(hook: HookRecord): Record<string, unknown> {
  return {
    hook_id: hook.hook_id,
    name: hook.name,
    url: hook.url,
    type: hook.type,
    active: hook.active,
    timeout: hook.timeout,
    retry_count: hook.retry_count,
    created_at: timeText(hook.created_at),
  };
}
