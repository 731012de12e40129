// A plain reference model of the transaction lifecycle, written from the contract rather than from the
// engine: balances as four bigints, transactions as small records, per-balance FIFO queues, and the
// rules for holds, splits, refunds, schedules and bulk spelled out directly. The simulation drives the
// engine and this model with the same history and compares them after every step. It imports nothing
// from engine/ (the split arithmetic comes from the separately written oracle).

import { oracleDistribute, oraclePair } from './split-oracle.js';

/** A balance in the model: `<@name>|<currency>`. */
export type Key = string;
export type Status = 'QUEUED' | 'SCHEDULED' | 'APPLIED' | 'INFLIGHT' | 'VOID' | 'REJECTED';

export interface MBalance {
  credit: bigint;
  debit: bigint;
  inflightCredit: bigint;
  inflightDebit: bigint;
}

export interface ShareSpec {
  name: string;
  /** As a client writes it: a whole amount, `<n>%`, or `left`. */
  distribution: string;
}

export interface CreateSpec {
  currency: string;
  source?: string;
  sources?: ShareSpec[];
  destination?: string;
  destinations?: ShareSpec[];
  amount: bigint;
  overdraft: boolean;
  inflight: boolean;
  expiry: number;
  commitAt: number;
  scheduledFor: number;
  atomic: boolean;
}

export interface MLeg {
  from: Key;
  to: Key;
  amount: bigint;
  status: Status;
  committed: bigint;
  rejection?: string;
}

export interface MTxn {
  id: string;
  kind: 'plain' | 'split' | 'commit' | 'void' | 'refund';
  status: Status;
  currency: string;
  amount: bigint;
  overdraft: boolean;
  inflight: boolean;
  /** Plain shape. */
  from?: Key;
  to?: Key;
  /** Split shape: the planned legs, in pairing order (shares that come to 0 make no leg). */
  plan?: Array<{ from: Key; to: Key; amount: bigint }>;
  /** The balance whose queue it waits in when queued: the (first) source, as requested. */
  box: Key;
  atomic: boolean;
  legs: MLeg[];
  committed: bigint;
  expiry: number;
  commitAt: number;
  scheduledFor: number;
  /** Hold of a commit/void child, original of a refund. */
  parent?: string;
  /** Commit children: the amount asked for (0 = all that remains). */
  requested: bigint;
  rejection?: string;
}

export type Decision = { ok: true; txn: MTxn } | { ok: false; code: string };

interface ModelState {
  balances: Map<Key, MBalance>;
  txns: Map<string, MTxn>;
  /** Leg id -> its parent, once the engine has told us the leg ids. */
  legParent: Map<string, string>;
  /** Per balance, ids waiting in arrival order. */
  mailboxes: Map<Key, string[]>;
  queued: Set<string>;
  scheduled: Set<string>;
  /** Hold id -> the queued action on it. */
  pendingActions: Map<string, string>;
  /** Original id -> its queued refund. */
  refundLocks: Map<string, string>;
  /** Original id -> the latest refund attempt recorded for it. */
  lastRefund: Map<string, string>;
}

export const keyOf = (name: string, currency: string): Key => `${name}|${currency}`;

function parseShare(distribution: string): { kind: 'left' } | { kind: 'fixed'; amount: bigint } | { kind: 'percent'; numerator: bigint; denominator: bigint } {
  if (distribution === 'left') return { kind: 'left' };
  if (distribution.endsWith('%')) {
    const [whole, fraction = ''] = distribution.slice(0, -1).split('.');
    return { kind: 'percent', numerator: BigInt(`${whole}${fraction}`), denominator: 10n ** BigInt(fraction.length) };
  }
  return { kind: 'fixed', amount: BigInt(distribution) };
}

export class ReferenceLedger {
  s: ModelState = {
    balances: new Map(),
    txns: new Map(),
    legParent: new Map(),
    mailboxes: new Map(),
    queued: new Set(),
    scheduled: new Set(),
    pendingActions: new Map(),
    refundLocks: new Map(),
    lastRefund: new Map(),
  };

  /** Lets an all-or-nothing step be undone: the whole state is copied (shared references kept). */
  snapshot(): ModelState {
    return structuredClone(this.s);
  }

  restore(saved: ModelState): void {
    this.s = saved;
  }

