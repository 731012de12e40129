// Calls from the control plane to one of its cores, with that core's master key: health, the cutover
// routes (http/routes/cutover-routes.ts), and the API keys the proxy calls the core with
// (proxy-keys.ts). Each call is bounded by a timeout; a non-2xx answer becomes a CoreCallError carrying
// the core's error code.

import type { CutoverAnswer, CutoverPosition, CutoverStatus } from '../http/ports/cutover-port.js';

export class CoreCallError extends Error {
  override readonly name = 'CoreCallError';
  constructor(message: string, readonly status?: number, readonly code?: string) {
    super(message);
  }
}

/** An API key as the core lists it (http/access/access-views.ts). */
export interface CoreApiKey {
  api_key_id: string;
  owner_id: string;
  scopes: string[];
  expires_at: string;
  is_revoked: boolean;
}

export class CoreClient {
  constructor(private readonly url: string, private readonly secretKey: string, private readonly timeoutMs: number) {}

  async health(timeoutMs = this.timeoutMs): Promise<{ status: string; version: string }> {
    return this.call('GET', '/health', undefined, timeoutMs);
  }

  /** Asks the core to write a snapshot of everything logged so far, and waits for it. */
  snapshotNow(): Promise<{ seq: number }> {
    return this.call('POST', '/admin/snapshots');
  }

  fence(): Promise<CutoverAnswer> {
    return this.call('POST', '/admin/cutover/fence');
  }

  unfence(): Promise<CutoverAnswer> {
    return this.call('POST', '/admin/cutover/unfence');
  }

  status(options: { atSeq?: number; stateHash?: boolean } = {}): Promise<CutoverStatus> {
    const query = new URLSearchParams();
    if (options.atSeq !== undefined) query.set('at_seq', String(options.atSeq));
    if (options.stateHash) query.set('state_hash', 'true');
    if (options.atSeq !== undefined) query.set('wait_ms', String(Math.max(0, this.timeoutMs - 1_000)));
    return this.call('GET', `/admin/cutover/status?${query}`);
  }

  promote(position: CutoverPosition): Promise<CutoverStatus> {
    return this.call('POST', '/admin/cutover/promote', position);
  }

  apiKeys(owner: string): Promise<CoreApiKey[]> {
    return this.call('GET', `/api-keys?owner=${encodeURIComponent(owner)}`);
  }

  createApiKey(fields: { name: string; owner: string; scopes: readonly string[]; expires_at: string }): Promise<CoreApiKey & { key: string }> {
    return this.call('POST', '/api-keys', fields);
  }

  async revokeApiKey(apiKeyId: string): Promise<void> {
    await this.call('DELETE', `/api-keys/${encodeURIComponent(apiKeyId)}`);
  }

  /** Whether `key` authenticates on the core (`GET /` takes any valid key). */
  async acceptsKey(key: string): Promise<boolean> {
    try {
      await this.call('GET', '/', undefined, this.timeoutMs, key);
      return true;
    } catch (error) {
      if (error instanceof CoreCallError && error.status === 401) return false;
      throw error;
    }
  }

  private async call<T>(method: string, route: string, body?: unknown, timeoutMs = this.timeoutMs, key = this.secretKey): Promise<T> {
    let response: Response;
    try {
      response = await fetch(this.url + route, {
        method,
        headers: { 'x-svc-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw new CoreCallError(`${method} ${route.split('?')[0]} failed: ${(error as Error).message}`);
    }
    const text = await response.text();
    let parsed: any;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (!response.ok) {
      const code = parsed?.error_detail?.code as string | undefined;
      throw new CoreCallError(`${method} ${route.split('?')[0]} answered ${response.status}${code ? ` ${code}` : ''}: ${parsed?.error ?? text.slice(0, 200)}`, response.status, code);
    }
    return parsed as T;
  }
}
