// The two sides a rule compares: an external record (or a group of them, under many_to_one) and an
// internal transaction (or a group of them, under one_to_many). A group is seen as one record: its
// amount is the exact sum of its members', its date the earliest member's, and its references and
// descriptions are all of its members' (a criterion on them holds if it holds for any one).
//
// Amounts are magnitudes: a statement may write a debit as -152.75 while the ledger records 152.75 moving
// from one balance to another; the direction is the ledger's source and destination, not a sign.
// Amounts compare only within one currency; a group mixing currencies has none (and no amount).

import { lcm } from '../engine/exact-fraction.js';
import type { ExternalRecord } from '../engine/reconciliation-records.js';
import type { InternalTransaction } from '../engine/reconciliation-records.js';

export interface MatchSide {
  /** Magnitude, in 1/precision units. */
  amount: bigint;
  precision: bigint;
  /** '' for a group whose members are in different currencies. */
  currency: string;
  references: string[];
  descriptions: string[];
  /** Epoch ms; the earliest member's for a group. */
  date: number;
}

const magnitude = (value: bigint): bigint => (value < 0n ? -value : value);

export function externalSide(record: ExternalRecord): MatchSide {
  return {
    amount: magnitude(record.amount),
    precision: record.precision,
    currency: record.currency,
    references: [record.reference],
    descriptions: [record.description],
    date: record.date,
  };
}

/** Several external records as one: the magnitude of their signed sum (a refund line nets against a sale). */
export function externalGroupSide(records: ExternalRecord[]): MatchSide {
  const currency = sharedCurrency(records.map((record) => record.currency));
  let sum = 0n;
  let precision = 1n;
  for (const record of records) precision = lcm(precision, record.precision);
  for (const record of records) sum += record.amount * (precision / record.precision);
  return {
    amount: magnitude(sum),
    precision,
    currency,
    references: records.map((record) => record.reference),
    descriptions: records.map((record) => record.description),
    date: Math.min(...records.map((record) => record.date)),
  };
}

/**
 * A transaction as one side. An exchange has two legs in two currencies: it is seen by its destination
 * leg when compared with a record in the destination's currency (`currency`), else by its source leg.
 */
export function internalSide(transaction: InternalTransaction, currency?: string): MatchSide {
  const leg = transaction.exchange_leg !== undefined && transaction.exchange_leg.currency === currency ? transaction.exchange_leg : transaction;
  return {
    amount: leg.precise_amount,
    precision: leg.precision,
    currency: leg.currency,
    references: [transaction.reference],
    descriptions: [transaction.description],
    date: transaction.created_at,
  };
}

export function internalGroupSide(members: InternalTransaction[]): MatchSide {
  let precision = 1n;
  for (const member of members) precision = lcm(precision, member.precision);
  let sum = 0n;
  let date = Number.POSITIVE_INFINITY;
  for (const member of members) {
    sum += member.precise_amount * (precision / member.precision);
    if (member.created_at < date) date = member.created_at;
  }
  return {
    amount: sum,
    precision,
    currency: sharedCurrency(members.map((member) => member.currency)),
    references: members.map((member) => member.reference),
    descriptions: members.map((member) => member.description),
    date,
  };
}

function sharedCurrency(currencies: string[]): string {
  const first = currencies[0] ?? '';
  return currencies.every((currency) => currency === first) ? first : '';
}
