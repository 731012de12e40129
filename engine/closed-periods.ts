// Closed periods (a finance team's month end): a ledger closed through a moment takes no more movement
// dated at or before it. Closing is a command whose event carries the period record, so replicas,
// snapshots and the change feed carry it like any other record, and the record names the position of
// the log's checksum chain it seals (`sealed_seq`, `sealed_hash`: the last event before the close and the
// checksum of the log record ending there, engine/ports.ts EventLog.sealNow). Everything recorded up to
// the seal is all that can ever count at or before `closes_at`, so any figure for a window inside the
// period (a statement, a balance as of a moment) is a function of the log up to the seal: checkable by
// anyone who replays the chain to `sealed_hash`.
//
// Which writes a close can refuse, and why the check costs nothing on the others: `closes_at` must be
// earlier than the engine's time when it closes, and event times never go back, so a movement that counts
// at its event's time (every movement without a transaction `effective_date`: commits and voids of holds,
// refunds, expiries) always falls after every closed period. Only a back-dated movement can fall inside
// one, so the check runs only for a transaction with an effective date, and then it is one map lookup per
// balance it touches (ClosedPeriods.refusal in closed-period-table.ts, which carry-out.ts and
// decide-create.ts call: kept apart from the operation so the carrying out imports no operation). A
// ledger with no closed period costs one comparison of a count.

import type { CommandOf } from './commands.js';
import type { Decision } from './operation.js';
import type { PeriodRecord } from './records.js';
import { reject } from './rejections.js';
import { accept, refuse } from './result.js';

/** Closing a ledger's period through a moment, as the engine runs it. */
export const closePeriodOperation: Decision<CommandOf<'period.close'>, PeriodRecord> = {
  rejections: ['LGR_NOT_FOUND', 'PERIOD_CLOSES_AT_INVALID', 'PERIOD_NOT_AFTER_LAST'],
  decide(scope, command) {
    if (!scope.state.ledgers.has(command.ledger_id)) return refuse(reject('LGR_NOT_FOUND', `ledger ${command.ledger_id} not found`));
    // Strictly before now: a movement of this very moment counts at it, and would land in the period after it closed.
    if (command.closes_at >= scope.now) {
      return refuse(reject('PERIOD_CLOSES_AT_INVALID', `closes_at ${new Date(command.closes_at).toISOString()} is not in the past (now ${new Date(scope.now).toISOString()})`));
    }
    const through = scope.state.periods.closedThrough(command.ledger_id);
    if (command.closes_at <= through) {
      return refuse(reject('PERIOD_NOT_AFTER_LAST', `ledger ${command.ledger_id} is already closed through ${new Date(through).toISOString()}; closes_at must be later`));
    }
    // Sealed last, once nothing can refuse: the log closes its record here, and the close goes into the next.
    const sealed = scope.sealChain();
    const period: PeriodRecord = {
      period_id: scope.ids.next('prd'),
      ledger_id: command.ledger_id,
      closes_at: command.closes_at,
      sealed_seq: sealed.seq,
      sealed_hash: sealed.checksum,
      created_at: scope.now,
    };
    scope.emit({ type: 'period.closed', at: scope.now, periods: [period] });
    return accept(period);
  },
};
