// Exchange transactions (issue 41; docs/decisions-beyond.md, "Exchanges"): one transaction that debits a
// source in one currency and credits a destination in another at an exact rate. It posts through the
// ledger's exchange balances, the indicator balances `@exchange_<CURRENCY>` (created on first use, allowed
// to go negative), so that each currency still sums to zero in the one record:
//
//   source (C)        --precise_amount-->              @exchange_C (C)
//   @exchange_D (D)   --destination_precise_amount-->  destination (D)
//
// The destination amount is decided once, when the transaction is recorded (engine/exchange-rate.ts,
// exact or by the rounding the caller named). A hold settled in parts gives each part the difference of
// the destination amounts of two running totals of its source amount (destinationUpTo), capped by the
// held destination amount and equal to it at the whole: the parts never add up to more than was held,
// and exactly to it once the hold is wholly committed, or committed in part and the rest voided.

import { assert } from './assert.js';
import type { DecisionScope } from './decision-scope.js';
import { convert, type Rate } from './exchange-rate.js';
import { PRECISE_AMOUNT_DIGITS_MAX, PRECISE_AMOUNT_MAX } from './money.js';
import type { Posting } from './events.js';
import { commitPostings, holdPostings, transferPostings, voidPostings } from './posting-draft.js';
import { reject, type Rejection } from './rejections.js';
import { refuse, accept, type Decided } from './result.js';
import type { ExchangeRequest, ExchangeTerms, TransactionRecord } from './records.js';

export type { ExchangeRequest, ExchangeTerms };

/** The indicator of the exchange balance of a currency: `@exchange_USD`. */
export const EXCHANGE_INDICATOR_PREFIX = '@exchange_';

export function exchangeIndicator(currency: string): string {
  return EXCHANGE_INDICATOR_PREFIX + currency;
}

function rateOf(terms: ExchangeRequest): Rate {
  return { numerator: terms.rate_numerator, denominator: terms.rate_denominator };
}

/** The destination amount of a new exchange of `amount`, or why it cannot be recorded. */
export function exchangeTerms(amount: bigint, precision: bigint, request: ExchangeRequest): Decided<ExchangeTerms> {
  const converted = convert(amount, rateOf(request), precision, request.destination_precision, request.rounding);
  if (!converted.ok) return refuse(reject('TXN_EXCHANGE_INEXACT', `${amount} at ${request.rate} ${converted.message}`));
  if (converted.amount === 0n) {
    return refuse(reject('TXN_EXCHANGE_INEXACT', `${amount} at ${request.rate} comes to nothing in ${request.destination_currency}`));
  }
  if (converted.amount > PRECISE_AMOUNT_MAX) {
    return refuse(reject('TXN_VALIDATION_ERROR', `${amount} at ${request.rate} comes to more than ${PRECISE_AMOUNT_DIGITS_MAX} digits in ${request.destination_currency}`));
  }
  return accept({ ...request, destination_precise_amount: converted.amount });
}

/**
 * The destination amount that `settled` of the exchange's source amount stands for: the whole destination
 * amount at the whole, else the conversion by the recorded rate and rounding, never more than the whole.
 * Undefined when the conversion is inexact and no rounding was named (a partial commit is then refused).
 */
export function destinationUpTo(record: TransactionRecord, terms: ExchangeTerms, settled: bigint): bigint | undefined {
  if (settled === record.precise_amount) return terms.destination_precise_amount;
  const converted = convert(settled, rateOf(terms), record.precision, terms.destination_precision, terms.rounding);
  if (!converted.ok) return undefined;
  return converted.amount < terms.destination_precise_amount ? converted.amount : terms.destination_precise_amount;
}

/** The destination part of settling the hold's source amount from `before` to `after`, or the refusal. */
export function destinationPart(hold: TransactionRecord, terms: ExchangeTerms, before: bigint, after: bigint): bigint | Rejection {
  const until = destinationUpTo(hold, terms, before);
  const upTo = destinationUpTo(hold, terms, after);
  if (until === undefined || upTo === undefined) {
    return reject('TXN_EXCHANGE_INEXACT', `committing ${after - before} of ${hold.transaction_id} at ${terms.rate} does not come to a whole smallest unit of ${terms.destination_currency}, and the exchange names no rounding: commit another amount, or the rest whole`);
  }
  return upTo - until;
}

/** The balances an exchange posts through: its two exchange balances' ids. */
export interface ExchangeBalances {
  source_side: string;
  destination_side: string;
}

/** The exchange balances of an exchange's two currencies, created on first use in the decision. */
export function exchangeBalances(scope: DecisionScope, currency: string, destinationCurrency: string): ExchangeBalances {
  const sourceSide = scope.resolve(exchangeIndicator(currency), currency);
  const destinationSide = scope.resolve(exchangeIndicator(destinationCurrency), destinationCurrency);
  // An `@name` always resolves: found, or created in the decision.
  assert(sourceSide.ok && destinationSide.ok, 'exchange balances resolve');
  return { source_side: sourceSide.value.balance_id, destination_side: destinationSide.value.balance_id };
}

export type ExchangeStep = 'transfer' | 'hold' | 'commit' | 'void';

/** The postings of one step of an exchange: the source's currency, then the destination's. */
export function exchangePostings(
  step: ExchangeStep,
  source: string,
  destination: string,
  via: ExchangeBalances,
  amount: bigint,
  destinationAmount: bigint,
): Posting[] {
  const make = step === 'transfer' ? transferPostings : step === 'hold' ? holdPostings : step === 'commit' ? commitPostings : voidPostings;
  return [...make(source, via.source_side, amount), ...make(via.destination_side, destination, destinationAmount)];
}

/** The rate the other way (a refund's): the fraction inverted, shown as decimal text when it ends, else as `n/d`. */
export function inverseRequest(record: TransactionRecord, terms: ExchangeTerms): ExchangeRequest {
  const numerator = terms.rate_denominator;
  const denominator = terms.rate_numerator;
  const inverse: ExchangeRequest = {
    rate: rateText(numerator, denominator),
    rate_numerator: numerator,
    rate_denominator: denominator,
    destination_currency: record.currency,
    destination_precision: record.precision,
  };
  if (terms.rounding !== undefined) inverse.rounding = terms.rounding;
  return inverse;
}

/** A fraction as decimal text when it ends within 18 places, else `numerator/denominator`. */
export function rateText(numerator: bigint, denominator: bigint): string {
  for (let places = 0; places <= 18; places += 1) {
    const scale = 10n ** BigInt(places);
    if ((numerator * scale) % denominator !== 0n) continue;
    const digits = ((numerator * scale) / denominator).toString().padStart(places + 1, '0');
    return places === 0 ? digits : `${digits.slice(0, -places)}.${digits.slice(-places)}`;
  }
  return `${numerator}/${denominator}`;
}
