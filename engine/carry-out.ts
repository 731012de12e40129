// Carrying out a transaction that has been accepted: a queued one whose turn came, a scheduled one that
// fell due, or a synchronous one right away (the same code for all three: a synchronous request is a
// queued one whose turn is now). Funds are checked now, against the balances as everything
// before it left them. The outcome is written into the decision scope as new versions of the records:
//   plain transfer  -> APPLIED, or INFLIGHT for a hold, or REJECTED with the reason;
//   split           -> one leg per source/destination pairing, then the parent's status from its legs;
//   commit / void   -> a settled or released part of a hold, and the hold's new state.
// A refund is an ordinary transfer (or split) in the reverse direction, so it needs nothing special here.
// Fund lineage (decide-lineage.ts) is decided with the money: what a transfer or hold draws on and brings,
// and what a commit settles or a void releases of a hold's tagged funds.

import type { DecisionScope } from './decision-scope.js';
import { lineageOfHoldAction, lineageOfMovement } from './decide-lineage.js';
import type { EventType } from './events.js';
import { newTransaction, newTransactionIds } from './decision-scope.js';
import { commitPostings, effectiveAt, holdPostings, transferPostings, voidPostings } from './posting-draft.js';
import type { Precondition } from './precondition.js';
import { preconditionRefusal } from './preconditions.js';
import { heldAmount, isSplit, mailboxBalanceOf, type SplitShare, type TransactionRecord } from './records.js';
import { reject, type Rejection } from './rejections.js';
import { accept, refuse, type Decided } from './result.js';
import { pairShares } from './split-distribution.js';
import { transactionHash } from './transaction-hash.js';
import { destinationPart, exchangeBalances, exchangePostings, type ExchangeTerms } from './exchange.js';

/** Metadata key under which a leg names its split parent. */
export const PARENT_META_KEY = 'QUEUED_PARENT_TRANSACTION';

/**
 * The child transaction that commits or voids (part of) a hold: QUEUED, from the hold's source to its
 * destination, with the hold's details. A commit amount of 0 means whatever is still held.
 */
export function holdActionChild(
  scope: DecisionScope,
  hold: TransactionRecord,
  action: 'commit' | 'void',
  amount: bigint,
  skipQueue: boolean,
  preconditions?: Precondition[],
): TransactionRecord {
  return newTransaction({
    ...newTransactionIds(scope.ids),
    parent_transaction: hold.transaction_id,
    source: mailboxBalanceOf(hold),
    destination: hold.destination,
    currency: hold.currency,
    precise_amount: action === 'commit' ? amount : 0n,
    precision: hold.precision,
    description: hold.description,
    meta_data: hold.meta_data,
    action,
    skip_queue: skipQueue,
    preconditions,
  }, scope.now);
}

/**
 * Carries out `record` at once for a synchronous request: its final version, or its rejection with the
 * scope rolled back to `mark` (by default, to just before it), so nothing of a refused request stays.
 */
export function carryOutNow(scope: DecisionScope, record: TransactionRecord, mark = scope.mark()): Decided<TransactionRecord> {
  const { final, refusal } = carryOutChecked(scope, record);
  if (!final.rejection) return accept(final);
  scope.rollback(mark);
  // The refusal in full (a failed precondition's details), where the record keeps its three fields.
  return refuse(refusal ?? final.rejection);
}

/**
 * Why a transaction may not join its mailbox, with the queued checks on: each balance it draws from must
 * cover its part after what is already queued against it (Blnk's canProcessTransaction with the queued
 * debit subtracted), by the transaction's own overdraft terms. Without the checks, nothing: funds are
 * checked when its turn comes.
 */
export function queuedFundsRefusal(scope: DecisionScope, record: TransactionRecord): Rejection | undefined {
  if (!scope.settings.queued_checks) return undefined;
  const parts = record.sources ? record.sources.map((share): [string, bigint] => [share.balance_id, share.precise_amount]) : [[record.source, record.precise_amount] as [string, bigint]];
  for (const [balanceId, amount] of parts) {
    const balance = scope.balance(balanceId);
    if (!balance) return reject('BAL_NOT_FOUND', `balance ${balanceId} not found`);
    const shortfall = scope.draft.checkFunds(balance, amount, record, scope.queuedAgainst(balanceId));
    if (shortfall) return shortfall;
  }
  return undefined;
}

