// Seeded random histories of the ledger engine (in-memory log and store, a manual clock, counted ids)
// checked step by step against a reference model written here from the contract alone: a Map of
// balances, a FIFO of queued transfers per source balance and a Map of references. After every step all
// balances must equal the model's and every currency must sum to zero; at the end the log must replay
// into a fresh engine with identical state, and both engines must carry on identically.
// Transfers now and then carry preconditions on their source (a version, a condition on what it keeps),
// judged by the model when the transfer applies, synchronously or in its turn in the queue.
// A failure names its seed; FOLIO_SEED=<seed> replays exactly that history.

import t from 'tap';
import { foldBalance } from '../engine/balance-fold.js';
import type { CreateTransactionCommand } from '../engine/commands.js';
import type { LedgerEvent } from '../engine/events.js';
import { LedgerEngine, type Outcome } from '../engine/ledger-engine.js';
import type { Created } from '../engine/decide-create.js';
import { MemoryTransactionStore } from '../lookups/memory-transaction-store.js';
import type { Precondition } from '../engine/precondition.js';
import type { TransactionRecord } from '../engine/records.js';
import { MemoryLog } from '../wal/memory-log.js';
import { CountingIds, ManualClock, SeededRandom, stableText, testSeeds } from './helpers/deterministic.js';

const OPERATIONS_PER_SEED = 4000;
const GENERAL_LEDGER = 'general_ledger_id';
const CURRENCIES = ['USD', 'EUR', 'JPY'];
/** `@world` funds everyone with overdraft; the others must live within their means unless told not to. */
const NAMES = ['@world', '@alice', '@bob', '@carol', '@dave'];
const INDICATORS = ['savings', 'escrow', 'fees'];

type Status = 'QUEUED' | 'APPLIED' | 'REJECTED';

interface ModelBalance {
  id: string;
  ledger: string;
  currency: string;
  indicator: string;
  identity: string;
  credit: bigint;
  debit: bigint;
  /** One more for every applied transfer that touched it. */
  version: number;
}

interface ModelTransaction {
  id: string;
  reference: string;
  source: string;
  destination: string;
  amount: bigint;
  currency: string;
  overdraft: boolean;
  status: Status;
  rejection?: string;
  /** The request as first sent, for retries. */
  request: CreateTransactionCommand;
  /** Conditions on its source (engine/preconditions.ts), judged when it is applied. */
  preconditions?: Precondition[];
  /** Log position of the event that recorded it. */
  seq: number;
}

/** Where a transfer's balance comes from: one that exists, or an `@name` the transfer will create. */
type Endpoint = { id: string } | { create: string };

type Expectation =
  | { kind: 'rejected'; code: string }
  | { kind: 'existing'; transaction: ModelTransaction }
  | { kind: 'created'; source: Endpoint; destination: Endpoint };

class Divergence extends Error {}

function diverge(message: string): never {
  throw new Divergence(message);
}

/** The ledger as the contract describes it, with no code shared with the engine. */
class ReferenceModel {
  readonly ledgers = new Set<string>([GENERAL_LEDGER]);
  readonly balances = new Map<string, ModelBalance>();
  /** indicator + currency -> balance id, for every balance that has an indicator. */
  readonly named = new Map<string, string>();
  readonly transactions = new Map<string, ModelTransaction>();
  readonly references = new Map<string, string>();
  /** Source balance id -> ids of its queued transfers, oldest first. */
  readonly queues = new Map<string, string[]>();
  queuedTotal = 0;

  constructor(readonly limits: { depth: number; total: number }) {}

  /** An independent copy, so a second engine can be checked from the same point. */
  clone(): ReferenceModel {
    const copy = new ReferenceModel(this.limits);
    for (const ledger of this.ledgers) copy.ledgers.add(ledger);
    for (const balance of this.balances.values()) copy.addBalance({ ...balance });
    for (const [id, transaction] of this.transactions) copy.transactions.set(id, { ...transaction });
    for (const [reference, id] of this.references) copy.references.set(reference, id);
    for (const [balanceId, queue] of this.queues) copy.queues.set(balanceId, [...queue]);
    copy.queuedTotal = this.queuedTotal;
    return copy;
  }

  namedBalance(indicator: string, currency: string): string | undefined {
    return this.named.get(`${indicator}\n${currency}`);
  }

  depth(balanceId: string): number {
    return this.queues.get(balanceId)?.length ?? 0;
  }

  addBalance(balance: ModelBalance): void {
    this.balances.set(balance.id, balance);
    if (balance.indicator !== '') this.named.set(`${balance.indicator}\n${balance.currency}`, balance.id);
  }

  available(balanceId: string): bigint {
    const balance = this.balances.get(balanceId) as ModelBalance;
    return balance.credit - balance.debit;
  }

  /** Without overdraft the source must hold the whole amount at the moment the transfer is applied. */
  hasFunds(sourceId: string | undefined, amount: bigint, overdraft: boolean): boolean {
    return overdraft || (sourceId === undefined ? 0n : this.available(sourceId)) >= amount;
  }