  balance(key: Key): MBalance {
    let found = this.s.balances.get(key);
    if (!found) this.s.balances.set(key, (found = { credit: 0n, debit: 0n, inflightCredit: 0n, inflightDebit: 0n }));
    return found;
  }

  available(key: Key): bigint {
    const record = this.balance(key);
    return record.credit - record.debit - record.inflightDebit;
  }

  txn(id: string): MTxn | undefined {
    return this.s.txns.get(id);
  }

  // ---- deciding requests ----

  /** A new transaction: checked, then scheduled, queued, or carried out now. */
  create(id: string, spec: CreateSpec, skipQueue: boolean, now: number): Decision {
    const shape = this.shapeOf(spec);
    if ('code' in shape) return shape;
    const txn: MTxn = {
      id,
      kind: shape.plan ? 'split' : 'plain',
      status: 'QUEUED',
      currency: spec.currency,
      amount: spec.amount,
      overdraft: spec.overdraft,
      inflight: spec.inflight,
      from: shape.from,
      to: shape.to,
      plan: shape.plan,
      box: shape.box,
      atomic: shape.plan ? spec.atomic : false,
      legs: [],
      committed: 0n,
      expiry: spec.inflight ? spec.expiry : 0,
      commitAt: spec.inflight ? spec.commitAt : 0,
      scheduledFor: spec.scheduledFor,
      requested: 0n,
    };
    if (spec.scheduledFor > now) {
      txn.status = 'SCHEDULED';
      this.s.txns.set(id, txn);
      this.s.scheduled.add(id);
      return { ok: true, txn };
    }
    if (!skipQueue) return this.enqueue(txn);
    return this.carryOutNow(txn);
  }

  /** Commit or void of a hold. */
  act(childId: string, holdId: string, action: 'commit' | 'void', amount: bigint, skipQueue: boolean): Decision {
    const hold = this.s.txns.get(holdId);
    if (!hold) return { ok: false, code: 'TXN_NOT_FOUND' };
    if (this.s.pendingActions.has(holdId)) return { ok: false, code: 'GEN_CONFLICT' };
    if (hold.kind === 'split' && action === 'commit' && amount !== 0n) return { ok: false, code: 'TXN_PARTIAL_NOT_ALLOWED' };
    const queuedBehindHold = !skipQueue && hold.inflight && hold.status === 'QUEUED';
    if (!queuedBehindHold) {
      const refusal = this.actionRefusal(hold, action, amount);
      if (refusal) return { ok: false, code: refusal };
    }
    const child: MTxn = {
      id: childId,
      kind: action,
      status: 'QUEUED',
      currency: hold.currency,
      amount: action === 'commit' ? amount : 0n,
      overdraft: false,
      inflight: false,
      atomic: false,
      legs: [],
      committed: 0n,
      expiry: 0,
      commitAt: 0,
      scheduledFor: 0,
      parent: holdId,
      requested: amount,
      box: hold.box,
    };
    if (!skipQueue) {
      const decision = this.enqueue(child);
      this.s.pendingActions.set(holdId, childId);
      return decision;
    }
    return this.carryOutNow(child);
  }