/** Carries out `record` in the scope and returns its final version (also written to the scope). */
export function carryOut(scope: DecisionScope, record: TransactionRecord): TransactionRecord {
  return carryOutChecked(scope, record).final;
}

/**
 * Carries out `record`, then checks its preconditions (preconditions.ts) on the balances as it leaves
 * them: when one fails, what it did is rolled back and it is written REJECTED instead. A record without
 * preconditions pays one comparison for them.
 */
function carryOutChecked(scope: DecisionScope, record: TransactionRecord): { final: TransactionRecord; refusal?: Rejection } {
  if (record.preconditions === undefined) return { final: carryOutMovement(scope, record) };
  const mark = scope.mark();
  const final = carryOutMovement(scope, record);
  if (final.status === 'REJECTED') return { final };
  const currencies = final.exchange ? [record.currency, final.exchange.destination_currency] : [record.currency];
  const refusal = preconditionRefusal(scope, record.preconditions, currencies);
  if (!refusal) return { final };
  scope.rollback(mark);
  return { final: scope.write(rejected(record, refusal)), refusal };
}

function carryOutMovement(scope: DecisionScope, record: TransactionRecord): TransactionRecord {
  if (record.action === 'commit' || record.action === 'void') return carryOutHoldAction(scope, record);
  if (isSplit(record)) return carryOutSplit(scope, record);
  return scope.write(settle(scope, record));
}

/** A plain transfer or hold, with its funds check. Does not write. */
function settle(scope: DecisionScope, record: TransactionRecord): TransactionRecord {
  const source = scope.balance(record.source);
  if (!source) return rejected(record, reject('BAL_NOT_FOUND', `balance ${record.source} not found`));
  const at = record.effective_date ?? 0;
  // A queued or scheduled transaction whose ledger closed the period it is dated in since it was accepted.
  if (at > 0) {
    const closed = scope.state.periods.refusal((id) => scope.balance(id), [record.source, record.destination], at);
    if (closed) return rejected(record, closed);
  }
  const shortfall = scope.draft.checkFunds(source, record.precise_amount, record, scope.queuedAgainst(source.balance_id));
  if (shortfall) return rejected(record, shortfall);
  if (record.exchange !== undefined) return settleExchange(scope, record, record.exchange, at);
  const lineage = lineageOfMovement(scope, record);
  if (lineage && 'reason' in lineage) return rejected(record, lineage);
  // Lineage fields last, in the order the log reads a record's optional fields back (codec/event-codec.ts).
  if (record.inflight) {
    scope.draft.add(effectiveAt(holdPostings(record.source, record.destination, record.precise_amount), at));
    return lineage ? { ...record, status: 'INFLIGHT', committed_amount: 0n, ...lineage } : { ...record, status: 'INFLIGHT', committed_amount: 0n };
  }
  scope.draft.add(effectiveAt(transferPostings(record.source, record.destination, record.precise_amount), at));
  return lineage ? { ...record, status: 'APPLIED', ...lineage } : { ...record, status: 'APPLIED' };
}

/**
 * An exchange (exchange.ts), funds checked: the source pays into its currency's exchange balance and the
 * destination's currency's exchange balance pays the destination. The source's tagged funds (fund
 * lineage) are spent as into a balance that tracks none: provider tags do not cross currencies, and the
 * destination is credited untagged. Does not write.
 */
