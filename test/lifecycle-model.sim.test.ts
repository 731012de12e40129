// A seeded random history of the transaction lifecycle, run on the engine (in-memory log, fake clock)
// and on the reference model in helpers/reference-ledger.ts side by side: holds with partial commits,
// voids and timers, refunds, splits (atomic or not, either side or both), scheduled transactions, bulk
// batches, each queued or synchronous. The log tells the order in which queued work and timers were
// carried out; the model checks each against its own rules (a queued item must be the head of its
// balance's queue, a timer must be due). After every step: every balance equals the model's, every
// currency nets to zero (settled and inflight), no balance without overdraft is below zero, every
// status and pending lock agrees. At the end the log is replayed into a fresh engine.

import t from 'tap';
import type { CreateTransactionCommand } from '../engine/commands.js';
import type { LedgerEvent } from '../engine/events.js';
import type { Outcome } from '../engine/ledger-engine.js';
import type { TransactionRecord } from '../engine/records.js';
import { checkReplay, engineRig, share, transfer, type EngineRig } from './helpers/engine-rig.js';
import { keyOf, ReferenceLedger, type CreateSpec, type Decision, type Key, type ShareSpec } from './helpers/reference-ledger.js';
import { SeededRandom, seededTest, seedsToRun } from './helpers/seeded-random.js';

const USERS = ['@u0', '@u1', '@u2', '@u3', '@u4', '@u5'];
/** The only balances any transaction may overdraw. */
const OVERDRAFT = ['@world', '@od'];
const CURRENCIES = ['USD', 'EUR'];
const MINUTE = 60_000;
const STEPS = 600;

const EXACT_SHARES: Record<number, string[][]> = {
  1: [['100%']],
  2: [['50%', '50%'], ['25%', '75%'], ['33.33%', '66.67%'], ['12.5%', '87.5%']],
  3: [['33.33%', '33.33%', '33.34%'], ['10%', '20%', '70%'], ['50%', '25%', '25%']],
};

interface Stats {
  [name: string]: number;
}

class Simulation {
  readonly rig: EngineRig = engineRig();
  readonly model = new ReferenceLedger();
  /** Ids the model knows, to pick targets from. */
  readonly tops: string[] = [];
  readonly holds: string[] = [];
  readonly legs: string[] = [];
  readonly recentHolds: string[] = [];
  readonly recentOriginals: string[] = [];
  readonly stats: Stats = {};
  private placeholder = 0;
  step = 0;
  lastOp = '';

  constructor(readonly random: SeededRandom) {}

  count(name: string): void {
    this.stats[name] = (this.stats[name] ?? 0) + 1;
  }

  fail(message: string): never {
    throw new Error(`step ${this.step} (${this.lastOp}): ${message}`);
  }

  get now(): number {
    return this.rig.clock.ms;
  }

  balanceId(key: Key): string | undefined {
    const [name, currency] = key.split('|') as [string, string];
    return this.rig.engine.state.balanceByIndicator(name, currency)?.balance_id;
  }

  record(id: string): TransactionRecord | undefined {
    return this.rig.engine.state.transaction(id);
  }

  /** Runs an engine call and returns the events it logged. */
  logged<T>(call: () => T): { result: T; events: LedgerEvent[] } {
    const before = this.rig.log.events.length;
    const result = call();
    return { result, events: this.rig.log.events.slice(before) };
  }

  /**
   * Feeds the model every event that carried out queued work (the event holds a transaction the model
   * has queued), in log order; returns the other events.
   */
  absorbQueued(events: LedgerEvent[]): LedgerEvent[] {
    const rest: LedgerEvent[] = [];
    for (const event of events) {
      const ids = (event.transactions ?? []).map((record) => record.transaction_id);
      const queued = ids.filter((id) => this.model.s.queued.has(id));
      if (queued.length > 1) this.fail(`one event carried out ${queued.length} queued transactions`);
      const id = queued[0];
      if (id === undefined) {
        rest.push(event);
        continue;
      }
      const problem = this.model.processQueued(id);
      if (problem) this.fail(problem);
      this.learnLegs(id);
      this.count('queued processed');
    }
    return rest;
  }

