// The state hash: one SHA-256 over the content of the working state, the same for any two states that
// hold the same records, whatever order their maps were filled in, their queue runner visits balances,
// or which of their balances are still cold. Each section of state-layout.ts is hashed as its title and
// entry count, then its entries in key order:
//   - ordinary sections: entries sorted by key, each as canonical JSON;
//   - balances: in the UTF-8 order of their ids, each as the fixed part of its binary record
//     (balance-codec.ts, with its lineage settings byte when it has one) and its meta_data as canonical
//     JSON, each length-prefixed. A balance still
//     cold is hashed from its stored bytes without being decoded, which is what makes hashing a large,
//     mostly idle ledger cheap;
//   - balances by indicator: in the UTF-8 order of the keys, key and id, length-prefixed.
// Snapshots carry it in their header; `folio verify` recomputes it from a replay of the log at each
// snapshot's seq and from the snapshot's own contents.

import { canonicalJson } from '../engine/exact-json.js';
import type { LedgerState } from '../engine/ledger-state.js';
import { fixedPartOf, isEmpty, lineageSettingsByte, writeBalanceFields } from '../codec/balance-codec.js';
import { ByteWriter } from '../codec/byte-writer.js';
import { CanonicalHasher } from './canonical-writer.js';
import { tableOrders, type ColdBalanceTable } from './cold-balances.js';
import { HASHED_SECTIONS, SCALAR_FIELDS, type TableSection } from './state-layout.js';

/** Bumped whenever what the hash covers changes, so hashes of different versions never compare equal. */
const STATE_HASH_VERSION = 'folio-state-hash/2';
/** Bytes gathered before they are passed to the hash. */
const FEED_BYTES = 1 << 20;
const EMPTY_META_TEXT = Buffer.from('{}', 'utf8');

export function stateHash(state: LedgerState): string {
  const hasher = new CanonicalHasher();
  hasher.line(STATE_HASH_VERSION);
  for (const field of SCALAR_FIELDS) hasher.line(`${field.name}=${field.capture(state)}`);
  for (const section of HASHED_SECTIONS) {
    if (section.kind === 'table') {
      hashTable(hasher, state, section);
      continue;
    }
    const entries = section.hashed(state);
    const byKey = entries instanceof Map ? (entries as Map<string, unknown>) : new Map(entries);
    const keys = [...byKey.keys()].sort();
    if (keys.length === 0 && section.omitWhenEmpty) continue;
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

function hashTable(hasher: CanonicalHasher, state: LedgerState, section: TableSection): void {
  const feed = new ByteWriter(FEED_BYTES + 64 * 1024);
  const drain = (): void => {
    hasher.bytes(feed.bytes());
    feed.reset();
  };
  if (section.name === 'balances') {
    const balances = state.balances;
    const cold = balances.coldBalances as ColdBalanceTable | undefined;
    hasher.line(`${section.name} ${balances.size}`);
    for (const position of tableOrders(balances).ids) {
      const hot = balances.hotAt(position);
      // The lineage settings byte, when not the defaults, ends the fixed part: a balance without them
      // hashes as it did before they existed.
      if (hot) {
        const start = feed.length;
        feed.u32(0);
        writeBalanceFields(feed, hot);
        const settings = lineageSettingsByte(hot);
        if (settings !== 0) feed.u8(settings);
        feed.bytes().writeUInt32LE(feed.length - start - 4, start);
        writeMetaText(feed, isEmpty(hot.meta_data) ? undefined : hot.meta_data);
      } else {
        const record = cold!.recordBytes(position);
        const { fixedEnd, meta, settings } = fixedPartOf(record, 0);
        feed.u32(settings === 0 ? fixedEnd : fixedEnd + 1);
        feed.raw(record.subarray(0, fixedEnd));
        if (settings !== 0) feed.u8(settings);
        writeMetaText(feed, meta);
      }
      if (feed.length >= FEED_BYTES) drain();
    }
  } else {
    const { keys, positions } = tableOrders(state.balances).indicators;
    const cold = state.balances.coldBalances as ColdBalanceTable | undefined;
    const coldCount = cold?.count ?? 0;
    const idAt = (position: number): string => (position < coldCount ? cold!.idAt(position) : state.balances.at(position).balance_id);
    hasher.line(`${section.name} ${keys.length}`);
    for (let index = 0; index < keys.length; index += 1) {
      const key = keys[index] as Buffer;
      feed.u32(key.length);
      feed.raw(key);
      feed.shortString(idAt(positions[index] as number));
      if (feed.length >= FEED_BYTES) drain();
    }
  }
  drain();
}

function writeMetaText(feed: ByteWriter, meta: Record<string, unknown> | undefined): void {
  if (!meta) {
    feed.u32(EMPTY_META_TEXT.length);
    feed.raw(EMPTY_META_TEXT);
    return;
  }
  feed.longString(canonicalJson(meta));
}
