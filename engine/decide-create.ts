// Deciding a new transaction: enforce reference uniqueness (an identical retry gets the original back),
// resolve the balances (creating `@name` balances on first use), work out split shares, and then either
// schedule it, queue it behind its source balance, or carry it out at once (skip_queue).

import { canonicalJson } from './exact-json.js';
import type { CommandOf, CreateTransactionCommand, ShareCommand } from './commands.js';
import { carryOutNow, eventTypeFor, queuedFundsRefusal } from './carry-out.js';
import { newTransaction, newTransactionIds, type DecisionScope } from './decision-scope.js';
import { lineageProviderProblem } from './fund-lineage.js';
import type { DryRunnable } from './operation.js';
import { involvedIn, namedBalances, projectBalances, type ProjectionLeg } from './projection.js';
import type { BalanceRecord, SplitShare, TransactionRecord } from './records.js';
import { resultingBalances } from './resulting-balances.js';
import { reject, type RejectionCode } from './rejections.js';
import { accept, refuse, type Decided } from './result.js';
import { distribute } from './split-distribution.js';
import { exchangeTerms, type ExchangeRequest, type ExchangeTerms } from './exchange.js';

export interface Created {
  transaction: TransactionRecord;
  /** False when the request repeated an earlier one with the same reference (idempotent retry). */
  created: boolean;
  /** include_balances: the balances it touched as the write left them (resulting-balances.ts). */
  balances?: BalanceRecord[];
}

export interface CreateOptions {
  /** Whether a reused reference with an identical request answers with the original (single creates). */
  allowReplay: boolean;
  batchId?: string;
}

/**
 * Decides one new transaction into the scope. On rejection the scope is left as it was. For a
 * synchronous transaction whose funds check fails, the outcome is the rejection (nothing is recorded).
 */
export function decideCreate(scope: DecisionScope, command: CreateTransactionCommand, options: CreateOptions): Decided<Created> {
  if (command.reference !== '') {
    const existingId = scope.referenceTaken(command.reference);
    if (existingId !== undefined) return replayOrConflict(scope, existingId, command, options.allowReplay);
  }
  const mark = scope.mark();
  const record = buildRecord(scope, command, options.batchId);
  if (!record.ok) {
    scope.rollback(mark);
    return record;
  }
  const queued = record.value;
  if (command.scheduled_for > scope.now) return created(scope.write({ ...queued, status: 'SCHEDULED' }));
  if (!command.skip_queue) {
    const refusal = queuedFundsRefusal(scope, queued);
    if (refusal) {
      scope.rollback(mark);
      return refuse(refusal);
    }
    return created(scope.writeQueued(queued));
  }
  // Rolled back to before the record was built: balances it created go with it.
  const final = carryOutNow(scope, queued, mark);
  return final.ok ? created(final.value) : final;
}

function created(transaction: TransactionRecord): Decided<Created> {
  return accept({ transaction, created: true });
}

/** What deciding a new transaction can refuse with (the funds check's codes from posting-draft.ts). */
export const CREATE_REJECTIONS = [
  'BAL_NOT_FOUND', 'TXN_CURRENCY_MISMATCH', 'TXN_SAME_SOURCE_DESTINATION', 'TXN_INVALID_DISTRIBUTION', 'TXN_DUPLICATE_REFERENCE',
  'TXN_VALIDATION_ERROR', 'TXN_INSUFFICIENT_FUNDS', 'TXN_OVERDRAFT_LIMIT_EXCEEDED', 'BAL_LINEAGE_LIMIT_EXCEEDED', 'TXN_PRECONDITION_FAILED', 'TXN_PERIOD_CLOSED',
  'TXN_EXCHANGE_INEXACT',
] as const satisfies readonly RejectionCode[];

/** Creating one transaction, as the engine runs it. */
export const createOperation: DryRunnable<CommandOf<'transaction.create'>, Created> = {
  rejections: [...CREATE_REJECTIONS, 'QUEUE_BACKPRESSURE'],
  admission(state, command) {
    const balances = sourcesNamed(state, command);
    if (command.skip_queue) return { kind: 'drain', balances };
    // A reused reference is answered from what exists (replay or conflict): it queues nothing.
    if (command.reference !== '' && state.transactions.idForReference(command.reference) !== undefined) return { kind: 'none' };
    return { kind: 'join', balances, items: 1 };
  },
  decide: (scope, command) => decideCreate(scope, command, { allowReplay: true }),
  eventType: (value) => eventTypeFor(value.transaction),
  withBalances: (value, state) => ({ ...value, balances: resultingBalances(value.transaction, state) }),
  dryRun: {
    asDryRun: (command) => ({ ...command, skip_queue: true, scheduled_for: 0 }),
    project(scope, command, decided, currentFrom) {
      // A dry run never replays: a used reference is a conflict there, as it would be for a new request.
      if (!decided.ok || !decided.value.created) {
        const rejection = decided.ok ? reject('TXN_DUPLICATE_REFERENCE', 'reference in use') : decided.rejection;
        return { operation: 'create', would_apply: false, rejection, legs: legsOf(command), balances: namedBalances(scope, [command]) };
      }
      const transaction = decided.value.transaction;
      return {
        operation: 'create',
        would_apply: true,
        status: transaction.status,
        transaction,
        legs: legsOf(command, transaction),
        balances: projectBalances(scope, involvedIn(scope, [transaction]), currentFrom),
      };
    },
  },
};

