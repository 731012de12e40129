// Meaningful values for fields a schema types only loosely. A schema says `source` is a string of at most
// 128 characters; a string drawn from that alone never names a balance, so every transfer would fail the
// same early check and the code behind it would go untried. These hints, by field name at any depth,
// draw ids that exist on the server (pool references), amounts that convert, splits that add up, times
// around now and the operators the query side knows. The schema generator takes a hint for most values
// of a hinted field and the schema's own shape for the rest, and mutations then break both.

import fc from 'fast-check';
import { FuzzObject, PoolRef, RawNumber, TimeFromNow, type FuzzJson, type PoolName } from './fuzz-json.js';
import { oddString } from './hostile-values.js';
import { MONITOR_FIELDS, MONITOR_OPERATORS } from '../engine/balance-monitors.js';
import { PRECONDITION_FIELDS, PRECONDITION_OPERATORS } from '../engine/precondition.js';

export const CURRENCIES = ['USD', 'EUR', 'NGN', 'JPY', 'BTC'] as const;

const FILTER_FIELDS = [
  'created_at', 'currency', 'precise_amount', 'status', 'reference', 'ledger_id', 'balance_id', 'name', 'source',
  'destination', 'identity_type', 'balance', 'version', 'inflight', 'scheduled_for', 'batch_id', 'indicator',
  'meta_data.k1', 'meta_data.__proto__', 'meta_data', 'nope', 'created_at; DROP TABLE x',
] as const;
const FILTER_OPERATORS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'between', 'like', 'ilike', 'isnull', 'isnotnull', 'EQ', 'regex'] as const;
const SCOPES = [
  'ledgers:read', 'ledgers:write', 'balances:read', 'balances:write', 'transactions:read', 'transactions:write',
  'transactions:*', 'identities:*', 'hooks:*', 'api-keys:*', 'api-keys:write', 'search:read', 'metadata:write',
  'reconciliation:read', '*:read', '*:*',
] as const;
/** Offsets from now, in ms: the past, the next seconds (so timers fire during a run), and far ahead. */
const TIME_OFFSETS_MS = [-86_400_000, -1_000, 500, 1_000, 2_000, 5_000, 30_000, 3_600_000, 31_536_000_000] as const;
/** Input formats, the date-only one (which the server refuses) rarely. */
const timeStyle = fc.oneof(
  { weight: 4, arbitrary: fc.constant('iso' as const) },
  { weight: 2, arbitrary: fc.constantFrom('space' as const, 'offset' as const) },
  { weight: 1, arbitrary: fc.constant('date' as const) },
);

const ref = (pool: PoolName): fc.Arbitrary<FuzzJson> => fc.nat().map((pick): FuzzJson => new PoolRef(pool, pick));
const unknownId = (prefix: string): fc.Arbitrary<FuzzJson> => fc.uuid().map((uuid): FuzzJson => `${prefix}_${uuid}`);
const weighted = (...entries: Array<[number, fc.Arbitrary<FuzzJson>]>): fc.Arbitrary<FuzzJson> =>
  fc.oneof(...entries.map(([weight, arbitrary]) => ({ weight, arbitrary })));

const balanceName = fc.integer({ min: 0, max: 40 }).map((index): FuzzJson => `@fuzz-${index}`);
const balanceIdentifier = weighted([4, ref('balance')], [3, ref('indicator')], [2, balanceName], [1, fc.constant('@world')], [1, unknownId('bln')]);
const currency = weighted([9, fc.constantFrom(...CURRENCIES)], [1, fc.constantFrom('usd', 'USD ', 'X'.repeat(33), 'U.S.D', '')]);

const preciseAmount = weighted(
  [6, fc.integer({ min: 1, max: 1_000_000 })],
  [2, fc.bigInt({ min: 1n, max: 10n ** 40n - 1n }).map((value): FuzzJson => new RawNumber(value.toString()))],
  [2, fc.bigInt({ min: 1n, max: 10n ** 30n }).map((value): FuzzJson => value.toString())],
  [1, fc.constantFrom<FuzzJson>(0, -1, '0', '-5', 1.5, '1.5', new RawNumber('10000000000000000000000000000000000000000'))],
);
const decimalAmount = weighted(
  [5, fc.integer({ min: 1, max: 1_000_000 }).map((cents): FuzzJson => cents / 100)],
  [2, fc.integer({ min: 1, max: 1_000 })],
  [2, fc.tuple(fc.bigInt({ min: 0n, max: 10n ** 20n }), fc.bigInt({ min: 0n, max: 10n ** 12n })).map(([whole, fraction]): FuzzJson => new RawNumber(`${whole}.${fraction}`))],
  [1, fc.constantFrom<FuzzJson>('12.50', '0.001', 0, -1, 10.005, 1e-7, new RawNumber('1e21'))],
);
const precision = weighted(
  [6, fc.constantFrom<FuzzJson>(1, 100, 1000, 100_000_000)],
  [2, fc.constantFrom<FuzzJson>(new RawNumber('1000000000000000000'), '100', 10)],
  [1, fc.constantFrom<FuzzJson>(0, -100, 1.5, new RawNumber('10000000000000000000'))],
);

