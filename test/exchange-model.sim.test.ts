// Seeded random histories of exchanges (engine/exchange.ts) against a reference model written from the
// contract (docs/decisions-beyond.md, "Exchanges"): exchanges between USD, EUR and JPY created synchronously
// or queued, as transfers or holds, at rates that convert exactly or not, with each rounding rule or none;
// partial commits, commits of the rest, voids, and refunds (a voided hold's refund is a hold the other way,
// settled in parts in turn). The model computes every destination amount and part itself. After every
// step every balance equals the model's, every currency sums to zero (settled and inflight), and no hold's
// destination parts add up to more than it held, or to other than it held once it is closed. At the end
// the log replays into a fresh engine with the same state. Synchronous exchanges now and then carry
// preconditions on their source and destination (engine/precondition.ts), at the edge of holding: the
// model judges each against the figures it computes the exchange would leave, and a refused exchange
// must leave every balance as it was. A failure names its seed; FOLIO_SEED=<seed> replays exactly that
// history.

import t from 'tap';
import type { CreateTransactionCommand } from '../engine/commands.js';
import type { RoundingRule } from '../engine/exchange-rate.js';
import { PRECONDITION_FIELDS, PRECONDITION_OPERATORS, type Precondition, type PreconditionField } from '../engine/precondition.js';
import type { ExchangeRequest } from '../engine/records.js';
import { checkReplay, engineRig, fund, ok, transfer, type EngineRig } from './helpers/engine-rig.js';
import { SeededRandom, stableText, testSeeds } from './helpers/deterministic.js';

const STEPS_PER_SEED = 600;
const PRECISIONS: Record<string, bigint> = { USD: 100n, EUR: 100n, JPY: 1n };
const CURRENCIES = Object.keys(PRECISIONS);
/** Rates as text and as the fraction the model reads them as (destination per source, major units). */
const RATES: Array<[string, bigint, bigint]> = [
  ['0.9', 9n, 10n], ['1.0845', 10845n, 10000n], ['110.25', 11025n, 100n], ['0.0091', 91n, 10000n], ['1.5', 3n, 2n], ['2', 2n, 1n], ['0.333', 333n, 1000n],
];
const ROUNDINGS: Array<RoundingRule | undefined> = [undefined, undefined, 'down', 'half_even', 'up'];
const HOLDERS = ['@p1', '@p2'];
const FUNDING = 10n ** 15n;

interface Terms {
  numerator: bigint;
  denominator: bigint;
  sourcePrecision: bigint;
  destinationPrecision: bigint;
  rounding?: RoundingRule;
}

interface ModelHold {
  id: string;
  currency: string;
  destinationCurrency: string;
  source: string;
  destination: string;
  amount: bigint;
  destinationAmount: bigint;
  terms: Terms;
  committed: bigint;
  /** Destination parts settled by its commits. */
  parts: bigint;
  open: boolean;
}

interface Settled {
  id: string;
  /** What moved on each side, for a refund. */
  source: string;
  destination: string;
  currency: string;
  destinationCurrency: string;
  amount: bigint;
  destinationAmount: bigint;
  terms: Terms;
  /** A hold voided whole: refunded as a hold the other way. */
  restoresHold: boolean;
}

type Figures = { credit: bigint; debit: bigint; inflight_credit: bigint; inflight_debit: bigint };

/** A precondition's field as the contract defines it from a balance's figures. */
function fieldOf(figures: Figures, field: PreconditionField): bigint {
  const balance = figures.credit - figures.debit;
  switch (field) {
    case 'balance': return balance;
    case 'available_balance': return balance - figures.inflight_debit;
    case 'credit_balance': return figures.credit;
    case 'debit_balance': return figures.debit;
    case 'inflight_balance': return figures.inflight_credit - figures.inflight_debit;
    case 'inflight_credit_balance': return figures.inflight_credit;
    case 'inflight_debit_balance': return figures.inflight_debit;
  }
}

function copyFigures(figures: Map<string, Figures>): Map<string, Figures> {
  return new Map([...figures].map(([id, entry]) => [id, { ...entry }]));
}

