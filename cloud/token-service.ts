// Authorization codes, refresh token families and access tokens (OAuth 2.1, RFC 6749 and 9700).
//   - A code is single use, lives 10 minutes, and is bound to its client, the exact redirect_uri of the
//     request and, when the request sent one, a PKCE S256 challenge. Redeeming it starts a family: one
//     access token (1 hour) and one refresh token. A code presented a second time revokes its family.
//   - A refresh token is used once: it is rotated, its successor joining the same family. The family
//     ends 30 days after the sign-in that started it, however often it rotated. Presenting a rotated
//     refresh token again means it leaked: the whole family is revoked.
//   - An access token is accepted while it is unexpired, its family not revoked, and its client Active
//     and unexpired: revoking a client or a family kills its tokens at once.
//   - A client may revoke its own tokens (RFC 7009): a refresh token ends its family, an access token
//     only itself.
// Only SHA-256 hashes of codes and tokens are kept (secrets.ts), in memory and in the store; every
// change is durable before the answer that depends on it goes out.

import { createHash } from 'node:crypto';
import { CLOUD_LIMITS } from './cloud-config.js';
import type { CloudStore, StoreChange } from './cloud-store.js';
import type { ClientRecord, ClientRegistry } from './oauth-clients.js';
import { newId, newSecret, sha256Hex } from './secrets.js';
import { withinScopes } from './cloud-scopes.js';

export interface CodeRecord {
  code_hash: string;
  client_id: string;
  user_id: string;
  redirect_uri: string;
  scopes: string[];
  code_challenge: string | null;
  expires_at: number;
  redeemed_at: number | null;
  /** The family the redemption started, so a replay can revoke it. */
  family_id: string | null;
}

export interface FamilyRecord {
  family_id: string;
  client_id: string;
  user_id: string;
  scopes: string[];
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
}

interface AccessRecord {
  token_hash: string;
  family_id: string;
  scopes: string[];
  expires_at: number;
}

interface RefreshRecord {
  token_hash: string;
  family_id: string;
  rotated_at: number | null;
}

/** What the token endpoint answers with. */
export interface TokenGrant {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

export type OAuthErrorCode = 'invalid_request' | 'invalid_client' | 'invalid_grant' | 'unauthorized_client' | 'unsupported_grant_type' | 'invalid_scope';

export type GrantOutcome = { ok: true; grant: TokenGrant } | { ok: false; error: OAuthErrorCode; description: string };

/** Who an access token acts for. */
export interface TokenHolder {
  user_id: string;
  client_id: string;
  scopes: readonly string[];
}

export interface CodeRequest {
  client: ClientRecord;
  userId: string;
  redirectUri: string;
  scopes: string[];
  codeChallenge: string | null;
}

const PRUNE_INTERVAL_MS = 60 * 60 * 1000;

function refused(error: OAuthErrorCode, description: string): GrantOutcome {
  return { ok: false, error, description };
}

/** The PKCE S256 transform of a verifier (RFC 7636 4.2). */
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

export class TokenService {
  private readonly codes = new Map<string, CodeRecord>();
  private readonly families = new Map<string, FamilyRecord>();
  private readonly access = new Map<string, AccessRecord>();
  private readonly refresh = new Map<string, RefreshRecord>();
  private pruneTimer: NodeJS.Timeout | undefined;

  constructor(private readonly store: CloudStore, private readonly clients: ClientRegistry, private readonly now: () => number) {
    for (const code of store.all<CodeRecord>('code')) this.codes.set(code.code_hash, code);
    for (const family of store.all<FamilyRecord>('family')) this.families.set(family.family_id, family);
    for (const token of store.all<AccessRecord>('access')) this.access.set(token.token_hash, token);
    for (const token of store.all<RefreshRecord>('refresh')) this.refresh.set(token.token_hash, token);
  }

  /** Removes what has expired now and every hour from now on. */
  startPruning(): void {
    void this.prune();
    this.pruneTimer = setInterval(() => void this.prune(), PRUNE_INTERVAL_MS);
    this.pruneTimer.unref();
  }

  stopPruning(): void {
    clearInterval(this.pruneTimer);
  }