const time = weighted(
  [8, fc.tuple(fc.constantFrom(...TIME_OFFSETS_MS), timeStyle).map(([offset, style]): FuzzJson => new TimeFromNow(offset, style))],
  [1, fc.constantFrom<FuzzJson>('', 'soon', '2024-13-01T00:00:00Z', '0001-01-01T00:00:00Z', '275760-09-13T00:00:00Z', '1e308')],
);
const futureTime = fc.tuple(fc.constantFrom(60_000, 3_600_000, 31_536_000_000), timeStyle)
  .map(([offset, style]): FuzzJson => new TimeFromNow(offset, style));

/** One share of a split: an identifier and a distribution (percent, fixed amount or `left`). */
const share = fc.tuple(balanceIdentifier, weighted(
  [3, fc.integer({ min: 1, max: 100 }).map((percent): FuzzJson => `${percent}%`)],
  [2, fc.integer({ min: 1, max: 500 }).map((amount): FuzzJson => String(amount))],
  [2, fc.constant<FuzzJson>('left')],
  [1, fc.constantFrom<FuzzJson>('12.5%', '33.333333333333333333%', '0.01', '100%', '0%', '-1%')],
)).map(([identifier, distribution]): FuzzJson => new FuzzObject([['identifier', identifier], ['distribution', distribution]]));

/** Shares that add up: percentages below 100 in total and a last share taking what is left. */
const coherentShares = fc.array(fc.tuple(balanceIdentifier, fc.integer({ min: 1, max: 30 })), { minLength: 1, maxLength: 3 })
  .chain((parts) => balanceIdentifier.map((last): FuzzJson => [
    ...parts.map(([identifier, percent]) => new FuzzObject([['identifier', identifier], ['distribution', `${percent}%`]])),
    new FuzzObject([['identifier', last], ['distribution', 'left']]),
  ]));
const shares = weighted([3, coherentShares], [2, fc.array(share, { minLength: 1, maxLength: 5 })]);

const metaData = fc.array(
  fc.tuple(fc.oneof(fc.constantFrom('k1', 'k2', 'k3', 'note', 'order_id'), fc.string({ maxLength: 12 })), weighted(
    [3, fc.string({ maxLength: 20 })], [2, fc.integer()], [1, fc.boolean()], [1, fc.constant(null)],
    [1, fc.array(fc.integer({ min: 0, max: 9 }), { maxLength: 3 })],
    [1, fc.string({ maxLength: 8 }).map((text): FuzzJson => new FuzzObject([['nested', text]]))],
  )),
  { maxLength: 5 },
).map((entries): FuzzJson => new FuzzObject(entries));

const filterValue = weighted(
  [3, fc.string({ maxLength: 12 })], [2, fc.integer()], [1, fc.constantFrom<FuzzJson>('USD', 'APPLIED', '%', '_', '2024-01-01T00:00:00Z', true, null)],
  [1, ref('reference')], [1, ref('balance')],
);

const hookUrl = weighted(
  [4, fc.constantFrom<FuzzJson>('https://hooks.example.invalid/folio', 'http://receiver.example.invalid:9/x')],
  [1, fc.constantFrom<FuzzJson>(
    'http://127.0.0.1:9/hook', 'http://localhost:9/x', 'http://169.254.169.254/latest/meta-data/', 'http://[::1]:9/', 'http://10.0.0.1/',
    'http://[::ffff:169.254.169.254]/', 'http://0x7f000001/', 'http://2130706433/', 'http://metadata.google.internal/', 'ftp://example.com/', 'http://', '/relative', 'http://a b/',
  )],
  [1, fc.webUrl()],
);

/**
 * Preconditions that mostly hold or mostly fail by a little: a version near where balances stand, a
 * condition on a field around zero; now and then one broken (a condition without its operator, nothing
 * to check). More than the limit is left to the mutations and test/preconditions.int.test.ts: a bulk's
 * items would be refused for it too often.
 */