function fail(seed: number, step: number, message: string): never {
  throw new Error(`seed ${seed}, step ${step}: ${message}`);
}

/** The model's own conversion: amount × n/d × destination precision / source precision, by the rule, or undefined. */
function modelConvert(amount: bigint, terms: Terms): bigint | undefined {
  const top = amount * terms.numerator * terms.destinationPrecision;
  const bottom = terms.denominator * terms.sourcePrecision;
  const whole = top / bottom;
  const rest = top - whole * bottom;
  if (rest === 0n) return whole;
  if (terms.rounding === undefined) return undefined;
  if (terms.rounding === 'down') return whole;
  if (terms.rounding === 'up') return whole + 1n;
  if (rest * 2n !== bottom) return rest * 2n < bottom ? whole : whole + 1n;
  return whole % 2n === 0n ? whole : whole + 1n;
}

/** The destination amount `settled` of a hold's source stands for (the contract's rule for parts). */
function upTo(hold: ModelHold, settled: bigint): bigint | undefined {
  if (settled === hold.amount) return hold.destinationAmount;
  const converted = modelConvert(settled, hold.terms);
  if (converted === undefined) return undefined;
  return converted < hold.destinationAmount ? converted : hold.destinationAmount;
}

class ExchangeHistory {
  readonly rig: EngineRig = engineRig();
  readonly rng: SeededRandom;
  /** Expected figures by balance id. */
  readonly figures = new Map<string, Figures>();
  readonly holds = new Map<string, ModelHold>();
  readonly settled: Settled[] = [];
  readonly refunded = new Set<string>();
  /**
   * Queued creates not yet carried out, by id: carried out by a queue turn, or earlier when a synchronous
   * write drains its source's mailbox first, so the model applies each once the engine shows it decided.
   */
  readonly queued = new Map<string, () => void>();
  readonly ids = new Map<string, string>();
  step = 0;
  /** What the history did, so a run that stopped exercising a path shows it. */
  readonly counts = { created: 0, inexact: 0, commits: 0, inexact_parts: 0, voids: 0, refunds: 0, restored_holds: 0, preconditions_held: 0, preconditions_failed: 0 };

  constructor(readonly seed: number) {
    this.rng = new SeededRandom(seed);
    for (const currency of CURRENCIES) {
      for (const holder of HOLDERS) {
        const id = fund(this.rig, holder, FUNDING, currency);
        this.ids.set(`${holder}/${currency}`, id);
        this.move(id, 'credit', FUNDING);
        const world = this.rig.engine.state.balanceByIndicator('@world', currency)!.balance_id;
        this.move(world, 'debit', FUNDING);
      }
    }
  }

  move(balanceId: string, field: keyof Figures, amount: bigint, into = this.figures): void {
    const figures = into.get(balanceId) ?? { credit: 0n, debit: 0n, inflight_credit: 0n, inflight_debit: 0n };
    figures[field] += amount;
    into.set(balanceId, figures);
  }

  exchangeBalance(currency: string): string {
    const found = this.rig.engine.state.balanceByIndicator(`@exchange_${currency}`, currency);
    if (!found) fail(this.seed, this.step, `no @exchange_${currency}`);
    return found.balance_id;
  }

  /** The model's postings of one step of an exchange, as the contract lays them out. */
  post(
    step: 'transfer' | 'hold' | 'commit' | 'void',
    hold: Pick<ModelHold, 'source' | 'destination' | 'currency' | 'destinationCurrency'>,
    amount: bigint,
    destinationAmount: bigint,
    into = this.figures,
  ): void {
    const pairs: Array<[string, string, bigint]> = [
      [hold.source, this.exchangeBalance(hold.currency), amount],
      [this.exchangeBalance(hold.destinationCurrency), hold.destination, destinationAmount],
    ];
    for (const [from, to, value] of pairs) {
      if (step === 'transfer' || step === 'commit') {
        this.move(from, 'debit', value, into);
        this.move(to, 'credit', value, into);
      }
      const sign = step === 'hold' ? 1n : step === 'transfer' ? 0n : -1n;
      this.move(from, 'inflight_debit', sign * value, into);
      this.move(to, 'inflight_credit', sign * value, into);
    }
  }

