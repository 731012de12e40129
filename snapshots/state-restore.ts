// Puts a snapshot's contents back into an empty LedgerState. The balance table becomes the state's cold
// tier as it is (nothing decoded: see engine/balance-table.ts). Each chunk of other stored records
// becomes one event applied with the engine's own applyEvent, so every index, lock, mailbox and timer is
// rebuilt by the same code that builds them during a replay of the log. Going chunk by chunk (in file
// order, which is the layout's order) lets each chunk's decoded objects be dropped once applied.

import { assert } from '../engine/assert.js';
import type { EventType } from '../engine/events.js';
import { applyEvent, type LedgerState } from '../engine/ledger-state.js';
import { snapshotBalances, snapshotChunks, SnapshotFileError, type SnapshotContents } from './snapshot-file.js';
import { stateHash } from './state-hash.js';
import { SCALAR_FIELDS, STORED_SECTIONS, type RestoreEvent, type StoredSection } from './state-layout.js';

/** Not a logged event type: these events are built in memory at load time and never written anywhere. */
const RESTORE_EVENT_TYPE = 'snapshot.restored' as EventType;

const SECTION_BY_NAME = new Map<string, StoredSection>(STORED_SECTIONS.map((section) => [section.name, section]));

export function restoreState(state: LedgerState, contents: SnapshotContents): void {
  assert(state.ledgers.size === 0 && state.lastEventAt === 0, 'a snapshot can only be loaded into an empty state');
  const balances = snapshotBalances(contents);
  state.balances.attachCold(balances);
  state.balanceIdByIndicator.attachCold(balances);
  let scalars: Record<string, number> = {};
  const eventWithScalars = (): RestoreEvent => {
    const event: RestoreEvent = { type: RESTORE_EVENT_TYPE, at: 0, transactions: [] };
    for (const field of SCALAR_FIELDS) field.restore(event, scalars[field.name] ?? 0);
    return event;
  };
  for (const chunk of snapshotChunks(contents)) {
    if (chunk.scalars) {
      scalars = chunk.scalars;
      continue;
    }
    const event = eventWithScalars();
    (SECTION_BY_NAME.get(chunk.name) as StoredSection).restore(event, chunk.items, state);
    applyEvent(state, event);
  }
  applyEvent(state, eventWithScalars()); // an empty state still gets its time
}

/**
 * restoreState, and then the restored state must hash to the hash the snapshot's header records (the
 * hash of the state it was written from); a SnapshotFileError says it does not. Every restore that
 * goes on to serve or to be written again is checked: the long fuzz run met a snapshot job whose
 * restore of a sound file came out with one section's strings read from the wrong bytes (no error
 * from the decoder), and the snapshots written from that state carried the damage on
 * (docs/decisions-snapshots.md). Balances are hashed from their stored bytes, so the check costs
 * about what decoding the other sections costs.
 */
export function restoreVerified(state: LedgerState, contents: SnapshotContents): void {
  restoreState(state, contents);
  const restored = stateHash(state);
  if (restored !== contents.header.state_hash) {
    throw new SnapshotFileError(contents.file, 'corrupt', `it restores into a state hashing to ${restored}, not the ${contents.header.state_hash} its header records`);
  }
}
