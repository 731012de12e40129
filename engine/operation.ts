// An operation: how the engine carries out one kind of command (commands.ts). Every write goes through
// one of two shapes, and operations.ts holds one per command:
//   - a decision: admitted (admission.ts), decided in a fresh DecisionScope, committed as the events the
//     scope holds, in one log record (EventLog.appendAll), or refused with a code from its closed list;
//     transaction operations also have a dry run, the same decision in a scope never committed;
//   - work: the engine's own steps over time (queued transactions whose turn came, timers), each step a
//     decision of its own committed before the next is decided (pending-work.ts).
// The commit path and the dry-run path decide with the same code.

import type { DecisionScope } from './decision-scope.js';
import type { EventType } from './events.js';
import type { LedgerState } from './ledger-state.js';
import type { PendingWork } from './pending-work.js';
import type { Projection } from './projection.js';
import type { RejectionCode } from './rejections.js';
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

/** A dry run of a decision: the command as a dry run decides it, and the answer it gives. */
export interface DryRun<C, T> {
  /** The command as a dry run decides it: now and synchronously, whatever the request asked. */
  asDryRun(command: C): C;
  /**
   * The dry run's answer from the scope the decision left. Postings before `currentFrom` belong to
   * earlier steps of the same dry run (see projection.ts projectBalances).
   */
  project(scope: DecisionScope, command: C, decided: Decided<T>, currentFrom: number): Projection;
}

export interface Decision<C, T> {
  /**
   * Every code the operation can refuse with (admission's QUEUE_BACKPRESSURE included where it joins or
   * drains mailboxes): the API reference documents a route's errors from this list, and a test checks
   * that nothing else comes back.
   */
  readonly rejections: readonly RejectionCode[];
  admission?(state: LedgerState, command: C): Admission;
  /** Decides into the scope: the records, balances and postings it drafts, or whole events it emits. */
  decide(scope: DecisionScope, command: C): Decided<T>;
  /** What the event made of the scope's drafted records is called (operations that draft records). */
  eventType?(value: T): EventType;
  readonly dryRun?: DryRun<C, T>;
  /**
   * The value with the balances the write touched as it left them (resulting-balances.ts), when the
   * command asks for them (`include_balances`): called after its events are applied.
   */
  withBalances?(value: T, state: LedgerState): T;
}

/** A decision that cannot be refused (it records what it is given): `run` answers it without a failure. */
export type Infallible<C, T> = Decision<C, T> & { readonly rejections: readonly [] };

/** A decision that has a dry run (operations on transactions). */
export type DryRunnable<C, T> = Decision<C, T> & { readonly dryRun: DryRun<C, T> };

export interface Work<C, T> {
  readonly rejections: readonly RejectionCode[];
  work(pending: PendingWork, command: C, now: number): T;
}

export type Operation<C, T> = Decision<C, T> | Work<C, T>;

export function isWork<C, T>(operation: Operation<C, T>): operation is Work<C, T> {
  return 'work' in operation;
}
