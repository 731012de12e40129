// API key secrets. A key is `<api_key_id>.<secret>`: the id says which record to check, so verifying a
// key is one map lookup and one hash, never a scan. The secret is 32 random bytes (base64url) made here
// at the edge; only its SHA-256 goes to the engine and the log. Comparisons are constant-time.

import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

export const API_KEY_SECRET_BYTES = 32;
/** Longest key text worth looking at; anything longer is refused before hashing. */
export const API_KEY_TEXT_LENGTH_MAX = 256;

export function newApiKeySecret(): { secret: string; secretHash: string } {
  const secret = randomBytes(API_KEY_SECRET_BYTES).toString('base64url');
  return { secret, secretHash: sha256Hex(secret) };
}

export function apiKeyText(apiKeyId: string, secret: string): string {
  return `${apiKeyId}.${secret}`;
}

/** The id and secret of a presented key, or undefined when it is not shaped like one. */
export function parseApiKeyText(text: string): { apiKeyId: string; secret: string } | undefined {
  const dot = text.lastIndexOf('.');
  if (dot <= 0 || dot === text.length - 1) return undefined;
  return { apiKeyId: text.slice(0, dot), secret: text.slice(dot + 1) };
}

export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}

export function sha256(text: string): Buffer {
  return hash('sha256', text, 'buffer');
}

/** Stored hashes decoded once per hex string (they are few, and change only with their keys). */
const digestByHex = new Map<string, Buffer>();
const DECODED_DIGESTS_MAX = 100_000;

function digestOf(hex: string): Buffer {
  let digest = digestByHex.get(hex);
  if (!digest) {
    digest = Buffer.from(hex, 'hex');
    if (digestByHex.size < DECODED_DIGESTS_MAX) digestByHex.set(hex, digest);
  }
  return digest;
}

/** Whether `secret` hashes to `expectedHex`, in time that does not depend on where they differ. */
export function secretMatches(secret: string, expectedHex: string): boolean {
  const expected = digestOf(expectedHex);
  const actual = sha256(secret);
  return expected.length === actual.length && timingSafeEqual(actual, expected);
}

/**
 * Compares a presented key with the master key by their digests: equal lengths whatever was sent, so
 * timingSafeEqual applies and the master key's length does not leak either.
 */
export class MasterKey {
  private readonly digest: Buffer;

  constructor(secretKey: string) {
    this.digest = sha256(secretKey);
  }

  matches(presented: string): boolean {
    return timingSafeEqual(sha256(presented), this.digest);
  }
}
