// API key scopes: `resource:action` strings where either half may be `*`. A key's scopes grant a route's
// need when one of them covers it; a key may only hand out (or revoke) scopes its own scopes cover.

import { isScopeAction, isScopeResource, type ScopeAction, type ScopeResource } from './route-scopes.js';

export interface Scope {
  resource: ScopeResource | '*';
  action: ScopeAction | '*';
}

/** Scopes one key may carry. */
export const SCOPES_PER_KEY_MAX = 64;

export function parseScope(text: string): Scope | undefined {
  const parts = text.split(':');
  if (parts.length !== 2) return undefined;
  const [resource, action] = parts as [string, string];
  if (resource !== '*' && !isScopeResource(resource)) return undefined;
  if (action !== '*' && !isScopeAction(action)) return undefined;
  return { resource, action };
}

/** True when `granted` includes everything `wanted` does. */
export function covers(granted: Scope, wanted: Scope): boolean {
  return (granted.resource === '*' || granted.resource === wanted.resource)
    && (granted.action === '*' || granted.action === wanted.action);
}

export function anyCovers(granted: readonly Scope[], wanted: Scope): boolean {
  for (const scope of granted) if (covers(scope, wanted)) return true;
  return false;
}

/** The first of `wanted` that `granted` does not cover, if any. */
export function firstUncovered(granted: readonly Scope[], wanted: readonly string[]): string | undefined {
  for (const text of wanted) {
    const scope = parseScope(text);
    if (!scope || !anyCovers(granted, scope)) return text;
  }
  return undefined;
}