  move(transaction: ModelTransaction): void {
    const source = this.balances.get(transaction.source) as ModelBalance;
    const destination = this.balances.get(transaction.destination) as ModelBalance;
    source.debit += transaction.amount;
    destination.credit += transaction.amount;
    source.version += 1;
    destination.version += 1;
  }

  enqueue(transaction: ModelTransaction): void {
    const queue = this.queues.get(transaction.source) ?? [];
    queue.push(transaction.id);
    this.queues.set(transaction.source, queue);
    this.queuedTotal += 1;
  }

  /** Applies (or rejects) the oldest queued transfer of a balance, judged against the balance now. */
  applyHead(sourceId: string): ModelTransaction {
    const queue = this.queues.get(sourceId);
    const id = queue?.shift();
    if (!queue || id === undefined) diverge(`model has nothing queued for ${sourceId}`);
    if (queue.length === 0) this.queues.delete(sourceId);
    this.queuedTotal -= 1;
    const transaction = this.transactions.get(id) as ModelTransaction;
    if (!this.hasFunds(transaction.source, transaction.amount, transaction.overdraft)) {
      transaction.status = 'REJECTED';
      transaction.rejection = 'TXN_INSUFFICIENT_FUNDS';
    } else if (!this.preconditionsHold(transaction.source, transaction.amount, transaction.preconditions)) {
      transaction.status = 'REJECTED';
      transaction.rejection = 'TXN_PRECONDITION_FAILED';
    } else {
      this.move(transaction);
      transaction.status = 'APPLIED';
    }
    return transaction;
  }

  /**
   * Whether conditions on a transfer's source hold when it applies (the contract's decisions,
   * "Preconditions"): a version against the source's before it, a field against the source as the
   * transfer leaves it. This history's sources hold nothing in flight.
   */
  preconditionsHold(sourceId: string | undefined, amount: bigint, preconditions: Precondition[] | undefined): boolean {
    if (!preconditions) return true;
    const source = sourceId === undefined ? undefined : this.balances.get(sourceId);
    return preconditions.every((precondition) => {
      if (!source || precondition.balance_id !== source.id) return false;
      if (precondition.version !== undefined && precondition.version !== source.version) return false;
      if (precondition.field === undefined) return true;
      const after = source.credit - source.debit - amount;
      const expected = precondition.precise_value as bigint;
      if (precondition.operator === '>=') return after >= expected;
      if (precondition.operator === '<=') return after <= expected;
      return after === expected;
    });
  }

  drain(sourceId: string): ModelTransaction[] {
    const applied: ModelTransaction[] = [];
    while (this.depth(sourceId) > 0) applied.push(this.applyHead(sourceId));
    return applied;
  }

  /** A retry is the same request when everything the client sent matches, except how to process it. */
  static sameRequest(first: CreateTransactionCommand, again: CreateTransactionCommand): boolean {
    return (
      first.source === again.source &&
      first.destination === again.destination &&
      first.precise_amount === again.precise_amount &&
      first.precision === again.precision &&
      first.currency === again.currency &&
      first.description === again.description &&
      first.allow_overdraft === again.allow_overdraft &&
      stableText(first.meta_data) === stableText(again.meta_data)
    );
  }
}

interface Tally {
  [outcome: string]: number;
}

class Simulation {
  readonly rng: SeededRandom;
  readonly clock = new ManualClock();
  readonly log = new MemoryLog();
  readonly store = new MemoryTransactionStore();
  readonly engine: LedgerEngine;
  readonly model: ReferenceModel;
  readonly tally: Tally = {};
  /** Deep copies of every logged event taken right after it was logged: logged events must not change. */
  private readonly eventCopies: LedgerEvent[] = [];
  /** References whose request was refused, so nothing was recorded and reusing them creates anew. */
  private readonly refusedReferences: string[] = [];
  private readonly transactionIds: string[] = [];
  private referenceCounter = 0;
  private highestClock: number;
  private lastCreatedAt = 0;
  /** Chance that a step runs the queue; low in backlog stretches. */
  private processingOdds = 0.2;
  readonly recent: string[] = [];

  constructor(readonly seed: number) {
    this.rng = new SeededRandom(seed);
    const limits = { depth: this.rng.between(2, 8), total: this.rng.between(10, 40) };
    this.model = new ReferenceModel(limits);
    this.engine = new LedgerEngine({
      clock: this.clock,
      ids: new CountingIds(),
      log: this.log,
      transactions: this.store,
      limits: { mailbox_depth_max: limits.depth, queued_total_max: limits.total },
    });
    this.engine.run({ op: 'genesis.ensure' });
    this.highestClock = this.clock.ms;
    this.copyNewEvents();
  }

  count(outcome: string): void {
    this.tally[outcome] = (this.tally[outcome] ?? 0) + 1;
  }

  note(description: string): void {
    this.recent.push(description);
    if (this.recent.length > 12) this.recent.shift();
  }

