// An operation on transactions (create, act on a hold, refund, bulk) as the engine runs it: how it is
// admitted, how it is decided, what its event is called, and how a dry run presents it. The engine has
// one way to run any operation (ledger-engine.ts run/dryRun), so the commit path and the dry-run path
// decide with the same code: a dry run is the real decision in a scope that is never committed.

import type { DecisionScope } from './decision-scope.js';
import type { EventType, LedgerEvent } from './events.js';
import type { LedgerState } from './ledger-state.js';
import type { Projection } from './projection.js';
import type { Decided } from './result.js';

/**
 * What must happen before an operation is decided. A synchronous operation first applies whatever its
 * balances already have queued (`drain`), so it stays in order behind it; a queued one joins their
 * mailboxes (`join`), which must have room for `items` more.
 */
export type Admission =
  | { kind: 'drain'; balances: Iterable<string> }
  | { kind: 'join'; balances: Iterable<string>; items: number }
  | { kind: 'none' };

export interface Operation<C, T> {
  admission(state: LedgerState, command: C): Admission;
  decide(scope: DecisionScope, command: C): Decided<T>;
  /** The command as a dry run decides it: now and synchronously, whatever the request asked. */
  asDryRun(command: C): C;
  eventType(value: T): EventType;
  /** Fields of the event beyond the records and postings the scope holds (most operations have none). */
  eventDetails?(command: C, value: T): Partial<LedgerEvent>;
  /**
   * The dry run's answer from the scope the decision left. Postings before `currentFrom` belong to
   * earlier steps of the same dry run (see projection.ts projectBalances).
   */
  project(scope: DecisionScope, command: C, decided: Decided<T>, currentFrom: number): Projection;
}