function settleExchange(scope: DecisionScope, record: TransactionRecord, terms: ExchangeTerms, at: number): TransactionRecord {
  const via = exchangeBalances(scope, record.currency, terms.destination_currency);
  if (via.source_side === record.source || via.destination_side === record.destination) {
    return rejected(record, reject('TXN_SAME_SOURCE_DESTINATION', 'an exchange balance cannot be a side of an exchange through it'));
  }
  // The exchange balances' ledger (the general one) may have closed the period it is dated in.
  if (at > 0) {
    const closed = scope.state.periods.refusal((id) => scope.balance(id), [via.source_side, via.destination_side], at);
    if (closed) return rejected(record, closed);
  }
  const lineage = lineageOfMovement(scope, { ...record, destination: via.source_side });
  if (lineage && 'reason' in lineage) return rejected(record, lineage);
  const step = record.inflight ? 'hold' : 'transfer';
  scope.draft.add(effectiveAt(exchangePostings(step, record.source, record.destination, via, record.precise_amount, terms.destination_precise_amount), at));
  const settled: TransactionRecord = record.inflight ? { ...record, status: 'INFLIGHT', committed_amount: 0n } : { ...record, status: 'APPLIED' };
  return lineage ? { ...settled, ...lineage } : settled;
}

function carryOutSplit(scope: DecisionScope, parent: TransactionRecord): TransactionRecord {
  const sources = sharesOf(parent.sources, parent.source, parent.precise_amount);
  const destinations = sharesOf(parent.destinations, parent.destination, parent.precise_amount);
  const flows = pairShares(sources.map((share) => share.precise_amount), destinations.map((share) => share.precise_amount));
  // One object for every leg (records are never changed in place): the log packs it once per split.
  const legMeta = { ...parent.meta_data, [PARENT_META_KEY]: parent.transaction_id };
  const legs = flows.map((flow) => newTransaction({
    ...newTransactionIds(scope.ids),
    parent_transaction: parent.transaction_id,
    source: (sources[flow.sourceIndex] as SplitShare).balance_id,
    destination: (destinations[flow.destinationIndex] as SplitShare).balance_id,
    currency: parent.currency,
    precise_amount: flow.amount,
    precision: parent.precision,
    description: parent.description,
    allow_overdraft: parent.allow_overdraft,
    // Each source's leg is checked against the parent's terms, as Blnk checks each split transaction.
    overdraft_limit: parent.overdraft_limit,
    inflight: parent.inflight,
    skip_queue: parent.skip_queue,
    // A split hold's expiry and auto-commit act on the parent, which closes all its legs at once.
    meta_data: legMeta,
    batch_id: parent.batch_id,
    effective_date: parent.effective_date,
  }, scope.now));
  const mark = scope.mark();
  const settled: TransactionRecord[] = [];
  let firstFailure: Rejection | undefined;
  for (const leg of legs) {
    const outcome = settle(scope, leg);
    if (outcome.status === 'REJECTED') {
      firstFailure ??= outcome.rejection;
      if (parent.atomic) break;
    }
    settled.push(outcome);
  }
  const legIds = legs.map((leg) => leg.transaction_id);
  if (firstFailure && parent.atomic) {
    // All or nothing: nothing moves, and every leg is recorded as rejected for the same reason.
    scope.rollback(mark);
    for (const leg of legs) scope.write(rejected(leg, firstFailure));
    return scope.write({ ...rejected(parent, firstFailure), legs: legIds });
  }
  for (const leg of settled) scope.write(leg);
  const moved = settled.some((leg) => leg.status !== 'REJECTED');
  const final: TransactionRecord = { ...parent, status: !moved ? 'REJECTED' : parent.inflight ? 'INFLIGHT' : 'APPLIED', legs: legIds };
  if (!moved && firstFailure) final.rejection = firstFailure;
  return scope.write(final);
}

/** A side given as one balance is a single share of the whole amount. */
function sharesOf(shares: SplitShare[] | undefined, balanceId: string, total: bigint): SplitShare[] {
  return shares ?? [{ identifier: balanceId, balance_id: balanceId, distribution: 'left', precise_amount: total }];
}

function carryOutHoldAction(scope: DecisionScope, action: TransactionRecord): TransactionRecord {
  const target = scope.transaction(action.parent_transaction);
  if (!target) return scope.write(rejected(action, reject('TXN_NOT_FOUND', `transaction ${action.parent_transaction} not found`)));
  if (isSplit(target)) return carryOutSplitHoldAction(scope, action, target);
  const refusal = holdActionRefusal(target, action.action as 'commit' | 'void', action.precise_amount);
  if (refusal) return scope.write(rejected(action, refusal));
  const child = closeOnHold(scope, action, target);
  refreshSplitParent(scope, target.parent_transaction);
  return child;
}

