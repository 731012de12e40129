// The canonical text of engine/exact-json.ts (keys sorted, undefined dropped, bigints tagged), streamed
// into a SHA-256. The state hash runs it over every record in the working state, a million balances and
// more, so the text is handed to the hash in large pieces instead of one string per record; the writer
// itself reuses each object shape's sorted key order.

import { createHash, type Hash } from 'node:crypto';
import { CANONICAL_FORM, JsonWriter } from '../engine/exact-json.js';

/** Text gathered before it is passed to the hash; big enough that hashing runs in long native calls. */
const PENDING_CHARS_MAX = 1 << 20;

export class CanonicalHasher {
  private readonly hash: Hash = createHash('sha256');
  private pending = '';
  private readonly writer = new JsonWriter(CANONICAL_FORM);

  /** Adds one value's canonical text followed by a newline. */
  add(value: unknown): void {
    this.pending += this.writer.text(value) + '\n';
    if (this.pending.length >= PENDING_CHARS_MAX) this.drain();
  }

  /** Adds a plain line (a section title, a count). */
  line(text: string): void {
    this.pending += text + '\n';
  }

  /** Adds raw bytes (after any text still pending). */
  bytes(bytes: Uint8Array): void {
    this.drain();
    this.hash.update(bytes);
  }

  digestHex(): string {
    this.drain();
    return this.hash.digest('hex');
  }

  /** The canonical text of a value, as `add` hashes it. */
  text(value: unknown): string {
    return this.writer.text(value);
  }

  private drain(): void {
    if (this.pending.length === 0) return;
    this.hash.update(this.pending);
    this.pending = '';
  }
}
