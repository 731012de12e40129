// What a snapshot holds, in one table. Every field of LedgerState appears in STATE_LAYOUT exactly once
// (the `satisfies` clause makes a new field a compile error until it is listed here), as one of:
//
//   stored   - written to the snapshot; on load it goes back into the state through the engine's own
//              applyEvent, as one event carrying every stored record, so loading can never rebuild
//              indexes differently from replaying the log (or, for a plain count, set directly);
//   table    - the balances: written as the snapshot's balance table and loaded as the state's cold
//              tier without decoding (cold-balances.ts), together with their index by indicator;
//   derived  - rebuilt by that same applyEvent (indexes, locks, timers); not written, but hashed, so
//              the equivalence tests prove the rebuild matches a replay;
//   scalar   - a plain value kept in the snapshot;
//   external - lives elsewhere (the lookup store), not part of the working state.
//
// Adding a field to the state means adding one line here; the format version changes only when stored
// sections change meaning.

import type { LedgerEvent } from '../engine/events.js';
import type { TrackedBalance } from '../engine/fund-lineage.js';
import type { LedgerState } from '../engine/ledger-state.js';
import type { TransactionRecord } from '../engine/records.js';

/** An event under construction that recreates stored sections when applied to an empty state. */
export interface RestoreEvent extends LedgerEvent {
  transactions: TransactionRecord[];
}

export interface StoredSection {
  kind: 'stored';
  /** Section name in the file (stable across versions). */
  name: string;
  /** The items to write, in the order restoring must apply them. */
  capture(state: LedgerState): Iterable<unknown>;
  /** Puts the items read back into the event that recreates the state (or into the state itself). */
  restore(event: RestoreEvent, items: unknown[], state: LedgerState): void;
  /** The section as key -> value for the state hash (hashed in key order, whatever the map order). */
  hashed(state: LedgerState): Iterable<[string, unknown]>;
  /**
   * Sections added after the hash's version: left out of the hash while empty, so states without any
   * hash as they did before the section existed (snapshots written then still verify).
   */
  omitWhenEmpty?: boolean;
}

export interface DerivedSection {
  kind: 'derived';
  name: string;
  hashed(state: LedgerState): Iterable<[string, unknown]>;
  omitWhenEmpty?: boolean;
}

/** Hashed in a form of its own (state-hash.ts), not as keyed canonical JSON. */
export interface TableSection {
  kind: 'table';
  name: string;
}

export interface ScalarField {
  kind: 'scalar';
  name: string;
  capture(state: LedgerState): number;
  restore(event: RestoreEvent, value: number): void;
}

export interface ExternalField {
  kind: 'external';
  why: string;
}

type Layout = StoredSection | DerivedSection | TableSection | ScalarField | ExternalField;

/** The data fields of LedgerState (its methods are not state). */
export type StateField = {
  [K in keyof LedgerState]: LedgerState[K] extends (...args: never[]) => unknown ? never : K;
}[keyof LedgerState];

function keyedBy<T>(map: Map<string, T>): Iterable<[string, unknown]> {
  return map;
}

