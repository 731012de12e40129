// OAuth clients: third-party applications that may ask users for access. A client has a name, scopes,
// registered redirect URIs (an authorization request must name one of them exactly), an expiry date or
// none, and a secret shown once at creation and kept as its SHA-256. Revoking a client keeps it listed
// with status Revoked, and every token issued to it stops working at once, because a token is only
// accepted while its client is Active and unexpired (token-service.ts checks that on every use).

import type { CloudStore } from './cloud-store.js';
import { matchesHash, newId, newSecret, sha256Hex } from './secrets.js';

export type ClientStatus = 'Active' | 'Revoked';

export interface ClientRecord {
  client_id: string;
  name: string;
  type: 'OAuth';
  scopes: string[];
  redirect_uris: string[];
  /** Epoch ms, or null for never. */
  expires_at: number | null;
  secret_hash: string;
  status: ClientStatus;
  created_at: number;
  revoked_at: number | null;
}

export interface NewClient {
  name: string;
  scopes: string[];
  redirect_uris: string[];
  expires_at: number | null;
}

export class ClientRegistry {
  private readonly clients = new Map<string, ClientRecord>();

  constructor(private readonly store: CloudStore) {
    for (const client of store.all<ClientRecord>('client')) this.clients.set(client.client_id, client);
  }

  async create(fields: NewClient, now: number): Promise<{ client: ClientRecord; secret: string }> {
    const secret = newSecret('fcs');
    const client: ClientRecord = {
      client_id: newId('cli'), name: fields.name, type: 'OAuth', scopes: fields.scopes, redirect_uris: fields.redirect_uris,
      expires_at: fields.expires_at, secret_hash: sha256Hex(secret), status: 'Active', created_at: now, revoked_at: null,
    };
    await this.store.put('client', client.client_id, client);
    this.clients.set(client.client_id, client);
    return { client, secret };
  }

  get(clientId: string): ClientRecord | undefined {
    return this.clients.get(clientId);
  }

  list(): ClientRecord[] {
    return [...this.clients.values()].sort((a, b) => a.created_at - b.created_at || (a.client_id < b.client_id ? -1 : 1));
  }

  /** Whether the client may be used now: Active and not past its expiry. */
  usable(client: ClientRecord, now: number): boolean {
    return client.status === 'Active' && (client.expires_at === null || now < client.expires_at);
  }

  /** The client these credentials belong to, when they are right and the client is usable. */
  authenticate(clientId: string, secret: string, now: number): ClientRecord | undefined {
    const client = this.clients.get(clientId);
    // The secret is checked even for an unknown id, so the answer takes as long either way.
    const valid = matchesHash(secret, client?.secret_hash ?? sha256Hex(''));
    if (!client || !valid || !this.usable(client, now)) return undefined;
    return client;
  }

  async revoke(clientId: string, now: number): Promise<ClientRecord | undefined> {
    const client = this.clients.get(clientId);
    if (!client) return undefined;
    if (client.status === 'Revoked') return client;
    const revoked: ClientRecord = { ...client, status: 'Revoked', revoked_at: now };
    this.clients.set(clientId, revoked);
    try {
      await this.store.put('client', clientId, revoked);
    } catch (error) {
      this.clients.set(clientId, client);
      throw error;
    }
    return revoked;
  }
}

const NEVER = null;

export function clientView(client: ClientRecord, secret?: string): Record<string, unknown> {
  return {
    client_id: client.client_id,
    ...(secret === undefined ? {} : { client_secret: secret }),
    name: client.name,
    type: client.type,
    scopes: client.scopes,
    redirect_uris: client.redirect_uris,
    expires_at: client.expires_at === null ? NEVER : new Date(client.expires_at).toISOString(),
    status: client.status,
    created_at: new Date(client.created_at).toISOString(),
    revoked_at: client.revoked_at === null ? null : new Date(client.revoked_at).toISOString(),
  };
}
