// Engine tests written as decider specifications (the style of Emmett's DeciderSpecification):
// given the events already in the log, when a command is decided, then these events are appended, or
// this rejection comes back and nothing is. The given events are replayed into a fresh engine (the rig
// of engine-rig.ts), so a spec states the whole history it depends on.

import type { Test } from 'tap';
import type { LedgerEngine, Outcome } from '../../engine/ledger-engine.js';
import type { DecisionSettings } from '../../engine/decision-scope.js';
import type { LedgerEvent } from '../../engine/events.js';
import type { RejectionCode } from '../../engine/rejections.js';
import { engineRig, type EngineRig } from './engine-rig.js';

export interface SpecWhen {
  /** The events appended by the command match these, in order (partial objects, as t.match compares). */
  then(expected: Array<Partial<LedgerEvent> | Record<string, unknown>>): EngineRig;
  /** The command is refused with this code, and the log is unchanged. */
  thenRejected(code: RejectionCode): EngineRig;
}

export interface SpecGiven {
  when(command: (engine: LedgerEngine) => Outcome<unknown> | number | undefined): SpecWhen;
}

export function given(
  t: Test,
  history: LedgerEvent[] | ((engine: LedgerEngine) => void),
  settings: Partial<DecisionSettings> = {},
): SpecGiven {
  const rig = engineRig({}, settings);
  if (typeof history === 'function') history(rig.engine);
  else {
    for (const event of history) {
      rig.engine.replay(event);
      rig.log.appendAll([event]);
    }
  }
  return {
    when(command) {
      const before = rig.log.appendedSeq;
      const outcome = command(rig.engine);
      const appended = rig.log.events.slice(before);
      return {
        then(expected) {
          if (typeof outcome === 'object' && outcome !== null && !outcome.ok) t.fail(`refused: ${outcome.rejection.code} ${outcome.rejection.message}`);
          t.equal(appended.length, expected.length, `${expected.length} event(s) appended`);
          expected.forEach((event, index) => t.match(appended[index], event, `event ${index + 1}`));
          return rig;
        },
        thenRejected(code) {
          t.match(outcome, { ok: false, rejection: { code } }, `refused with ${code}`);
          t.equal(appended.length, 0, 'nothing appended');
          return rig;
        },
      };
    },
  };
}