/** Settles or releases (part of) one open hold, writing the hold's new version and the child. */
function closeOnHold(scope: DecisionScope, action: TransactionRecord, hold: TransactionRecord): TransactionRecord {
  if (hold.exchange !== undefined) return closeOnExchangeHold(scope, action, hold, hold.exchange);
  const held = heldAmount(hold);
  const tagged = hold.fund_allocation !== undefined || hold.lineage_provider !== undefined;
  if (action.action === 'void') {
    scope.draft.add(voidPostings(hold.source, hold.destination, held));
    if (tagged) lineageOfHoldAction(scope, hold, 'void', held);
    scope.write({ ...hold, status: 'VOID' });
    return scope.write({ ...withAmount(action, held), status: 'VOID' });
  }
  const amount = action.precise_amount === 0n ? held : action.precise_amount;
  const committed = (hold.committed_amount ?? 0n) + amount;
  scope.draft.add(commitPostings(hold.source, hold.destination, amount));
  const settled: TransactionRecord = { ...withAmount(action, amount), status: 'APPLIED' };
  if (tagged) Object.assign(settled, lineageOfHoldAction(scope, hold, 'commit', amount));
  scope.write({ ...hold, committed_amount: committed, status: committed === hold.precise_amount ? 'APPLIED' : 'INFLIGHT' });
  return scope.write(settled);
}

/**
 * Settles or releases (part of) an exchange hold: the source's part as for any hold, and the destination's
 * part by exchange.ts destinationPart (the difference of the destination amounts of the running totals
 * before and after), which the child record shows as its destination amount. An inexact part of an
 * exchange that names no rounding is refused (TXN_EXCHANGE_INEXACT); the rest, or the whole, never is.
 */
function closeOnExchangeHold(scope: DecisionScope, action: TransactionRecord, hold: TransactionRecord, terms: ExchangeTerms): TransactionRecord {
  const held = heldAmount(hold);
  const before = hold.committed_amount ?? 0n;
  const amount = action.action === 'void' ? held : action.precise_amount === 0n ? held : action.precise_amount;
  const part = destinationPart(hold, terms, before, action.action === 'void' ? hold.precise_amount : before + amount);
  if (typeof part !== 'bigint') return scope.write(rejected(action, part));
  const via = exchangeBalances(scope, hold.currency, terms.destination_currency);
  const tagged = hold.fund_allocation !== undefined || hold.lineage_provider !== undefined;
  // Lineage as settleExchange drew it: towards the source's exchange balance, which tracks none.
  const lineageHold = tagged ? { ...hold, destination: via.source_side } : hold;
  if (action.action === 'void') {
    scope.draft.add(exchangePostings('void', hold.source, hold.destination, via, held, part));
    if (tagged) lineageOfHoldAction(scope, lineageHold, 'void', held);
    scope.write({ ...hold, status: 'VOID' });
    return scope.write({ ...withAmount(action, held), status: 'VOID', exchange: { ...terms, destination_precise_amount: part } });
  }
  const committed = before + amount;
  scope.draft.add(exchangePostings('commit', hold.source, hold.destination, via, amount, part));
  const settled: TransactionRecord = { ...withAmount(action, amount), status: 'APPLIED' };
  if (tagged) Object.assign(settled, lineageOfHoldAction(scope, lineageHold, 'commit', amount));
  settled.exchange = { ...terms, destination_precise_amount: part };
  scope.write({ ...hold, committed_amount: committed, status: committed === hold.precise_amount ? 'APPLIED' : 'INFLIGHT' });
  return scope.write(settled);
}