  /** After a split is carried out: its leg ids, each checked against the model's planned leg. */
  learnLegs(id: string): void {
    const txn = this.model.txn(id);
    if (!txn?.plan) return;
    const engineLegs = this.record(id)?.legs ?? [];
    if (engineLegs.length !== txn.legs.length) this.fail(`split ${id}: engine has ${engineLegs.length} legs, model ${txn.legs.length}`);
    for (const [index, legId] of engineLegs.entries()) {
      const leg = txn.legs[index];
      const record = this.record(legId);
      if (!leg || !record) this.fail(`split ${id}: leg ${legId} missing`);
      if (record.source !== this.balanceId(leg.from) || record.destination !== this.balanceId(leg.to) || record.precise_amount !== leg.amount) {
        this.fail(`split ${id}: leg ${index} is ${record.source}->${record.destination} ${record.precise_amount}, model ${leg.from}->${leg.to} ${leg.amount}`);
      }
      if (record.parent_transaction !== id || record.meta_data.QUEUED_PARENT_TRANSACTION !== id) this.fail(`leg ${legId} does not name its parent`);
      if (!this.model.s.legParent.has(legId)) {
        this.model.s.legParent.set(legId, id);
        this.legs.push(legId);
      }
    }
  }

  /** Compares a decided request: both refuse with the same code, or both accept with the same status. */
  compare<T>(label: string, outcome: Outcome<T>, decision: Decision, status?: string): void {
    if (outcome.ok !== decision.ok) {
      this.fail(`${label}: engine ${outcome.ok ? 'accepted' : `refused ${outcome.rejection.code} (${outcome.rejection.message})`}, model ${decision.ok ? `accepted (${decision.txn.status})` : `refused ${decision.code}`}`);
    }
    if (!outcome.ok && !decision.ok) {
      if (outcome.rejection.code !== decision.code) this.fail(`${label}: engine refused ${outcome.rejection.code}, model ${decision.code}`);
      this.count(`${label} refused ${decision.code}`);
      return;
    }
    if (decision.ok && status !== undefined && status !== decision.txn.status) this.fail(`${label}: engine status ${status}, model ${decision.txn.status}`);
    this.count(`${label} ${decision.ok ? decision.txn.status : ''}`);
  }

  /** Own events of a synchronous or queued request: at most one, after any queued work it drained. */
  expectOwn(rest: LedgerEvent[], accepted: boolean): void {
    if (rest.length > (accepted ? 1 : 0)) this.fail(`${rest.length} unexplained events`);
    if (accepted && rest.length !== 1) this.fail('an accepted request logged no event of its own');
  }

  nextPlaceholder(): string {
    return `model_only_${(this.placeholder += 1)}`;
  }

  // ---- random requests ----

  amount(max = 2000): bigint {
    return BigInt(this.random.chance(0.1) ? this.random.int(1, 10) : this.random.int(1, max));
  }

  shares(count: number, total: bigint): string[] {
    const random = this.random;
    const pattern = random.int(0, 19);
    if (pattern === 0) return [...Array.from({ length: count - 1 }, () => '10%'), 'left', 'left'].slice(-Math.max(2, count));
    if (pattern === 1) return ['60%', '50%', ...Array.from({ length: count - 2 }, () => '1%')].slice(0, Math.max(2, count));
    if (pattern <= 7) return random.pick(EXACT_SHARES[count] as string[][]);
    if (pattern <= 10) {
      // Fixed parts that add up to the total.
      const parts: string[] = [];
      let rest = total;
      for (let index = 0; index < count - 1; index += 1) {
        const part = rest > 1n ? random.bigInt(1n, rest - 1n) : 1n;
        parts.push(part.toString());
        rest -= part;
      }
      parts.push(rest.toString());
      return parts;
    }
    const result: string[] = [];
    for (let index = 0; index < count - 1; index += 1) {
      if (random.chance(0.5) && total > 8n) result.push(random.bigInt(1n, total / 4n).toString());
      else result.push(`${random.int(1, 30)}${random.chance(0.3) ? `.${random.int(1, 99)}` : ''}%`);
    }
    result.splice(random.int(0, result.length), 0, 'left');
    return result;
  }

