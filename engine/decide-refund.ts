// Refunding a transaction: the same amount moved back, from the original destination to the original
// source, as a new transaction whose parent is the original and whose reference is `<id>_refund`.
// What can be refunded is what actually moved: an applied transfer, the committed part of a hold, or the
// applied legs of a split (refunded as a split in reverse). A hold voided whole is refunded as Blnk does
// it (its issue 42, a late payment after a void): the voided amount is held again, in the reverse
// direction, as an INFLIGHT refund that can be committed or voided like any hold. Only top-level transactions are refunded
// (not the legs of a split, nor the commits of a hold) so that nothing can be refunded twice by two
// routes. One refund per original: while a queued
// refund waits, the original is locked; once one is applied, another is a conflict. A refund that was
// rejected (say for funds) does not count, so it may be tried again.

import { carryOutNow, eventTypeFor, PARENT_META_KEY, queuedFundsRefusal } from './carry-out.js';
import type { CommandOf, RefundCommand } from './commands.js';
import { metadataSizeRefusal } from './decide-registry.js';
import { lineageProviderProblem } from './fund-lineage.js';
import { newTransaction, type DecisionScope } from './decision-scope.js';
import type { LedgerState } from './ledger-state.js';
import { mergeMetaData } from './metadata.js';
import type { DryRunnable } from './operation.js';
import { involvedIn, projectBalances } from './projection.js';
import { isSplit, type SplitShare, type TransactionRecord } from './records.js';
import { reject } from './rejections.js';
import { accept, refuse, type Decided } from './result.js';
import { assert } from './assert.js';
import { destinationUpTo, inverseRequest, type ExchangeTerms } from './exchange.js';

export interface Refunded {
  transaction: TransactionRecord;
  notes: string[];
}

export function refundReference(originalId: string): string {
  return `${originalId}_refund`;
}

export function decideRefund(scope: DecisionScope, command: RefundCommand): Decided<Refunded> {
  const original = scope.transaction(command.transaction_id);
  if (!original) return refuse(reject('TXN_NOT_FOUND', `transaction ${command.transaction_id} not found`));
  const lock = scope.state.refundLocks.get(original.transaction_id);
  if (lock !== undefined) {
    return refuse(reject('GEN_RESOURCE_LOCKED', `refund ${lock} of ${original.transaction_id} is still queued`));
  }
  const reference = refundReference(original.transaction_id);
  const previous = scope.referenceTaken(reference);
  const previousRecord = previous === undefined ? undefined : scope.transaction(previous);
  if (previousRecord && previousRecord.status !== 'REJECTED') {
    return refuse(reject('GEN_CONFLICT', `transaction ${original.transaction_id} was already refunded by ${previous}`));
  }
  const found = refundableMovement(scope, original);
  if (!found.ok) return found;
  const movement = found.value;
  const notes = [movement.inflight
    ? `restores the ${movement.amount} voided of ${original.transaction_id} as a hold in the reverse direction (Blnk's refund of a voided hold)`
    : `refunds ${movement.amount} of ${original.transaction_id} back to its source`];
  if (command.description === '') notes.push('description copied from the original');
  if (Object.keys(command.meta_data).length > 0) notes.push('metadata merged over the original\'s');
  const metaData = mergeMetaData(original.meta_data, command.meta_data);
  const tooLarge = metadataSizeRefusal(metaData);
  if (tooLarge) return refuse(tooLarge);
  const badTag = lineageProviderProblem(metaData);
  if (badTag) return refuse(reject('TXN_VALIDATION_ERROR', badTag));
  const record = newTransaction({
    transaction_id: scope.ids.next('txn'),
    parent_transaction: original.transaction_id,
    source: movement.source,
    destination: movement.destination,
    reference,
    // An exchange goes back the other way: in the currency it bought, into the one it sold.
    currency: movement.exchange && original.exchange ? original.exchange.destination_currency : original.currency,
    precise_amount: movement.amount,
    precision: movement.exchange && original.exchange ? original.exchange.destination_precision : original.precision,
    description: command.description !== '' ? command.description : original.description,
    meta_data: metaData,
    action: 'refund',
    inflight: movement.inflight,
    skip_queue: command.skip_queue,
    allow_overdraft: command.allow_overdraft ?? false,
    overdraft_limit: (command.overdraft_limit ?? 0n) > 0n ? command.overdraft_limit : undefined,
  }, scope.now);
  if (movement.sources) record.sources = movement.sources;
  if (movement.destinations) record.destinations = movement.destinations;
  if (movement.sources || movement.destinations) record.atomic = true;
  if (movement.exchange) record.exchange = movement.exchange;
  if (!command.skip_queue) {
    const refusal = queuedFundsRefusal(scope, record);
    if (refusal) return refuse(refusal);
    return accept({ transaction: scope.writeQueued(record), notes });
  }
  const final = carryOutNow(scope, record);
  return final.ok ? accept({ transaction: final.value, notes }) : final;
}