/** Commit or void of a split hold acts on every leg still open; partial amounts are refused upstream. */
function carryOutSplitHoldAction(scope: DecisionScope, action: TransactionRecord, parent: TransactionRecord): TransactionRecord {
  const refusal = holdActionRefusal(parent, action.action as 'commit' | 'void', 0n);
  if (refusal) return scope.write(rejected(action, refusal));
  let total = 0n;
  for (const legId of parent.legs ?? []) {
    const leg = scope.transaction(legId);
    if (!leg || leg.status !== 'INFLIGHT') continue;
    const legAction = holdActionChild(scope, leg, action.action as 'commit' | 'void', 0n, action.skip_queue);
    total += closeOnHold(scope, legAction, leg).precise_amount;
  }
  scope.write(parentFromLegs(scope, parent));
  return scope.write({ ...withAmount(action, total), status: action.action === 'void' ? 'VOID' : 'APPLIED' });
}

/** When the last open leg of a split hold closes on its own, the parent closes with it. */
function refreshSplitParent(scope: DecisionScope, parentId: string): void {
  if (parentId === '') return;
  const parent = scope.transaction(parentId);
  if (!parent || !isSplit(parent) || parent.status !== 'INFLIGHT') return;
  const refreshed = parentFromLegs(scope, parent);
  if (refreshed.status !== 'INFLIGHT') scope.write(refreshed);
}

/**
 * A split hold's state follows its legs: open while any leg is open; once none is, APPLIED if anything
 * was committed and VOID if nothing was.
 */
function parentFromLegs(scope: DecisionScope, parent: TransactionRecord): TransactionRecord {
  let open = false;
  let committed = 0n;
  for (const legId of parent.legs ?? []) {
    const leg = scope.transaction(legId);
    if (!leg) continue;
    if (leg.status === 'INFLIGHT') open = true;
    committed += leg.committed_amount ?? 0n;
  }
  const status = open ? 'INFLIGHT' : committed > 0n ? 'APPLIED' : 'VOID';
  return { ...parent, status, committed_amount: committed };
}

/** The record with its amount settled at processing time; the hash covers the amount, so it follows. */
function withAmount(record: TransactionRecord, amount: bigint): TransactionRecord {
  if (record.precise_amount === amount) return record;
  return { ...record, precise_amount: amount, hash: transactionHash({ ...record, precise_amount: amount }) };
}

/**
 * Why a commit or void of `target` cannot happen, if it cannot. A hold that is already closed says how
 * it was closed; anything that was never a hold is not inflight.
 */
export function holdActionRefusal(target: TransactionRecord, action: 'commit' | 'void', amount: bigint): Rejection | undefined {
  if (!target.inflight) return reject('TXN_NOT_INFLIGHT', `transaction ${target.transaction_id} is not an inflight transaction`);
  if (target.status === 'VOID') return reject('TXN_ALREADY_VOIDED', `transaction ${target.transaction_id} was already voided`);
  if (target.status === 'APPLIED') return reject('TXN_ALREADY_COMMITTED', `transaction ${target.transaction_id} was already committed`);
  if (target.status !== 'INFLIGHT') {
    return reject('TXN_NOT_INFLIGHT', `transaction ${target.transaction_id} is ${target.status}, not INFLIGHT`);
  }
  if (action === 'commit' && amount > heldAmount(target)) {
    return reject('TXN_COMMIT_AMOUNT_EXCEEDED', `commit of ${amount} exceeds the ${heldAmount(target)} still held`);
  }
  return undefined;
}

function rejected(record: TransactionRecord, rejection: Rejection): TransactionRecord {
  // Only the three fields: a rejection stored on a record is exactly what the log keeps of it.
  return { ...record, status: 'REJECTED', rejection: { code: rejection.code, reason: rejection.reason, message: rejection.message } };
}

/** Names an event after what happened to its main transaction, which is what hooks and logs care about. */
export function eventTypeFor(record: TransactionRecord): EventType {
  switch (record.status) {
    case 'QUEUED': return 'transaction.queued';
    case 'SCHEDULED': return 'transaction.scheduled';
    case 'INFLIGHT': return 'transaction.inflight';
    case 'VOID': return 'transaction.voided';
    case 'REJECTED': return 'transaction.rejected';
    case 'APPLIED': return 'transaction.applied';
  }
}