  createSpec(): CreateSpec {
    const random = this.random;
    const currency = random.pick(CURRENCIES);
    const amount = this.amount();
    const split = random.chance(0.35);
    const inflight = random.chance(split ? 0.15 : 0.35);
    const scheduledFor = random.chance(0.1) ? this.now + random.int(1, 120) * MINUTE : 0;
    const base = Math.max(scheduledFor, this.now);
    const spec: CreateSpec = {
      currency, amount, inflight, scheduledFor, overdraft: false, atomic: random.chance(0.5),
      // Split holds get no dates: their legs' timers do not close the parent (reported as a bug).
      expiry: inflight && !split && random.chance(0.35) ? base + random.int(1, 150) * MINUTE : 0,
      commitAt: inflight && !split && random.chance(0.3) ? base + random.int(1, 150) * MINUTE : 0,
    };
    const pool = random.chance(0.2) ? [...USERS, '@od'] : USERS;
    if (!split) {
      spec.source = random.chance(0.12) ? random.pick(OVERDRAFT) : random.pick(pool);
      spec.destination = random.chance(0.03) ? spec.source : random.pick(USERS.filter((name) => name !== spec.source));
      spec.overdraft = OVERDRAFT.includes(spec.source) && random.chance(0.8);
      return spec;
    }
    const names = [...pool].sort(() => random.next() - 0.5);
    const sourceCount = random.int(1, 3);
    const destinationCount = random.int(1, 3);
    const side = (count: number, offset: number): ShareSpec[] => {
      const distributions = this.shares(count, amount);
      return distributions.map((distribution, index) => ({ name: names[(offset + index) % names.length] as string, distribution }));
    };
    const form = random.int(0, 2);
    if (form !== 1) spec.sources = side(sourceCount, 0);
    else spec.source = names[0] as string;
    if (form !== 0) spec.destinations = side(destinationCount, 3);
    else spec.destination = names[3] as string;
    if (random.chance(0.03) && spec.sources && spec.destinations) {
      (spec.destinations[0] as ShareSpec).name = (spec.sources[0] as ShareSpec).name;
    }
    const sourceNames = spec.sources ? spec.sources.map((item) => item.name) : [spec.source as string];
    spec.overdraft = sourceNames.every((name) => OVERDRAFT.includes(name)) && random.chance(0.8);
    return spec;
  }

  command(spec: CreateSpec, skipQueue: boolean): CreateTransactionCommand {
    const command = transfer({
      currency: spec.currency,
      source: spec.source ?? '',
      destination: spec.destination ?? '',
      precise_amount: spec.amount,
      allow_overdraft: spec.overdraft,
      inflight: spec.inflight,
      inflight_expiry_date: spec.expiry,
      inflight_commit_date: spec.commitAt,
      scheduled_for: spec.scheduledFor,
      atomic: spec.atomic,
      skip_queue: skipQueue,
    });
    if (spec.sources) command.sources = spec.sources.map((item) => share(item.name, item.distribution));
    if (spec.destinations) command.destinations = spec.destinations.map((item) => share(item.name, item.distribution));
    return command;
  }

  remember(id: string, inflight: boolean): void {
    this.tops.push(id);
    if (inflight) this.holds.push(id);
  }

  // ---- operations ----

  create(spec = this.createSpec(), skipQueue = this.random.chance(0.5)): void {
    this.lastOp = `create ${skipQueue ? 'sync' : 'queued'} ${spec.sources || spec.destinations ? 'split' : 'plain'}`;
    const { result, events } = this.logged(() => this.rig.engine.run({ op: 'transaction.create', ...this.command(spec, skipQueue) }));
    const own = this.absorbQueued(events);
    const id = result.ok ? result.value.transaction.transaction_id : this.nextPlaceholder();
    const decision = this.model.create(id, spec, skipQueue, this.now);
    this.compare('create', result, decision, result.ok ? result.value.transaction.status : undefined);
    this.expectOwn(own, result.ok);
    if (result.ok) {
      this.learnLegs(id);
      this.remember(id, spec.inflight);
    }
  }