  /** A refund: what actually moved, moved back, once per original. */
  refund(refundId: string, originalId: string, skipQueue: boolean): Decision {
    const original = this.s.txns.get(originalId);
    const isLeg = this.s.legParent.has(originalId);
    if (!original && !isLeg) return { ok: false, code: 'TXN_NOT_FOUND' };
    if (this.s.refundLocks.has(originalId)) return { ok: false, code: 'GEN_RESOURCE_LOCKED' };
    const last = this.s.lastRefund.get(originalId);
    if (last !== undefined && this.s.txns.get(last)?.status !== 'REJECTED') return { ok: false, code: 'GEN_CONFLICT' };
    if (isLeg || !original) return { ok: false, code: 'TXN_NOT_REFUNDABLE' };
    if (original.kind === 'commit' || original.kind === 'void') return { ok: false, code: 'TXN_NOT_REFUNDABLE' };
    const refund: MTxn = {
      id: refundId,
      kind: 'refund',
      status: 'QUEUED',
      currency: original.currency,
      amount: 0n,
      overdraft: false,
      inflight: false,
      atomic: true,
      legs: [],
      committed: 0n,
      expiry: 0,
      commitAt: 0,
      scheduledFor: 0,
      parent: originalId,
      requested: 0n,
      box: '',
    };
    // A hold voided whole is held again the other way (Blnk issue 42): its full amount, as a hold.
    const restored = original.inflight && original.status === 'VOID' && original.committed === 0n;
    refund.inflight = restored;
    if (original.plan) {
      // Back along the legs that moved: each receiver pays back what it got, each payer gets back what it paid.
      const received = new Map<Key, bigint>();
      const paid = new Map<Key, bigint>();
      for (const leg of original.legs) {
        const moved = restored ? leg.amount : original.inflight ? leg.committed : leg.status === 'APPLIED' ? leg.amount : 0n;
        if (moved === 0n) continue;
        received.set(leg.to, (received.get(leg.to) ?? 0n) + moved);
        paid.set(leg.from, (paid.get(leg.from) ?? 0n) + moved);
      }
      const payers = [...received];
      const payees = [...paid];
      const total = payers.reduce((sum, [, amount]) => sum + amount, 0n);
      if (total === 0n) return { ok: false, code: 'TXN_NOT_REFUNDABLE' };
      refund.amount = total;
      refund.box = (payers[0] as [Key, bigint])[0];
      if (payers.length === 1 && payees.length === 1) {
        refund.from = (payers[0] as [Key, bigint])[0];
        refund.to = (payees[0] as [Key, bigint])[0];
      } else {
        refund.plan = oraclePair(payers.map(([, amount]) => amount), payees.map(([, amount]) => amount)).map((flow) => ({
          from: (payers[flow.sourceIndex] as [Key, bigint])[0],
          to: (payees[flow.destinationIndex] as [Key, bigint])[0],
          amount: flow.amount,
        }));
      }
    } else {
      const moved = restored ? original.amount : original.inflight ? original.committed : original.status === 'APPLIED' ? original.amount : 0n;
      if (moved === 0n) return { ok: false, code: 'TXN_NOT_REFUNDABLE' };
      refund.amount = moved;
      refund.box = original.to as Key;
      refund.from = original.to;
      refund.to = original.from;
    }
    if (!skipQueue) {
      const decision = this.enqueue(refund);
      this.s.refundLocks.set(originalId, refundId);
      this.s.lastRefund.set(originalId, refundId);
      return decision;
    }
    const decision = this.carryOutNow(refund);
    if (decision.ok) this.s.lastRefund.set(originalId, refundId);
    return decision;
  }

  // ---- carrying out ----

  /** A queued item's turn came: it must be the head of its balance's queue. Returns an error text if not. */
  processQueued(id: string): string | undefined {
    const txn = this.s.txns.get(id);
    if (!txn) return `processed ${id}, which the model does not know`;
    const box = this.mailboxOf(txn);
    const queue = this.s.mailboxes.get(box) ?? [];
    if (queue[0] !== id) return `processed ${id} before ${queue[0]} on ${box} (out of FIFO order)`;
    queue.shift();
    if (queue.length === 0) this.s.mailboxes.delete(box);
    this.s.queued.delete(id);
    this.carryOut(txn);
    if (txn.kind === 'commit' || txn.kind === 'void') {
      if (this.s.pendingActions.get(txn.parent as string) === id) this.s.pendingActions.delete(txn.parent as string);
    }
    if (txn.kind === 'refund' && this.s.refundLocks.get(txn.parent as string) === id) this.s.refundLocks.delete(txn.parent as string);
    return undefined;
  }

  /** A scheduled transaction fell due. */
  processScheduled(id: string, now: number): string | undefined {
    const txn = this.s.txns.get(id);
    if (!txn || !this.s.scheduled.has(id)) return `scheduled ${id} fired but the model has it ${txn?.status}`;
    if (txn.scheduledFor > now) return `scheduled ${id} fired at ${now}, before its time ${txn.scheduledFor}`;
    this.s.scheduled.delete(id);
    this.carryOut(txn);
    return undefined;
  }

  /** The timer that fires first for an open hold at `now`, if any (the earlier date; expiry on a tie). */
  dueTimer(hold: MTxn, now: number): { action: 'commit' | 'void'; at: number } | undefined {
    if (hold.status !== 'INFLIGHT' || hold.kind !== 'plain') return undefined;
    const candidates: Array<{ action: 'commit' | 'void'; at: number }> = [];
    if (hold.expiry > 0) candidates.push({ action: 'void', at: hold.expiry });
    if (hold.commitAt > 0) candidates.push({ action: 'commit', at: hold.commitAt });
    const first = candidates.sort((a, b) => a.at - b.at)[0];
    return first && first.at <= now ? first : undefined;
  }