  run(): void {
    for (this.step = 0; this.step < STEPS_PER_SEED; this.step += 1) {
      const roll = this.rng.next();
      const open = [...this.holds.values()].filter((hold) => hold.open);
      if (roll < 0.4 || open.length === 0) this.create();
      else if (roll < 0.65) this.commit(this.rng.pick(open));
      else if (roll < 0.75) this.voidHold(this.rng.pick(open));
      else if (roll < 0.9) this.refund();
      else this.processQueue();
      this.check();
    }
    this.processQueue();
    this.check();
  }

  create(): void {
    const currency = this.rng.pick(CURRENCIES);
    const destinationCurrency = this.rng.pick(CURRENCIES.filter((other) => other !== currency));
    const [rate, numerator, denominator] = this.rng.pick(RATES);
    const rounding = this.rng.pick(ROUNDINGS);
    const amount = BigInt(this.rng.between(1, 5000));
    const inflight = this.rng.chance(0.5);
    const skipQueue = this.rng.chance(0.75);
    const source = this.ids.get(`${this.rng.pick(HOLDERS)}/${currency}`)!;
    const destination = this.ids.get(`${this.rng.pick(HOLDERS)}/${destinationCurrency}`)!;
    const exchange: ExchangeRequest = { rate, rate_numerator: numerator, rate_denominator: denominator, destination_currency: destinationCurrency, destination_precision: PRECISIONS[destinationCurrency]! };
    if (rounding !== undefined) exchange.rounding = rounding;
    const command: CreateTransactionCommand = transfer({
      source, destination, currency, precise_amount: amount, precision: PRECISIONS[currency]!, inflight, skip_queue: skipQueue, exchange,
    });
    const terms: Terms = { numerator, denominator, sourcePrecision: PRECISIONS[currency]!, destinationPrecision: PRECISIONS[destinationCurrency]!, rounding };
    const expected = modelConvert(amount, terms);
    const exact = expected !== undefined && expected !== 0n;
    let conditionsHold = true;
    if (exact && skipQueue && this.exchangesExist(currency, destinationCurrency) && this.rng.chance(0.3)) {
      // A synchronous exchange first carries out its source's queued ones: settle the queue, so the
      // figures the model judges against are the ones the exchange will meet.
      this.processQueue();
      this.check();
      const after = copyFigures(this.figures);
      this.post(inflight ? 'hold' : 'transfer', { source, destination, currency, destinationCurrency }, amount, expected, after);
      command.preconditions = this.edgePreconditions([source, destination], after);
      conditionsHold = command.preconditions.every((condition) => this.conditionHolds(condition, after));
    }
    const outcome = this.rig.engine.run({ op: 'transaction.create', ...command });
    if (!exact) {
      if (outcome.ok || outcome.rejection.code !== 'TXN_EXCHANGE_INEXACT') fail(this.seed, this.step, `expected TXN_EXCHANGE_INEXACT for ${amount} at ${rate} ${rounding ?? 'without rounding'}`);
      this.counts.inexact += 1;
      return;
    }
    if (command.preconditions) {
      if (!conditionsHold) {
        if (outcome.ok || outcome.rejection.code !== 'TXN_PRECONDITION_FAILED') {
          fail(this.seed, this.step, `expected TXN_PRECONDITION_FAILED for ${stableText(command.preconditions)}, got ${outcome.ok ? 'ok' : outcome.rejection.code}`);
        }
        this.counts.preconditions_failed += 1;
        return;
      }
      this.counts.preconditions_held += 1;
    }
    const record = ok(outcome).transaction;
    if (record.exchange?.destination_precise_amount !== expected) fail(this.seed, this.step, `${amount} at ${rate}: engine ${record.exchange?.destination_precise_amount}, model ${expected}`);
    this.counts.created += 1;
    const hold: ModelHold = { id: record.transaction_id, currency, destinationCurrency, source, destination, amount, destinationAmount: expected, terms, committed: 0n, parts: 0n, open: true };
    const apply = (): void => {
      if (inflight) {
        this.post('hold', hold, amount, expected);
        this.holds.set(hold.id, hold);
      } else {
        this.post('transfer', hold, amount, expected);
        this.settled.push({ ...hold, restoresHold: false });
      }
    };
    if (skipQueue) apply();
    else this.queued.set(hold.id, apply);
  }