  act(action: 'commit' | 'void'): void {
    const random = this.random;
    // Now and then aim at a hold that already has an action queued, or at one just acted on.
    const pending = [...this.model.s.pendingActions.keys()];
    const holdId = pending.length > 0 && random.chance(0.2) ? random.pick(pending)
      : this.recentHolds.length > 0 && random.chance(0.2) ? random.pick(this.recentHolds)
        : this.holds.length > 0 && !random.chance(0.02) ? random.pick(this.holds) : 'txn_unknown';
    const hold = this.model.txn(holdId);
    const remaining = hold ? hold.amount - hold.committed : 10n;
    let amount = 0n;
    if (action === 'commit') {
      const roll = random.int(0, 9);
      if (roll === 3 && remaining > 1n) amount = remaining - 1n;
      else if (roll >= 4 && roll < 8 && remaining > 0n) amount = random.bigInt(1n, remaining);
      else if (roll >= 8) amount = random.bigInt(1n, remaining + 50n);
    }
    const skipQueue = random.chance(0.5);
    this.lastOp = `${action} ${amount} of ${holdId} ${skipQueue ? 'sync' : 'queued'}`;
    const { result, events } = this.logged(() => this.rig.engine.run({ op: 'hold.act', transaction_id: holdId, action, precise_amount: amount, skip_queue: skipQueue }));
    const own = this.absorbQueued(events);
    this.recentHolds.push(holdId);
    if (this.recentHolds.length > 8) this.recentHolds.shift();
    const childId = result.ok ? result.value.transaction.transaction_id : this.nextPlaceholder();
    const decision = this.model.act(childId, holdId, action, amount, skipQueue);
    this.compare(action, result, decision, result.ok ? result.value.transaction.status : undefined);
    this.expectOwn(own, result.ok);
    if (result.ok) {
      if (result.value.queued !== !skipQueue) this.fail('queued flag wrong');
      if (decision.ok && result.value.transaction.precise_amount !== decision.txn.amount) {
        this.fail(`${action} child amount ${result.value.transaction.precise_amount}, model ${decision.txn.amount}`);
      }
      this.tops.push(childId);
    }
  }

  refund(): void {
    const random = this.random;
    const roll = random.int(0, 19);
    // Now and then aim at an original whose refund is still queued, or that was just refunded.
    const locked = [...this.model.s.refundLocks.keys()];
    const originalId = roll === 0 ? 'txn_unknown'
      : roll === 1 && this.legs.length > 0 ? random.pick(this.legs)
        : roll <= 4 && locked.length > 0 ? random.pick(locked)
          : roll <= 7 && this.recentOriginals.length > 0 ? random.pick(this.recentOriginals)
            : this.tops.length > 0 ? random.pick(this.tops) : 'txn_unknown';
    const skipQueue = random.chance(0.5);
    this.lastOp = `refund ${originalId} ${skipQueue ? 'sync' : 'queued'}`;
    const { result, events } = this.logged(() => this.rig.engine.run({ op: 'transaction.refund', transaction_id: originalId, skip_queue: skipQueue, description: '', meta_data: {} }));
    const own = this.absorbQueued(events);
    const id = result.ok ? result.value.transaction.transaction_id : this.nextPlaceholder();
    const decision = this.model.refund(id, originalId, skipQueue);
    this.compare('refund', result, decision, result.ok ? result.value.transaction.status : undefined);
    this.expectOwn(own, result.ok);
    this.recentOriginals.push(originalId);
    if (this.recentOriginals.length > 8) this.recentOriginals.shift();
    if (result.ok && decision.ok) {
      if (result.value.transaction.precise_amount !== decision.txn.amount) this.fail(`refund amount ${result.value.transaction.precise_amount}, model ${decision.txn.amount}`);
      this.learnLegs(id);
      this.tops.push(id);
    }
  }

