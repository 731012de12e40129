// The state hash: one SHA-256 over the content of the working state, the same for any two states that
// hold the same records, whatever order their maps were filled in or their queue runner visits
// balances. Each section of state-layout.ts is hashed as its title and entry count, then its entries
// sorted by key, each as canonical JSON. Snapshots carry it in their header; `folio verify` recomputes
// it from a replay of the log at each snapshot's seq and from the snapshot's own contents.

import type { LedgerState } from '../engine/ledger-state.js';
import { CanonicalHasher } from './canonical-writer.js';
import { HASHED_SECTIONS, SCALAR_FIELDS } from './state-layout.js';

/** Bumped whenever what the hash covers changes, so hashes of different versions never compare equal. */
const STATE_HASH_VERSION = 'folio-state-hash/1';

export function stateHash(state: LedgerState): string {
  const hasher = new CanonicalHasher();
  hasher.line(STATE_HASH_VERSION);
  for (const field of SCALAR_FIELDS) hasher.line(`${field.name}=${field.capture(state)}`);
  for (const section of HASHED_SECTIONS) {
    const entries = section.hashed(state);
    const byKey = entries instanceof Map ? (entries as Map<string, unknown>) : new Map(entries);
    const keys = [...byKey.keys()].sort();
    hasher.line(`${section.name} ${keys.length}`);
    // Records carry their own id, so their key adds nothing; plain values are hashed with their key.
    for (const key of keys) {
      const value = byKey.get(key);
      if (typeof value !== 'object' || value === null || Array.isArray(value)) hasher.line(JSON.stringify(key));
      hasher.add(value);
    }
  }
  return hasher.digestHex();
}