/** Ids of the existing balances a command takes money from (the mailboxes it must follow or join). */
export function sourcesNamed(state: DecisionScope['state'], command: CreateTransactionCommand): string[] {
  const names = command.sources ? command.sources.map((share) => share.identifier) : [command.source];
  const ids: string[] = [];
  for (const name of names) {
    const id = name.startsWith('@') ? state.balanceByIndicator(name, command.currency)?.balance_id : name;
    if (id !== undefined && state.balances.has(id)) ids.push(id);
  }
  return ids;
}

/** The shares of a split as projection legs, with their computed amounts when known. */
function legsOf(command: CreateTransactionCommand, record?: TransactionRecord): ProjectionLeg[] | undefined {
  if (!command.sources && !command.destinations) return undefined;
  const legs: ProjectionLeg[] = [];
  for (const share of record?.sources ?? []) legs.push({ identifier: share.identifier, role: 'source', precise_amount: share.precise_amount });
  for (const share of record?.destinations ?? []) legs.push({ identifier: share.identifier, role: 'destination', precise_amount: share.precise_amount });
  return legs;
}

/** The QUEUED record for a command, or why it cannot be recorded at all. */
function buildRecord(scope: DecisionScope, command: CreateTransactionCommand, batchId: string | undefined): Decided<TransactionRecord> {
  // A back-dated transaction, as Blnk has them; a future one is what scheduled_for is for.
  if ((command.effective_date ?? 0) > scope.now) {
    return refuse(reject('TXN_VALIDATION_ERROR', 'Invalid effective_date: must not be in the future (use scheduled_for)'));
  }
  const badTag = lineageProviderProblem(command.meta_data);
  if (badTag) return refuse(reject('TXN_VALIDATION_ERROR', badTag));
  let exchange: ExchangeTerms | undefined;
  if (command.exchange !== undefined) {
    const terms = exchangeTerms(command.precise_amount, command.precision, command.exchange);
    if (!terms.ok) return terms;
    exchange = terms.value;
  }
  const resolved = resolveSides(scope, command);
  if (!resolved.ok) return resolved;
  const sides = resolved.value;
  // Refused at the door on every path (a queued or scheduled one would only be rejected later).
  if ((command.effective_date ?? 0) > 0) {
    const closed = scope.state.periods.refusal((id) => scope.balance(id), balancesOf(sides), command.effective_date as number);
    if (closed) return refuse(closed);
  }
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
  if ((command.effective_date ?? 0) > 0) record.effective_date = command.effective_date;
  if ((command.overdraft_limit ?? 0n) > 0n) record.overdraft_limit = command.overdraft_limit;
  if (command.preconditions !== undefined) record.preconditions = command.preconditions;
  if (exchange !== undefined) record.exchange = exchange;
  return accept(record);
}

function balancesOf(sides: ResolvedSides): string[] {
  const ids: string[] = [];
  if (sides.sources) for (const share of sides.sources) ids.push(share.balance_id);
  else ids.push(sides.source);
  if (sides.destinations) for (const share of sides.destinations) ids.push(share.balance_id);
  else ids.push(sides.destination);
  return ids;
}

interface ResolvedSides {
  source: string;
  destination: string;
  sources?: SplitShare[];
  destinations?: SplitShare[];
}

function resolveSides(scope: DecisionScope, command: CreateTransactionCommand): Decided<ResolvedSides> {
  const sides: ResolvedSides = { source: '', destination: '' };
  const used = new Set<string>();
  if (command.sources) {
    const shares = resolveShares(scope, command.sources, command, used);
    if (!shares.ok) return shares;
    sides.sources = shares.value;
  } else {
    const source = scope.resolve(command.source, command.currency);
    if (!source.ok) return source;
    sides.source = source.value.balance_id;
    used.add(source.value.balance_id);
  }
  if (command.destinations) {
    const shares = resolveShares(scope, command.destinations, command, used);
    if (!shares.ok) return shares;
    sides.destinations = shares.value;
  } else {
    // An exchange's destination holds the currency it buys (exchange.ts); the edge refuses exchanges of splits.
    const destination = scope.resolve(command.destination, command.exchange?.destination_currency ?? command.currency);
    if (!destination.ok) return destination;
    if (used.has(destination.value.balance_id)) return refuse(reject('TXN_SAME_SOURCE_DESTINATION', 'a balance cannot send to itself'));
    sides.destination = destination.value.balance_id;
  }
  return accept(sides);
}