  step(index: number): void {
    // Stretches where the queue runner barely runs let mailboxes fill up to their limits.
    this.processingOdds = index % 600 < 400 ? 0.2 : 0.02;
    this.tick();
    const roll = this.rng.next();
    if (roll < 0.03) this.createLedger();
    else if (roll < 0.04) this.updateLedger();
    else if (roll < 0.10) this.createBalance();
    else if (roll < 1 - this.processingOdds) this.transfer();
    else this.processQueued(this.rng.between(1, 12));
    this.copyNewEvents();
    this.checkBalances();
  }

  /** Time moves on a little each step and now and then steps back, as wall clocks do. */
  private tick(): void {
    if (this.rng.chance(0.01)) this.clock.advance(-this.rng.between(1, 50));
    else this.clock.advance(this.rng.between(0, 3));
    this.highestClock = Math.max(this.highestClock, this.clock.ms);
  }

  private copyNewEvents(): void {
    for (let index = this.eventCopies.length; index < this.log.events.length; index += 1) {
      this.eventCopies.push(structuredClone(this.log.events[index] as LedgerEvent));
    }
  }

  private newEventsSince(before: number): LedgerEvent[] {
    return this.log.events.slice(before);
  }

  // ---- ledgers and balances ----

  private createLedger(): void {
    const before = this.log.events.length;
    const outcome = this.engine.run({ op: 'ledger.create', name: `ledger ${this.rng.int(1000)}`, meta_data: {} });
    this.note('createLedger');
    if (!outcome.ok) diverge('createLedger refused');
    const events = this.newEventsSince(before);
    if (events.length !== 1 || events[0]?.type !== 'ledger.created') diverge('createLedger did not log one ledger.created');
    if (outcome.seq !== this.log.events.length) diverge('createLedger seq is not its event');
    if (this.model.ledgers.has(outcome.value.ledger_id)) diverge(`ledger id ${outcome.value.ledger_id} reused`);
    this.model.ledgers.add(outcome.value.ledger_id);
    this.count('ledger.created');
  }

  private updateLedger(): void {
    const known = this.rng.chance(0.8);
    const ledgerId = known ? this.rng.pick([...this.model.ledgers]) : 'ldg_unknown';
    const before = this.log.events.length;
    const outcome = this.engine.run({ op: 'ledger.update', ledger_id: ledgerId, name: `renamed ${this.rng.int(100)}` });
    this.note(`updateLedger ${ledgerId}`);
    const events = this.newEventsSince(before);
    if (known) {
      if (!outcome.ok) diverge(`updateLedger of ${ledgerId} refused: ${outcome.rejection.code}`);
      if (events.length !== 1 || events[0]?.type !== 'ledger.updated') diverge('updateLedger did not log one ledger.updated');
      this.count('ledger.updated');
    } else {
      if (outcome.ok || outcome.rejection.code !== 'LGR_NOT_FOUND') diverge('updateLedger of an unknown ledger was not LGR_NOT_FOUND');
      if (events.length !== 0) diverge('a refused updateLedger logged something');
      this.count('LGR_NOT_FOUND');
    }
  }

  private createBalance(): void {
    const ledger = this.rng.chance(0.9) ? this.rng.pick([...this.model.ledgers]) : 'ldg_unknown';
    const currency = this.rng.pick(CURRENCIES);
    const indicator = this.rng.chance(0.5) ? '' : this.rng.pick(INDICATORS);
    // Identities must exist to be named; this history has none, so balances name none.
    const identity = '';
    const before = this.log.events.length;
    const outcome = this.engine.run({ op: 'balance.create', ledger_id: ledger, currency, identity_id: identity, indicator, meta_data: {} });
    this.note(`createBalance ${ledger} ${currency} '${indicator}'`);
    const events = this.newEventsSince(before);
    let expected: string | undefined;
    if (!this.model.ledgers.has(ledger)) expected = 'LGR_NOT_FOUND';
    else if (indicator !== '' && this.model.namedBalance(indicator, currency) !== undefined) expected = 'BAL_DUPLICATE_INDICATOR';
    if (expected !== undefined) {
      if (outcome.ok || outcome.rejection.code !== expected) {
        diverge(`createBalance expected ${expected}, got ${outcome.ok ? 'ok' : outcome.rejection.code}`);
      }
      if (events.length !== 0) diverge('a refused createBalance logged something');
      this.count(expected);
      return;
    }
    if (!outcome.ok) diverge(`createBalance refused: ${outcome.rejection.code}`);
    const value = outcome.value;
    if (events.length !== 1 || events[0]?.type !== 'balance.created') diverge('createBalance did not log one balance.created');
    if (this.model.balances.has(value.balance_id)) diverge(`balance id ${value.balance_id} reused`);
    if (value.ledger_id !== ledger || value.currency !== currency || value.indicator !== indicator || value.identity_id !== identity) {
      diverge(`created balance ${stableText(value)} does not match the request`);
    }
    this.model.addBalance({ id: value.balance_id, ledger, currency, indicator, identity, credit: 0n, debit: 0n, version: 0 });
    this.count('balance.created');
  }

  // ---- transfers ----

  private nextReference(): string {
    this.referenceCounter += 1;
    return `ref-${this.seed}-${this.referenceCounter}`;
  }

