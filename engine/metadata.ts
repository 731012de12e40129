// Metadata: free-form JSON objects on ledgers, balances, transactions and identities. A change is a
// patch merged over the current object (its keys replace the same keys, one level deep), and the log
// records the patch, not the merged object: logging the whole object on every change made the log grow
// with the square of the number of changes. The merged object is bounded, whatever the patches.

import { canonicalJson } from './exact-json.js';
import type { MetaData } from './records.js';

/** Largest metadata object, merged or sent, in bytes of its JSON text. */
export const METADATA_BYTES_MAX = 64 * 1024;

/**
 * Keys refused anywhere in metadata: merged into or read back by JavaScript code they can reach the
 * object prototype, and the value a client was acknowledged would not be the one read back.
 */
export const PROTOTYPE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** Size of metadata as it is bounded: bytes of its JSON text (bigints counted as their digits). */
export function metaDataBytes(meta: MetaData): number {
  return Buffer.byteLength(canonicalJson(meta), 'utf8');
}

/** The first prototype key at any depth of a value, if any (bounded: values come from parsed JSON of bounded depth). */
export function prototypeKeyIn(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = prototypeKeyIn(item);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const key of Object.keys(value)) {
    if (PROTOTYPE_KEYS.has(key)) return key;
    const found = prototypeKeyIn((value as Record<string, unknown>)[key]);
    if (found !== undefined) return found;
  }
  return undefined;
}

export function mergeMetaData(current: MetaData, patch: MetaData): MetaData {
  return { ...current, ...patch };
}

/** Which kind of record an id names, by its prefix, for metadata routing. */
export type MetadataTarget = 'ledger' | 'balance' | 'transaction' | 'identity';

export function metadataTarget(entityId: string): MetadataTarget | undefined {
  const prefix = entityId.slice(0, entityId.indexOf('_') + 1);
  switch (prefix) {
    case 'ldg_':
    case 'general_':
      return 'ledger';
    case 'bln_':
      return 'balance';
    case 'txn_':
      return 'transaction';
    case 'idt_':
      return 'identity';
    default:
      return undefined;
  }
}
