// Who is signed in. The key (on the cloud: the cloud token and the instance it reaches) is kept in this
// tab's sessionStorage and nowhere else: it is gone when the tab closes, never sent to another origin,
// never in a URL. What the key may do is asked of the API: GET /api-keys/current on a core (its scopes),
// GET /credentials/current on the control plane (a token's proxy:read or proxy:write). The console
// offers a write only when the key's scopes allow it; every read is attempted, and a refusal is shown.

import { api, ApiFailure, useConnection, type Connection } from './api.js';

const STORAGE_KEY = 'folio-console-session';

/** Where the page was served from: a core (its own API) or the control plane (the proxy to a core). */
export function servedMode(): Connection['mode'] {
  return document.documentElement.dataset.api === 'proxy' ? 'proxy' : 'core';
}

export interface Session {
  connection: Connection;
  /** master: the master key (or no authentication); api_key: a core's API key; token: a cloud credential. */
  kind: 'master' | 'api_key' | 'token';
  /** `resource:action` scopes (a core's), or the cloud's (proxy:read, proxy:write, *). */
  scopes: string[];
  /** The key's name, for the header. */
  name: string;
  /** Whether the server asks for no key at all. */
  open: boolean;
}

let current: Session | undefined;

export function session(): Session | undefined {
  return current;
}

/** The core's resources a cloud token reaches through the proxy (the proxy's own list). */
const TENANT_RESOURCES = ['ledgers', 'balances', 'transactions', 'identities', 'search', 'reconciliation', 'metadata'];

/** Whether the signed-in key may do `action` on `resource` (as the API will decide it). */
export function can(resource: string, action: 'read' | 'write' | 'delete'): boolean {
  const signedIn = current;
  if (!signedIn) return false;
  if (signedIn.kind === 'master') return true;
  if (signedIn.kind === 'token') {
    if (!TENANT_RESOURCES.includes(resource)) return false;
    return signedIn.scopes.some((scope) => scope === '*' || scope === 'proxy:write' || (action === 'read' && scope === 'proxy:read'));
  }
  return signedIn.scopes.some((scope) => {
    const [scopeResource, scopeAction] = scope.split(':');
    return (scopeResource === '*' || scopeResource === resource) && (scopeAction === '*' || scopeAction === action);
  });
}

interface Stored {
  key: string;
  instanceId?: string;
}

function stored(): Stored | undefined {
  try {
    const text = sessionStorage.getItem(STORAGE_KEY);
    const parsed = text ? (JSON.parse(text) as Stored) : undefined;
    return parsed && typeof parsed.key === 'string' ? parsed : undefined;
  } catch {
    return undefined;
  }
}

interface CurrentKey {
  kind: 'master' | 'api_key';
  scopes: string[];
  api_key?: { name: string; api_key_id: string };
}

interface CurrentCredential {
  kind: 'cloud_key' | 'token';
  scopes: string[];
  client_name?: string;
}

/** Asks the API what `connection`'s key may do; throws the API's refusal (a wrong key: 401). */
async function describe(connection: Connection): Promise<Session> {
  useConnection(connection);
  if (connection.mode === 'proxy') {
    // The control plane's own route (not proxied): what this credential may do through the proxy.
    useConnection({ ...connection, mode: 'core' });
    try {
      const credential = await api<CurrentCredential>('GET', '/credentials/current');
      useConnection(connection);
      // Reaching the instance proves the token may use it (a deployment of someone else's is a 404).
      await api('GET', '/health');
      const scopes = credential.kind === 'cloud_key' ? ['*'] : credential.scopes;
      return { connection, kind: 'token', scopes, name: credential.client_name ?? (credential.kind === 'cloud_key' ? 'cloud API key' : 'cloud token'), open: false };
    } finally {
      useConnection(connection);
    }
  }
  const key = await api<CurrentKey>('GET', '/api-keys/current');
  const open = connection.key === '';
  const name = key.kind === 'master' ? (open ? 'no authentication' : 'master key') : (key.api_key?.name ?? 'API key');
  return { connection, kind: key.kind, scopes: key.scopes, name, open };
}

/**
 * The session this tab had, if its key still works; on a core that asks for no key, a session without
 * one. Undefined: the person must sign in.
 */
export async function restore(): Promise<Session | undefined> {
  const mode = servedMode();
  const kept = stored();
  const candidates: Connection[] = kept ? [{ mode, key: kept.key, instanceId: kept.instanceId }] : [];
  if (mode === 'core') candidates.push({ mode, key: '' });
  for (const connection of candidates) {
    try {
      current = await describe(connection);
      return current;
    } catch (error) {
      if (!(error instanceof ApiFailure) || (error.failure.status !== 401 && error.failure.status !== 404)) throw error;
    }
  }
  sessionStorage.removeItem(STORAGE_KEY);
  return undefined;
}

/** Signs in with a key (and on the cloud the instance); throws the API's refusal. */
export async function signIn(key: string, instanceId?: string): Promise<Session> {
  const connection: Connection = { mode: servedMode(), key: key.trim(), instanceId: instanceId?.trim() };
  current = await describe(connection);
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify({ key: connection.key, instanceId: connection.instanceId } satisfies Stored));
  return current;
}

export function signOut(): void {
  sessionStorage.removeItem(STORAGE_KEY);
  current = undefined;
  useConnection({ mode: servedMode(), key: '' });
}
