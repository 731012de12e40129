// Sign-in pages handed out and not yet answered. GET /oauth/authorize checks the request and keeps it
// here under a random id, with a CSRF token (put in the form) and a browser nonce (put in a
// SameSite=Strict cookie): the form's POST must carry the id, the token and the cookie, so another
// site can neither post the form on a user's behalf nor sign a user in to an account of its own.
// Entries expire after sign_in_page_ttl_ms; at most sign_in_pages_max are held (the oldest go first).

import { CLOUD_LIMITS } from './cloud-config.js';
import type { ClientRecord } from './oauth-clients.js';
import { newSecret, sameText } from './secrets.js';

export interface SignInRequest {
  client: ClientRecord;
  redirectUri: string;
  state: string | undefined;
  scopes: string[];
  codeChallenge: string | null;
}

export interface PendingSignIn extends SignInRequest {
  id: string;
  csrfToken: string;
  browserNonce: string;
  expiresAt: number;
  failedAttempts: number;
}

export class PendingSignIns {
  private readonly pending = new Map<string, PendingSignIn>();

  constructor(private readonly now: () => number) {}

  open(request: SignInRequest): PendingSignIn {
    this.dropExpired();
    while (this.pending.size >= CLOUD_LIMITS.sign_in_pages_max) {
      const oldest = this.pending.keys().next().value as string;
      this.pending.delete(oldest);
    }
    const entry: PendingSignIn = {
      ...request, id: newSecret('fcsrf'), csrfToken: newSecret('fcsrf'), browserNonce: newSecret('fcsrf'),
      expiresAt: this.now() + CLOUD_LIMITS.sign_in_page_ttl_ms, failedAttempts: 0,
    };
    this.pending.set(entry.id, entry);
    return entry;
  }

  /** The pending sign-in a form post belongs to, when its id, CSRF token and cookie all match. */
  find(id: string, csrfToken: string, browserNonce: string | undefined): PendingSignIn | 'unknown' | 'forged' {
    const entry = this.pending.get(id);
    if (!entry || this.now() >= entry.expiresAt) return 'unknown';
    if (!sameText(csrfToken, entry.csrfToken) || browserNonce === undefined || !sameText(browserNonce, entry.browserNonce)) return 'forged';
    return entry;
  }

  close(id: string): void {
    this.pending.delete(id);
  }

  private dropExpired(): void {
    const now = this.now();
    for (const [id, entry] of this.pending) if (now >= entry.expiresAt) this.pending.delete(id);
  }
}
