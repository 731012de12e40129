// Refunding a transaction: the same amount moved back, from the original destination to the original
// source, as a new transaction whose parent is the original and whose reference is `<id>_refund`.
// What can be refunded is what actually moved: an applied transfer, the committed part of a hold, or the
// applied legs of a split (refunded as a split in reverse). Only top-level transactions are refunded
// (not the legs of a split, nor the commits of a hold) so that nothing can be refunded twice by two
// routes. One refund per original: while a queued
// refund waits, the original is locked; once one is applied, another is a conflict. A refund that was
// rejected (say for funds) does not count, so it may be tried again.

import { metadataSizeRefusal } from './decide-registry.js';
import { mergeMetaData } from './metadata.js';
import type { RefundCommand } from './commands.js';
import { newTransaction, type DecisionScope } from './decision-scope.js';
import { PARENT_META_KEY, processPending } from './process-pending.js';
import { isSplit, type SplitShare, type TransactionRecord } from './records.js';
import { reject, type Rejection } from './rejections.js';

export type RefundOutcome =
  | { kind: 'done'; transaction: TransactionRecord; notes: string[] }
  | { kind: 'rejected'; rejection: Rejection };

export function refundReference(originalId: string): string {
  return `${originalId}_refund`;
}

export function decideRefund(scope: DecisionScope, command: RefundCommand): RefundOutcome {
  const original = scope.transaction(command.transaction_id);
  if (!original) return rejected(reject('TXN_NOT_FOUND', `transaction ${command.transaction_id} not found`));
  const lock = scope.state.refundLocks.get(original.transaction_id);
  if (lock !== undefined) {
    return rejected(reject('GEN_RESOURCE_LOCKED', `refund ${lock} of ${original.transaction_id} is still queued`));
  }
  const reference = refundReference(original.transaction_id);
  const previous = scope.referenceTaken(reference);
  const previousRecord = previous === undefined ? undefined : scope.transaction(previous);
  if (previousRecord && previousRecord.status !== 'REJECTED') {
    return rejected(reject('GEN_CONFLICT', `transaction ${original.transaction_id} was already refunded by ${previous}`));
  }
  const movement = refundableMovement(scope, original);
  if ('code' in movement) return rejected(movement);
  const notes = [`refunds ${movement.amount} of ${original.transaction_id} back to its source`];
  if (command.description === '') notes.push('description copied from the original');
  if (Object.keys(command.meta_data).length > 0) notes.push('metadata merged over the original\'s');
  const metaData = mergeMetaData(original.meta_data, command.meta_data);
  const tooLarge = metadataSizeRefusal(metaData);
  if (tooLarge) return rejected(tooLarge);
  const record = newTransaction({
    transaction_id: scope.ids.next('txn'),
    parent_transaction: original.transaction_id,
    source: movement.source,
    destination: movement.destination,
    reference,
    currency: original.currency,
    precise_amount: movement.amount,
    precision: original.precision,
    description: command.description !== '' ? command.description : original.description,
    meta_data: metaData,
    action: 'refund',
    skip_queue: command.skip_queue,
  }, scope.now);
  if (movement.sources) record.sources = movement.sources;
  if (movement.destinations) record.destinations = movement.destinations;
  if (movement.sources || movement.destinations) record.atomic = true;
  if (!command.skip_queue) return { kind: 'done', transaction: scope.write(record), notes };
  const mark = scope.mark();
  const final = processPending(scope, record);
  if (final.status === 'REJECTED') {
    scope.rollback(mark);
    const info = final.rejection as Rejection;
    return rejected(reject(info.code as Rejection['code'], info.message));
  }
  return { kind: 'done', transaction: final, notes };
}

interface Movement {
  source: string;
  destination: string;
  amount: bigint;
  sources?: SplitShare[];
  destinations?: SplitShare[];
}

/** What moving the original back means, or why it cannot be refunded. */
function refundableMovement(scope: DecisionScope, original: TransactionRecord): Movement | Rejection {
  const notRefundable = (why: string): Rejection =>
    reject('TXN_NOT_REFUNDABLE', `transaction ${original.transaction_id} cannot be refunded: ${why}`);
  // Refunds happen at the top level only, so no unit can be refunded twice by two routes.
  if (original.action === 'commit' || original.action === 'void') {
    return notRefundable(`it settles part of hold ${original.parent_transaction}; refund the hold instead`);
  }
  const splitParent = original.meta_data[PARENT_META_KEY];
  if (typeof splitParent === 'string' && splitParent !== '' && splitParent === original.parent_transaction) {
    return notRefundable(`it is a leg of split ${splitParent}; refund the split instead`);
  }
  if (isSplit(original)) return reversedSplit(scope, original, notRefundable);
  const moved = original.inflight ? (original.committed_amount ?? 0n) : original.status === 'APPLIED' ? original.precise_amount : 0n;
  if (moved === 0n) return notRefundable(original.inflight ? 'nothing of the hold was committed' : `it is ${original.status}`);
  return { source: original.destination, destination: original.source, amount: moved };
}

/**
 * A split is refunded as a split in reverse: each balance gets back exactly what its applied legs moved.
 * The shares are fixed amounts, so pairing them again moves every unit back to where it came from.
 */
function reversedSplit(scope: DecisionScope, original: TransactionRecord, notRefundable: (why: string) => Rejection): Movement | Rejection {
  const paid = new Map<string, bigint>();
  const received = new Map<string, bigint>();
  let total = 0n;
  for (const legId of original.legs ?? []) {
    const leg = scope.transaction(legId);
    if (!leg) continue;
    const moved = leg.inflight ? (leg.committed_amount ?? 0n) : leg.status === 'APPLIED' ? leg.precise_amount : 0n;
    if (moved === 0n) continue;
    paid.set(leg.source, (paid.get(leg.source) ?? 0n) + moved);
    received.set(leg.destination, (received.get(leg.destination) ?? 0n) + moved);
    total += moved;
  }
  if (total === 0n) return notRefundable('none of its legs moved any money');
  const shares = (amounts: Map<string, bigint>): SplitShare[] =>
    [...amounts].map(([balanceId, amount]) => ({ identifier: balanceId, balance_id: balanceId, distribution: amount.toString(), precise_amount: amount }));
  const sources = shares(received);
  const destinations = shares(paid);
  return {
    source: sources.length === 1 ? (sources[0] as SplitShare).balance_id : '',
    destination: destinations.length === 1 ? (destinations[0] as SplitShare).balance_id : '',
    amount: total,
    sources: sources.length === 1 ? undefined : sources,
    destinations: destinations.length === 1 ? undefined : destinations,
  };
}

function rejected(rejection: Rejection): RefundOutcome {
  return { kind: 'rejected', rejection };
}
