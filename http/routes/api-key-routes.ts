// API keys: create (the key is shown in this one response), list by owner, revoke, and read the key a
// request itself carries (GET /api-keys/current, any key: what a client such as the console may do with
// it, without needing api-keys:read). The master key manages every key. Any other key manages only the keys of its own owner, can neither grant nor revoke
// scopes beyond its own, and cannot make a key that expires after itself; the keys it makes are revoked
// with it (engine/decide-registry.ts). A key's `rate_limit` (fair use, access/rate-buckets.ts) is set
// when it is made and never changes; a key made by a limited key may not be faster than its maker (in
// rate or burst), and one made by it without a rate_limit gets its maker's.

import type { Router } from '@koa/router';
import type { Clock } from '../../engine/ports.js';
import type { ApiKeyRateLimit, ApiKeyRecord } from '../../engine/records.js';
import { withinRateLimit } from '../access/rate-buckets.js';
import { ApiError } from '../api-error.js';
import { apiKeyText, newApiKeySecret } from '../access/api-key-secret.js';
import type { ApiKeyUsage } from '../access/api-key-usage.js';
import { createApiKeySchema, listApiKeysQuerySchema } from '../access/access-schemas.js';
import { apiKeyJsonSchema, apiKeyView } from '../access/access-views.js';
import { z } from 'zod';
import { rejectionsOf } from '../../engine/operations.js';
import { EXAMPLES } from '../openapi/examples.js';
import { answers, describeRoute } from '../openapi/route-docs.js';
import type { Principal } from '../access/auth.js';
import type { LedgerCore } from '../ports/ledger-core.js';
import { accepted, respond } from '../respond.js';
import { SEQ_HEADER } from '../middleware/read-your-writes.js';
import { firstUncovered } from '../access/scopes.js';
import { validate } from '../schemas/validation.js';

export interface ApiKeyRouteOptions {
  usage: ApiKeyUsage;
  clock: Clock;
  /** The rate of keys made without one (rate_limits.key_requests_per_second_default); absent: unlimited. */
  keyRateDefault?: ApiKeyRateLimit;
}

const ACCESS_ERRORS = ['AUTH_CROSS_OWNER_ACCESS', 'AUTH_SCOPE_ESCALATION', 'APIKEY_OWNER_REQUIRED'] as const;

/** The master key's scopes as GET /api-keys/current shows them: everything. */
const MASTER_SCOPES = ['*:*'];

const currentKeySchema = z.object({
  kind: z.enum(['master', 'api_key']).meta({ description: 'master: the master key (or authentication is off); api_key: an API key' }),
  scopes: z.array(z.string()).meta({ description: 'What the key may do, `resource:action` (`*:*` for the master key)' }),
  api_key: apiKeyJsonSchema.optional().meta({ description: 'The API key\'s record (absent for the master key)' }),
});

