// Decisions for the records that sit beside the money: identities, metadata on any record, API keys and
// hooks. Each returns the event to commit or a rejection; secrets and ids come from the caller and the
// id source, so nothing here is random.

import type { LedgerEvent } from './events.js';
import { canonicalJson } from './exact-json.js';
import type { LedgerState } from './ledger-state.js';
import type { IdSource } from './ports.js';
import type { MonitorFields } from './balance-monitors.js';
import type {
  ApiKeyRateLimit,
  ApiKeyRecord,
  HookRecord,
  IdentityFields,
  IdentityRecord,
  MetaData,
  MonitorRecord,
} from './records.js';
import { mergeMetaData, metaDataBytes, METADATA_BYTES_MAX, metadataTarget, type MetadataTarget } from './metadata.js';
import { reject, type Rejection } from './rejections.js';
import { accept, refuse, type Decided } from './result.js';

/** A decision on a registry record: the record as it will be, and the event that makes it so. */
export type RegistryDecision<T> = Decided<{ record: T; event: LedgerEvent }>;

function decided<T>(record: T, event: LedgerEvent): RegistryDecision<T> {
  return accept({ record, event });
}

/**
 * A new identity, under the id the caller chose or a generated one. An id in use is a conflict, never
 * an overwrite: a caller retrying a create with its own id learns the first one landed.
 */
export function decideCreateIdentity(
  state: LedgerState,
  fields: IdentityFields,
  chosenId: string | undefined,
  now: number,
  ids: IdSource,
): RegistryDecision<IdentityRecord> {
  const identityId = chosenId ?? ids.next('idt');
  if (state.identities.has(identityId)) return refuse(reject('GEN_CONFLICT', `Identity already exists: ${identityId}`));
  const identity: IdentityRecord = { ...fields, identity_id: identityId, created_at: now };
  return decided(identity, { type: 'identity.created', at: now, identities: [identity] });
}

export function decideUpdateIdentity(
  state: LedgerState,
  identityId: string,
  fields: IdentityFields,
  now: number,
  expected?: IdentityRecord,
): RegistryDecision<IdentityRecord> {
  const current = state.identities.get(identityId);
  if (!current) return refuse(reject('IDT_NOT_FOUND', `identity ${identityId} not found`));
  if (expected && canonicalJson(expected) !== canonicalJson(current)) {
    return refuse(reject('GEN_CONFLICT', `identity ${identityId} changed since it was read; read it again`));
  }
  const identity: IdentityRecord = { ...fields, identity_id: identityId, created_at: current.created_at };
  return decided(identity, { type: 'identity.updated', at: now, identities: [identity] });
}

export function decideDeleteIdentity(state: LedgerState, identityId: string, now: number): RegistryDecision<IdentityRecord> {
  const current = state.identities.get(identityId);
  if (!current) return refuse(reject('IDT_NOT_FOUND', `identity ${identityId} not found`));
  const inUse = state.balancesPerIdentity.get(identityId) ?? 0;
  if (inUse > 0) return refuse(reject('GEN_CONFLICT', `identity ${identityId} is named by ${inUse} balance(s)`));
  return decided(current, { type: 'identity.deleted', at: now, deleted_identities: [identityId] });
}

/**
 * Merges keys into the metadata of a ledger, balance, transaction or identity, chosen by the id's
 * prefix. The event carries the patch; the merged object must stay within METADATA_BYTES_MAX.
 */
export function decideMetadata(state: LedgerState, entityId: string, metaData: MetaData, now: number): RegistryDecision<MetaData> {
  const target = metadataTarget(entityId);
  if (!target) {
    const prefix = entityId.slice(0, entityId.indexOf('_') + 1);
    return refuse(reject('META_UNSUPPORTED_ENTITY', `ids starting ${JSON.stringify(prefix || entityId)} do not carry metadata`));
  }
  const current = currentMetaData(state, target, entityId);
  if (!current) return refuse(reject('META_ENTITY_NOT_FOUND', `no record with id ${entityId}`));
  const merged = mergeMetaData(current, metaData);
  const refusal = metadataSizeRefusal(merged);
  if (refusal) return refuse(refusal);
  return decided(merged, { type: 'metadata.updated', at: now, metadata_patches: [{ entity_id: entityId, meta_data: metaData }] });
}

