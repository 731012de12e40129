// Deciding a new transaction: enforce reference uniqueness (an identical retry gets the original back),
// resolve the balances (creating `@name` balances on first use), work out split shares, and then either
// schedule it, queue it behind its source balance, or carry it out at once (skip_queue).

import { canonicalJson } from './canonical-json.js';
import type { CreateTransactionCommand, ShareCommand } from './commands.js';
import { newTransaction, newTransactionIds, type DecisionScope } from './decision-scope.js';
import { processPending } from './process-pending.js';
import type { SplitShare, TransactionRecord } from './records.js';
import { reject, type Rejection } from './rejections.js';
import { distribute } from './split-distribution.js';

export type CreateOutcome =
  | { kind: 'new'; transaction: TransactionRecord }
  | { kind: 'existing'; transaction: TransactionRecord }
  | { kind: 'rejected'; rejection: Rejection };

export interface CreateOptions {
  /** Whether a reused reference with an identical request answers with the original (single creates). */
  allowReplay: boolean;
  batchId?: string;
}

/**
 * Decides one new transaction into the scope. On rejection the scope is left as it was. For a
 * synchronous transaction whose funds check fails, the outcome is the rejection (nothing is recorded).
 */
export function decideCreate(scope: DecisionScope, command: CreateTransactionCommand, options: CreateOptions): CreateOutcome {
  if (command.reference !== '') {
    const existingId = scope.referenceTaken(command.reference);
    if (existingId !== undefined) return replayOrConflict(scope, existingId, command, options.allowReplay);
  }
  const mark = scope.mark();
  const record = buildRecord(scope, command, options.batchId);
  if ('code' in record) {
    scope.rollback(mark);
    return { kind: 'rejected', rejection: record };
  }
  if (command.scheduled_for > scope.now) return { kind: 'new', transaction: scope.write({ ...record, status: 'SCHEDULED' }) };
  if (!command.skip_queue) return { kind: 'new', transaction: scope.write(record) };
  const final = processPending(scope, record);
  if (final.status === 'REJECTED') {
    scope.rollback(mark);
    const rejection = final.rejection as Rejection;
    return { kind: 'rejected', rejection: reject(rejection.code as Rejection['code'], rejection.message) };
  }
  return { kind: 'new', transaction: final };
}

/** The QUEUED record for a command, or why it cannot be recorded at all. */
function buildRecord(scope: DecisionScope, command: CreateTransactionCommand, batchId: string | undefined): TransactionRecord | Rejection {
  const sides = resolveSides(scope, command);
  if ('code' in sides) return sides;
  const ids = newTransactionIds(scope.ids);
  const reference = command.reference !== '' ? command.reference : ids.reference;
  const record = newTransaction({
    transaction_id: ids.transaction_id,
    source: sides.source,
    destination: sides.destination,
    reference,
    currency: command.currency,
    precise_amount: command.precise_amount,
    precision: command.precision,
    description: command.description,
    allow_overdraft: command.allow_overdraft,
    inflight: command.inflight,
    skip_queue: command.skip_queue,
    inflight_expiry_date: command.inflight ? command.inflight_expiry_date : 0,
    inflight_commit_date: command.inflight ? command.inflight_commit_date : 0,
    scheduled_for: command.scheduled_for,
    meta_data: command.meta_data,
  }, scope.now);
  if (sides.sources) record.sources = sides.sources;
  if (sides.destinations) record.destinations = sides.destinations;
  if (sides.sources || sides.destinations) record.atomic = command.atomic;
  if (batchId !== undefined) record.batch_id = batchId;
  return record;
}

interface ResolvedSides {
  source: string;
  destination: string;
  sources?: SplitShare[];
  destinations?: SplitShare[];
}

