// The one place that decides whether an operation may go ahead (operation.ts Admission): a
// synchronous operation first applies what its balances have queued, so it stays in order behind it;
// a queued one must find room in the mailboxes it joins (a full one is QUEUE_BACKPRESSURE, refused
// rather than buffered without bound).

import type { LedgerState } from './ledger-state.js';
import type { Admission } from './operation.js';
import { reject, type Rejection } from './rejections.js';

export interface AdmissionLimits {
  mailbox_depth_max: number;
  queued_total_max: number;
}

/** Carries out the admission; returns why the operation is refused, if it is. */
export function admissionRefusal(
  admission: Admission,
  state: LedgerState,
  limits: AdmissionLimits,
  queue: { drain(balanceIds: Iterable<string>): void },
): Rejection | undefined {
  switch (admission.kind) {
    case 'none':
      return undefined;
    case 'drain':
      queue.drain(admission.balances);
      return undefined;
    case 'join':
      return queueRefusal(state, limits, admission.balances, admission.items);
  }
}

function queueRefusal(state: LedgerState, limits: AdmissionLimits, balanceIds: Iterable<string>, items: number): Rejection | undefined {
  if (state.mailboxes.size + items > limits.queued_total_max) {
    return reject('QUEUE_BACKPRESSURE', `${state.mailboxes.size} transactions are queued; try again shortly`);
  }
  for (const balanceId of balanceIds) {
    if (state.mailboxes.depth(balanceId) >= limits.mailbox_depth_max) {
      return reject('QUEUE_BACKPRESSURE', `balance ${balanceId} has ${limits.mailbox_depth_max} transactions queued`);
    }
  }
  return undefined;
}