/** Resolves each share's balance and computes the exact amounts; a balance may appear only once overall. */
function resolveShares(
  scope: DecisionScope,
  shares: ShareCommand[],
  command: CreateTransactionCommand,
  used: Set<string>,
): Decided<SplitShare[]> {
  const distribution = distribute(command.precise_amount, shares.map((share) => share.request));
  if (!distribution.ok) return refuse(reject('TXN_INVALID_DISTRIBUTION', distribution.rejection.message));
  const resolved: SplitShare[] = [];
  for (const [index, share] of shares.entries()) {
    const balance = scope.resolve(share.identifier, command.currency);
    if (!balance.ok) return balance;
    const balanceId = balance.value.balance_id;
    if (used.has(balanceId)) {
      return refuse(reject('TXN_SAME_SOURCE_DESTINATION', `balance ${share.identifier} appears more than once in the split`));
    }
    used.add(balanceId);
    resolved.push({
      identifier: share.identifier,
      balance_id: balanceId,
      distribution: share.distribution,
      precise_amount: distribution.value[index] as bigint,
    });
  }
  return accept(resolved);
}

function replayOrConflict(
  scope: DecisionScope,
  existingId: string,
  command: CreateTransactionCommand,
  allowReplay: boolean,
): Decided<Created> {
  const existing = scope.transaction(existingId);
  const differs = existing ? differingField(scope, command, existing) : 'reference';
  if (allowReplay && differs === undefined) return accept({ transaction: existing as TransactionRecord, created: false });
  // Name the field that differs, as TigerBeetle's exists_with_different_* results do: a client retrying
  // with a changed body learns what it changed.
  const why = differs === undefined ? 'is used by a transaction of this batch or an earlier one' : `is used by a transaction whose ${differs} differs`;
  return refuse({ ...reject('TXN_DUPLICATE_REFERENCE', `reference ${command.reference} ${why}`), field: differs ?? 'reference' });
}

/**
 * The first field in which a request differs from the one that created `existing`, or undefined when it
 * repeats it: every field the client sent must match, with `@name` balances resolved (without creating
 * anything). How to process it (skip_queue) does not count. Checked only when a reference is reused, so
 * the common path pays nothing for it.
 */
function differingField(scope: DecisionScope, command: CreateTransactionCommand, existing: TransactionRecord): string | undefined {
  const resolvesTo = (name: string, balanceId: string, currency = command.currency): boolean =>
    name === balanceId || (name.startsWith('@') && scope.state.balanceByIndicator(name, currency)?.balance_id === balanceId);
  const sameShares = (requested: ShareCommand[] | undefined, recorded: SplitShare[] | undefined): boolean => {
    if (!requested || !recorded) return requested === recorded;
    return requested.length === recorded.length && requested.every((share, index) => {
      const match = recorded[index] as SplitShare;
      return share.distribution === match.distribution && resolvesTo(share.identifier, match.balance_id);
    });
  };
  const checks: Array<[string, boolean]> = [
    ['precise_amount', existing.precise_amount === command.precise_amount],
    ['precision', existing.precision === command.precision],
    ['currency', existing.currency === command.currency],
    ['description', existing.description === command.description],
    ['allow_overdraft', existing.allow_overdraft === command.allow_overdraft],
    ['overdraft_limit', (existing.overdraft_limit ?? 0n) === (command.overdraft_limit ?? 0n)],
    ['inflight', existing.inflight === command.inflight],
    ['scheduled_for', existing.scheduled_for === command.scheduled_for],
    ['effective_date', (existing.effective_date ?? 0) === (command.effective_date ?? 0)],
    command.sources ? ['sources', sameShares(command.sources, existing.sources)] : ['source', resolvesTo(command.source, existing.source)],
    command.destinations
      ? ['destinations', sameShares(command.destinations, existing.destinations)]
      : ['destination', resolvesTo(command.destination, existing.destination, command.exchange?.destination_currency)],
    ['meta_data', canonicalJson(existing.meta_data) === canonicalJson(command.meta_data)],
    ['preconditions', canonicalJson(existing.preconditions ?? []) === canonicalJson(command.preconditions ?? [])],
    ['exchange', sameExchange(command.exchange, existing.exchange)],
  ];
  return checks.find(([, same]) => !same)?.[0];
}

/** Whether a request asks for the exchange a record made (the rate compared as a fraction). */
function sameExchange(requested: ExchangeRequest | undefined, recorded: ExchangeTerms | undefined): boolean {
  if (!requested || !recorded) return requested === recorded;
  return requested.rate_numerator === recorded.rate_numerator && requested.rate_denominator === recorded.rate_denominator
    && requested.destination_currency === recorded.destination_currency && requested.destination_precision === recorded.destination_precision
    && requested.rounding === recorded.rounding;
}
