// Seeded random ledger histories for simulation tests: drives a real LedgerEngine (in memory: MemoryLog,
// MemoryTransactionStore, a stepping clock, counter ids) through every kind of command the engine takes
// (balances and identities, plain, queued, scheduled, back-dated and split transfers, holds with partial commits,
// voids, expiries and auto-commits, refunds, bulk, metadata of transactions and balances, API keys, hooks,
// balances that track fund lineage with transfers tagged by provider) with amounts of any size.
// The same seed always gives the same events.

import { mulberry32 } from '../../bench/mulberry32.js';
import { MemoryTransactionStore } from '../../lookups/memory-transaction-store.js';
import { LedgerEngine } from '../../engine/ledger-engine.js';
import type { CreateTransactionCommand } from '../../engine/commands.js';
import type { Clock, IdPrefix, IdSource } from '../../engine/ports.js';
import { GENERAL_LEDGER_ID } from '../../engine/records.js';
import { MemoryLog } from '../../wal/memory-log.js';

/** mulberry32 (bench/mulberry32.ts): small, fast, good enough to pick test moves. */
export const seededRandom = mulberry32;

export class SteppingClock implements Clock {
  constructor(public ms = 1_700_000_000_000) {}
  now(): number {
    return this.ms;
  }
}

export class CounterIds implements IdSource {
  private counter = 0;
  next(prefix: IdPrefix): string {
    this.counter += 1;
    return `${prefix}_00000000-0000-7000-8000-${this.counter.toString(16).padStart(12, '0')}`;
  }
}

export interface RandomHistory {
  engine: LedgerEngine;
  log: MemoryLog;
  clock: SteppingClock;
}

const CURRENCIES = ['USD', 'EUR'];
const NAMES = ['@alice', '@bob', '@carol', '@dave', '@erin'];
const PROVIDERS = ['stripe', 'paypal', 'bank'];
const STRATEGIES = ['FIFO', 'LIFO', 'PROPORTIONAL'] as const;

