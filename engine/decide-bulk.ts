// Recording many transactions in one request. An atomic batch is decided at once and written as one
// event: every item or none (whatever skip_queue says, since all-or-nothing needs one decision). A
// non-atomic batch is taken in order and stops at the first item that cannot be recorded; the items
// before it stand. Queued items are then applied by their balances' mailboxes like any others.

import type { BulkCommand } from './commands.js';
import { decideCreate } from './decide-create.js';
import type { DecisionScope } from './decision-scope.js';
import type { Rejection } from './rejections.js';

export type BulkStatus = 'APPLIED' | 'INFLIGHT' | 'QUEUED' | 'PARTIAL';

export type BulkOutcome =
  | { kind: 'done'; status: BulkStatus; count: number; failure?: { index: number; rejection: Rejection } }
  | { kind: 'rejected'; index: number; rejection: Rejection };

export function decideBulk(scope: DecisionScope, command: BulkCommand, batchId: string): BulkOutcome {
  const immediate = command.atomic || command.skip_queue;
  for (const [index, item] of command.transactions.entries()) {
    const outcome = decideCreate(
      scope,
      { ...item, inflight: item.inflight || command.inflight, skip_queue: immediate },
      { allowReplay: false, batchId },
    );
    if (outcome.kind === 'rejected') {
      if (command.atomic || index === 0) return { kind: 'rejected', index, rejection: outcome.rejection };
      return { kind: 'done', status: 'PARTIAL', count: index, failure: { index, rejection: outcome.rejection } };
    }
  }
  const status: BulkStatus = !immediate ? 'QUEUED' : command.inflight ? 'INFLIGHT' : 'APPLIED';
  return { kind: 'done', status, count: command.transactions.length };
}