  async issueCode(request: CodeRequest): Promise<string> {
    const code = newSecret('fac');
    const record: CodeRecord = {
      code_hash: sha256Hex(code), client_id: request.client.client_id, user_id: request.userId, redirect_uri: request.redirectUri,
      scopes: request.scopes, code_challenge: request.codeChallenge, expires_at: this.now() + CLOUD_LIMITS.code_ttl_ms,
      redeemed_at: null, family_id: null,
    };
    await this.store.put('code', record.code_hash, record);
    this.codes.set(record.code_hash, record);
    return code;
  }

  async redeemCode(client: ClientRecord, code: string, redirectUri: string, codeVerifier: string | undefined): Promise<GrantOutcome> {
    const now = this.now();
    const record = this.codes.get(sha256Hex(code));
    if (!record || record.client_id !== client.client_id) return refused('invalid_grant', 'the authorization code is not valid for this client');
    if (record.redeemed_at !== null) {
      if (record.family_id) await this.revokeFamily(record.family_id, now);
      return refused('invalid_grant', 'the authorization code was already used; the tokens issued from it are revoked');
    }
    if (now >= record.expires_at) return refused('invalid_grant', 'the authorization code has expired');
    if (record.redirect_uri !== redirectUri) return refused('invalid_grant', 'redirect_uri does not match the authorization request');
    if (record.code_challenge !== null) {
      if (codeVerifier === undefined) return refused('invalid_grant', 'code_verifier is required: the authorization request sent a code_challenge');
      if (s256(codeVerifier) !== record.code_challenge) return refused('invalid_grant', 'code_verifier does not match the code_challenge');
    } else if (codeVerifier !== undefined) {
      return refused('invalid_grant', 'code_verifier was sent but the authorization request had no code_challenge');
    }
    const family: FamilyRecord = {
      family_id: newId('fam'), client_id: client.client_id, user_id: record.user_id, scopes: record.scopes,
      created_at: now, expires_at: now + CLOUD_LIMITS.refresh_family_ttl_ms, revoked_at: null,
    };
    const redeemed: CodeRecord = { ...record, redeemed_at: now, family_id: family.family_id };
    // At once, both: a second redemption while this one is being written sees the code used and finds the
    // family it must revoke.
    this.codes.set(record.code_hash, redeemed);
    this.families.set(family.family_id, family);
    const issued = this.issue(family, family.scopes, now);
    try {
      await this.store.commit([
        { kind: 'code', id: record.code_hash, value: redeemed },
        { kind: 'family', id: family.family_id, value: family },
        ...issued.changes,
      ]);
    } catch (error) {
      this.codes.set(record.code_hash, record);
      this.families.delete(family.family_id);
      throw error;
    }
    issued.remember();
    const latest = this.families.get(family.family_id);
    if (latest && latest.revoked_at !== null) {
      // Replayed while being written: the revocation is written again after this commit, whatever order
      // the two writes took, and nothing issued here is handed out.
      await this.store.put('family', family.family_id, latest);
      return refused('invalid_grant', 'the authorization code was presented twice; the tokens issued from it are revoked');
    }
    return { ok: true, grant: issued.grant };
  }

  async refreshGrant(client: ClientRecord, refreshToken: string, requestedScopes: string[] | undefined): Promise<GrantOutcome> {
    const now = this.now();
    const record = this.refresh.get(sha256Hex(refreshToken));
    const family = record && this.families.get(record.family_id);
    if (!record || !family || family.client_id !== client.client_id) return refused('invalid_grant', 'the refresh token is not valid for this client');
    if (family.revoked_at !== null) return refused('invalid_grant', 'the refresh token has been revoked');
    if (now >= family.expires_at) return refused('invalid_grant', 'the refresh token has expired; the user must sign in again');
    if (record.rotated_at !== null) {
      await this.revokeFamily(family.family_id, now);
      return refused('invalid_grant', 'the refresh token was already used; every token of its family is revoked');
    }
    const scopes = requestedScopes ?? family.scopes;
    if (!withinScopes(scopes, family.scopes)) return refused('invalid_scope', 'the requested scope exceeds what was granted');
    const rotated: RefreshRecord = { ...record, rotated_at: now };
    this.refresh.set(record.token_hash, rotated); // at once: a concurrent reuse is caught
    const issued = this.issue(family, scopes, now);
    try {
      await this.store.commit([{ kind: 'refresh', id: record.token_hash, value: rotated }, ...issued.changes]);
    } catch (error) {
      this.refresh.set(record.token_hash, record);
      throw error;
    }
    issued.remember();
    return { ok: true, grant: issued.grant };
  }