  /** Whether both exchange balances exist yet (an exchange creates them on first use, with figures the model then starts). */
  exchangesExist(currency: string, destinationCurrency: string): boolean {
    const state = this.rig.engine.state;
    return state.balanceByIndicator(`@exchange_${currency}`, currency) !== undefined
      && state.balanceByIndicator(`@exchange_${destinationCurrency}`, destinationCurrency) !== undefined;
  }

  /** One or two conditions on the given balances, each at, one past or one short of what the exchange leaves. */
  edgePreconditions(balanceIds: string[], after: Map<string, Figures>): Precondition[] {
    const conditions: Precondition[] = [];
    for (let count = this.rng.between(1, 2); conditions.length < count;) {
      const balanceId = this.rng.pick(balanceIds);
      const field = this.rng.pick(PRECONDITION_FIELDS);
      const value = fieldOf(after.get(balanceId)!, field) + this.rng.pick([-1n, 0n, 0n, 1n]);
      conditions.push({ balance_id: balanceId, field, operator: this.rng.pick(PRECONDITION_OPERATORS), precise_value: value });
    }
    return conditions;
  }

  /** The model's judgement of one condition against the figures the exchange would leave. */
  conditionHolds(condition: Precondition, after: Map<string, Figures>): boolean {
    const found = fieldOf(after.get(condition.balance_id)!, condition.field!);
    const value = condition.precise_value!;
    if (condition.operator === '>=') return found >= value;
    if (condition.operator === '<=') return found <= value;
    return found === value;
  }

  commit(hold: ModelHold): void {
    const held = hold.amount - hold.committed;
    const amount = this.rng.chance(0.3) ? 0n : BigInt(this.rng.between(1, Number(held)));
    const settling = amount === 0n ? held : amount;
    const until = upTo(hold, hold.committed);
    const after = upTo(hold, hold.committed + settling);
    const outcome = this.rig.engine.run({ op: 'hold.act', transaction_id: hold.id, action: 'commit', precise_amount: amount, skip_queue: true });
    if (until === undefined || after === undefined) {
      if (outcome.ok || outcome.rejection.code !== 'TXN_EXCHANGE_INEXACT') fail(this.seed, this.step, `commit of ${settling} of ${hold.id}: expected TXN_EXCHANGE_INEXACT`);
      this.counts.inexact_parts += 1;
      return;
    }
    const child = ok(outcome).transaction;
    const part = after - until;
    if (child.exchange?.destination_precise_amount !== part) fail(this.seed, this.step, `commit part: engine ${child.exchange?.destination_precise_amount}, model ${part}`);
    this.post('commit', hold, settling, part);
    this.counts.commits += 1;
    hold.committed += settling;
    hold.parts += part;
    if (hold.parts > hold.destinationAmount) fail(this.seed, this.step, `${hold.id}: parts ${hold.parts} exceed the ${hold.destinationAmount} held`);
    if (hold.committed === hold.amount) {
      hold.open = false;
      if (hold.parts !== hold.destinationAmount) fail(this.seed, this.step, `${hold.id} committed whole: parts ${hold.parts}, held ${hold.destinationAmount}`);
      this.settled.push({ ...hold, restoresHold: false, amount: hold.amount, destinationAmount: hold.destinationAmount });
    }
  }

  voidHold(hold: ModelHold): void {
    const child = ok(this.rig.engine.run({ op: 'hold.act', transaction_id: hold.id, action: 'void', precise_amount: 0n, skip_queue: true })).transaction;
    const rest = hold.destinationAmount - hold.parts;
    if (child.exchange?.destination_precise_amount !== rest) fail(this.seed, this.step, `void: engine released ${child.exchange?.destination_precise_amount}, model ${rest}`);
    this.post('void', hold, hold.amount - hold.committed, rest);
    this.counts.voids += 1;
    hold.open = false;
    if (hold.committed > 0n) this.settled.push({ ...hold, amount: hold.committed, destinationAmount: hold.parts, restoresHold: false });
    else this.settled.push({ ...hold, restoresHold: true });
  }