export function randomHistory(seed: number, steps: number): RandomHistory {
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const chance = (p: number): boolean => random() < p;
  const clock = new SteppingClock();
  const log = new MemoryLog();
  const engine = new LedgerEngine({ clock, ids: new CounterIds(), log, transactions: new MemoryTransactionStore() });
  engine.run({ op: 'genesis.ensure' });
  const ledgers = [GENERAL_LEDGER_ID];
  const identities: string[] = [];
  const transactions: string[] = [];
  const apiKeys: string[] = [];
  const hooks: string[] = [];

  const amount = (): bigint => {
    const roll = random();
    if (roll < 0.05) return 10n ** BigInt(20 + Math.floor(random() * 15)) + BigInt(Math.floor(random() * 1000));
    if (roll < 0.2) return BigInt(Math.floor(random() * 1_000_000_000));
    return BigInt(1 + Math.floor(random() * 1000));
  };
  const balanceName = (currency: string): string => {
    const balances = [...engine.state.balances.values()].filter((balance) => balance.currency === currency);
    const tracked = balances.filter((balance) => balance.track_fund_lineage);
    if (tracked.length > 0 && chance(0.2)) return pick(tracked).balance_id;
    return balances.length > 0 && chance(0.3) ? pick(balances).balance_id : pick(NAMES);
  };
  const transfer = (currency: string): CreateTransactionCommand => {
    const source = balanceName(currency);
    let destination = balanceName(currency);
    if (destination === source) destination = source === '@world' ? '@alice' : '@world';
    const inflight = chance(0.3);
    const command: CreateTransactionCommand = {
      source, destination, precise_amount: amount(), precision: 100n, currency, reference: '', description: 'sim',
      meta_data: chance(0.2) ? { note: `n${Math.floor(random() * 100)}`, big: 2n ** 70n } : chance(0.3) ? { BLNK_LINEAGE_PROVIDER: pick(PROVIDERS) } : {},
      allow_overdraft: chance(0.7), skip_queue: chance(0.5), inflight,
      inflight_expiry_date: inflight && chance(0.4) ? clock.ms + 1 + Math.floor(random() * 5_000) : 0,
      inflight_commit_date: inflight && chance(0.2) ? clock.ms + 1 + Math.floor(random() * 5_000) : 0,
      scheduled_for: chance(0.1) ? clock.ms + 1 + Math.floor(random() * 5_000) : 0,
      atomic: false,
    };
    // Back-dated: counts for balances as of its effective date, maybe before a balance it names existed.
    if (chance(0.15)) command.effective_date = clock.ms - Math.floor(random() * 20_000);
    if (chance(0.1)) command.overdraft_limit = amount();
    if (chance(0.15)) {
      command.source = '';
      command.sources = [
        { identifier: pick(NAMES), distribution: '50%', request: { kind: 'percent', numerator: 50n, denominator: 1n } },
        { identifier: '@world', distribution: 'left', request: { kind: 'left' } },
      ];
      command.allow_overdraft = true;
      command.atomic = chance(0.5);
    }
    return command;
  };
  const remember = (id: string | undefined): void => {
    if (id !== undefined) transactions.push(id);
  };

  for (let step = 0; step < steps; step += 1) {
    clock.ms += Math.floor(random() * 400);
    const roll = random();
    const currency = pick(CURRENCIES);
    if (roll < 0.04) {
      const outcome = engine.run({ op: 'ledger.create', name: `ledger ${step}`, meta_data: {} });
      if (outcome.ok) ledgers.push(outcome.value.ledger_id);
    } else if (roll < 0.08) {
      const identity = identities.length > 0 && chance(0.5) ? pick(identities) : '';
      const lineage = identity !== '' && chance(0.5) ? { track_fund_lineage: true, allocation_strategy: pick(STRATEGIES) } : {};
      engine.run({ op: 'balance.create', ledger_id: pick(ledgers), currency, identity_id: identity, indicator: chance(0.3) ? `acct-${step}` : '', meta_data: { step }, ...lineage });
    } else if (roll < 0.11) {
      const outcome = engine.run({ op: 'identity.create', fields: {
        identity_type: 'individual', organization_name: '', first_name: `F${step}`, last_name: 'L', other_names: '', gender: '',
        dob: 0, email_address: '', phone_number: '', nationality: '', category: '', street: '', city: '', state: '', country: '',
        post_code: '', meta_data: {},
      } });
      if (outcome.ok) identities.push(outcome.value.identity_id);
    } else if (roll < 0.12 && identities.length > 0) {
      const balanceIds = [...engine.state.balances.keys()];
      if (chance(0.5) && balanceIds.length > 0) engine.run({ op: 'balance.set_identity', balance_id: pick(balanceIds), identity_id: pick(identities) });
      else engine.run({ op: 'identity.delete', identity_id: pick(identities) });
    } else if (roll < 0.55) {
      const outcome = engine.run({ op: 'transaction.create', ...transfer(currency) });
      if (outcome.ok) remember(outcome.value.transaction.transaction_id);
    } else if (roll < 0.65 && transactions.length > 0) {
      const target = pick(transactions);
      const record = engine.state.transaction(target);
      engine.run({ op: 'hold.act', ...{
        transaction_id: target, action: chance(0.6) ? 'commit' : 'void',
        precise_amount: chance(0.5) || !record ? 0n : record.precise_amount / 2n, skip_queue: chance(0.5),
      } });
    } else if (roll < 0.7 && transactions.length > 0) {
      engine.run({ op: 'transaction.refund', transaction_id: pick(transactions), skip_queue: chance(0.5), description: '', meta_data: {} });
    } else if (roll < 0.74) {
      const items = Array.from({ length: 1 + Math.floor(random() * 4) }, () => ({ ...transfer(currency), scheduled_for: 0, inflight: false, sources: undefined, source: pick(NAMES) }));
      engine.run({ op: 'transaction.bulk', transactions: items, atomic: chance(0.5), inflight: false, skip_queue: chance(0.5) });
    } else if (roll < 0.77 && transactions.length > 0) {
      // Balances' metadata too: the index keeps its history (balance as of a time).
      const balanceIds = [...engine.state.balances.keys()];
      const target = balanceIds.length > 0 && chance(0.3) ? pick(balanceIds) : pick(transactions);
      engine.run({ op: 'metadata.update', entity_id: target, meta_data: { tag: `t${step}` } });
    } else if (roll < 0.79) {
      // Some keys are made by other keys, so revocations cascade down chains of them.
      const createdBy = apiKeys.length > 0 && chance(0.3) ? pick(apiKeys) : '';
      const outcome = engine.run({ op: 'api_key.create', fields: { name: `k${step}`, owner_id: 'owner', scopes: ['ledgers:read'], expires_at: 0, secret_hash: `h${step}`, created_by: createdBy } });
      if (outcome.ok) apiKeys.push(outcome.value.api_key_id);
    } else if (roll < 0.8 && apiKeys.length > 0) {
      if (chance(0.5)) engine.run({ op: 'api_key.revoke', api_key_id: pick(apiKeys) });
      else engine.run({ op: 'api_key.record_use', used_at: [...new Map([[pick(apiKeys), clock.ms]])] });
    } else if (roll < 0.82) {
      if (hooks.length > 0 && chance(0.5)) {
        const hook = pick(hooks);
        if (chance(0.5)) engine.run({ op: 'hook.delete', hook_id: hook });
        else engine.run({ op: 'hook.update', hook_id: hook, fields: { name: 'h', url: 'http://127.0.0.1:1/h', type: 'POST_TRANSACTION', active: chance(0.5), timeout: 5, retry_count: 2 } });
      } else {
        const outcome = engine.run({ op: 'hook.create', fields: { name: 'h', url: 'http://127.0.0.1:1/h', type: 'PRE_TRANSACTION', active: true, timeout: 5, retry_count: 1 }, signing_secret_sealed: `v1.sealed-${step}` });
        if (outcome.ok) hooks.push(outcome.value.hook_id);
      }
    } else if (roll < 0.92) {
      engine.run({ op: 'queue.process', items_max: 1 + Math.floor(random() * 5) }).value;
    } else {
      clock.ms += Math.floor(random() * 3_000);
      engine.run({ op: 'timers.fire' }).value;
    }
  }
  return { engine, log, clock };
}