  /** A hold's own timer fired: void or commit whatever remains. */
  fireHoldTimer(hold: MTxn, action: 'commit' | 'void'): void {
    this.holdAction(hold, action, 0n);
  }

  private enqueue(txn: MTxn): Decision {
    this.s.txns.set(txn.id, txn);
    this.s.queued.add(txn.id);
    const box = this.mailboxOf(txn);
    const queue = this.s.mailboxes.get(box) ?? [];
    queue.push(txn.id);
    this.s.mailboxes.set(box, queue);
    return { ok: true, txn };
  }

  /** Synchronous: carried out at once; when it cannot go at all nothing is recorded. */
  private carryOutNow(txn: MTxn): Decision {
    const saved = this.snapshot();
    this.s.txns.set(txn.id, txn);
    this.carryOut(txn);
    if (txn.status === 'REJECTED') {
      const code = txn.rejection ?? 'UNKNOWN';
      this.restore(saved);
      return { ok: false, code };
    }
    return { ok: true, txn };
  }

  private carryOut(txn: MTxn): void {
    if (txn.kind === 'commit' || txn.kind === 'void') {
      const hold = this.s.txns.get(txn.parent as string) as MTxn;
      const outcome = this.holdAction(hold, txn.kind, txn.requested);
      if ('code' in outcome) {
        txn.status = 'REJECTED';
        txn.rejection = outcome.code;
      } else {
        txn.status = txn.kind === 'commit' ? 'APPLIED' : 'VOID';
        txn.amount = outcome.amount;
      }
      return;
    }
    if (txn.plan) return this.carryOutSplit(txn);
    const refusal = this.fundsRefusal(txn.from as Key, txn.amount, txn.overdraft);
    if (refusal) {
      txn.status = 'REJECTED';
      txn.rejection = refusal;
      return;
    }
    if (txn.inflight) {
      this.balance(txn.from as Key).inflightDebit += txn.amount;
      this.balance(txn.to as Key).inflightCredit += txn.amount;
      txn.status = 'INFLIGHT';
    } else {
      this.balance(txn.from as Key).debit += txn.amount;
      this.balance(txn.to as Key).credit += txn.amount;
      txn.status = 'APPLIED';
    }
  }

  private carryOutSplit(txn: MTxn): void {
    // Each leg is checked against the balances as the legs before it would leave them; a balance
    // appears once in a split, so only what its earlier legs took out matters.
    const takenOut = new Map<Key, bigint>();
    let firstFailure: string | undefined;
    const legs: MLeg[] = [];
    for (const step of txn.plan ?? []) {
      const leg: MLeg = { ...step, status: 'QUEUED', committed: 0n };
      const available = this.available(step.from) - (takenOut.get(step.from) ?? 0n);
      if (!txn.overdraft && available < step.amount) {
        leg.status = 'REJECTED';
        leg.rejection = 'TXN_INSUFFICIENT_FUNDS';
        firstFailure ??= leg.rejection;
      } else {
        leg.status = txn.inflight ? 'INFLIGHT' : 'APPLIED';
        takenOut.set(step.from, (takenOut.get(step.from) ?? 0n) + step.amount);
      }
      legs.push(leg);
    }
    if (firstFailure && txn.atomic) {
      // All or nothing: no leg moves, and every leg is rejected for the first failure's reason.
      txn.legs = legs.map((leg) => ({ ...leg, status: 'REJECTED', rejection: firstFailure }));
      txn.status = 'REJECTED';
      txn.rejection = firstFailure;
      return;
    }
    for (const leg of legs) {
      if (leg.status === 'REJECTED') continue;
      if (txn.inflight) {
        this.balance(leg.from).inflightDebit += leg.amount;
        this.balance(leg.to).inflightCredit += leg.amount;
      } else {
        this.balance(leg.from).debit += leg.amount;
        this.balance(leg.to).credit += leg.amount;
      }
    }
    txn.legs = legs;
    const moved = legs.some((leg) => leg.status !== 'REJECTED');
    txn.status = !moved ? 'REJECTED' : txn.inflight ? 'INFLIGHT' : 'APPLIED';
    if (!moved) txn.rejection = firstFailure;
  }

