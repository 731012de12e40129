// Users of the control plane: the people who sign in on the authorization page. Created with the cloud
// API key (POST /users); e-mail addresses are unique, compared in lower case; passwords are kept as
// scrypt hashes (secrets.ts).

import type { CloudStore } from './cloud-store.js';
import { hashPassword, newId, verifyPassword } from './secrets.js';

export interface UserRecord {
  user_id: string;
  email: string;
  password_hash: string;
  created_at: number;
}

export type NewUserResult = { ok: true; user: UserRecord } | { ok: false; code: 'USER_EMAIL_TAKEN' };

export class UserDirectory {
  private readonly byEmail = new Map<string, UserRecord>();

  constructor(private readonly store: CloudStore) {
    for (const user of store.all<UserRecord>('user')) this.byEmail.set(user.email, user);
  }

  async create(email: string, password: string, now: number): Promise<NewUserResult> {
    const key = email.toLowerCase();
    if (this.byEmail.has(key)) return { ok: false, code: 'USER_EMAIL_TAKEN' };
    const passwordHash = await hashPassword(password);
    // Checked again: another request may have taken the address while scrypt ran.
    if (this.byEmail.has(key)) return { ok: false, code: 'USER_EMAIL_TAKEN' };
    const user: UserRecord = { user_id: newId('usr'), email: key, password_hash: passwordHash, created_at: now };
    this.byEmail.set(key, user);
    try {
      await this.store.put('user', user.user_id, user);
    } catch (error) {
      this.byEmail.delete(key);
      throw error;
    }
    return { ok: true, user };
  }

  /** The user with these credentials; the same work is done for an unknown address. */
  async signIn(email: string, password: string): Promise<UserRecord | undefined> {
    const user = this.byEmail.get(email.toLowerCase());
    const valid = await verifyPassword(password, user?.password_hash);
    return valid ? user : undefined;
  }

  exists(userId: string): boolean {
    for (const user of this.byEmail.values()) if (user.user_id === userId) return true;
    return false;
  }
}

export function userView(user: UserRecord): Record<string, unknown> {
  return { user_id: user.user_id, email: user.email, created_at: new Date(user.created_at).toISOString() };
}