  bulk(): void {
    const random = this.random;
    const atomic = random.chance(0.5);
    const skipQueue = random.chance(0.5);
    const inflight = random.chance(0.2);
    const immediate = atomic || skipQueue;
    const specs = Array.from({ length: random.int(1, 6) }, () => {
      const spec = this.createSpec();
      spec.scheduledFor = 0;
      if (inflight) {
        // A bulk hold: split holds stay dateless, as above.
        spec.inflight = true;
        if (spec.sources || spec.destinations) spec.expiry = spec.commitAt = 0;
      }
      return spec;
    });
    this.lastOp = `bulk of ${specs.length} ${atomic ? 'atomic' : 'not atomic'} ${skipQueue ? 'sync' : 'queued'}${inflight ? ' inflight' : ''}`;
    const { result, events } = this.logged(() => this.rig.engine.run({ op: 'transaction.bulk', transactions: specs.map((spec) => this.command(spec, false)), atomic, inflight, skip_queue: skipQueue }));
    const own = this.absorbQueued(events);
    const batchId = result.ok ? result.value.batch_id : '';
    const recorded = (own[0]?.transactions ?? []).filter((record) => record.batch_id === batchId && batchId !== '' && record.parent_transaction === '');
    const saved = this.model.snapshot();
    let predicted: { ok: true; status: string; count: number; failed?: { index: number; code: string } } | { ok: false; code: string } = {
      ok: true, status: !immediate ? 'QUEUED' : inflight ? 'INFLIGHT' : 'APPLIED', count: specs.length,
    };
    for (const [index, spec] of specs.entries()) {
      const id = recorded[index]?.transaction_id ?? this.nextPlaceholder();
      const decision = this.model.create(id, { ...spec, inflight: spec.inflight || inflight }, immediate, this.now);
      if (decision.ok) {
        if (recorded[index] && recorded[index].status !== decision.txn.status) this.fail(`bulk item ${index}: engine ${recorded[index].status}, model ${decision.txn.status}`);
        continue;
      }
      if (atomic || index === 0) {
        this.model.restore(saved);
        predicted = { ok: false, code: decision.code };
      } else predicted = { ok: true, status: 'PARTIAL', count: index, failed: { index, code: decision.code } };
      break;
    }
    if (result.ok !== predicted.ok) this.fail(`bulk: engine ${result.ok ? 'accepted' : `refused ${result.rejection.code}`}, model ${predicted.ok ? 'accepted' : `refused ${predicted.code}`}`);
    if (!result.ok && !predicted.ok) {
      if (result.rejection.code !== predicted.code) this.fail(`bulk refused ${result.rejection.code}, model ${predicted.code}`);
      this.count(`bulk refused ${predicted.code}`);
    }
    if (result.ok && predicted.ok) {
      const engineView = [result.value.status, result.value.transaction_count, result.value.failure?.index, result.value.failure?.rejection.code];
      const modelView = [predicted.status, predicted.count, predicted.failed?.index, predicted.failed?.code];
      if (JSON.stringify(engineView) !== JSON.stringify(modelView)) this.fail(`bulk: engine ${JSON.stringify(engineView)}, model ${JSON.stringify(modelView)}`);
      if (recorded.length !== predicted.count) this.fail(`bulk recorded ${recorded.length} items, model ${predicted.count}`);
      this.count(`bulk ${predicted.status}`);
      for (const [index, record] of recorded.entries()) {
        this.learnLegs(record.transaction_id);
        this.remember(record.transaction_id, (specs[index] as CreateSpec).inflight || inflight);
      }
    }
    this.expectOwn(own, result.ok && recorded.length > 0);
  }

  processQueue(): void {
    const items = this.random.chance(0.2) ? 10_000 : this.random.int(1, 8);
    this.lastOp = `process ${items} queued`;
    const { result, events } = this.logged(() => this.rig.engine.run({ op: 'queue.process', items_max: items }).value);
    const rest = this.absorbQueued(events);
    if (rest.length > 0) this.fail(`${rest.length} events from the queue carried out nothing queued`);
    if (result !== events.length) this.fail(`processQueued said ${result}, logged ${events.length}`);
  }