export const STATE_LAYOUT = {
  lastEventAt: {
    kind: 'scalar',
    name: 'last_event_at',
    capture: (state) => state.lastEventAt,
    restore: (event, value) => {
      event.at = value;
    },
  },
  ledgers: {
    kind: 'stored',
    name: 'ledgers',
    capture: (state) => state.ledgers.values(),
    restore: (event, items) => {
      event.ledgers = items as NonNullable<LedgerEvent['ledgers']>;
    },
    hashed: (state) => keyedBy(state.ledgers),
  },
  identities: {
    kind: 'stored',
    name: 'identities',
    capture: (state) => state.identities.values(),
    restore: (event, items) => {
      event.identities = items as NonNullable<LedgerEvent['identities']>;
    },
    hashed: (state) => keyedBy(state.identities),
  },
  balances: { kind: 'table', name: 'balances' },
  holds: {
    kind: 'stored',
    name: 'holds',
    capture: (state) => state.holds.values(),
    restore: (event, items) => {
      for (const item of items) event.transactions.push(item as TransactionRecord);
    },
    hashed: (state) => keyedBy(state.holds),
  },
  scheduled: {
    kind: 'stored',
    name: 'scheduled',
    capture: (state) => state.scheduled.values(),
    restore: (event, items) => {
      for (const item of items) event.transactions.push(item as TransactionRecord);
    },
    hashed: (state) => keyedBy(state.scheduled),
  },
  mailboxes: {
    kind: 'stored',
    name: 'mailboxes',
    // Mailbox by mailbox, each in its FIFO order: enqueuing them in this order rebuilds every queue.
    capture: (state) => queuedRecords(state),
    restore: (event, items) => {
      for (const item of items) event.transactions.push(item as TransactionRecord);
    },
    // Order inside a mailbox is state; the order of mailboxes in the runner's ring is not.
    hashed: (state) => mailboxContents(state),
  },
  apiKeys: {
    kind: 'stored',
    name: 'api_keys',
    capture: (state) => state.apiKeys.values(),
    restore: (event, items) => {
      event.api_keys = items as NonNullable<LedgerEvent['api_keys']>;
    },
    hashed: (state) => keyedBy(state.apiKeys),
  },
  hooks: {
    kind: 'stored',
    name: 'hooks',
    capture: (state) => state.hooks.values(),
    restore: (event, items) => {
      event.hooks = items as NonNullable<LedgerEvent['hooks']>;
    },
    hashed: (state) => keyedBy(state.hooks),
  },
  matchingRules: {
    kind: 'stored',
    name: 'matching_rules',
    capture: (state) => state.matchingRules.values(),
    restore: (event, items) => {
      event.matching_rules = items as NonNullable<LedgerEvent['matching_rules']>;
    },
    hashed: (state) => keyedBy(state.matchingRules),
  },
  uploads: {
    kind: 'stored',
    name: 'uploads',
    capture: (state) => state.uploads.values(),
    restore: (event, items) => {
      event.uploads = items as NonNullable<LedgerEvent['uploads']>;
    },
    hashed: (state) => keyedBy(state.uploads),
  },
  reconciliations: {
    kind: 'stored',
    name: 'reconciliations',
    capture: (state) => state.reconciliations.values(),
    restore: (event, items) => {
      event.reconciliations = items as NonNullable<LedgerEvent['reconciliations']>;
    },
    hashed: (state) => keyedBy(state.reconciliations),
  },
  balanceIdByIndicator: { kind: 'table', name: 'balance_id_by_indicator' },
  balancesPerIdentity: {
    kind: 'stored',
    name: 'balances_per_identity',
    // Counted from the balances during a replay; the cold tier is never replayed, so the counts are kept.
    capture: (state) => state.balancesPerIdentity.entries(),
    restore: (_event, items, state) => {
      for (const [identityId, count] of items as Array<[string, number]>) state.balancesPerIdentity.set(identityId, count);
    },
    hashed: (state) => keyedBy(state.balancesPerIdentity),
  },
  monitors: {
    kind: 'stored',
    name: 'balance_monitors',
    capture: (state) => state.monitors.values(),
    restore: (event, items) => {
      event.monitors = items as NonNullable<LedgerEvent['monitors']>;
    },
    hashed: (state) => keyedBy(state.monitors),
    omitWhenEmpty: true,
  },
  monitorsByBalance: {
    kind: 'derived',
    name: 'monitors_by_balance',
    hashed: (state) => new Map([...state.monitorsByBalance].map(([balanceId, ids]) => [balanceId, [...ids].sort()])),
    omitWhenEmpty: true,
  },
  lineage: {
    kind: 'stored',
    name: 'fund_lineage',
    // Every balance that tracks lineage, with its providers' funds: the cold tier is never replayed, so
    // which balances track lineage is kept here too, not only on their records.
    capture: (state) => state.lineage.entries(),
    restore: (_event, items, state) => {
      for (const item of items) state.lineage.restore(item as TrackedBalance);
    },
    hashed: (state) => new Map([...state.lineage.entries()].map((tracked) => [tracked.balance_id, tracked])),
    omitWhenEmpty: true,
  },
  periods: {
    kind: 'stored',
    name: 'closed_periods',
    // Ledger by ledger, each ledger's oldest first: applied in this order they close one after another.
    capture: (state) => state.periods.all(),
    restore: (event, items) => {
      event.periods = items as NonNullable<LedgerEvent['periods']>;
    },
    hashed: (state) => new Map([...state.periods.all()].map((period) => [period.period_id, period])),
    omitWhenEmpty: true,
  },
  pendingHoldActions: { kind: 'derived', name: 'pending_hold_actions', hashed: (state) => keyedBy(state.pendingHoldActions) },
  refundLocks: { kind: 'derived', name: 'refund_locks', hashed: (state) => keyedBy(state.refundLocks) },
  timers: { kind: 'derived', name: 'timers', hashed: (state) => liveTimers(state) },
  transactions: { kind: 'external', why: 'settled transactions live in the lookup store (data/lookup), which follows the log on its own' },
} satisfies Record<StateField, Layout>;

const ENTRIES = Object.values(STATE_LAYOUT) as Layout[];

export const STORED_SECTIONS: StoredSection[] = ENTRIES.filter((entry): entry is StoredSection => entry.kind === 'stored');
export const SCALAR_FIELDS: ScalarField[] = ENTRIES.filter((entry): entry is ScalarField => entry.kind === 'scalar');
/** Everything the state hash covers, stored, table and derived, in a fixed order. */
export const HASHED_SECTIONS: Array<StoredSection | DerivedSection | TableSection> = ENTRIES.filter(
  (entry): entry is StoredSection | DerivedSection | TableSection => entry.kind === 'stored' || entry.kind === 'derived' || entry.kind === 'table',
);

function* queuedRecords(state: LedgerState): Iterable<TransactionRecord> {
  for (const [, record] of state.mailboxes.all()) yield record;
}

function mailboxContents(state: LedgerState): Map<string, TransactionRecord[]> {
  const boxes = new Map<string, TransactionRecord[]>();
  for (const [balanceId, record] of state.mailboxes.all()) {
    let box = boxes.get(balanceId);
    if (!box) boxes.set(balanceId, (box = []));
    box.push(record);
  }
  return boxes;
}

/**
 * Timers whose transaction is still waiting for them. A replayed state keeps entries for holds that
 * were closed since (the live engine pops them as they fire), so only the live ones are state.
 */
function liveTimers(state: LedgerState): Map<string, unknown> {
  const live = new Map<string, unknown>();
  for (const timer of state.timers.entries()) {
    const waiting = timer.kind === 'scheduled' ? state.scheduled.has(timer.transactionId) : state.holds.has(timer.transactionId);
    if (!waiting) continue;
    live.set(`${timer.transactionId}\u0000${timer.kind}`, timer.at);
  }
  return live;
}