  refund(): void {
    const candidates = this.settled.filter((entry) => !this.refunded.has(entry.id));
    if (candidates.length === 0) return;
    const original = this.rng.pick(candidates);
    this.refunded.add(original.id);
    const record = ok(this.rig.engine.run({ op: 'transaction.refund', transaction_id: original.id, skip_queue: true, description: '', meta_data: {} })).transaction;
    if (record.currency !== original.destinationCurrency || record.precise_amount !== original.destinationAmount
      || record.exchange?.destination_precise_amount !== original.amount) {
      fail(this.seed, this.step, `refund of ${original.id}: ${stableText(record)}`);
    }
    const back: ModelHold = {
      id: record.transaction_id, currency: original.destinationCurrency, destinationCurrency: original.currency,
      source: original.destination, destination: original.source, amount: original.destinationAmount, destinationAmount: original.amount,
      terms: { numerator: original.terms.denominator, denominator: original.terms.numerator, sourcePrecision: original.terms.destinationPrecision, destinationPrecision: original.terms.sourcePrecision, rounding: original.terms.rounding },
      committed: 0n, parts: 0n, open: true,
    };
    this.counts.refunds += 1;
    if (original.restoresHold) {
      this.counts.restored_holds += 1;
      this.post('hold', back, back.amount, back.destinationAmount);
      this.holds.set(back.id, back);
    } else this.post('transfer', back, back.amount, back.destinationAmount);
  }

  processQueue(): void {
    this.rig.engine.run({ op: 'queue.process', items_max: 1000 });
  }

  check(): void {
    const state = this.rig.engine.state;
    for (const [id, apply] of this.queued) {
      const status = state.transaction(id)?.status;
      if (status === 'QUEUED') continue;
      if (status !== 'APPLIED' && status !== 'INFLIGHT') fail(this.seed, this.step, `queued ${id} came to ${status}`);
      this.queued.delete(id);
      apply();
    }
    for (const [id, expected] of this.figures) {
      const actual = state.balances.get(id);
      if (!actual) fail(this.seed, this.step, `no balance ${id}`);
      const figures = { credit: actual.credit_balance, debit: actual.debit_balance, inflight_credit: actual.inflight_credit_balance, inflight_debit: actual.inflight_debit_balance };
      if (stableText(figures) !== stableText(expected)) fail(this.seed, this.step, `${id} (${actual.indicator} ${actual.currency}): engine ${stableText(figures)}, model ${stableText(expected)}`);
    }
    const sums = new Map<string, [bigint, bigint]>();
    for (const balance of state.balances.values()) {
      const [settled, inflight] = sums.get(balance.currency) ?? [0n, 0n];
      sums.set(balance.currency, [settled + balance.credit_balance - balance.debit_balance, inflight + balance.inflight_credit_balance - balance.inflight_debit_balance]);
    }
    for (const [currency, [settled, inflight]] of sums) {
      if (settled !== 0n || inflight !== 0n) fail(this.seed, this.step, `${currency} sums to ${settled} settled, ${inflight} inflight`);
    }
  }
}

const totals = new Map<string, number>();
for (const seed of testSeeds([1, 2, 3, 41])) {
  t.test(`exchange history, seed ${seed}`, async (t) => {
    const history = new ExchangeHistory(seed);
    history.run();
    t.pass(`${STEPS_PER_SEED} steps: balances as modelled, every currency at zero, no hold's parts past what it held`);
    for (const [path, count] of Object.entries(history.counts)) totals.set(path, (totals.get(path) ?? 0) + count);
    checkReplay(t, history.rig);
  });
}

t.test('the histories went down every path', async (t) => {
  for (const [path, count] of totals) t.ok(count > 0, `${path}: ${count}`);
});
