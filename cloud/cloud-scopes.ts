// Scopes of OAuth clients and their tokens: a closed set. `*` covers everything; proxy GETs need
// `proxy:read` or `proxy:write`, other proxied methods `proxy:write` (../shared/spec/decisions.md); deployments are read
// with `deployments:read` and upgraded with `deployments:write`. `mcp:read` and `data:read` are
// accepted names (../shared/spec/interface.md lists them) that no route of this control plane needs yet.

export const CLOUD_SCOPES = ['*', 'proxy:read', 'proxy:write', 'deployments:read', 'deployments:write', 'mcp:read', 'data:read'] as const;
export type CloudScope = (typeof CLOUD_SCOPES)[number];

export function isCloudScope(value: string): value is CloudScope {
  return (CLOUD_SCOPES as readonly string[]).includes(value);
}

/** Whether a holder of `held` may do what `needed` names (any one of them). */
export function scopesCover(held: readonly string[], needed: readonly CloudScope[]): boolean {
  return held.includes('*') || needed.some((scope) => held.includes(scope));
}

/** Scopes needed to proxy a request with `method`. */
export function proxyScopesFor(method: string): readonly CloudScope[] {
  return method === 'GET' || method === 'HEAD' ? ['proxy:read', 'proxy:write'] : ['proxy:write'];
}

/** `a b c` -> unique scopes in order; undefined if any is unknown. */
export function parseScopeList(text: string): CloudScope[] | undefined {
  const scopes: CloudScope[] = [];
  for (const word of text.split(' ')) {
    if (word === '') continue;
    if (!isCloudScope(word)) return undefined;
    if (!scopes.includes(word)) scopes.push(word);
  }
  return scopes;
}

/** Whether every scope in `requested` is within what `granted` allows. */
export function withinScopes(requested: readonly string[], granted: readonly string[]): boolean {
  return granted.includes('*') || requested.every((scope) => granted.includes(scope));
}