  timers(): void {
    const advance = this.random.int(1, 90) * MINUTE;
    this.rig.clock.advance(advance);
    const now = this.now;
    this.lastOp = `advance ${advance / MINUTE} min and fire timers`;
    const openBefore = new Set(this.holds.filter((id) => this.model.txn(id)?.status === 'INFLIGHT'));
    const { events } = this.logged(() => this.rig.engine.run({ op: 'timers.fire' }).value);
    let lastAt = -Infinity;
    for (const event of events) {
      const [other] = this.absorbQueued([event]);
      if (!other) continue;
      const ids = (other.transactions ?? []).map((record) => record.transaction_id);
      const scheduledId = ids.find((id) => this.model.s.scheduled.has(id));
      if (scheduledId !== undefined) {
        const at = this.model.txn(scheduledId)?.scheduledFor ?? 0;
        const problem = this.model.processScheduled(scheduledId, now);
        if (problem) this.fail(problem);
        if (at < lastAt) this.fail(`scheduled ${scheduledId} (due ${at}) fired after a timer due ${lastAt}`);
        lastAt = at;
        this.learnLegs(scheduledId);
        this.count('scheduled fired');
        continue;
      }
      const holdId = ids.find((id) => this.model.txn(id)?.kind === 'plain' && this.model.txn(id)?.status === 'INFLIGHT');
      const hold = holdId === undefined ? undefined : this.model.txn(holdId);
      if (!hold || holdId === undefined) this.fail(`a timer event the model cannot explain: ${ids.join(', ')}`);
      const due = this.model.dueTimer(hold, now);
      if (!due) this.fail(`hold ${holdId} was closed by a timer that was not due`);
      if (openBefore.has(holdId)) {
        if (due.at < lastAt) this.fail(`hold ${holdId} timer (due ${due.at}) fired after one due ${lastAt}`);
        lastAt = due.at;
      }
      this.model.fireHoldTimer(hold, due.action);
      this.count(`timer ${due.action}`);
    }
    for (const id of this.holds) {
      const txn = this.model.txn(id);
      if (txn && this.model.dueTimer(txn, now)) this.fail(`hold ${id} is due (${JSON.stringify(this.model.dueTimer(txn, now))}) but still open`);
    }
    for (const id of this.model.s.scheduled) {
      if ((this.model.txn(id)?.scheduledFor ?? Infinity) <= now) this.fail(`scheduled ${id} is due but still waiting`);
    }
  }

  // ---- checks ----

  checkEverything(): void {
    const engine = this.rig.engine;
    // Balances: the engine's against the model's, and the sums.
    const sums = new Map<string, { settled: bigint; inflight: bigint }>();
    const seen = new Set<Key>();
    for (const record of engine.state.balances.values()) {
      const key = keyOf(record.indicator, record.currency);
      seen.add(key);
      const model = this.model.balance(key);
      if (record.credit_balance !== model.credit || record.debit_balance !== model.debit
        || record.inflight_credit_balance !== model.inflightCredit || record.inflight_debit_balance !== model.inflightDebit) {
        this.fail(`balance ${key}: engine c${record.credit_balance} d${record.debit_balance} ic${record.inflight_credit_balance} id${record.inflight_debit_balance}, `
          + `model c${model.credit} d${model.debit} ic${model.inflightCredit} id${model.inflightDebit}`);
      }
      const sum = sums.get(record.currency) ?? { settled: 0n, inflight: 0n };
      sum.settled += record.credit_balance - record.debit_balance;
      sum.inflight += record.inflight_credit_balance - record.inflight_debit_balance;
      sums.set(record.currency, sum);
      const settled = record.credit_balance - record.debit_balance;
      if (!OVERDRAFT.includes(record.indicator) && (settled < 0n || settled - record.inflight_debit_balance < 0n)) {
        this.fail(`balance ${key} without overdraft is below zero: balance ${settled}, available ${settled - record.inflight_debit_balance}`);
      }
    }
    for (const [key, model] of this.model.s.balances) {
      if (!seen.has(key) && (model.credit !== 0n || model.debit !== 0n || model.inflightCredit !== 0n || model.inflightDebit !== 0n)) {
        this.fail(`model has money on ${key}, which the engine never created`);
      }
    }
    for (const [currency, sum] of sums) {
      if (sum.settled !== 0n) this.fail(`${currency} settled balances sum to ${sum.settled}`);
      if (sum.inflight !== 0n) this.fail(`${currency} inflight balances sum to ${sum.inflight}`);
    }
    // Transactions: statuses, hold progress, split legs.
    for (const [id, txn] of this.model.s.txns) {
      const record = this.record(id);
      if (!record) this.fail(`engine lost ${id}`);
      if (record.status !== txn.status) this.fail(`${txn.kind} ${id}: engine ${record.status}, model ${txn.status}`);
      if (txn.kind === 'plain' && txn.inflight && (record.committed_amount ?? 0n) !== txn.committed) {
        this.fail(`hold ${id}: engine committed ${record.committed_amount}, model ${txn.committed}`);
      }
      if (txn.status === 'REJECTED' && record.rejection?.code !== txn.rejection) this.fail(`${id} rejected for ${record.rejection?.code}, model ${txn.rejection}`);
      if (txn.plan && txn.legs.length > 0) {
        for (const [index, legId] of (record.legs ?? []).entries()) {
          const leg = this.record(legId);
          const modelLeg = txn.legs[index];
          if (!leg || !modelLeg || leg.status !== modelLeg.status) this.fail(`leg ${index} of ${id}: engine ${leg?.status}, model ${modelLeg?.status}`);
        }
      }
    }
    // Pending work and locks.
    const sameKeys = (label: string, engineKeys: Iterable<string>, modelKeys: Iterable<string>): void => {
      const a = [...engineKeys].sort().join(',');
      const b = [...modelKeys].sort().join(',');
      if (a !== b) this.fail(`${label}: engine [${a}], model [${b}]`);
    };
    sameKeys('queued hold actions', engine.state.pendingHoldActions.keys(), this.model.s.pendingActions.keys());
    sameKeys('refund locks', engine.state.refundLocks.keys(), this.model.s.refundLocks.keys());
    sameKeys('scheduled', engine.state.scheduled.keys(), this.model.s.scheduled);
    sameKeys('queued', [...engine.state.mailboxes.all()].map(([, record]) => record.transaction_id), this.model.s.queued);
  }

