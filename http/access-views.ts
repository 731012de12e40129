// API keys and hooks as clients see them. A key's secret hash never leaves the server; the key itself
// is added to the creation response only.

import type { ApiKeyRecord, HookRecord } from '../engine/records.js';
import { timeText } from '../wire/views.js';

export function apiKeyView(key: ApiKeyRecord, lastUsedAt = key.last_used_at): Record<string, unknown> {
  return {
    api_key_id: key.api_key_id,
    name: key.name,
    owner_id: key.owner_id,
    scopes: key.scopes,
    expires_at: timeText(key.expires_at),
    created_at: timeText(key.created_at),
    last_used_at: timeText(lastUsedAt),
    is_revoked: key.is_revoked,
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
