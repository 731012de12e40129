// From request shapes (transaction-schemas.ts) to the engine's commands: amounts become exact bigints
// (`precise_amount` as given, or `amount` converted with `precision` and refused if it would need
// rounding; both only if they agree), split shares become share requests, times epoch milliseconds, and
// the checks that span several fields are made. Only typed input is read: when some field failed its
// shape, the conversions still run on a lenient parse of the body (each failed field left out), so one
// answer names every bad field, but no value of an unchecked type ever reaches them.

import type { BulkCommand, CreateTransactionCommand, ShareCommand } from '../../engine/commands.js';
import type { Precondition } from '../../engine/precondition.js';
import type { ExchangeRequest } from '../../engine/exchange.js';
import { parseDecimalRate, parseRatePair, type RateResult } from '../../engine/exchange-rate.js';
import type { ShareRequest } from '../../engine/split-distribution.js';
import { amountToPrecise, decimalTextOf, parsePreciseAmount, parsePrecision, parseSignedPreciseAmount } from '../../wire/amounts.js';
import { normalizeMetaData } from './common-schemas.js';
import { parseTimeInput } from './time-input.js';
import { ApiError, type ErrorCode } from '../api-error.js';
import { accept, refuse, type Failure, type Result } from '../../engine/result.js';
import { BULK_TRANSACTIONS_MAX, bulkShape, preconditionShape, transactionShape, type TransactionShape } from './transaction-schemas.js';
import type { z } from 'zod';
import { lenient, lenientItems, validateShapeThen, validationError, type ReportIssue, type ValidationCode } from './validation.js';

/**
 * Legs one request may ask for, all items of a bulk together. A transaction's legs are the child
 * transactions it can produce: one for a plain transfer, at most sources + destinations - 1 for a split
 * (its shares are paired in one walk). Without this bound, 600 splits of 100 x 100 shares (5 MB of JSON)
 * became one event of 120,000 records that held the event loop for seconds.
 */
export const REQUEST_LEGS_MAX = 10_000;

/** The most legs a transaction can produce (see REQUEST_LEGS_MAX). */
export function legCount(command: CreateTransactionCommand): number {
  return (command.sources?.length ?? 1) + (command.destinations?.length ?? 1) - 1;
}

interface AmountFields {
  amount?: unknown;
  precise_amount?: unknown;
  precision?: unknown;
}

/** Why an amount could not be read exactly: the field at fault, and the code to answer with. */
export interface AmountRefusal {
  code: ValidationCode;
  field: string;
  message: string;
}

export type ExactAmount = Result<{ precise_amount: bigint; precision: bigint }, AmountRefusal>;

/**
 * Resolves the amount fields to exact values, or names the field at fault. `precision` overrides the
 * body's (inflight commits use the hold's); `required: false` lets both amounts be absent (meaning 0).
 */
export function resolveAmount(
  input: AmountFields,
  options: { allowZero?: boolean; required?: boolean; precision?: bigint } = {},
): ExactAmount {
  const fail = (field: string, message: string, code: ValidationCode = 'TXN_VALIDATION_ERROR'): ExactAmount => refuse({ code, field, message });
  // A precision of 0 is Go's zero value, which Blnk reads as absent: the default 1 (model/model.go
  // ApplyPrecision, its model/precision_edge_test.go "zero precision defaults to 1").
  const precision = options.precision !== undefined
    ? { ok: true as const, value: options.precision }
    : input.precision === undefined || isZero(input.precision) ? { ok: true as const, value: 1n } : parsePrecision(input.precision);
  if (!precision.ok) {
    return fractional(input.precision)
      ? fail('precision', 'precision must be an integer value', 'TXN_PRECISION_NOT_INTEGER')
      : fail('precision', precision.rejection.message);
  }
  const allowZero = options.allowZero === true;
  const fromPrecise = input.precise_amount === undefined ? undefined : parsePreciseAmount(input.precise_amount, { allowZero });
  // `amount: 0` beside a `precise_amount` is likewise Go's zero value: Blnk never sees it, and the
  // precise amount alone counts (ApplyPrecision honours a positive precise amount).
  const amountAbsent = input.amount === undefined || (input.precise_amount !== undefined && zeroDecimal(input.amount));
  const fromAmount = amountAbsent ? undefined : amountToPrecise(input.amount, precision.value, { allowZero });
  if (fromPrecise && !fromPrecise.ok) {
    return fail('precise_amount', fromPrecise.rejection.message, isZero(input.precise_amount) ? 'TXN_INVALID_AMOUNT' : undefined);
  }
  if (fromAmount && !fromAmount.ok) return fail('amount', fromAmount.rejection.message);
  if (!fromPrecise && !fromAmount) {
    if (options.required === false) return accept({ precise_amount: 0n, precision: precision.value });
    return fail('amount', 'amount or precise_amount is required');
  }
  // One of the two, as Blnk (and ../shared/spec/interface.md) have it, even when they agree.
  if (fromPrecise && fromAmount) return fail('amount', 'either amount or precise_amount should be provided, not both');
  return accept({ precise_amount: (fromPrecise ?? fromAmount)!.value as bigint, precision: precision.value });
}