  private randomEndpoint(currency: string, role: 'source' | 'destination'): string {
    const roll = this.rng.next();
    if (roll < 0.04) return `bln_unknown_${this.rng.int(3)}`;
    if (roll < 0.30) {
      const explicit = [...this.model.balances.values()].filter((balance) => !balance.indicator.startsWith('@'));
      const sameCurrency = explicit.filter((balance) => balance.currency === currency);
      const candidates = this.rng.chance(0.9) && sameCurrency.length > 0 ? sameCurrency : explicit;
      if (candidates.length > 0) return this.rng.pick(candidates).id;
    }
    if (role === 'source' && this.rng.chance(0.4)) return '@world';
    return this.rng.pick(NAMES);
  }

  private randomAmount(source: string, currency: string): bigint {
    const sourceId = source.startsWith('@') ? this.model.namedBalance(source, currency) : source;
    const balance = sourceId === undefined ? undefined : this.model.balances.get(sourceId);
    if (balance && balance.currency === currency && this.rng.chance(0.3)) {
      // Amounts at the edge of what the source holds: exactly all of it must pass, one more must not.
      const available = balance.credit - balance.debit;
      const candidates = [available - 1n, available, available + 1n].filter((amount) => amount > 0n);
      if (candidates.length > 0) return this.rng.pick(candidates);
    }
    if (this.rng.chance(0.05)) return this.rng.bigAmount(39);
    return BigInt(this.rng.between(1, 5000));
  }

  private randomCommand(): CreateTransactionCommand {
    const currency = this.rng.pick(CURRENCIES);
    const source = this.randomEndpoint(currency, 'source');
    const destination = this.randomEndpoint(currency, 'destination');
    const referenceRoll = this.rng.next();
    let reference = '';
    if (referenceRoll < 0.05 && this.refusedReferences.length > 0) reference = this.rng.pick(this.refusedReferences);
    else if (referenceRoll < 0.7) reference = this.nextReference();
    const metaData: Record<string, unknown> = this.rng.chance(0.8)
      ? {}
      : { note: `n${this.rng.int(10)}`, big: 2n ** 70n + BigInt(this.rng.int(10)) };
    const preciseAmount = this.randomAmount(source, currency);
    const command: CreateTransactionCommand = {
      source,
      destination,
      precise_amount: preciseAmount,
      precision: this.rng.pick([1n, 100n, 10n ** 8n]),
      currency,
      reference,
      description: this.rng.pick(['', 'rent', 'payout']),
      meta_data: metaData,
      allow_overdraft: source === '@world' ? this.rng.chance(0.9) : this.rng.chance(0.08),
      skip_queue: this.rng.chance(0.5),
      inflight: false, inflight_expiry_date: 0, inflight_commit_date: 0, scheduled_for: 0, atomic: false,
    };
    const sourceBalance = this.model.balances.get(source);
    if (sourceBalance && this.rng.chance(0.2)) command.preconditions = this.randomPreconditions(sourceBalance, preciseAmount);
    return command;
  }

  /** Conditions on a source balance at the edge of holding: its version or one off, what it keeps after or one more. */
  private randomPreconditions(source: ModelBalance, amount: bigint): Precondition[] {
    const preconditions: Precondition[] = [];
    if (this.rng.chance(0.5)) preconditions.push({ balance_id: source.id, version: source.version + this.rng.pick([0, 0, 0, 1]) });
    if (preconditions.length === 0 || this.rng.chance(0.5)) {
      const after = source.credit - source.debit - amount;
      preconditions.push({
        balance_id: source.id,
        field: this.rng.pick(['balance', 'available_balance'] as const),
        operator: this.rng.pick(['>=', '<=', '=='] as const),
        precise_value: after + this.rng.pick([-1n, 0n, 0n, 1n]),
      });
    }
    return preconditions;
  }

  /** A retry of an earlier request with the same reference: identical, or changed in one field. */
  private retryCommand(): CreateTransactionCommand {
    const original = this.model.transactions.get(this.rng.pick(this.transactionIds)) as ModelTransaction;
    const retry: CreateTransactionCommand = { ...original.request, skip_queue: this.rng.chance(0.5) };
    if (this.rng.chance(0.5)) return retry;
    switch (this.rng.int(4)) {
      case 0:
        return { ...retry, precise_amount: retry.precise_amount + 1n };
      case 1:
        return { ...retry, description: retry.description + ' (changed)' };
      case 2:
        return { ...retry, allow_overdraft: !retry.allow_overdraft };
      default:
        return { ...retry, meta_data: { ...retry.meta_data, changed: true } };
    }
  }