function resolveSides(scope: DecisionScope, command: CreateTransactionCommand): ResolvedSides | Rejection {
  const sides: ResolvedSides = { source: '', destination: '' };
  const used = new Set<string>();
  if (command.sources) {
    const shares = resolveShares(scope, command.sources, command, used);
    if ('code' in shares) return shares;
    sides.sources = shares;
  } else {
    const source = scope.resolve(command.source, command.currency);
    if ('code' in source) return source;
    sides.source = source.balance_id;
    used.add(source.balance_id);
  }
  if (command.destinations) {
    const shares = resolveShares(scope, command.destinations, command, used);
    if ('code' in shares) return shares;
    sides.destinations = shares;
  } else {
    const destination = scope.resolve(command.destination, command.currency);
    if ('code' in destination) return destination;
    if (used.has(destination.balance_id)) {
      return reject('TXN_SAME_SOURCE_DESTINATION', 'a balance cannot send to itself');
    }
    sides.destination = destination.balance_id;
  }
  return sides;
}

/** Resolves each share's balance and computes the exact amounts; a balance may appear only once overall. */
function resolveShares(
  scope: DecisionScope,
  shares: ShareCommand[],
  command: CreateTransactionCommand,
  used: Set<string>,
): SplitShare[] | Rejection {
  const distribution = distribute(command.precise_amount, shares.map((share) => share.request));
  if (!distribution.ok) return reject('TXN_INVALID_DISTRIBUTION', distribution.message);
  const resolved: SplitShare[] = [];
  for (const [index, share] of shares.entries()) {
    const balance = scope.resolve(share.identifier, command.currency);
    if ('code' in balance) return balance;
    if (used.has(balance.balance_id)) {
      return reject('TXN_SAME_SOURCE_DESTINATION', `balance ${share.identifier} appears more than once in the split`);
    }
    used.add(balance.balance_id);
    resolved.push({
      identifier: share.identifier,
      balance_id: balance.balance_id,
      distribution: share.distribution,
      precise_amount: distribution.amounts[index] as bigint,
    });
  }
  return resolved;
}

function replayOrConflict(
  scope: DecisionScope,
  existingId: string,
  command: CreateTransactionCommand,
  allowReplay: boolean,
): CreateOutcome {
  const existing = scope.transaction(existingId);
  if (allowReplay && existing && isSameRequest(scope, command, existing)) return { kind: 'existing', transaction: existing };
  return {
    kind: 'rejected',
    rejection: reject('TXN_DUPLICATE_REFERENCE', `reference ${command.reference} is already used by another transaction`),
  };
}

/**
 * Whether a request repeats the one that created `existing`: every field the client sent must match,
 * with `@name` balances resolved (without creating anything). How to process it (skip_queue) does not
 * count. Checked only when a reference is reused, so the common path pays nothing for it.
 */
function isSameRequest(scope: DecisionScope, command: CreateTransactionCommand, existing: TransactionRecord): boolean {
  const resolvesTo = (name: string, balanceId: string): boolean =>
    name === balanceId || (name.startsWith('@') && scope.state.balanceByIndicator(name, command.currency)?.balance_id === balanceId);
  const sameShares = (requested: ShareCommand[] | undefined, recorded: SplitShare[] | undefined): boolean => {
    if (!requested || !recorded) return requested === recorded;
    return requested.length === recorded.length && requested.every((share, index) => {
      const match = recorded[index] as SplitShare;
      return share.distribution === match.distribution && resolvesTo(share.identifier, match.balance_id);
    });
  };
  return (
    existing.precise_amount === command.precise_amount &&
    existing.precision === command.precision &&
    existing.currency === command.currency &&
    existing.description === command.description &&
    existing.allow_overdraft === command.allow_overdraft &&
    existing.inflight === command.inflight &&
    existing.scheduled_for === command.scheduled_for &&
    (command.sources ? sameShares(command.sources, existing.sources) : resolvesTo(command.source, existing.source)) &&
    (command.destinations ? sameShares(command.destinations, existing.destinations) : resolvesTo(command.destination, existing.destination)) &&
    canonicalJson(existing.meta_data) === canonicalJson(command.meta_data)
  );
}
