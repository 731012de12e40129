// The engine: takes commands (commands.ts), decides them against the working state, applies the
// resulting events and appends them to the log, all in one synchronous step. Nothing awaits between
// decide and apply, so a command that touches several balances is atomic in this single-threaded
// process. Callers wait for the log's durability of the returned sequence number before they
// acknowledge anything.
//
// Two entry points write: `run(command)` carries out any command through its operation (operations.ts),
// and `dryRun(commands)` decides transaction operations in a scope that is never committed. `replay`
// applies events read back from the log. Reads go through `view` (ledger-view.ts).

import { admissionRefusal } from './admission.js';
import { monitorAlerts } from './balance-monitors.js';
import type { Command, CommandOf, CommandOp } from './commands.js';
import { DecisionScope, DEFAULT_DECISION_SETTINGS, type DecisionSettings } from './decision-scope.js';
import type { LedgerEvent } from './events.js';
import { applyEvent, LedgerState, type ApplyOptions } from './ledger-state.js';
import { LedgerView } from './ledger-view.js';
import { isWork, type Decision, type Operation } from './operation.js';
import { OPERATIONS, type DryRunOp, type ResultOf, type NeverRefusedOp } from './operations.js';
import { PendingWork, type PendingWorkLimits } from './pending-work.js';
import type { Clock, EventLog, IdSource, TransactionStore } from './ports.js';
import { involvedInPostings, projectBalances, type BalanceProjection, type Projection } from './projection.js';
import { refuse, type Outcome } from './result.js';

export type { Outcome } from './result.js';
export type { ResultOf } from './operations.js';

export interface EngineLimits extends PendingWorkLimits {
  /** Queued transactions one balance may hold before new ones are refused with QUEUE_BACKPRESSURE. */
  mailbox_depth_max: number;
  /** Queued transactions across all balances. */
  queued_total_max: number;
}

export const DEFAULT_ENGINE_LIMITS: EngineLimits = {
  mailbox_depth_max: 10_000,
  queued_total_max: 1_000_000,
  timers_per_slice_max: 1_000,
};

export interface EngineDependencies {
  clock: Clock;
  ids: IdSource;
  log: EventLog;
  transactions: TransactionStore;
  limits?: Partial<EngineLimits>;
  /** How the server is set to decide (decision-scope.ts), e.g. Blnk's queued checks. */
  settings?: Partial<DecisionSettings>;
}

/** What running a command answers: work is never refused; anything else may be. */
export type RunOutcome<K extends CommandOp> = K extends NeverRefusedOp ? { ok: true; value: ResultOf<K>; seq: number } : Outcome<ResultOf<K>>;

/** Dry runs' answer: each command's projection, and what all of them together do to each balance. */
export interface DryRunAnswer {
  projections: Projection[];
  balances: BalanceProjection[];
}

/** A command of an op that has a dry run. */
export type DryRunCommand = CommandOf<DryRunOp>;

export class LedgerEngine {
  readonly state: LedgerState;
  /** Named, read-only queries of the state: what every reader outside engine/ and runtime/ uses. */
  readonly view: LedgerView;
  readonly limits: EngineLimits;
  private readonly settings: DecisionSettings;
  private readonly clock: Clock;
  private readonly ids: IdSource;
  private readonly log: EventLog;
  private readonly pending: PendingWork;

  constructor(dependencies: EngineDependencies) {
    this.clock = dependencies.clock;
    this.ids = dependencies.ids;
    this.log = dependencies.log;
    this.limits = { ...DEFAULT_ENGINE_LIMITS, ...dependencies.limits };
    this.settings = { ...DEFAULT_DECISION_SETTINGS, ...dependencies.settings };
    this.state = new LedgerState(dependencies.transactions);
    this.view = new LedgerView(this.state, () => this.now());
    this.pending = new PendingWork({
      state: this.state,
      limits: this.limits,
      scope: () => this.scope(),
      commit: (events) => this.commit(events),
      actOnHold: (command) => this.run({ op: 'hold.act', ...command }),
    });
  }

  /**
   * Applies an event read back from the log (start-up replay, a follower); nothing is appended. `owned`
   * when the event was just decoded and nothing else holds it (see ApplyOptions); an in-memory log's
   * events are shared and must not be.
   */
  replay(event: LedgerEvent, options: ApplyOptions = {}): void {
    applyEvent(this.state, event, options);
  }

  /**
   * Carries out one command through its operation: admitted, decided, and its events applied and
   * appended as one log record; or refused with a code from the operation's list, nothing written.
   */
  run<K extends CommandOp>(command: CommandOf<K>): RunOutcome<K> {
    return this.carryOut(command) as RunOutcome<K>;
  }

  private carryOut<K extends CommandOp>(command: CommandOf<K>): Outcome<ResultOf<K>> {
    const operation = OPERATIONS[(command as Command).op] as unknown as Operation<CommandOf<K>, ResultOf<K>>;
    if (isWork(operation)) {
      const value = operation.work(this.pending, command, this.now());
      return { ok: true, value, seq: this.log.appendedSeq };
    }
    if (operation.admission) {
      const refusal = admissionRefusal(operation.admission(this.state, command), this.state, this.limits, this.pending);
      if (refusal) return refuse(refusal);
    }
    const scope = this.scope();
    const decided = operation.decide(scope, command);
    if (!decided.ok) return decided;
    const events = scope.toEvents(scope.isEmpty() ? undefined : operation.eventType?.(decided.value));
    const seq = events.length === 0 ? this.log.appendedSeq : this.commit(events);
    // Read right after the commit, before anything else is decided: as of this write's seq.
    if (operation.withBalances && (command as { include_balances?: boolean }).include_balances === true) {
      return { ok: true, value: operation.withBalances(decided.value, this.state), seq };
    }
    return { ok: true, value: decided.value, seq };
  }

  /**
   * Dry runs, one after the other in one scope that is never committed: a later one sees what the
   * earlier ones would have done. Answers each one's projection and the combined effect on every
   * balance they touch. Nothing is drained, queued or written.
   */
  dryRun(commands: DryRunCommand[]): DryRunAnswer {
    const scope = this.scope();
    const projections = commands.map((command) => {
      const operation = OPERATIONS[command.op] as unknown as Decision<DryRunCommand, unknown>;
      const dryRun = operation.dryRun;
      if (!dryRun) throw new Error(`${command.op} has no dry run`);
      const currentFrom = scope.draft.postings.length;
      const decided = operation.decide(scope, dryRun.asDryRun(command));
      return dryRun.project(scope, command, decided, currentFrom);
    });
    return { projections, balances: projectBalances(scope, involvedInPostings(scope), 0) };
  }

  /**
   * Apply, then log, in the same turn, all events in one log record. An invariant failure here is a bug:
   * it propagates and is fatal. The monitors an event fires are decided first, against the state it is
   * applied to, and logged in it.
   */
  private commit(events: LedgerEvent[]): number {
    for (const event of events) {
      const alerts = monitorAlerts(this.state, event);
      if (alerts) event.monitor_alerts = alerts;
      applyEvent(this.state, event);
    }
    return this.log.appendAll(events);
  }

  private scope(): DecisionScope {
    return new DecisionScope(this.state, this.now(), this.ids, this.settings, this.log);
  }

  /** The clock's time, never earlier than the last event: replayed logs stay ordered after a clock step back. */
  private now(): number {
    return Math.max(this.clock.now(), this.state.lastEventAt);
  }
}