  private transfer(): void {
    const retrying = this.transactionIds.length > 0 && this.rng.chance(0.1);
    const command = retrying ? this.retryCommand() : this.randomCommand();
    this.note(`transfer ${stableText(command)}`);
    const before = this.log.events.length;
    const clockBefore = this.clock.ms;
    // The model goes first: a synchronous transfer applies its source's queue before anything else.
    const { drained, expectation } = this.plan(command);
    const outcome = this.engine.run({ op: 'transaction.create', ...command });
    const events = this.newEventsSince(before);
    const expectedEvents = drained.length + (expectation.kind === 'created' ? 1 : 0);
    if (events.length !== expectedEvents) {
      diverge(`transfer logged ${events.length} events, expected ${expectedEvents} (${drained.length} drained, ${expectation.kind})`);
    }
    drained.forEach((transaction, index) => this.checkDrained(events[index] as LedgerEvent, transaction));
    switch (expectation.kind) {
      case 'rejected':
        if (outcome.ok) diverge(`transfer expected ${expectation.code}, got ok (${outcome.value.transaction.status})`);
        if (outcome.rejection.code !== expectation.code) diverge(`transfer expected ${expectation.code}, got ${outcome.rejection.code}`);
        if (command.reference !== '' && !this.model.references.has(command.reference)) this.refusedReferences.push(command.reference);
        this.count(expectation.code);
        return;
      case 'existing':
        this.checkExisting(outcome, expectation.transaction);
        this.count('retry.existing');
        return;
      case 'created':
        this.checkCreated(command, outcome, events[events.length - 1] as LedgerEvent, expectation, clockBefore);
        return;
    }
  }

  /** What the contract says a transfer request does, given the model's state. Drains happen at once. */
  private plan(command: CreateTransactionCommand): { drained: ModelTransaction[]; expectation: Expectation } {
    const model = this.model;
    const knownSource = command.source.startsWith('@') ? model.namedBalance(command.source, command.currency) : command.source;
    let drained: ModelTransaction[] = [];
    const refuse = (code: string) => ({ drained, expectation: { kind: 'rejected' as const, code } });
    const reusesReference = command.reference !== '' && model.references.has(command.reference);
    if (!command.skip_queue && !reusesReference) {
      // A full mailbox refuses a new queued request before anything else is judged; a reused reference
      // is answered from what exists (a replay or a conflict) and queues nothing.
      if (model.queuedTotal >= model.limits.total) return refuse('QUEUE_BACKPRESSURE');
      if (knownSource !== undefined && model.depth(knownSource) >= model.limits.depth) return refuse('QUEUE_BACKPRESSURE');
    } else if (command.skip_queue && knownSource !== undefined) {
      drained = model.drain(knownSource);
    }
    if (command.reference !== '') {
      const existingId = model.references.get(command.reference);
      if (existingId !== undefined) {
        const existing = model.transactions.get(existingId) as ModelTransaction;
        if (!ReferenceModel.sameRequest(existing.request, command)) return refuse('TXN_DUPLICATE_REFERENCE');
        return { drained, expectation: { kind: 'existing', transaction: existing } };
      }
    }
    const creating: string[] = [];
    const resolve = (name: string): Endpoint | string => {
      if (name.startsWith('@')) {
        const id = model.namedBalance(name, command.currency);
        if (id !== undefined) return { id };
        if (!creating.includes(name)) creating.push(name);
        return { create: name };
      }
      const balance = model.balances.get(name);
      if (!balance) return 'BAL_NOT_FOUND';
      if (balance.currency !== command.currency) return 'TXN_CURRENCY_MISMATCH';
      return { id: name };
    };
    const source = resolve(command.source);
    if (typeof source === 'string') return refuse(source);
    const destination = resolve(command.destination);
    if (typeof destination === 'string') return refuse(destination);
    if (stableText(source) === stableText(destination)) return refuse('TXN_SAME_SOURCE_DESTINATION');
    if (command.skip_queue) {
      const sourceId = 'id' in source ? source.id : undefined;
      if (!model.hasFunds(sourceId, command.precise_amount, command.allow_overdraft)) return refuse('TXN_INSUFFICIENT_FUNDS');
      if (!model.preconditionsHold(sourceId, command.precise_amount, command.preconditions)) return refuse('TXN_PRECONDITION_FAILED');
    }
    return { drained, expectation: { kind: 'created', source, destination } };
  }

  private checkExisting(outcome: Outcome<Created>, expected: ModelTransaction): void {
    if (!outcome.ok) diverge(`identical retry of ${expected.id} refused: ${outcome.rejection.code}`);
    const { transaction, created } = outcome.value;
    if (created) diverge(`identical retry of ${expected.id} created a new transaction ${transaction.transaction_id}`);
    if (transaction.transaction_id !== expected.id) diverge(`identical retry answered ${transaction.transaction_id}, not ${expected.id}`);
    if (transaction.status !== expected.status) diverge(`retry of ${expected.id} shows ${transaction.status}, model ${expected.status}`);
    if (outcome.seq < expected.seq) diverge(`retry of ${expected.id} waits for seq ${outcome.seq}, before its record at ${expected.seq}`);
  }