/** Refunding a transaction, as the engine runs it. */
export const refundOperation: DryRunnable<CommandOf<'transaction.refund'>, Refunded> = {
  rejections: [
    'TXN_NOT_FOUND', 'GEN_RESOURCE_LOCKED', 'GEN_CONFLICT', 'TXN_NOT_REFUNDABLE', 'META_TOO_LARGE', 'BAL_NOT_FOUND',
    'TXN_INSUFFICIENT_FUNDS', 'TXN_OVERDRAFT_LIMIT_EXCEEDED', 'TXN_VALIDATION_ERROR', 'BAL_LINEAGE_LIMIT_EXCEEDED', 'QUEUE_BACKPRESSURE',
  ],
  admission(state, command) {
    const original = state.transaction(command.transaction_id);
    if (!original) return { kind: 'none' };
    const balances = refundSources(state, original);
    if (!command.skip_queue) return { kind: 'join', balances, items: 1 };
    // With a refund already queued this one is refused (locked): nothing to apply first.
    return state.refundLocks.has(original.transaction_id) ? { kind: 'none' } : { kind: 'drain', balances };
  },
  decide: decideRefund,
  eventType: (value) => eventTypeFor(value.transaction),
  dryRun: {
    asDryRun: (command) => ({ ...command, skip_queue: true }),
    project(scope, command, decided, currentFrom) {
      if (!decided.ok) {
        const original = scope.transaction(command.transaction_id);
        const reversed = original ? [{ ...original, source: original.destination, destination: original.source }] : [];
        return { operation: 'refund', would_apply: false, rejection: decided.rejection, notes: [], balances: projectBalances(scope, involvedIn(scope, reversed), currentFrom) };
      }
      const { transaction, notes } = decided.value;
      return {
        operation: 'refund',
        would_apply: true,
        status: transaction.status,
        transaction,
        notes,
        balances: projectBalances(scope, involvedIn(scope, [transaction]), currentFrom),
      };
    },
  },
};

/** The balances a refund of `original` takes money from: what it paid into. */
function refundSources(state: LedgerState, original: TransactionRecord): string[] {
  if (!isSplit(original)) return original.destination === '' ? [] : [original.destination];
  const destinations = new Set<string>();
  for (const legId of original.legs ?? []) {
    const leg = state.transaction(legId);
    if (leg) destinations.add(leg.destination);
  }
  return [...destinations];
}

interface Movement {
  source: string;
  destination: string;
  amount: bigint;
  /** A voided hold is refunded as a hold the other way, not a transfer (Blnk issue 42). */
  inflight: boolean;
  sources?: SplitShare[];
  destinations?: SplitShare[];
  /** Refunding an exchange: the refund's own terms, the rate inverted and both amounts what moved. */
  exchange?: ExchangeTerms;
}