export function apiKeyRoutes(router: Router, core: LedgerCore, options: ApiKeyRouteOptions): void {
  describeRoute(router, 'POST /api-keys', {
    tag: 'API keys', summary: 'Create an API key', body: createApiKeySchema,
    bodyExample: { name: 'checkout service', owner: 'team-payments', scopes: ['transactions:write', 'balances:read'], expires_at: '2027-01-01T00:00:00Z', rate_limit: { requests_per_second: 50, burst: 100 } },
    answers: answers(201, 'The key record and the key itself, shown this once', apiKeyJsonSchema.extend({ key: z.string() }), { ...(EXAMPLES.apiKey as object), key: 'key_0196a4c2-9e55-7062-94e5-6f7a8b9c0d07.s3cr3t' }),
    errors: ACCESS_ERRORS,
  });
  router.post('/api-keys', async (ctx) => {
    const body: unknown = ctx.request.body;
    const principal = ctx.state.principal as Principal;
    // As Blnk does, a key asking to grant more than it holds is refused before any other check.
    const asked = typeof body === 'object' && body !== null ? (body as { scopes?: unknown }).scopes : undefined;
    if (Array.isArray(asked) && asked.every((scope) => typeof scope === 'string')) refuseEscalation(principal, asked as string[], 'grant');
    const owner = typeof body === 'object' && body !== null ? (body as { owner?: unknown }).owner : undefined;
    if (owner === undefined || owner === null || (typeof owner === 'string' && owner.trim() === '')) {
      throw new ApiError('APIKEY_OWNER_REQUIRED', 'owner is required');
    }
    const fields = validate(createApiKeySchema, body);
    if (fields.expires_at <= options.clock.now()) {
      throw new ApiError('GEN_VALIDATION_ERROR', 'invalid request: expires_at: must be in the future', { expires_at: 'must be in the future' });
    }
    const creator = await creatorKey(core, principal);
    let rateLimit: ApiKeyRateLimit | undefined = fields.rate_limit;
    if (creator) {
      refuseOtherOwner(creator, fields.owner);
      if (fields.expires_at > creator.expires_at) {
        const message = `must not be later than the creating key's expiry (${new Date(creator.expires_at).toISOString()})`;
        throw new ApiError('GEN_VALIDATION_ERROR', `invalid request: expires_at: ${message}`, { expires_at: message });
      }
      rateLimit = rateLimitUnder(creator, rateLimit, options.keyRateDefault);
    }
    refuseEscalation(principal, fields.scopes, 'grant');
    const { secret, secretHash } = newApiKeySecret();
    const { value, seq } = accepted(await core.run({
      op: 'api_key.create',
      fields: {
        name: fields.name,
        owner_id: fields.owner,
        scopes: fields.scopes,
        expires_at: fields.expires_at,
        secret_hash: secretHash,
        created_by: creator?.api_key_id ?? '',
        ...(rateLimit ? { rate_limit: { requests_per_second: rateLimit.requests_per_second, burst: rateLimit.burst } } : {}),
      },
    }));
    await respond(ctx, core, 201, { ...apiKeyView(value, value.last_used_at, options.keyRateDefault), key: apiKeyText(value.api_key_id, secret) }, seq);
  });

  describeRoute(router, 'GET /api-keys', { tag: 'API keys', summary: "List API keys (an API key lists its own owner's)", query: listApiKeysQuerySchema, answers: answers(200, 'The keys', z.array(apiKeyJsonSchema), [EXAMPLES.apiKey]), errors: ACCESS_ERRORS });
  router.get('/api-keys', async (ctx) => {
    const query = validate(listApiKeysQuerySchema, ctx.query);
    let owner = query.owner;
    const creator = await creatorKey(core, ctx.state.principal as Principal);
    if (creator) {
      // As Blnk answers an API key that names no owner: its own owner's keys (only the master key lists every owner's).
      if (owner === undefined || owner.trim() === '') owner = creator.owner_id;
      refuseOtherOwner(creator, owner);
    }
    const keys: Record<string, unknown>[] = [];
    for (const key of await core.view.apiKeys()) {
      if (owner !== undefined && key.owner_id !== owner) continue;
      keys.push(apiKeyView(key, options.usage.lastUsedAt(key.api_key_id, key.last_used_at), options.keyRateDefault));
    }
    await respond(ctx, core, 200, keys);
  });

  describeRoute(router, 'GET /api-keys/current', {
    tag: 'API keys', summary: 'The key this request carries: its kind, scopes and record',
    answers: answers(200, 'The key', currentKeySchema, { kind: 'api_key', scopes: (EXAMPLES.apiKey as { scopes: string[] }).scopes, api_key: EXAMPLES.apiKey }),
  });
  router.get('/api-keys/current', async (ctx) => {
    const principal = ctx.state.principal as Principal;
    if (principal.kind === 'master') {
      await respond(ctx, core, 200, { kind: 'master', scopes: MASTER_SCOPES });
      return;
    }
    const key = await creatorKey(core, principal) as ApiKeyRecord;
    const view = apiKeyView(key, options.usage.lastUsedAt(key.api_key_id, key.last_used_at), options.keyRateDefault);
    await respond(ctx, core, 200, { kind: 'api_key', scopes: key.scopes, api_key: view });
  });

  describeRoute(router, 'DELETE /api-keys/:id', { tag: 'API keys', summary: 'Revoke an API key and the keys it made', answers: answers(204, 'Revoked'), errors: [...ACCESS_ERRORS, ...rejectionsOf('api_key.revoke')] });
  router.delete('/api-keys/:id', async (ctx) => {
    const apiKeyId = ctx.params.id as string;
    const current: ApiKeyRecord | undefined = await core.view.apiKey(apiKeyId);
    const principal = ctx.state.principal as Principal;
    const creator = await creatorKey(core, principal);
    if (current && creator) refuseOtherOwner(creator, current.owner_id);
    if (current) refuseEscalation(principal, current.scopes, 'revoke');
    const { seq } = accepted(await core.run({ op: 'api_key.revoke', api_key_id: apiKeyId }));
    await core.durable(seq);
    ctx.set(SEQ_HEADER, String(seq));
    ctx.status = 204;
  });
}

/** The API key a request acts with, or undefined for the master key (which manages every key). */
async function creatorKey(core: LedgerCore, principal: Principal): Promise<ApiKeyRecord | undefined> {
  if (principal.kind === 'master') return undefined;
  const record = await core.view.apiKey(principal.apiKeyId);
  if (!record) throw new ApiError('AUTH_INVALID_API_KEY', 'invalid API key');
  return record;
}

/**
 * The rate of a key made by `creator`: what was asked, if no faster than the creator's own (in rate and
 * burst); none asked, the creator's. An unlimited creator may give any rate, or none.
 */
function rateLimitUnder(creator: ApiKeyRecord, asked: ApiKeyRateLimit | undefined, keyDefault: ApiKeyRateLimit | undefined): ApiKeyRateLimit | undefined {
  const own = creator.rate_limit ?? keyDefault;
  if (!own) return asked;
  if (!asked) return creator.rate_limit;
  if (withinRateLimit(asked, own)) return asked;
  const message = `must not be faster than the creating key's own (requests_per_second ${own.requests_per_second}, burst ${own.burst})`;
  throw new ApiError('GEN_VALIDATION_ERROR', `invalid request: rate_limit: ${message}`, { rate_limit: message });
}

function refuseOtherOwner(creator: ApiKeyRecord, owner: string): void {
  if (owner === creator.owner_id) return;
  throw new ApiError('AUTH_CROSS_OWNER_ACCESS', 'an API key manages only the keys of its own owner', { owner });
}

function refuseEscalation(principal: Principal, scopes: readonly string[], verb: 'grant' | 'revoke'): void {
  if (principal.kind === 'master') return;
  const beyond = firstUncovered(principal.scopes, scopes);
  if (beyond !== undefined) {
    throw new ApiError('AUTH_SCOPE_ESCALATION', `cannot ${verb} scope ${beyond}: it is broader than the caller's own scopes`, { scope: beyond });
  }
}