/** A number with a fractional part (Blnk's TXN_PRECISION_NOT_INTEGER condition). */
function fractional(value: unknown): boolean {
  const text = decimalTextOf(value);
  return text !== undefined && /^[0-9]*\.[0-9]*[1-9][0-9]*$/.test(text);
}

/** A decimal amount of exactly zero (`0`, `0.0`, `"0.00"`). */
function zeroDecimal(value: unknown): boolean {
  const text = decimalTextOf(value);
  return text !== undefined && /^-?0+(\.0+)?$/.test(text);
}

/** An amount of exactly zero: not a malformed amount but a non-positive one (TXN_INVALID_AMOUNT). */
function isZero(value: unknown): boolean {
  const parsed = parsePreciseAmount(value, { allowZero: true });
  return parsed.ok && parsed.value === 0n;
}

const PERCENT = /^([0-9]+)(?:\.([0-9]{1,18}))?%$/;

type ShareShape = NonNullable<TransactionShape['sources']>[number];

/** A share request from its shape, or what is wrong with it. */
function shareRequest(share: ShareShape, precision: bigint): Result<ShareCommand, Failure> {
  const invalid = (message: string): Result<ShareCommand, Failure> => refuse({ code: 'TXN_VALIDATION_ERROR', message });
  if (share.precise_distribution !== undefined) {
    const exact = parsePreciseAmount(share.precise_distribution);
    if (!exact.ok) return invalid(`precise_distribution ${exact.rejection.message}`);
    return accept({ identifier: share.identifier, distribution: exact.value.toString(), request: { kind: 'fixed', amount: exact.value } });
  }
  const text = (share.distribution ?? '').trim();
  if (text === '') return invalid('distribution is required');
  let request: ShareRequest;
  const percent = PERCENT.exec(text);
  if (text.toLowerCase() === 'left') request = { kind: 'left' };
  else if (percent) {
    const fraction = percent[2] ?? '';
    request = { kind: 'percent', numerator: BigInt((percent[1] as string) + fraction), denominator: 10n ** BigInt(fraction.length) };
  } else {
    const fixed = amountToPrecise(text, precision);
    if (!fixed.ok) return invalid(`distribution must be an amount, a percentage like 25% or "left" (${fixed.rejection.message})`);
    request = { kind: 'fixed', amount: fixed.value };
  }
  return accept({ identifier: share.identifier, distribution: text, request });
}

type PreconditionShape = z.output<typeof preconditionShape>;

/**
 * The preconditions of a request as the engine takes them, or undefined after reporting each that is
 * wrong: every one names a version, or a field with an operator and a precise_value, or both.
 */