/** What moving the original back means, or why it cannot be refunded. */
function refundableMovement(scope: DecisionScope, original: TransactionRecord): Decided<Movement> {
  const notRefundable = (why: string): Decided<Movement> =>
    refuse(reject('TXN_NOT_REFUNDABLE', `transaction ${original.transaction_id} cannot be refunded: ${why}`));
  // Refunds happen at the top level only, so no unit can be refunded twice by two routes.
  if (original.action === 'commit' || original.action === 'void') {
    return notRefundable(`it settles part of hold ${original.parent_transaction}; refund the hold instead`);
  }
  const splitParent = original.meta_data[PARENT_META_KEY];
  if (typeof splitParent === 'string' && splitParent !== '' && splitParent === original.parent_transaction) {
    return notRefundable(`it is a leg of split ${splitParent}; refund the split instead`);
  }
  if (isSplit(original)) return reversedSplit(scope, original, notRefundable);
  if (original.exchange !== undefined) return reversedExchange(original, original.exchange, notRefundable);
  const restored = voidedWhole(original);
  const moved = restored ? original.precise_amount : movedAmount(original);
  if (moved === 0n) return notRefundable(nothingMoved(original));
  return accept({ source: original.destination, destination: original.source, amount: moved, inflight: restored });
}

/** What of a transaction moved money: a hold's committed part, an applied transfer's amount, else nothing. */
function movedAmount(record: TransactionRecord): bigint {
  return record.inflight ? (record.committed_amount ?? 0n) : record.status === 'APPLIED' ? record.precise_amount : 0n;
}

/** Why a transaction that moved nothing has nothing to refund. */
function nothingMoved(original: TransactionRecord): string {
  return original.inflight ? 'nothing of the hold was committed, and it is still open' : `it is ${original.status}`;
}

/**
 * A split is refunded as a split in reverse: each balance gets back exactly what its applied legs moved.
 * The shares are fixed amounts, so pairing them again moves every unit back to where it came from.
 */
function reversedSplit(scope: DecisionScope, original: TransactionRecord, notRefundable: (why: string) => Decided<Movement>): Decided<Movement> {
  const paid = new Map<string, bigint>();
  const received = new Map<string, bigint>();
  let total = 0n;
  // A split hold voided whole is restored as a hold the other way, each leg's amount (as a plain hold is).
  const restored = voidedWhole(original);
  for (const legId of original.legs ?? []) {
    const leg = scope.transaction(legId);
    if (!leg) continue;
    const moved = restored ? leg.precise_amount : movedAmount(leg);
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
  return accept({
    source: sources.length === 1 ? (sources[0] as SplitShare).balance_id : '',
    destination: destinations.length === 1 ? (destinations[0] as SplitShare).balance_id : '',
    amount: total,
    sources: sources.length === 1 ? undefined : sources,
    destinations: destinations.length === 1 ? undefined : destinations,
    inflight: restored,
  });
}

/** A hold voided with nothing of it committed: what Blnk's refund restores as a hold the other way. */
function voidedWhole(original: TransactionRecord): boolean {
  return original.inflight && original.status === 'VOID' && (original.committed_amount ?? 0n) === 0n;
}

/**
 * An exchange is refunded as an exchange the other way that moves back exactly what moved on each side:
 * the destination amount of what was settled (all of it for a transfer, the commits' parts for a hold,
 * the whole for a hold voided whole, restored as a hold) into the source amount settled, at the inverse
 * rate. Both amounts are the recorded ones, so nothing is converted again and nothing can round.
 */
function reversedExchange(original: TransactionRecord, terms: ExchangeTerms, notRefundable: (why: string) => Decided<Movement>): Decided<Movement> {
  const restored = voidedWhole(original);
  const moved = restored ? original.precise_amount : movedAmount(original);
  if (moved === 0n) return notRefundable(nothingMoved(original));
  // Defined: a hold's committed total is one its commits reached by exact parts (carry-out.ts).
  const movedThere = destinationUpTo(original, terms, moved);
  assert(movedThere !== undefined, 'an exchange\'s settled amount converts');
  return accept({
    source: original.destination,
    destination: original.source,
    amount: movedThere,
    inflight: restored,
    exchange: { ...inverseRequest(original, terms), destination_precise_amount: moved },
  });
}
