// Engine tests written as decider specifications (the style of Emmett's DeciderSpecification):
// given the events already in the log, when a command is decided, then these events are appended, or
// this rejection comes back and nothing is. The given events are replayed into a fresh engine (the rig
// of engine-rig.ts), so a spec states the whole history it depends on. `given` answers the rig as the
// history left it; a spec answers it with the command's outcome. `when` on either decides the next
// command on the history so far, so a life of several steps (a hold committed in parts, say) is a
// chain of specs, each checked for its events, with checks of the state between them.

import type { Test } from 'tap';
import type { EngineLimits, LedgerEngine, Outcome } from '../../engine/ledger-engine.js';
import type { DecisionSettings } from '../../engine/decision-scope.js';
import type { LedgerEvent } from '../../engine/events.js';
import { REJECTION_REASONS, type RejectionCode } from '../../engine/rejections.js';
import { balanceAmounts, engineRig, type EngineRig } from './engine-rig.js';

/** Events as a spec expects them: partial objects, compared in order as t.match does. */
export type Expected = Array<Partial<LedgerEvent> | Record<string, unknown>>;

/** A command as a spec sends it: through the engine, with the rig at hand for its clock and helpers. */
export type SpecCommand<R> = (engine: LedgerEngine, rig: EngineRig) => R;

export interface SpecGiven {
  when<R extends Outcome<unknown> | number | undefined>(command: SpecCommand<R>): SpecWhen<R>;
}

export interface SpecWhen<R> {
  /** The events appended by the command match these, in order (partial objects, as t.match compares). */
  then(expected: Expected): SpecRig<R>;
  /**
   * The command is refused with this code and its stable reason; nothing is logged and no balance moves.
   * A synchronous command first carries out what is queued on its balances (its admission): `drained`
   * are the events that work logged before the command itself was refused.
   */
  thenRejected(code: RejectionCode, drained?: Expected): SpecRig<R>;
}

/** The rig after a spec, with the command's outcome; `when` on it continues the same history. */
export type SpecRig<R> = EngineRig & SpecGiven & { outcome: R };

export function given(
  t: Test,
  history: LedgerEvent[] | ((engine: LedgerEngine, rig: EngineRig) => void),
  settings: Partial<DecisionSettings> = {},
  limits: Partial<EngineLimits> = {},
): EngineRig & SpecGiven {
  const rig = engineRig(limits, settings);
  if (typeof history === 'function') history(rig.engine, rig);
  else {
    for (const event of history) {
      rig.engine.replay(event);
      rig.log.appendAll([event]);
    }
  }
  return { ...rig, ...specOn(t, rig) };
}

/** Specs on a rig as it stands, reported to `t`: for a subtest that continues its parent's history. */
export function specOn(t: Test, rig: EngineRig): SpecGiven {
  return {
    when(command) {
      const before = rig.log.appendedSeq;
      const balancesBefore = balanceAmounts(rig.engine.state);
      const outcome = command(rig.engine, rig);
      const appended = rig.log.events.slice(before);
      const answer = { ...rig, ...specOn(t, rig), outcome };
      return {
        then(expected) {
          const refusal = refusalOf(outcome);
          if (refusal) t.fail(`refused: ${refusal.code} ${refusal.message}`);
          matchEvents(t, appended, expected);
          return answer;
        },
        thenRejected(code, drained = []) {
          t.match(outcome, { ok: false, rejection: { code, reason: REJECTION_REASONS[code], message: String } }, `refused with ${code}`);
          if (drained.length > 0) matchEvents(t, appended, drained);
          else {
            t.equal(appended.length, 0, 'nothing appended');
            t.same(balanceAmounts(rig.engine.state), balancesBefore, 'no balance created or changed');
          }
          return answer;
        },
      };
    },
  };
}

function matchEvents(t: Test, appended: LedgerEvent[], expected: Expected): void {
  t.equal(appended.length, expected.length, `${expected.length} event(s) appended`);
  expected.forEach((event, index) => t.match(appended[index], event, `event ${index + 1}`));
}

function refusalOf(outcome: unknown): { code: string; message: string } | undefined {
  if (typeof outcome !== 'object' || outcome === null || !('rejection' in outcome)) return undefined;
  return outcome.rejection as { code: string; message: string };
}