export function toPreconditions(list: readonly PreconditionShape[], report: ReportIssue, path: PropertyKey[] = []): Precondition[] | undefined {
  const preconditions: Precondition[] = [];
  let failed = false;
  for (const [index, shape] of list.entries()) {
    const at = [...path, 'preconditions', index];
    const condition = [shape.field, shape.operator, shape.precise_value];
    const given = condition.filter((part) => part !== undefined).length;
    if (given !== 0 && given !== 3) {
      failed = true;
      report([...at, shape.field === undefined ? 'field' : shape.operator === undefined ? 'operator' : 'precise_value'], 'a condition needs field, operator and precise_value together');
      continue;
    }
    if (given === 0 && shape.version === undefined) {
      failed = true;
      report([...at, 'version'], 'give a version, a condition (field, operator, precise_value), or both');
      continue;
    }
    const precondition: Precondition = { balance_id: shape.balance_id };
    if (shape.version !== undefined) precondition.version = shape.version;
    if (given === 3) {
      const value = parseSignedPreciseAmount(shape.precise_value);
      if (!value.ok) {
        failed = true;
        report([...at, 'precise_value'], `precise_value ${value.rejection.message}`);
        continue;
      }
      precondition.field = shape.field;
      precondition.operator = shape.operator;
      precondition.precise_value = value.value;
    }
    preconditions.push(precondition);
  }
  return failed ? undefined : preconditions;
}

/** The preconditions of a body checked by its schema alone (a hold's commit or void), or the 400 naming each that is wrong. */
export function validatePreconditions(list: readonly PreconditionShape[] | undefined, path: PropertyKey[] = []): Precondition[] | undefined {
  if (list === undefined || list.length === 0) return undefined;
  const details: Record<string, string> = {};
  const preconditions = toPreconditions(list, (at, message) => { details[at.map(String).join('.')] ??= message; }, path);
  if (!preconditions) throw validationError(details);
  return preconditions;
}

const TIME_FIELDS = ['inflight_expiry_date', 'inflight_commit_date', 'scheduled_for', 'effective_date'] as const;

/**
 * The command a transaction shape stands for, or undefined after reporting what is wrong. `complete`
 * is false when the shape came from a lenient parse (some field failed and is absent here): the
 * conversions still run, to report their own problems, but no command is made.
 */
function toCommand(shape: Partial<TransactionShape>, complete: boolean, report: ReportIssue, path: PropertyKey[] = []): CreateTransactionCommand | undefined {
  let failed = !complete;
  const fail = (message: string, ...at: PropertyKey[]): void => {
    failed = true;
    report([...path, ...at], message);
  };
  if ((shape.source === undefined) === (shape.sources === undefined)) fail('give exactly one of source and sources', 'source');
  if ((shape.destination === undefined) === (shape.destinations === undefined)) fail('give exactly one of destination and destinations', 'destination');
  const sameBalance = shape.source !== undefined && (shape.source === shape.destination
    || (shape.destinations ?? []).some((share) => share.identifier === shape.source));
  if (sameBalance || (shape.destination !== undefined && (shape.sources ?? []).some((share) => share.identifier === shape.destination))) {
    fail('source and destination cannot be the same balance', 'destination');
  }
  const amount = resolveAmount(shape);
  if (!amount.ok) {
    failed = true;
    report([...path, amount.rejection.field], amount.rejection.message, amount.rejection.code);
  }
  const times = { inflight_expiry_date: 0, inflight_commit_date: 0, scheduled_for: 0, effective_date: 0 };
  for (const field of TIME_FIELDS) {
    const text = shape[field];
    if (text === undefined) continue;
    const time = parseTimeInput(text);
    if (time.ok) times[field] = time.value;
    else fail(time.rejection.message, field);
  }
  let overdraftLimit = 0n;
  if (amount.ok && shape.overdraft_limit !== undefined && shape.overdraft_limit !== null) {
    // Major units times the precision, exactly (0.29 at precision 100 is 29); a limit that would need
    // rounding to a whole smallest unit is refused, as an amount is.
    const limit = amountToPrecise(shape.overdraft_limit, amount.value.precision, { allowZero: true });
    if (limit.ok) overdraftLimit = limit.value;
    else fail(limit.rejection.message, 'overdraft_limit');
  }
  let metaData: Record<string, unknown> = {};
  if (shape.meta_data) {
    const normalized = normalizeMetaData(shape.meta_data);
    if (typeof normalized === 'string') fail(normalized, 'meta_data');
    else metaData = normalized;
  }
  let preconditions: Precondition[] | undefined;
  if (shape.preconditions && shape.preconditions.length > 0) {
    preconditions = toPreconditions(shape.preconditions, report, path);
    if (!preconditions) failed = true;
  }
  let exchange: ExchangeRequest | undefined;
  const asksExchange = shape.rate !== undefined || shape.destination_currency !== undefined || shape.destination_precision !== undefined || shape.rounding !== undefined;
  if (asksExchange) {
    exchange = toExchange(shape, report, path);
    if (!exchange) failed = true;
  }
  const shares: Partial<Record<'sources' | 'destinations', ShareCommand[]>> = {};
  if (amount.ok) {
    for (const side of ['sources', 'destinations'] as const) {
      const list = shape[side];
      if (!list) continue;
      const commands: ShareCommand[] = [];
      for (const [index, share] of list.entries()) {
        const request = shareRequest(share, amount.value.precision);
        if (!request.ok) fail(request.rejection.message, side, index, 'distribution');
        else commands.push(request.value);
      }
      shares[side] = commands;
    }
  }
  if (failed || !amount.ok || shape.currency === undefined) return undefined;
  const command: CreateTransactionCommand = {
    source: shape.source ?? '',
    destination: shape.destination ?? '',
    precise_amount: amount.value.precise_amount,
    precision: amount.value.precision,
    currency: shape.currency,
    reference: shape.reference ?? '',
    description: shape.description ?? '',
    meta_data: metaData,
    allow_overdraft: shape.allow_overdraft ?? false,
    overdraft_limit: overdraftLimit,
    skip_queue: shape.skip_queue ?? false,
    inflight: shape.inflight ?? false,
    ...times,
    atomic: shape.atomic ?? false,
  };
  if (shares.sources) command.sources = shares.sources;
  if (shares.destinations) command.destinations = shares.destinations;
  if (preconditions) command.preconditions = preconditions;
  if (exchange) command.exchange = exchange;
  return command;
}