  private checkCreated(
    command: CreateTransactionCommand,
    outcome: Outcome<Created>,
    event: LedgerEvent,
    expectation: { source: Endpoint; destination: Endpoint },
    clockBefore: number,
  ): void {
    if (!outcome.ok) diverge(`transfer expected to be recorded, refused with ${outcome.rejection.code}`);
    const { transaction, created } = outcome.value;
    if (!created) diverge('a new transfer was answered as a retry');
    const status: Status = command.skip_queue ? 'APPLIED' : 'QUEUED';
    if (transaction.status !== status) diverge(`new transfer is ${transaction.status}, expected ${status}`);
    if (outcome.seq !== this.log.events.length) diverge('a new transfer does not wait for its own event');
    const expectedType = command.skip_queue ? 'transaction.applied' : 'transaction.queued';
    if (event.type !== expectedType || event.transactions?.length !== 1 || event.transactions[0]?.transaction_id !== transaction.transaction_id) {
      diverge(`new transfer logged ${event.type}, expected ${expectedType} carrying it`);
    }
    if (this.model.transactions.has(transaction.transaction_id)) diverge(`transaction id ${transaction.transaction_id} reused`);
    // Balances created on first use: exactly the `@name`s the model expected, fresh and empty.
    const createdBalances = event.balances ?? [];
    const expectedCreates = [expectation.source, expectation.destination].filter((endpoint) => 'create' in endpoint).length;
    if (createdBalances.length !== expectedCreates) diverge(`transfer created ${createdBalances.length} balances, expected ${expectedCreates}`);
    const endpointId = (endpoint: Endpoint, actual: string): string => {
      if ('id' in endpoint) {
        if (actual !== endpoint.id) diverge(`transfer resolved to ${actual}, expected ${endpoint.id}`);
        return actual;
      }
      const record = createdBalances.find((balance) => balance.balance_id === actual);
      if (!record || this.model.balances.has(actual)) diverge(`${endpoint.create} should be a new balance, got ${actual}`);
      if (record.indicator !== endpoint.create || record.currency !== command.currency || record.ledger_id !== GENERAL_LEDGER) {
        diverge(`balance made for ${endpoint.create} is ${stableText(record)}`);
      }
      if (record.credit_balance !== 0n || record.debit_balance !== 0n || record.version !== 0) diverge('a new balance is not empty');
      this.model.addBalance({
        id: actual, ledger: GENERAL_LEDGER, currency: command.currency, indicator: endpoint.create, identity: '',
        credit: 0n, debit: 0n, version: 0,
      });
      return actual;
    };
    const sourceId = endpointId(expectation.source, transaction.source);
    const destinationId = endpointId(expectation.destination, transaction.destination);
    this.checkRecordFields(command, transaction, clockBefore);
    const model: ModelTransaction = {
      id: transaction.transaction_id,
      reference: transaction.reference,
      source: sourceId,
      destination: destinationId,
      amount: command.precise_amount,
      currency: command.currency,
      overdraft: command.allow_overdraft,
      status,
      request: command,
      seq: outcome.seq,
    };
    if (command.preconditions) model.preconditions = command.preconditions;
    this.model.transactions.set(model.id, model);
    this.model.references.set(model.reference, model.id);
    this.transactionIds.push(model.id);
    if (status === 'QUEUED') this.model.enqueue(model);
    else this.model.move(model);
    this.count(command.skip_queue ? 'sync.applied' : 'queued');
  }

  private checkRecordFields(command: CreateTransactionCommand, record: TransactionRecord, clockBefore: number): void {
    if (command.reference !== '' && record.reference !== command.reference) diverge(`reference ${record.reference} is not ${command.reference}`);
    if (command.reference === '' && (record.reference === '' || this.model.references.has(record.reference))) {
      diverge(`generated reference '${record.reference}' is empty or taken`);
    }
    const same =
      record.precise_amount === command.precise_amount &&
      record.precision === command.precision &&
      record.currency === command.currency &&
      record.description === command.description &&
      record.allow_overdraft === command.allow_overdraft &&
      record.skip_queue === command.skip_queue &&
      record.parent_transaction === '' &&
      record.inflight === false &&
      stableText(record.meta_data) === stableText(command.meta_data);
    if (!same) diverge(`record ${stableText(record)} does not carry the request ${stableText(command)}`);
    if (!/^[0-9a-f]{64}$/.test(record.hash)) diverge(`hash '${record.hash}' is not SHA-256 hex`);
    // Decided times follow the clock but never go back, even when the clock does.
    if (record.created_at < this.lastCreatedAt || record.created_at < clockBefore || record.created_at > this.highestClock) {
      diverge(`created_at ${record.created_at} outside [${Math.max(this.lastCreatedAt, clockBefore)}, ${this.highestClock}]`);
    }
    this.lastCreatedAt = record.created_at;
  }

  // ---- the queue ----

  processQueued(itemsMax: number): void {
    const processed = runQueue(this.engine, this.log, this.model, itemsMax);
    this.note(`processQueued(${itemsMax}) -> ${processed.length}`);
    for (const transaction of processed) this.count(`queue.${transaction.status}`);
  }

  private checkDrained(event: LedgerEvent, expected: ModelTransaction): void {
    checkProcessedEvent(event, expected);
    this.count(`drained.${expected.status}`);
  }

  // ---- invariants ----

  checkBalances(): void {
    checkBalances(this.engine, this.model);
  }

