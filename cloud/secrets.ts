// Secrets of the control plane and how they are kept. Passwords: scrypt (node:crypto) with a random
// per-user salt, stored as `scrypt$N$r$p$salt$hash`. Everything else secret (the cloud API key, client
// secrets, authorization codes, access and refresh tokens) is 32 random bytes, shown to its holder once
// and stored only as its SHA-256: with that much entropy a plain hash cannot be reversed, and it lets a
// presented token be found by its hash. Digests are compared with timingSafeEqual. A core's own secrets
// (its master key, its tokenization secret) are 32 random bytes too, kept in files (deployments.ts).

import { createHash, randomBytes, randomUUID, scrypt, timingSafeEqual } from 'node:crypto';

const SECRET_BYTES = 32;
const SALT_BYTES = 16;
const KEY_BYTES = 64;
/** scrypt cost: N=2^15, r=8 (32 MiB, about 60 ms here): slow enough to make guessing expensive. */
const SCRYPT = { N: 32_768, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
/** Longer passwords are refused before hashing: scrypt's cost grows with the input. */
export const PASSWORD_LENGTH_MAX = 1024;
export const PASSWORD_LENGTH_MIN = 8;

export type SecretPrefix = 'fck' | 'fcs' | 'fac' | 'fat' | 'frt' | 'fcsrf' | 'core';

/** A new secret: `<prefix>_` + 32 random bytes in base64url. */
export function newSecret(prefix: SecretPrefix): string {
  return `${prefix}_${randomBytes(SECRET_BYTES).toString('base64url')}`;
}

/** A core's tokenization secret: 32 random bytes as 64 hex digits (the form FOLIO_TOKENIZATION_SECRET takes). */
export function newTokenizationSecret(): string {
  return randomBytes(SECRET_BYTES).toString('hex');
}

export type IdPrefix = 'usr' | 'cli' | 'dep' | 'ins' | 'fam' | 'sec';

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomUUID()}`;
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** Whether `presented` hashes to `storedHex`, compared in constant time. */
export function matchesHash(presented: string, storedHex: string): boolean {
  const stored = Buffer.from(storedHex, 'hex');
  const actual = createHash('sha256').update(presented, 'utf8').digest();
  return stored.length === actual.length && timingSafeEqual(stored, actual);
}

/** Two texts equal, compared in constant time through their digests (lengths may differ). */
export function sameText(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a, 'utf8').digest(), createHash('sha256').update(b, 'utf8').digest());
}

function derive(password: string, salt: Buffer, params: typeof SCRYPT): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, KEY_BYTES, params, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, SCRYPT);
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** A stored hash for nobody, checked when an e-mail is unknown so the answer takes as long. */
let decoy: Promise<string> | undefined;

export async function verifyPassword(password: string, stored: string | undefined): Promise<boolean> {
  decoy ??= hashPassword(randomBytes(SECRET_BYTES).toString('hex'));
  const text = stored ?? (await decoy);
  const [scheme, n, r, p, salt, key] = text.split('$');
  if (scheme !== 'scrypt' || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64url');
  const actual = await derive(password, Buffer.from(salt, 'base64url'), { ...SCRYPT, N: Number(n), r: Number(r), p: Number(p) });
  return timingSafeEqual(expected, actual) && stored !== undefined;
}