const validPrecondition = weighted(
  [3, fc.tuple(balanceIdentifier, fc.integer({ min: 0, max: 12 })).map(([balance, version]): FuzzJson => new FuzzObject([['balance_id', balance], ['version', version]]))],
  [4, fc.tuple(balanceIdentifier, fc.constantFrom(...PRECONDITION_FIELDS), fc.constantFrom(...PRECONDITION_OPERATORS), fc.integer({ min: -1_000_000, max: 1_000_000 }))
    .map(([balance, field, operator, value]): FuzzJson => new FuzzObject([['balance_id', balance], ['field', field], ['operator', operator], ['precise_value', value]]))],
);
const brokenPrecondition = weighted(
  [1, fc.tuple(balanceIdentifier, fc.constantFrom(...PRECONDITION_FIELDS)).map(([balance, field]): FuzzJson => new FuzzObject([['balance_id', balance], ['field', field]]))],
  [1, balanceIdentifier.map((balance): FuzzJson => new FuzzObject([['balance_id', balance]]))],
);
const preconditions = weighted(
  [20, fc.array(validPrecondition, { minLength: 1, maxLength: 3 })],
  [1, fc.tuple(validPrecondition, brokenPrecondition).map((pair): FuzzJson => pair)],
);

/** Exchange rates (engine/exchange-rate.ts): mostly ones that convert, now and then one refused. */
const rate = weighted(
  [6, fc.constantFrom<FuzzJson>('0.9', '1.5', '1.0845', '2', '110.25', '0.000001')],
  [2, fc.tuple(fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 1, max: 10_000 })).map(([numerator, denominator]): FuzzJson => new FuzzObject([['numerator', numerator], ['denominator', denominator]]))],
  [1, fc.constantFrom<FuzzJson>('0', '-1', '1e3', '1.2345678901234567891', '', ' 1')],
);

/** The hints, by field name. */
export const FIELD_HINTS: Readonly<Record<string, fc.Arbitrary<FuzzJson>>> = {
  source: balanceIdentifier,
  destination: balanceIdentifier,
  identifier: balanceIdentifier,
  sources: shares,
  destinations: shares,
  currency,
  precise_amount: preciseAmount,
  precise_distribution: preciseAmount,
  amount: decimalAmount,
  precision,
  reference: weighted([6, fc.uuid().map((uuid): FuzzJson => `ref-${uuid}`)], [2, ref('reference')], [1, fc.constant('')]),
  // Mostly not blank: a bulk's items each need one, and a blank one refused the whole batch most of the time.
  description: weighted([19, fc.string({ minLength: 1, maxLength: 40 })], [1, fc.constant('')]),
  meta_data: metaData,
  inflight_expiry_date: time,
  inflight_commit_date: time,
  scheduled_for: time,
  dob: time,
  timestamp: time,
  expires_at: weighted([5, futureTime], [1, time]),
  allow_overdraft: fc.constantFrom(true, true, true, false),
  overdraft_limit: weighted([4, decimalAmount], [1, fc.constantFrom<FuzzJson>(0, -1, 0.295, '1e3', null, 'ten')]),
  // Indicators live in the general ledger only, so it is drawn about as often as a ledger of the pool.
  ledger_id: weighted([3, ref('ledger')], [3, fc.constant('general_ledger_id')], [1, unknownId('ldg')]),
  track_fund_lineage: fc.constantFrom(false, false, false, true),
  effective_date: time,
  closes_at: time,
  preconditions,
  rate,
  destination_currency: currency,
  destination_precision: precision,
  rounding: weighted([6, fc.constantFrom('down', 'half_even', 'up')], [1, fc.constantFrom('nearest', 'DOWN', '')]),
  allocation_strategy: weighted([4, fc.constantFrom('FIFO', 'LIFO', 'PROPORTIONAL', ' fifo ')], [1, fc.constantFrom('', 'RANDOM')]),
  identity_id: weighted([4, ref('identity')], [1, unknownId('idt')], [1, fc.constant('')]),
  indicator: weighted([3, fc.integer({ min: 0, max: 200 }).map((index): FuzzJson => `@named-${index}`)], [1, fc.constant('')]),
  transaction_id: weighted([4, ref('hold')], [2, ref('transaction')], [1, unknownId('txn')]),
  transaction_ids: fc.array(weighted([4, ref('hold')], [1, ref('transaction')], [1, unknownId('txn')]), { minLength: 1, maxLength: 5 }),
  status: weighted([8, fc.constantFrom('commit', 'void')], [1, fc.constantFrom('COMMIT', ' void ', 'refund', '')]),
  owner: fc.constantFrom('owner-a', 'owner-b', 'owner-c'),
  scopes: fc.array(fc.constantFrom(...SCOPES), { minLength: 1, maxLength: 4 }),
  // An API key's bucket, in bounds and generous, so the keys the fuzzer makes are not all refused 429
  // (the schema's own draws, one in five, bring the ones out of bounds).
  rate_limit: fc.tuple(fc.integer({ min: 50, max: 100_000 }), fc.integer({ min: 50, max: 100_000 }))
    .map(([rate, burst]): FuzzJson => new FuzzObject([['requests_per_second', rate], ['burst', burst]])),
  url: hookUrl,
  // Active hooks fan every transaction out to a delivery; a few are enough to exercise that path.
  active: fc.constantFrom(false, false, false, true),
  field: fc.constantFrom(...FILTER_FIELDS),
  operator: fc.constantFrom(...FILTER_OPERATORS),
  value: filterValue,
  values: fc.array(filterValue, { maxLength: 4 }),
  logical_operator: fc.constantFrom('and', 'or', 'AND', 'xor'),
  sort_by: fc.constantFrom('created_at', 'precise_amount', 'name', 'created_at:desc', 'precise_amount:asc', 'nope:asc', ''),
  sort_order: fc.constantFrom('asc', 'desc', 'sideways'),
  q: weighted([3, fc.constant('*')], [2, fc.constantFrom('fuzz', 'USD', 'ref', 'named', '"', 'AND OR NOT', '*:*', 'NEAR(a b)')], [1, ref('reference')], [1, oddString]),
  filter_by: fc.constantFrom(
    '', 'created_at:[0..2000000000]', 'currency:=USD', 'precise_amount:>100', 'status:=APPLIED && currency:=USD',
    'created_at:[2000000000..0]', 'nope:=1', 'currency:=[USD,EUR]', '&&', 'precise_amount:>1e400',
    'status:=APPLIED || currency:=EUR', '(status:=VOID || status:=APPLIED) && precise_amount:>5', '((', 'a:=1)', '$balances(currency:=USD)',
  ),
  query_by: fc.constantFrom('reference,description', 'source,destination', 'meta_data', 'name', 'meta_data.x', 'nope', ''),
  facet_by: fc.constantFrom('status,currency', 'currency', 'meta_data.kind', 'created_at', 'nope', 'status(a:[0,1])'),
  group_by: fc.constantFrom('status', 'currency,status', 'meta_data.kind', 'balance_id', 'nope'),
  include_fields: fc.constantFrom('transaction_id,precise_amount', 'meta_data.kind', 'nope', '$ledgers(*)', ''),
  exclude_fields: fc.constantFrom('meta_data', 'hash,amount', 'nope'),
  highlight_fields: fc.constantFrom('description', 'meta_data', 'nope'),
};