  checkTransactions(): void {
    if (this.store.byId.size !== this.model.transactions.size) {
      diverge(`store holds ${this.store.byId.size} transactions, model ${this.model.transactions.size}`);
    }
    for (const expected of this.model.transactions.values()) {
      const actual = this.engine.state.transaction(expected.id);
      if (!actual) diverge(`transaction ${expected.id} missing`);
      const same =
        actual.reference === expected.reference &&
        actual.source === expected.source &&
        actual.destination === expected.destination &&
        actual.precise_amount === expected.amount &&
        actual.currency === expected.currency &&
        actual.status === expected.status &&
        actual.rejection?.code === expected.rejection;
      if (!same) diverge(`transaction ${expected.id}: engine ${stableText(actual)}, model ${stableText(expected)}`);
      const byReference = this.engine.state.transactions.idForReference(expected.reference);
      if (byReference !== expected.id) diverge(`reference ${expected.reference} leads to ${byReference}, not ${expected.id}`);
    }
  }

  /** Every balance folded from the log alone equals the running one. */
  checkFolds(): void {
    for (const [id, balance] of this.engine.state.balances) {
      const folded = foldBalance(id, this.log.events);
      if (stableText(folded) !== stableText(balance)) diverge(`balance ${id} folds to ${stableText(folded)}, runs at ${stableText(balance)}`);
    }
  }

  checkEventsUnchanged(): void {
    this.copyNewEvents();
    this.log.events.forEach((event, index) => {
      if (stableText(event) !== stableText(this.eventCopies[index])) diverge(`logged event ${index + 1} changed after it was logged`);
    });
  }
}

/**
 * Runs the engine's queue and checks what it did against the model. The engine chooses which balance
 * goes next; the contract is that each balance's queue is taken oldest first and that every outcome is
 * right for the balances at that moment.
 */
function runQueue(engine: LedgerEngine, log: MemoryLog, model: ReferenceModel, itemsMax: number): ModelTransaction[] {
  const before = log.events.length;
  const expectedCount = Math.min(itemsMax, model.queuedTotal);
  const processed = engine.run({ op: 'queue.process', items_max: itemsMax }).value;
  if (processed !== expectedCount) diverge(`processQueued(${itemsMax}) handled ${processed}, ${model.queuedTotal} were queued`);
  const events = log.events.slice(before);
  if (events.length !== processed) diverge(`processQueued logged ${events.length} events for ${processed} transfers`);
  const done: ModelTransaction[] = [];
  for (const event of events) {
    const record = event.transactions?.[0];
    if (!record || event.transactions?.length !== 1) diverge(`queue event ${event.type} does not carry exactly one transaction`);
    const head = model.queues.get(record.source)?.[0];
    if (head !== record.transaction_id) diverge(`queue applied ${record.transaction_id} while ${head} was first in line for ${record.source}`);
    const transaction = model.applyHead(record.source);
    checkProcessedEvent(event, transaction);
    done.push(transaction);
  }
  return done;
}

function checkProcessedEvent(event: LedgerEvent, expected: ModelTransaction): void {
  const record = event.transactions?.[0];
  const expectedType = expected.status === 'APPLIED' ? 'transaction.applied' : 'transaction.rejected';
  if (event.type !== expectedType || record?.transaction_id !== expected.id || record.status !== expected.status) {
    diverge(`queued ${expected.id} should be ${expected.status}; logged ${event.type} for ${record?.transaction_id} as ${record?.status}`);
  }
  if (expected.status === 'REJECTED' && record.rejection?.code !== expected.rejection) {
    diverge(`rejected ${expected.id} carries ${record.rejection?.code}, expected ${expected.rejection}`);
  }
}

/** Every balance equals the model's, every currency sums to zero, and the queues hold what the model's do. */
function checkBalances(engine: LedgerEngine, model: ReferenceModel): void {
  const state = engine.state;
  if (state.balances.size !== model.balances.size) diverge(`engine has ${state.balances.size} balances, model ${model.balances.size}`);
  const sums = new Map<string, bigint>();
  for (const [id, expected] of model.balances) {
    const actual = state.balances.get(id);
    if (!actual) diverge(`balance ${id} missing from the engine`);
    const same =
      actual.credit_balance === expected.credit &&
      actual.debit_balance === expected.debit &&
      actual.inflight_credit_balance === 0n &&
      actual.inflight_debit_balance === 0n &&
      actual.version === expected.version &&
      actual.currency === expected.currency &&
      actual.ledger_id === expected.ledger &&
      actual.indicator === expected.indicator &&
      actual.identity_id === expected.identity;
    if (!same) diverge(`balance ${id}: engine ${stableText(actual)}, model ${stableText(expected)}`);
    sums.set(expected.currency, (sums.get(expected.currency) ?? 0n) + actual.credit_balance - actual.debit_balance);
  }
  for (const [currency, sum] of sums) if (sum !== 0n) diverge(`${currency} balances sum to ${sum}, not zero`);
  if (engine.view.queuedCount() !== model.queuedTotal) diverge(`engine has ${engine.view.queuedCount()} queued, model ${model.queuedTotal}`);
  for (const [balanceId, queue] of model.queues) {
    if (state.mailboxes.depth(balanceId) !== queue.length) {
      diverge(`mailbox of ${balanceId} holds ${state.mailboxes.depth(balanceId)}, model ${queue.length}`);
    }
  }
}

