// Last use of API keys without a log write per request: authentication notes the time in a map, and
// every few seconds the newest time of each key is written as one event (the api_key.record_use command).
// Listings show the noted times at once. What is noted since the last flush is lost in a crash, which
// only makes `last_used_at` a few seconds older than it was. While the ledger is fenced for a cutover
// (cutover/cutover-control.ts) nothing may be appended, so the writes are held and go out after it.

import type { LedgerCore } from '../ports/ledger-core.js';

export const API_KEY_USE_FLUSH_MS_DEFAULT = 5_000;

export class ApiKeyUsage {
  private noted = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private held = false;

  constructor(private readonly core: Pick<LedgerCore, 'run'>, private readonly flushMs = API_KEY_USE_FLUSH_MS_DEFAULT) {}

  note(apiKeyId: string, at: number): void {
    this.noted.set(apiKeyId, at);
    this.timer ??= setTimeout(() => void this.flush(), this.flushMs).unref();
  }

  /** The last use of a key, counting what has not been written yet. */
  lastUsedAt(apiKeyId: string, recorded: number): number {
    return Math.max(recorded, this.noted.get(apiKeyId) ?? 0);
  }

  /**
   * Writes what was noted as one event. Requests do not wait for it (a lost use only makes a time
   * older); a server that is stopping does, through the promise, so the uses it noted last are kept.
   */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.noted.size === 0 || this.held) return;
    const noted = this.noted;
    this.noted = new Map();
    try {
      await this.core.run({ op: 'api_key.record_use', used_at: [...noted] });
    } catch {
      // Refused across a thread (the ledger is fenced or closing): the uses are lost, as in a crash.
    }
  }

  /** Stops writing until release(); uses are still noted and shown. */
  hold(): void {
    this.held = true;
  }

  release(): void {
    this.held = false;
    if (this.noted.size > 0) this.timer ??= setTimeout(() => void this.flush(), this.flushMs).unref();
  }
}