/**
 * Hints a route's body needs where a field name means something else than in the shared table: a
 * balance monitor's condition names a balance field and a comparison, not a filter's.
 */
export const MONITOR_HINTS: Readonly<Record<string, fc.Arbitrary<FuzzJson>>> = {
  balance_id: weighted([4, ref('balance')], [1, unknownId('bln')]),
  // The whole condition, in the two forms Blnk takes (value with precision, or precise_value), so
  // most reach the monitor code; the schema's own draws still try broken ones.
  condition: weighted(
    [3, fc.tuple(fc.constantFrom(...MONITOR_FIELDS), fc.constantFrom(...MONITOR_OPERATORS), fc.integer({ min: -100_000, max: 1_000_000 }), fc.constantFrom(1, 100, 1000))
      .map(([field, operator, cents, scale]): FuzzJson => new FuzzObject([['field', field], ['operator', operator], ['value', cents / 100], ['precision', scale * 100]]))],
    [2, fc.tuple(fc.constantFrom(...MONITOR_FIELDS), fc.constantFrom(...MONITOR_OPERATORS), preciseAmount)
      .map(([field, operator, value]): FuzzJson => new FuzzObject([['field', field], ['operator', operator], ['precise_value', value]]))],
    [1, fc.constantFrom<FuzzJson>(new FuzzObject([['field', 'available'], ['operator', '>'], ['value', 1]]), new FuzzObject([['field', 'balance'], ['operator', '~']]))],
  ),
};

/**
 * Hints of the transaction routes, where `field` and `operator` are a precondition's (a balance field and
 * a comparison), not a filter's: the schema's own draws of a precondition then mostly hold together too.
 */
export const TRANSACTION_HINTS: Readonly<Record<string, fc.Arbitrary<FuzzJson>>> = {
  balance_id: balanceIdentifier,
  field: weighted([30, fc.constantFrom(...PRECONDITION_FIELDS)], [1, fc.constantFrom('queued_balance', 'BALANCE', '')]),
  operator: weighted([30, fc.constantFrom(...PRECONDITION_OPERATORS)], [1, fc.constantFrom('>', '=', 'gte', '')]),
  version: weighted([30, fc.integer({ min: 0, max: 12 })], [1, fc.constantFrom<FuzzJson>(-1, 1.5, new RawNumber('9007199254740993'))]),
  precise_value: weighted([30, fc.integer({ min: -1_000_000, max: 1_000_000 })], [1, fc.constantFrom<FuzzJson>('-0', '1.5', '', new RawNumber('-100000000000000000000000000000000000000000'))]),
};