/** Everything an engine's state holds, as comparable text. */
function stateText(engine: LedgerEngine, store: MemoryTransactionStore): Record<string, string> {
  const state = engine.state;
  return {
    ledgers: stableText(state.ledgers),
    balances: stableText(state.balances),
    indicators: stableText(state.balanceIdByIndicator),
    mailboxes: stableText([...state.mailboxes.all()].map(([balanceId, record]) => [balanceId, record.transaction_id])),
    transactions: stableText(store.byId),
    lastEventAt: String(state.lastEventAt),
    queued: String(engine.view.queuedCount()),
  };
}

function compareStates(label: string, first: Record<string, string>, second: Record<string, string>): void {
  for (const key of Object.keys(first)) {
    if (first[key] !== second[key]) diverge(`${label}: ${key} differ`);
  }
}

/**
 * Replays the log into a fresh engine and compares the whole state; then both engines drain their
 * queues, each checked against its own copy of the model, and must end with equal state.
 */
function checkReplay(sim: Simulation): void {
  const store = new MemoryTransactionStore();
  const log = new MemoryLog();
  const replayed = new LedgerEngine({
    clock: new ManualClock(sim.clock.ms), ids: new CountingIds('replayed-'), log, transactions: store,
    limits: { mailbox_depth_max: sim.model.limits.depth, queued_total_max: sim.model.limits.total },
  });
  for (const event of sim.log.events) replayed.replay(event);
  if (log.events.length !== 0) diverge('replaying appended to the log');
  compareStates('replayed state', stateText(sim.engine, sim.store), stateText(replayed, store));

  // The queue runner's serving order follows the applied events, so both engines apply the pending
  // transfers in the same order; each is checked against its own copy of the model.
  const replayedModel = sim.model.clone();
  sim.processQueued(Number.MAX_SAFE_INTEGER);
  runQueue(replayed, log, replayedModel, Number.MAX_SAFE_INTEGER);
  sim.checkBalances();
  checkBalances(replayed, replayedModel);
}

for (const seed of testSeeds([1, 2, 3, 20240601, 987654321])) {
  t.test(`random history, seed ${seed}`, async (t) => {
    const sim = new Simulation(seed);
    let stepIndex = 0;
    try {
      for (; stepIndex < OPERATIONS_PER_SEED; stepIndex += 1) {
        sim.step(stepIndex);
        if (stepIndex % 500 === 499) sim.checkTransactions();
      }
      sim.checkTransactions();
      sim.checkFolds();
      sim.checkEventsUnchanged();
      checkReplay(sim);
      sim.checkTransactions();
      sim.checkEventsUnchanged();
      const summary = Object.entries(sim.tally).sort().map(([outcome, count]) => `${outcome}=${count}`).join(' ');
      t.pass(`${OPERATIONS_PER_SEED} steps agree with the model (${summary})`);
    } catch (error) {
      if (!(error instanceof Divergence) && !(error instanceof Error)) throw error;
      t.fail(`seed ${seed}, step ${stepIndex}: ${error.message}`, {
        replay: `FOLIO_SEED=${seed} npx tap test/engine-model.sim.test.ts`,
        recent: sim.recent,
        stack: error instanceof Divergence ? undefined : error.stack,
      });
    }
  });
}

t.test(
  'a replayed engine decides pending queued transfers as the original would have',
  async (t) => {
    const start = (): { engine: LedgerEngine; log: MemoryLog } => {
      const log = new MemoryLog();
      const engine = new LedgerEngine({ clock: new ManualClock(), ids: new CountingIds(), log, transactions: new MemoryTransactionStore() });
      return { engine, log };
    };
    const queue = (engine: LedgerEngine, source: string, destination: string, amount: bigint, overdraft: boolean): string => {
      const outcome = engine.run({ op: 'transaction.create', ...{
        source, destination, precise_amount: amount, precision: 1n, currency: 'USD', reference: '', description: '',
        meta_data: {}, allow_overdraft: overdraft, skip_queue: false, inflight: false, inflight_expiry_date: 0, inflight_commit_date: 0, scheduled_for: 0, atomic: false,
      } });
      if (!outcome.ok) throw new Error(outcome.rejection.code);
      return outcome.value.transaction.transaction_id;
    };
    const original = start();
    original.engine.run({ op: 'genesis.ensure' });
    queue(original.engine, '@world', '@b', 10n, true);
    original.engine.run({ op: 'queue.process', items_max: 1 }).value;
    // @world's mailbox emptied and refills behind @b's, so @b is served first: it has 10 and needs 15.
    const short = queue(original.engine, '@b', '@c', 15n, false);
    queue(original.engine, '@world', '@b', 10n, true);
    const replayed = start();
    for (const event of original.log.events) replayed.engine.replay(event);
    original.engine.run({ op: 'queue.process', items_max: 100 }).value;
    replayed.engine.run({ op: 'queue.process', items_max: 100 }).value;
    t.equal(replayed.engine.state.transaction(short)?.status, original.engine.state.transaction(short)?.status);
    t.equal(stableText(replayed.engine.state.balances), stableText(original.engine.state.balances));
  },
);