/**
 * The exchange a body asks for (engine/exchange.ts), or undefined after reporting what is wrong: a rate
 * and a destination currency other than the transaction's, a destination precision as a precision is
 * read (absent or 0: 1), one source and one destination (splits do not exchange). Whether the amount
 * converts exactly is the engine's to judge (TXN_EXCHANGE_INEXACT), as the dry run then reports it.
 */
function toExchange(shape: Partial<TransactionShape>, report: ReportIssue, path: PropertyKey[]): ExchangeRequest | undefined {
  let failed = false;
  const fail = (message: string, field: string): void => {
    failed = true;
    report([...path, field], message);
  };
  if (shape.rate === undefined) fail('an exchange needs a rate (destination units per source unit)', 'rate');
  if (shape.destination_currency === undefined) fail('an exchange needs a destination_currency', 'destination_currency');
  else if (shape.destination_currency === shape.currency) fail('must differ from currency (an exchange is between two currencies)', 'destination_currency');
  if (shape.sources !== undefined || shape.destinations !== undefined) {
    fail('an exchange has one source and one destination: splits do not exchange', shape.sources !== undefined ? 'sources' : 'destinations');
  }
  const precision = shape.destination_precision === undefined || isZero(shape.destination_precision)
    ? { ok: true as const, value: 1n }
    : parsePrecision(shape.destination_precision);
  if (!precision.ok) fail(precision.rejection.message, 'destination_precision');
  let rate: RateResult | undefined;
  if (shape.rate !== undefined) {
    rate = typeof shape.rate === 'string' ? parseDecimalRate(shape.rate) : parseRatePair(shape.rate.numerator, shape.rate.denominator);
    if (!rate.ok) fail(`rate ${rate.message}`, 'rate');
  }
  if (failed || !rate?.ok || !precision.ok || shape.destination_currency === undefined) return undefined;
  const text = typeof shape.rate === 'string' ? shape.rate : `${rate.rate.numerator}/${rate.rate.denominator}`;
  const exchange: ExchangeRequest = {
    rate: text,
    rate_numerator: rate.rate.numerator,
    rate_denominator: rate.rate.denominator,
    destination_currency: shape.destination_currency,
    destination_precision: precision.value,
  };
  if (shape.rounding !== undefined) exchange.rounding = shape.rounding;
  return exchange;
}

