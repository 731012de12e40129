// Each hook's own signing secret (../shared/spec/decisions.md "Hooks"): `whsec_` and 32 random bytes in base64url,
// shown to the client once (at creation and at each rotation) and never listed. The receiver checks
// signatures with it and never needs the server's master key.
//
// Folio has to sign with the secret itself, so it cannot keep only a hash: the log holds the secret
// sealed (AES-256-GCM) under a key that never enters the log: `secrets/hook-seal.key` in the data
// directory (32 random bytes, made at first start, mode 0600). `folio backup` and `folio restore` carry
// that file with the log; without it sealed secrets cannot be opened, deliveries of those hooks fail
// (never go out unsigned), and rotating each hook's secret gives it a fresh one. The nodes of a
// replicated group share one key: each may have to sign after a failover, and a node whose key differs
// is refused when it joins (replication/replication-node.ts compares `fingerprint()`s, which reveal nothing of
// the key). The key can be given in the configuration (hooks.seal_key, FOLIO_HOOK_SEAL_KEY), as the
// master key is: it is then written to the key file at start (`provisionIn`), and a key file that holds
// another key stops the start.

import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;
const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const SEALED_PREFIX = 'v1.';
/** Associated data: a sealed value is only ever a hook signing secret of this format. */
const PURPOSE = Buffer.from('folio hook signing secret v1', 'utf8');

export class SealError extends Error {
  override readonly name = 'SealError';
}

export class HookSecretSealer {
  private constructor(private readonly key: Buffer) {}

  static directoryIn(dataDir: string): string {
    return path.join(dataDir, 'secrets');
  }

  static keyFileIn(dataDir: string): string {
    return path.join(HookSecretSealer.directoryIn(dataDir), 'hook-seal.key');
  }

  /** The data directory's sealing key, made (and synced) on first use. */
  static openIn(dataDir: string): HookSecretSealer {
    const file = HookSecretSealer.keyFileIn(dataDir);
    if (!fs.existsSync(file)) writeKeyFile(file, randomBytes(KEY_BYTES));
    const key = fs.readFileSync(file);
    if (key.length !== KEY_BYTES) throw new SealError(`${file} must hold ${KEY_BYTES} bytes, not ${key.length}`);
    return new HookSecretSealer(key);
  }

  /**
   * Puts `key` in the data directory's key file when there is none; refuses (SealError) when the file
   * holds another key, since secrets sealed with it could no longer be opened.
   */
  static provisionIn(dataDir: string, key: Buffer): void {
    if (key.length !== KEY_BYTES) throw new SealError(`a hook sealing key is ${KEY_BYTES} bytes, not ${key.length}`);
    const file = HookSecretSealer.keyFileIn(dataDir);
    if (!fs.existsSync(file)) {
      writeKeyFile(file, key);
      return;
    }
    if (!fs.readFileSync(file).equals(key)) {
      throw new SealError(`${file} holds another hook sealing key than hooks.seal_key (FOLIO_HOOK_SEAL_KEY): the hooks' secrets were sealed with the file's key`);
    }
  }

  /** Whether the data directory has its key yet (it is made at a server's first start). */
  static existsIn(dataDir: string): boolean {
    return fs.existsSync(HookSecretSealer.keyFileIn(dataDir));
  }

  /** Names the key without revealing it: equal for two data directories that share one key. */
  fingerprint(): string {
    return createHmac('sha256', this.key).update('folio hook seal key fingerprint').digest('hex');
  }

  /** A fresh secret and its sealed form for the log. */
  newSecret(): { secret: string; sealed: string } {
    const secret = SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64url');
    return { secret, sealed: this.seal(secret) };
  }

  seal(secret: string): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    cipher.setAAD(PURPOSE);
    const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return SEALED_PREFIX + Buffer.concat([nonce, body, cipher.getAuthTag()]).toString('base64url');
  }

  open(sealed: string): string {
    if (!sealed.startsWith(SEALED_PREFIX)) throw new SealError('not a sealed hook secret');
    const bytes = Buffer.from(sealed.slice(SEALED_PREFIX.length), 'base64url');
    if (bytes.length <= NONCE_BYTES + TAG_BYTES) throw new SealError('sealed hook secret is too short');
    const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, NONCE_BYTES));
    decipher.setAAD(PURPOSE);
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(bytes.subarray(NONCE_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SealError('the hook secret was sealed with another key (is secrets/hook-seal.key the one this log was written with?)');
    }
  }
}

function writeKeyFile(file: string, key: Buffer): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.tmp`;
  const handle = fs.openSync(temporary, 'w', 0o600);
  try {
    fs.writeSync(handle, key);
    fs.fsyncSync(handle);
  } finally {
    fs.closeSync(handle);
  }
  fs.renameSync(temporary, file);
  const directory = fs.openSync(path.dirname(file), 'r');
  try {
    fs.fsyncSync(directory);
  } finally {
    fs.closeSync(directory);
  }
}