  /**
   * RFC 7009: revokes a token of this client. A refresh token ends its whole family, an access token
   * only itself. An unknown token, or another client's, is left alone and answered the same way.
   */
  async revokeToken(client: ClientRecord, token: string): Promise<void> {
    const hash = sha256Hex(token);
    const refresh = this.refresh.get(hash);
    if (refresh) {
      const family = this.families.get(refresh.family_id);
      if (family && family.client_id === client.client_id) await this.revokeFamily(family.family_id, this.now());
      return;
    }
    const access = this.access.get(hash);
    if (!access || this.families.get(access.family_id)?.client_id !== client.client_id) return;
    this.access.delete(hash); // at once: the token stops working before the write
    try {
      await this.store.commit([{ kind: 'access', id: hash, value: undefined }]);
    } catch (error) {
      this.access.set(hash, access);
      throw error;
    }
  }

  /** The holder of a live access token, or undefined. */
  holderOf(accessToken: string): TokenHolder | undefined {
    const record = this.access.get(sha256Hex(accessToken));
    if (!record) return undefined;
    const now = this.now();
    if (now >= record.expires_at) return undefined;
    const family = this.families.get(record.family_id);
    if (!family || family.revoked_at !== null) return undefined;
    const client = this.clients.get(family.client_id);
    if (!client || !this.clients.usable(client, now)) return undefined;
    return { user_id: family.user_id, client_id: family.client_id, scopes: record.scopes };
  }

  private issue(family: FamilyRecord, scopes: string[], now: number): { grant: TokenGrant; changes: StoreChange[]; remember(): void } {
    const accessToken = newSecret('fat');
    const refreshToken = newSecret('frt');
    const access: AccessRecord = { token_hash: sha256Hex(accessToken), family_id: family.family_id, scopes, expires_at: now + CLOUD_LIMITS.access_token_ttl_ms };
    const refresh: RefreshRecord = { token_hash: sha256Hex(refreshToken), family_id: family.family_id, rotated_at: null };
    return {
      grant: {
        access_token: accessToken, token_type: 'Bearer', expires_in: CLOUD_LIMITS.access_token_ttl_ms / 1000,
        refresh_token: refreshToken, scope: scopes.join(' '),
      },
      changes: [
        { kind: 'access', id: access.token_hash, value: access },
        { kind: 'refresh', id: refresh.token_hash, value: refresh },
      ],
      remember: () => {
        this.access.set(access.token_hash, access);
        this.refresh.set(refresh.token_hash, refresh);
      },
    };
  }

  private async revokeFamily(familyId: string, now: number): Promise<void> {
    const family = this.families.get(familyId);
    if (!family || family.revoked_at !== null) return;
    const revoked: FamilyRecord = { ...family, revoked_at: now };
    this.families.set(familyId, revoked);
    await this.store.put('family', familyId, revoked);
  }

  /** Drops expired codes and access tokens, and families (with their refresh tokens) past their end. */
  private async prune(): Promise<void> {
    const now = this.now();
    const changes: StoreChange[] = [];
    for (const [hash, code] of this.codes) {
      if (now < code.expires_at) continue;
      this.codes.delete(hash);
      changes.push({ kind: 'code', id: hash, value: undefined });
    }
    for (const [hash, token] of this.access) {
      if (now < token.expires_at) continue;
      this.access.delete(hash);
      changes.push({ kind: 'access', id: hash, value: undefined });
    }
    const ended = new Set<string>();
    for (const [id, family] of this.families) {
      if (now < family.expires_at) continue;
      ended.add(id);
      this.families.delete(id);
      changes.push({ kind: 'family', id, value: undefined });
    }
    for (const [hash, token] of this.refresh) {
      if (!ended.has(token.family_id)) continue;
      this.refresh.delete(hash);
      changes.push({ kind: 'refresh', id: hash, value: undefined });
    }
    if (changes.length > 0) await this.store.commit(changes).catch(() => undefined);
  }
}