/** The metadata a record holds now, or undefined when there is no such record. */
export function currentMetaData(state: LedgerState, target: MetadataTarget, entityId: string): MetaData | undefined {
  switch (target) {
    case 'ledger': return state.ledgers.get(entityId)?.meta_data;
    case 'balance': return state.balances.get(entityId)?.meta_data;
    case 'transaction': return state.transaction(entityId)?.meta_data;
    case 'identity': return state.identities.get(entityId)?.meta_data;
  }
}

/** META_TOO_LARGE when merged metadata would exceed its bound. */
export function metadataSizeRefusal(merged: MetaData): Rejection | undefined {
  const bytes = metaDataBytes(merged);
  if (bytes <= METADATA_BYTES_MAX) return undefined;
  return reject('META_TOO_LARGE', `metadata would be ${bytes} bytes once merged; at most ${METADATA_BYTES_MAX}`);
}

export interface NewApiKey {
  name: string;
  owner_id: string;
  scopes: string[];
  expires_at: number;
  secret_hash: string;
  /** The creating key's id, '' for the master key. */
  created_by: string;
  /** Absent: the server's default applies. */
  rate_limit?: ApiKeyRateLimit;
}

export function decideCreateApiKey(fields: NewApiKey, apiKeyId: string, now: number): RegistryDecision<ApiKeyRecord> {
  const key: ApiKeyRecord = { ...fields, api_key_id: apiKeyId, created_at: now, last_used_at: 0, is_revoked: false };
  return decided(key, { type: 'api_key.created', at: now, api_keys: [key] });
}

/**
 * Revokes a key and every key created from it, down the line, in one event: a key made by a key never
 * outlives its creator's revocation. Returns the key itself as it is after revocation.
 */
export function decideRevokeApiKey(state: LedgerState, apiKeyId: string, now: number): RegistryDecision<ApiKeyRecord> {
  const current = state.apiKeys.get(apiKeyId);
  if (!current) return refuse(reject('APIKEY_NOT_FOUND', `API key ${apiKeyId} not found`));
  const revoked = new Set([apiKeyId]);
  // Keys are created after their creator, so one pass in creation order finds every descendant.
  for (const key of state.apiKeys.values()) {
    if (key.created_by && revoked.has(key.created_by)) revoked.add(key.api_key_id);
  }
  const keys: ApiKeyRecord[] = [];
  for (const id of revoked) {
    const key = state.apiKeys.get(id) as ApiKeyRecord;
    if (!key.is_revoked || id === apiKeyId) keys.push({ ...key, is_revoked: true });
  }
  return decided(keys[0] as ApiKeyRecord, { type: 'api_key.revoked', at: now, api_keys: keys });
}

/** Last-use times gathered over a while, written as one event rather than one per request. */
export function decideApiKeysUsed(state: LedgerState, usedAt: Map<string, number>, now: number): LedgerEvent | undefined {
  const keys: ApiKeyRecord[] = [];
  for (const [apiKeyId, at] of usedAt) {
    const current = state.apiKeys.get(apiKeyId);
    if (current && at > current.last_used_at) keys.push({ ...current, last_used_at: at });
  }
  return keys.length > 0 ? { type: 'api_key.used', at: now, api_keys: keys } : undefined;
}

/** What a client sets on a hook; the signing secret is the server's to make and rotate. */
export type HookFields = Omit<HookRecord, 'hook_id' | 'created_at' | 'signing_secret_sealed'>;

export function decideCreateHook(fields: HookFields, signingSecretSealed: string, now: number, ids: IdSource): RegistryDecision<HookRecord> {
  const hook: HookRecord = { ...fields, hook_id: ids.next('hook'), created_at: now, signing_secret_sealed: signingSecretSealed };
  return decided(hook, { type: 'hook.created', at: now, hooks: [hook] });
}

export function decideUpdateHook(state: LedgerState, hookId: string, fields: HookFields, now: number): RegistryDecision<HookRecord> {
  const current = state.hooks.get(hookId);
  if (!current) return refuse(reject('HOOK_NOT_FOUND', `hook ${hookId} not found`));
  const hook: HookRecord = { ...fields, hook_id: hookId, created_at: current.created_at };
  if (current.signing_secret_sealed !== undefined) hook.signing_secret_sealed = current.signing_secret_sealed;
  return decided(hook, { type: 'hook.updated', at: now, hooks: [hook] });
}

