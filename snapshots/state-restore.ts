// Puts a snapshot's contents back into an empty LedgerState. The stored records are gathered into one
// event and applied with the engine's own applyEvent, so every index, lock, mailbox and timer is rebuilt
// by the same code that builds them during a replay of the log.

import { assert } from '../engine/assert.js';
import type { EventType } from '../engine/events.js';
import { applyEvent, type LedgerState } from '../engine/ledger-state.js';
import type { SnapshotImage } from './snapshot-file.js';
import { SCALAR_FIELDS, STORED_SECTIONS, type RestoreEvent } from './state-layout.js';

/** Not a logged event type: this event is built in memory at load time and never written anywhere. */
const RESTORE_EVENT_TYPE = 'snapshot.restored' as EventType;

export function restoreState(state: LedgerState, image: Pick<SnapshotImage, 'scalars' | 'sections'>): void {
  assert(state.ledgers.size === 0 && state.lastEventAt === 0, 'a snapshot can only be loaded into an empty state');
  const event: RestoreEvent = { type: RESTORE_EVENT_TYPE, at: 0, transactions: [] };
  for (const field of SCALAR_FIELDS) field.restore(event, image.scalars[field.name] ?? 0);
  for (const section of STORED_SECTIONS) section.restore(event, image.sections.get(section.name) ?? []);
  applyEvent(state, event);
}