export interface ValidatedTransaction {
  command: CreateTransactionCommand;
  dry_run: boolean;
}

const lenientTransaction = lenient(transactionShape);

/**
 * The codes a transaction body is refused with (validateTransaction and each item of validateBulk): the
 * general one, and the two Blnk names for a fractional precision and a zero amount (resolveAmount).
 */
export const TRANSACTION_VALIDATION_CODES = ['TXN_VALIDATION_ERROR', 'TXN_PRECISION_NOT_INTEGER', 'TXN_INVALID_AMOUNT'] as const satisfies readonly ValidationCode[];

/** The codes refuseListSize answers with: an empty list, and one over the limit (or over the legs a request may ask for). */
export const LIST_SIZE_CODES = ['TXN_BULK_EMPTY', 'TXN_BULK_LIMIT_EXCEEDED'] as const satisfies readonly ErrorCode[];

export function validateTransaction(input: unknown): ValidatedTransaction {
  return validateShapeThen(transactionShape, lenientTransaction, input, (shape, complete, report) => {
    const command = toCommand(shape, complete, report);
    return command && { command, dry_run: shape.dry_run ?? false };
  }, 'TXN_VALIDATION_ERROR');
}

export interface ValidatedBulk {
  command: BulkCommand;
  dry_run: boolean;
  /** Answer 202 at once, as Blnk's asynchronous batches do (the batch is still recorded before that). */
  run_async: boolean;
}

const lenientBulk = lenient(bulkShape, { transactions: lenientItems(lenientTransaction) });

/**
 * A request's list of items: empty (or missing) and over the limit have codes of their own (Blnk's
 * TXN_BULK_EMPTY and TXN_BULK_LIMIT_EXCEEDED), checked before any item is. A body that is not an
 * object, or a list that is not an array, is left to the shape check.
 */
export function refuseListSize(input: unknown, field: string, itemsMax: number): void {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return;
  const items = (input as Record<string, unknown>)[field];
  if (items === undefined || items === null || (Array.isArray(items) && items.length === 0)) {
    throw new ApiError('TXN_BULK_EMPTY', `${field} cannot be empty`, { [field]: 'must not be empty' });
  }
  if (Array.isArray(items) && items.length > itemsMax) {
    throw new ApiError('TXN_BULK_LIMIT_EXCEEDED', `too many ${field}; max is ${itemsMax}`, { [field]: `at most ${itemsMax}` });
  }
}

export function validateBulk(input: unknown): ValidatedBulk {
  refuseListSize(input, 'transactions', BULK_TRANSACTIONS_MAX);
  return validateShapeThen(bulkShape, lenientBulk, input, (shape, complete, report) => {
    const items = shape.transactions as Array<Partial<TransactionShape> | undefined> | undefined;
    if (!items) return undefined;
    const transactions: CreateTransactionCommand[] = [];
    for (const [index, item] of items.entries()) {
      const command = item && toCommand(item, complete, report, ['transactions', index]);
      if (command) transactions.push(command);
    }
    if (!complete || transactions.length !== items.length) return undefined;
    const legs = transactions.reduce((total, command) => total + legCount(command), 0);
    if (legs > REQUEST_LEGS_MAX) {
      const message = `the batch asks for ${legs} legs; at most ${REQUEST_LEGS_MAX} in one request (a split counts sources + destinations - 1)`;
      throw new ApiError('TXN_BULK_LIMIT_EXCEEDED', message, { transactions: message });
    }
    return {
      command: {
        transactions,
        atomic: shape.atomic ?? false,
        inflight: shape.inflight ?? false,
        skip_queue: shape.skip_queue ?? false,
        // Logged with the batch's outcome, which the notification webhook announces (bulk_transaction.*).
        ...(shape.run_async ? { run_async: true } : {}),
      },
      dry_run: shape.dry_run ?? false,
      run_async: shape.run_async ?? false,
    };
  }, 'TXN_VALIDATION_ERROR');
}