  run(steps: number): void {
    // Everyone starts with money in both currencies.
    for (const currency of CURRENCIES) {
      for (const name of [...USERS, '@od']) {
        this.create({ currency, source: '@world', destination: name, amount: 5_000n, overdraft: true, inflight: false, expiry: 0, commitAt: 0, scheduledFor: 0, atomic: false }, true);
      }
    }
    this.checkEverything();
    for (this.step = 1; this.step <= steps; this.step += 1) {
      const roll = this.random.int(0, 99);
      if (roll < 30) this.create();
      else if (roll < 42) this.act('commit');
      else if (roll < 48) this.act('void');
      else if (roll < 60) this.refund();
      else if (roll < 68) this.bulk();
      else if (roll < 86) this.processQueue();
      else this.timers();
      this.checkEverything();
    }
    // Let everything pending finish, then check once more.
    this.lastOp = 'final drain';
    this.rig.clock.advance(1_000 * MINUTE);
    this.timers();
    this.processQueue();
    this.absorbQueued(this.logged(() => this.rig.engine.run({ op: 'queue.process', items_max: 1_000_000 }).value).events);
    this.checkEverything();
  }
}

const FIXED_SEEDS = [11, 2026, 31337, 8];

t.test('random lifecycle histories agree with the reference model', async (t) => {
  for (const seed of seedsToRun(FIXED_SEEDS)) {
    await seededTest(t, 'history', seed, (t, random) => {
      const simulation = new Simulation(random);
      simulation.run(STEPS);
      t.equal(simulation.model.s.queued.size, 0, 'nothing left queued at the end');
      checkReplay(t, simulation.rig);
      const stats = simulation.stats;
      t.comment(Object.entries(stats).sort().map(([name, n]) => `${name}: ${n}`).join('; '));
      // The fixed seeds must keep covering every kind of step (fresh seeds are only checked for agreement).
      if (!FIXED_SEEDS.includes(seed)) return;
      const total = (prefix: string): number => Object.entries(stats).filter(([name]) => name.startsWith(prefix)).reduce((sum, [, n]) => sum + n, 0);
      t.ok(total('create ') > 50, 'creates happened');
      t.ok(total('queued processed') > 20, 'queued work was carried out');
      t.ok(total('commit APPLIED') + total('commit QUEUED') > 5, 'holds were committed');
      t.ok(total('void VOID') + total('void QUEUED') > 2, 'holds were voided');
      t.ok(total('refund APPLIED') + total('refund QUEUED') > 5, 'refunds went through');
      t.ok(total('refund refused') > 5, 'refunds were refused');
      t.ok(total('refund refused GEN_RESOURCE_LOCKED') + total('refund refused GEN_CONFLICT') > 2, 'refunds met a queued or an applied refund');
      t.ok(total('commit refused GEN_CONFLICT') + total('void refused GEN_CONFLICT') > 0, 'actions met a queued action');
      t.ok(total('bulk ') > 5, 'bulk batches were decided');
      t.ok(total('timer ') + total('scheduled fired') > 3, 'timers fired');
    });
  }
});