  /** Why a hold cannot take this action now, if it cannot. */
  private actionRefusal(hold: MTxn, action: 'commit' | 'void', amount: bigint): string | undefined {
    if (!hold.inflight) return 'TXN_NOT_INFLIGHT';
    if (hold.status === 'VOID') return 'TXN_ALREADY_VOIDED';
    if (hold.status === 'APPLIED') return 'TXN_ALREADY_COMMITTED';
    if (hold.status !== 'INFLIGHT') return 'TXN_NOT_INFLIGHT';
    if (action === 'commit' && amount > hold.amount - hold.committed) return 'TXN_COMMIT_AMOUNT_EXCEEDED';
    return undefined;
  }

  private holdAction(hold: MTxn, action: 'commit' | 'void', amount: bigint): { amount: bigint } | { code: string } {
    const refusal = this.actionRefusal(hold, action, hold.kind === 'split' ? 0n : amount);
    if (refusal) return { code: refusal };
    if (hold.kind === 'split') {
      let total = 0n;
      for (const leg of hold.legs) {
        if (leg.status !== 'INFLIGHT') continue;
        const held = leg.amount - leg.committed;
        total += held;
        this.moveHeld(leg.from, leg.to, held, action);
        if (action === 'commit') leg.committed += held;
        leg.status = action === 'commit' ? 'APPLIED' : 'VOID';
      }
      hold.status = action === 'commit' ? 'APPLIED' : 'VOID';
      return { amount: total };
    }
    const held = hold.amount - hold.committed;
    const moving = action === 'void' ? held : amount === 0n ? held : amount;
    this.moveHeld(hold.from as Key, hold.to as Key, moving, action);
    if (action === 'void') hold.status = 'VOID';
    else {
      hold.committed += moving;
      if (hold.committed === hold.amount) hold.status = 'APPLIED';
    }
    return { amount: moving };
  }

  private moveHeld(from: Key, to: Key, amount: bigint, action: 'commit' | 'void'): void {
    this.balance(from).inflightDebit -= amount;
    this.balance(to).inflightCredit -= amount;
    if (action === 'commit') {
      this.balance(from).debit += amount;
      this.balance(to).credit += amount;
    }
  }

  private fundsRefusal(from: Key, amount: bigint, overdraft: boolean): string | undefined {
    if (overdraft) return undefined;
    return this.available(from) >= amount ? undefined : 'TXN_INSUFFICIENT_FUNDS';
  }

  /** The balance whose queue a transaction waits in: its (first) source; an action waits with its hold. */
  mailboxOf(txn: MTxn): Key {
    return txn.box;
  }

  /** Sides resolved to keys, split amounts computed and paired; or the reason the request is refused. */
  private shapeOf(spec: CreateSpec): { box: Key; from?: Key; to?: Key; plan?: Array<{ from: Key; to: Key; amount: bigint }> } | { ok: false; code: string } {
    const used = new Set<Key>();
    const side = (single: string | undefined, shares: ShareSpec[] | undefined): { keys: Key[]; amounts: bigint[] } | { ok: false; code: string } => {
      if (!shares) {
        const key = keyOf(single as string, spec.currency);
        if (used.has(key)) return { ok: false, code: 'TXN_SAME_SOURCE_DESTINATION' };
        used.add(key);
        return { keys: [key], amounts: [spec.amount] };
      }
      const amounts = oracleDistribute(spec.amount, shares.map((share) => parseShare(share.distribution)));
      if (!amounts) return { ok: false, code: 'TXN_INVALID_DISTRIBUTION' };
      const keys: Key[] = [];
      for (const share of shares) {
        const key = keyOf(share.name, spec.currency);
        if (used.has(key)) return { ok: false, code: 'TXN_SAME_SOURCE_DESTINATION' };
        used.add(key);
        keys.push(key);
      }
      return { keys, amounts };
    };
    const sources = side(spec.source, spec.sources);
    if ('code' in sources) return sources;
    const destinations = side(spec.destination, spec.destinations);
    if ('code' in destinations) return destinations;
    const box = sources.keys[0] as Key;
    if (!spec.sources && !spec.destinations) return { box, from: box, to: destinations.keys[0] };
    const plan = oraclePair(sources.amounts, destinations.amounts).map((flow) => ({
      from: sources.keys[flow.sourceIndex] as Key,
      to: destinations.keys[flow.destinationIndex] as Key,
      amount: flow.amount,
    }));
    return { box, plan };
  }
}
