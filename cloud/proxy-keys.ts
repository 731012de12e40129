// The API keys the proxy calls a core with, so that what a token may do on the core is bounded by the
// core itself and not only by the proxy: a read-only key (`<resource>:read` on the tenant resources of
// proxy-routes.ts) for GET and HEAD, and a read-write key (read, write and delete on the same resources)
// for the rest. Neither has a scope on API keys or hooks, and neither is the master key, so a request
// that got past the proxy's checks somehow still could not reach an operator route or write with a read
// token.
//
// The keys are made on the core with its master key when the control plane starts the core, and kept
// in `<cloud data dir>/secrets/<secret_id>.proxy-keys.json` (mode 0600 in the 0700 secrets directory,
// written to a temporary file, fsynced and renamed into place), beside the master key: a deployment
// upgraded to a new core keeps its secret_id, and the new core has the keys because they are in the log
// it copied. Every later start checks them (each authenticates, is unrevoked, has the scopes above and
// is not about to expire) and makes new ones otherwise, revoking whatever keys of the proxy's owner are
// left on the core first (keys made by a start that crashed before it wrote the file). A follower
// (the new core of an upgrade) cannot write: it takes the file as it is, and reads it again once promoted.

import fs from 'node:fs';
import path from 'node:path';
import type { ScopeResource } from '../http/access/route-scopes.js';
import type { CoreApiKey, CoreClient } from './core-client.js';
import { TENANT_RESOURCES } from './proxy-routes.js';

export type ProxyKeyKind = 'read' | 'write';

export interface StoredKey {
  api_key_id: string;
  /** The key as the core takes it (`<api_key_id>.<secret>`). */
  key: string;
}

export type ProxyKeys = Record<ProxyKeyKind, StoredKey>;

/** The owner of the proxy's keys on every core. */
export const PROXY_KEY_OWNER = 'folio-cloud-proxy';
/** A key lives this long; a start replaces keys with less than PROXY_KEY_RENEW_MS left. */
const PROXY_KEY_LIFETIME_MS = 10 * 365 * 24 * 60 * 60 * 1000;
const PROXY_KEY_RENEW_MS = 30 * 24 * 60 * 60 * 1000;

export const PROXY_KEY_SCOPES: Readonly<Record<ProxyKeyKind, readonly string[]>> = {
  read: (TENANT_RESOURCES as readonly ScopeResource[]).map((resource) => `${resource}:read`),
  write: (TENANT_RESOURCES as readonly ScopeResource[]).flatMap((resource) => [`${resource}:read`, `${resource}:write`, `${resource}:delete`]),
};

export function proxyKeysFile(secretsDir: string, secretId: string): string {
  return path.join(secretsDir, `${secretId}.proxy-keys.json`);
}

/** The keys in the file, or undefined when there is none (or it cannot be read as keys). */
export function readProxyKeys(file: string): ProxyKeys | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
  const keys = parsed as Partial<ProxyKeys> | null;
  const valid = (stored: StoredKey | undefined): boolean => typeof stored?.api_key_id === 'string' && typeof stored.key === 'string';
  return keys && valid(keys.read) && valid(keys.write) ? keys as ProxyKeys : undefined;
}

function writeProxyKeys(file: string, keys: ProxyKeys): void {
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, JSON.stringify(keys), { mode: 0o600 });
  const handle = fs.openSync(temporary, 'r');
  fs.fsyncSync(handle);
  fs.closeSync(handle);
  fs.renameSync(temporary, file);
  const dir = fs.openSync(path.dirname(file), 'r');
  fs.fsyncSync(dir);
  fs.closeSync(dir);
}

function sameScopes(listed: readonly string[], wanted: readonly string[]): boolean {
  return listed.length === wanted.length && wanted.every((scope) => listed.includes(scope));
}

/** Whether the stored keys are on the core as they should be. */
async function usable(client: CoreClient, keys: ProxyKeys, listed: CoreApiKey[], now: number): Promise<boolean> {
  for (const kind of ['read', 'write'] as const) {
    const record = listed.find((key) => key.api_key_id === keys[kind].api_key_id);
    if (!record || record.is_revoked || !sameScopes(record.scopes, PROXY_KEY_SCOPES[kind])) return false;
    if (Date.parse(record.expires_at) - now < PROXY_KEY_RENEW_MS) return false;
    if (!(await client.acceptsKey(keys[kind].key))) return false;
  }
  return true;
}

/** The proxy's keys for a core that may write (a leader): checked, or made anew. */
export async function ensureProxyKeys(client: CoreClient, file: string, now: number): Promise<ProxyKeys> {
  const stored = readProxyKeys(file);
  const listed = await client.apiKeys(PROXY_KEY_OWNER);
  if (stored && (await usable(client, stored, listed, now))) return stored;
  for (const key of listed) if (!key.is_revoked) await client.revokeApiKey(key.api_key_id);
  const expiresAt = new Date(now + PROXY_KEY_LIFETIME_MS).toISOString();
  const make = async (kind: ProxyKeyKind): Promise<StoredKey> => {
    const made = await client.createApiKey({ name: `proxy ${kind}`, owner: PROXY_KEY_OWNER, scopes: PROXY_KEY_SCOPES[kind], expires_at: expiresAt });
    return { api_key_id: made.api_key_id, key: made.key };
  };
  const keys: ProxyKeys = { read: await make('read'), write: await make('write') };
  writeProxyKeys(file, keys);
  return keys;
}