/** Replaces a hook's signing secret (the old one stops being used at once). */
export function decideRotateHookSecret(state: LedgerState, hookId: string, signingSecretSealed: string, now: number): RegistryDecision<HookRecord> {
  const current = state.hooks.get(hookId);
  if (!current) return refuse(reject('HOOK_NOT_FOUND', `hook ${hookId} not found`));
  const hook: HookRecord = { ...current, signing_secret_sealed: signingSecretSealed };
  return decided(hook, { type: 'hook.updated', at: now, hooks: [hook] });
}

/** Hooks registered before hooks had signing secrets of their own (their deliveries were signed with the master key). */
export function hooksWithoutSecrets(state: LedgerState): string[] {
  return [...state.hooks.values()].filter((hook) => hook.signing_secret_sealed === undefined).map((hook) => hook.hook_id);
}

/**
 * Gives each hook that has no signing secret of its own the sealed secret made for it (by id), in one
 * event, so the master key never signs a delivery again and replay carries the change. Hooks that have a
 * secret by now, or are gone, are left as they are; undefined when nothing changes.
 */
export function decideIssueHookSecrets(state: LedgerState, sealedByHookId: ReadonlyMap<string, string>, now: number): LedgerEvent | undefined {
  const hooks: HookRecord[] = [];
  for (const [hookId, sealed] of sealedByHookId) {
    const current = state.hooks.get(hookId);
    if (current && current.signing_secret_sealed === undefined) hooks.push({ ...current, signing_secret_sealed: sealed });
  }
  return hooks.length > 0 ? { type: 'hook.updated', at: now, hooks } : undefined;
}

/** Monitors on one balance: each is checked whenever the balance moves, so their number is bounded. */
export const MONITORS_PER_BALANCE_MAX = 100;

export function decideCreateMonitor(state: LedgerState, fields: MonitorFields, now: number, ids: IdSource): RegistryDecision<MonitorRecord> {
  const refusal = monitorRefusal(state, fields.balance_id);
  if (refusal) return refuse(refusal);
  const monitor: MonitorRecord = { ...fields, monitor_id: ids.next('mon'), created_at: now };
  return decided(monitor, { type: 'balance_monitor.created', at: now, monitors: [monitor] });
}

/** Replaces a monitor's fields; its id and creation time stay. */
export function decideUpdateMonitor(state: LedgerState, monitorId: string, fields: MonitorFields, now: number): RegistryDecision<MonitorRecord> {
  const current = state.monitors.get(monitorId);
  if (!current) return refuse(reject('BAL_MONITOR_NOT_FOUND', `Monitor with ID '${monitorId}' not found`));
  if (fields.balance_id !== current.balance_id) {
    const refusal = monitorRefusal(state, fields.balance_id);
    if (refusal) return refuse(refusal);
  }
  const monitor: MonitorRecord = { ...fields, monitor_id: monitorId, created_at: current.created_at };
  return decided(monitor, { type: 'balance_monitor.updated', at: now, monitors: [monitor] });
}

export function decideDeleteMonitor(state: LedgerState, monitorId: string, now: number): RegistryDecision<MonitorRecord> {
  const current = state.monitors.get(monitorId);
  if (!current) return refuse(reject('BAL_MONITOR_NOT_FOUND', `Monitor with ID '${monitorId}' not found`));
  return decided(current, { type: 'balance_monitor.deleted', at: now, deleted_monitors: [monitorId] });
}

/** Why a monitor cannot watch this balance, if it cannot. */
function monitorRefusal(state: LedgerState, balanceId: string): Rejection | undefined {
  if (!state.balances.has(balanceId)) return reject('BAL_NOT_FOUND', `balance ${balanceId} not found`);
  const watching = state.monitorsByBalance.get(balanceId)?.size ?? 0;
  if (watching >= MONITORS_PER_BALANCE_MAX) {
    return reject('BAL_MONITOR_LIMIT_EXCEEDED', `balance ${balanceId} has ${watching} monitors; at most ${MONITORS_PER_BALANCE_MAX}`);
  }
  return undefined;
}

export function decideDeleteHook(state: LedgerState, hookId: string, now: number): RegistryDecision<HookRecord> {
  const current = state.hooks.get(hookId);
  if (!current) return refuse(reject('HOOK_NOT_FOUND', `hook ${hookId} not found`));
  return decided(current, { type: 'hook.deleted', at: now, deleted_hooks: [hookId] });
}
