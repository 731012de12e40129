// Sign-in pages handed out and not yet answered, kept in the pages themselves rather than on the server.
// GET /oauth/authorize checks the request and seals it (AES-256-GCM, under a key drawn when this process
// starts) into a hidden field of the form: the client, redirect_uri, state, scopes and PKCE challenge, the
// page's expiry (sign_in_page_ttl_ms), a random page id, and the SHA-256 of a browser nonce that goes in
// an HttpOnly, SameSite=Strict cookie. The form's POST must carry a seal that opens, is unexpired and
// names the nonce of the cookie it came with (403 otherwise), so another site can neither post the form
// for a user (it has no way to send the cookie) nor sign a user in to an account of its own (its seal
// names its own nonce). Nothing is kept per page opened, so no flood of GET /oauth/authorize can push a
// user's page out. What is kept: the ids of pages that led to a code, until they expire, so each is used
// once; only a right password adds one, and at most sign_in_pages_spent_max are held.
// A restart draws a new key: pages opened before it fail, and the user starts again from the application.

import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { CLOUD_LIMITS } from './cloud-config.js';
import type { ClientRecord, ClientRegistry } from './oauth-clients.js';
import { newSecret, sameText, sha256Hex } from './secrets.js';

export interface SignInRequest {
  client: ClientRecord;
  redirectUri: string;
  state: string | undefined;
  scopes: string[];
  codeChallenge: string | null;
}

export interface PendingSignIn extends SignInRequest {
  pageId: string;
  expiresAt: number;
  /** The sealed request, as the form carries it. */
  sealed: string;
}

/** What a seal holds (short keys: it travels in every form). */
interface SealedFields {
  p: string;
  c: string;
  r: string;
  s: string | null;
  sc: string[];
  cc: string | null;
  e: number;
  n: string;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Bound into every seal, so a seal made for something else one day cannot pass for a sign-in page. */
const SEAL_PURPOSE = Buffer.from('folio-cloud sign-in page v1');

export class PendingSignIns {
  private readonly key = randomBytes(32);
  /** Page id -> expiry, oldest first. */
  private readonly spent = new Map<string, number>();

  constructor(private readonly now: () => number, private readonly clients: ClientRegistry) {}

  /** Seals a checked request; the browser nonce goes in the page's cookie. */
  open(request: SignInRequest): { page: PendingSignIn; browserNonce: string } {
    const browserNonce = newSecret('fcsrf');
    const fields: SealedFields = {
      p: newSecret('fcsrf'), c: request.client.client_id, r: request.redirectUri, s: request.state ?? null, sc: request.scopes,
      cc: request.codeChallenge, e: this.now() + CLOUD_LIMITS.sign_in_page_ttl_ms, n: sha256Hex(browserNonce),
    };
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(SEAL_PURPOSE);
    const text = Buffer.concat([cipher.update(JSON.stringify(fields), 'utf8'), cipher.final()]);
    const sealed = Buffer.concat([iv, cipher.getAuthTag(), text]).toString('base64url');
    return { page: { ...request, pageId: fields.p, expiresAt: fields.e, sealed }, browserNonce };
  }

  /** The pending sign-in a form post carries, when its seal opens, is unused and unexpired, and names the cookie's nonce. */
  find(sealed: string, browserNonce: string | undefined): PendingSignIn | 'unknown' | 'forged' {
    const fields = this.unseal(sealed);
    const now = this.now();
    if (!fields || now >= fields.e || this.spent.has(fields.p)) return 'unknown';
    if (browserNonce === undefined || !sameText(sha256Hex(browserNonce), fields.n)) return 'forged';
    const client = this.clients.get(fields.c);
    // The client may have been revoked, or have dropped the redirect URI, since the page was opened.
    if (!client || !this.clients.usable(client, now) || !client.redirect_uris.includes(fields.r)) return 'unknown';
    return {
      client, redirectUri: fields.r, state: fields.s ?? undefined, scopes: fields.sc, codeChallenge: fields.cc,
      pageId: fields.p, expiresAt: fields.e, sealed,
    };
  }

  /** The page led to a code: it cannot be used again. */
  spend(page: PendingSignIn): void {
    const now = this.now();
    for (const [id, expiresAt] of this.spent) {
      if (expiresAt > now && this.spent.size < CLOUD_LIMITS.sign_in_pages_spent_max) break;
      this.spent.delete(id); // expired, or the oldest when full (using it again would still need the password)
    }
    this.spent.set(page.pageId, page.expiresAt);
  }

  private unseal(sealed: string): SealedFields | undefined {
    const bytes = Buffer.from(sealed, 'base64url');
    if (bytes.length <= IV_BYTES + TAG_BYTES) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, IV_BYTES));
      decipher.setAAD(SEAL_PURPOSE);
      decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      const text = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
      return JSON.parse(text) as SealedFields;
    } catch {
      return undefined; // tampered with, or sealed before a restart
    }
  }
}
