// What makes a node one of its group beside the log and its data directory's membership
// (runtime/data-dir-membership.ts): the group's one hook sealing key. Every node signs hook deliveries with
// that key (hooks/signing-secrets.ts), so a node without it, or with another, is refused when it joins
// rather than found unable to sign after a failover. The group keeps the key's fingerprint (the first
// node to join names it); a fingerprint reveals nothing of the key.

import { HookSecretSealer } from '../hooks/signing-secrets.js';
import { claimSealFingerprint, sealFingerprint } from './postgres/group-settings-store.js';
import type { PostgresClient } from './postgres/postgres-client.js';

/** A node whose hook sealing key is not its group's. */
export class SealKeyError extends Error {
  override readonly name = 'SealKeyError';
}

/** Refuses a data directory whose hook sealing key is not the group's (naming the group's if it has none). */
export async function checkSealKey(client: PostgresClient, dataDir: string): Promise<void> {
  const named = await sealFingerprint(client);
  if (!HookSecretSealer.existsIn(dataDir) && named !== undefined) {
    throw new SealKeyError('this node has no hook sealing key and its group has one: set hooks.seal_key (FOLIO_HOOK_SEAL_KEY) to the group\'s, or copy secrets/hook-seal.key from another node');
  }
  const mine = HookSecretSealer.openIn(dataDir).fingerprint();
  if ((await claimSealFingerprint(client, mine)) !== mine) {
    throw new SealKeyError(`${HookSecretSealer.keyFileIn(dataDir)} is not the group's hook sealing key: give every node the same hooks.seal_key (FOLIO_HOOK_SEAL_KEY)`);
  }
}
