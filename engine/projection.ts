// Dry runs: what an operation would do, computed by deciding it for real and then not committing. The
// projection lists every balance involved with its amounts now and as they would be after the decided
// postings. Nothing reaches the state or the log.

import type { CreateTransactionCommand } from './commands.js';
import type { DecisionScope } from './decision-scope.js';
import type { Posting } from './events.js';
import { exchangeBalances } from './exchange.js';
import { applyPosting } from './ledger-state.js';
import { availableAmount, balanceAmount, type BalanceRecord, type TransactionRecord, type TransactionStatus } from './records.js';
import type { Rejection } from './rejections.js';

export type ProjectionOperation = 'create' | 'commit' | 'void' | 'refund' | 'bulk';
export type BalanceRole = 'source' | 'destination';

export interface BalanceAmounts {
  balance: bigint;
  available: bigint;
  credit_balance: bigint;
  debit_balance: bigint;
  inflight_debit_balance: bigint;
  inflight_credit_balance: bigint;
}

export interface BalanceProjection {
  /** The balance id, or the `@name` of a balance the operation would create. */
  balance_id: string;
  role: BalanceRole;
  currency: string;
  current: BalanceAmounts;
  resulting: BalanceAmounts;
}

export interface ProjectionLeg {
  identifier: string;
  role: BalanceRole;
  precise_amount: bigint;
}

export interface Projection {
  operation: ProjectionOperation;
  would_apply: boolean;
  /** The status the main transaction (or a bulk batch) would end in. */
  status?: TransactionStatus | 'PARTIAL';
  rejection?: Rejection;
  /** The transaction as it would be recorded (or, when rejected, as far as it was built). */
  transaction?: TransactionRecord;
  legs?: ProjectionLeg[];
  notes?: string[];
  transaction_count?: number;
  /** Index of the failing item of a bulk projection. */
  failed_index?: number;
  balances: BalanceProjection[];
}

export interface InvolvedBalance {
  balance: BalanceRecord;
  role: BalanceRole;
  /** Created by this operation: shown by name, starting from zero. */
  created: boolean;
}

/**
 * Current and resulting amounts for each involved balance under the scope's drafted postings. The
 * postings before `currentFrom` count as already done (a step of a multi-step dry run shows the state
 * the steps before it left); by default every drafted posting is this operation's.
 */
export function projectBalances(scope: DecisionScope, involved: InvolvedBalance[], currentFrom = 0): BalanceProjection[] {
  const byBalance = new Map<string, Array<{ posting: Posting; earlier: boolean }>>();
  scope.draft.postings.forEach((posting, index) => {
    let list = byBalance.get(posting.balance_id);
    if (!list) byBalance.set(posting.balance_id, (list = []));
    list.push({ posting, earlier: index < currentFrom });
  });
  const seen = new Set<string>();
  const projections: BalanceProjection[] = [];
  for (const { balance, role, created } of involved) {
    if (seen.has(balance.balance_id)) continue;
    seen.add(balance.balance_id);
    const before: BalanceRecord = { ...balance };
    const after: BalanceRecord = { ...balance };
    for (const { posting, earlier } of byBalance.get(balance.balance_id) ?? []) {
      if (earlier) applyPosting(before, posting);
      applyPosting(after, posting);
    }
    projections.push({
      balance_id: created ? balance.indicator : balance.balance_id,
      role,
      currency: balance.currency,
      current: amountsOf(before),
      resulting: amountsOf(after),
    });
  }
  return projections;
}

/** The balances a set of records touches, with their roles, in first-seen order. */
export function involvedIn(scope: DecisionScope, records: TransactionRecord[]): InvolvedBalance[] {
  const involved: InvolvedBalance[] = [];
  const add = (balanceId: string, role: BalanceRole): void => {
    if (balanceId === '') return;
    const balance = scope.balance(balanceId);
    if (balance) involved.push({ balance, role, created: !scope.state.balances.has(balanceId) });
  };
  for (const record of records) {
    add(record.source, 'source');
    for (const share of record.sources ?? []) add(share.balance_id, 'source');
    add(record.destination, 'destination');
    for (const share of record.destinations ?? []) add(share.balance_id, 'destination');
    if (record.exchange) {
      // Through its exchange balances (exchange.ts): the source's currency's takes, the other's pays. They
      // were resolved (found, or created in the decision) when it was decided, so this finds them.
      const via = exchangeBalances(scope, record.currency, record.exchange.destination_currency);
      add(via.source_side, 'destination');
      add(via.destination_side, 'source');
    }
  }
  return involved;
}

/**
 * Every balance the scope's drafted postings move, in first-moved order: a source when it is first
 * debited (settled or held), a destination when it is first credited.
 */
export function involvedInPostings(scope: DecisionScope): InvolvedBalance[] {
  const involved: InvolvedBalance[] = [];
  const seen = new Set<string>();
  for (const posting of scope.draft.postings) {
    if (seen.has(posting.balance_id)) continue;
    seen.add(posting.balance_id);
    const balance = scope.balance(posting.balance_id);
    if (!balance) continue;
    const role: BalanceRole = posting.field === 'debit' || posting.field === 'inflight_debit' ? 'source' : 'destination';
    involved.push({ balance, role, created: !scope.state.balances.has(posting.balance_id) });
  }
  return involved;
}

function amountsOf(balance: BalanceRecord): BalanceAmounts {
  return {
    balance: balanceAmount(balance),
    available: availableAmount(balance),
    credit_balance: balance.credit_balance,
    debit_balance: balance.debit_balance,
    inflight_debit_balance: balance.inflight_debit_balance,
    inflight_credit_balance: balance.inflight_credit_balance,
  };
}

/**
 * The balances a set of transfer commands names, as a dry run shows them when it was refused before
 * anything was recorded: resolved in the scope (an `@name` not yet made shows as made, at zero).
 */
export function namedBalances(scope: DecisionScope, commands: CreateTransactionCommand[]): BalanceProjection[] {
  const involved: InvolvedBalance[] = [];
  for (const command of commands) {
    const names: Array<[string, BalanceRole]> = [
      ...(command.sources ?? [{ identifier: command.source }]).map((share): [string, BalanceRole] => [share.identifier, 'source']),
      ...(command.destinations ?? [{ identifier: command.destination }]).map((share): [string, BalanceRole] => [share.identifier, 'destination']),
    ];
    for (const [name, role] of names) {
      if (name === '') continue;
      const balance = scope.resolve(name, command.currency);
      if (balance.ok) involved.push({ balance: balance.value, role, created: !scope.state.balances.has(balance.value.balance_id) });
    }
  }
  return projectBalances(scope, involved);
}
