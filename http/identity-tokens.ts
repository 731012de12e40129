// Tokens for identity PII (Blnk's identity tokenization): a field's value is replaced by a token that
// only the configured key turns back into the value. AES-256-GCM (node:crypto) with a synthetic IV, as
// AES-SIV does: the 96-bit IV is an HMAC of the field name and the value under a key of its own, so the
// same value in the same field always gives the same token (equality search and filters on tokenized
// fields still work) and a token is reversible only with the key. GCM's weakness is a nonce reused for
// two different plaintexts; here a nonce is a function of the plaintext, so it recurs only with the same
// plaintext (same token, which reveals equality, the point of stable tokens) or by an HMAC collision of
// 96 bits (birthday bound near 2^48 values per field). The field name is also the GCM associated data:
// a token copied into another field does not decrypt there.
//
// Token text: `tok_` + base64url(iv || ciphertext || tag). The encryption and IV keys are derived from
// the configured 32-byte secret by HMAC with distinct labels, so neither is the secret itself.

import crypto from 'node:crypto';

export const TOKEN_PREFIX = 'tok_';
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** The configured secret: exactly 32 bytes (32 characters, or 64 hex digits), as Blnk asks. */
export const TOKENIZATION_SECRET_BYTES = 32;

export class IdentityTokens {
  private readonly encryptionKey: Buffer;
  private readonly ivKey: Buffer;

  constructor(secret: Buffer) {
    if (secret.length !== TOKENIZATION_SECRET_BYTES) throw new Error(`tokenization secret must be ${TOKENIZATION_SECRET_BYTES} bytes`);
    this.encryptionKey = crypto.createHmac('sha256', secret).update('folio identity tokens: encryption').digest();
    this.ivKey = crypto.createHmac('sha256', secret).update('folio identity tokens: iv').digest();
  }

  /** The token of `value` in `field`: the same for the same field, value and key. */
  tokenize(field: string, value: string): string {
    const iv = crypto.createHmac('sha256', this.ivKey).update(field).update('\0').update(value, 'utf8').digest().subarray(0, IV_BYTES);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.encryptionKey, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(field, 'utf8'));
    const body = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
    return TOKEN_PREFIX + Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
  }

  /** The value behind a token of `field`, or undefined when it is not one made with this key for it. */
  detokenize(field: string, token: string): string | undefined {
    if (!token.startsWith(TOKEN_PREFIX)) return undefined;
    const bytes = Buffer.from(token.slice(TOKEN_PREFIX.length), 'base64url');
    if (bytes.length < IV_BYTES + TAG_BYTES) return undefined;
    const decipher = crypto.createDecipheriv('aes-256-gcm', this.encryptionKey, bytes.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(field, 'utf8'));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      return undefined;
    }
  }
}

/** The configured secret as bytes: 64 hex digits, or a 32-byte string; undefined when it is neither. */
export function tokenizationSecretBytes(text: string): Buffer | undefined {
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, 'hex');
  const bytes = Buffer.from(text, 'utf8');
  return bytes.length === TOKENIZATION_SECRET_BYTES ? bytes : undefined;
}
