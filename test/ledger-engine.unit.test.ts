// The engine's invariants over a seeded random history, driven through LedgerEngine with the in-memory
// log and store, a hand-moved clock and counting ids: zero-sum per currency after every command, every
// balance the fold of its applied transactions, queued work applied in arrival order per source, and a
// replay of the log giving the same state. Each decision on its own is specified in the decide-*.unit
// and engine-decisions.unit specs (given events, when a command, then events or a rejection).

import t from 'tap';
import type { CreateTransactionCommand } from '../engine/commands.js';
import { LedgerEngine } from '../engine/ledger-engine.js';
import { MemoryTransactionStore } from '../lookups/memory-transaction-store.js';
import { GENERAL_LEDGER_ID } from '../engine/records.js';
import { MemoryLog } from '../wal/memory-log.js';
import { balanceAmounts, CountingIds, engineRig, FakeClock, transfer, zeroSumViolations } from './helpers/engine-rig.js';
import { seededRandom } from './helpers/seeded-random.js';

function balanceOf(engine: LedgerEngine, balanceId: string): bigint {
  const balance = engine.state.balances.get(balanceId);
  if (!balance) throw new Error(`no balance ${balanceId}`);
  return balance.credit_balance - balance.debit_balance;
}

t.test('seeded random history: zero-sum after every command, queued order, replay to the same state', async (t) => {
  const random = seededRandom(t, 'ENGINE_HISTORY_SEED');
  const fixture = engineRig({ mailbox_depth_max: 4, queued_total_max: 20 });
  const { engine, log, clock } = fixture;
  const names = ['@world', '@a', '@b', '@c'];
  const ids: string[] = [];
  const usedReferences: string[] = [];
  const sentWithReference: CreateTransactionCommand[] = [];
  const outcomes = new Map<string, number>();
  const count = (label: string): void => void outcomes.set(label, (outcomes.get(label) ?? 0) + 1);
  for (let step = 0; step < 3000; step += 1) {
    clock.advance(random.int(3));
    const choice = random.int(12);
    let label: string;
    if (choice === 0) {
      const outcome = engine.run({ op: 'balance.create', ledger_id: GENERAL_LEDGER_ID, currency: random.int(5) === 0 ? 'EUR' : 'USD', identity_id: '', indicator: '', meta_data: {} });
      if (outcome.ok) ids.push(outcome.value.balance_id);
      label = outcome.ok ? 'balance' : outcome.rejection.code;
    } else if (choice === 1) {
      label = `processed ${engine.run({ op: 'queue.process', items_max: random.int(6) }).value}`;
    } else if (choice === 2 && sentWithReference.length > 0) {
      const outcome = engine.run({ op: 'transaction.create', ...random.pick(sentWithReference) });
      label = outcome.ok ? (outcome.value.created ? outcome.value.transaction.status : 'retry') : outcome.rejection.code;
    } else {
      const pickBalance = (): string => (ids.length > 0 && random.int(2) === 0 ? random.pick(ids) : random.pick(names));
      const reference = random.int(5) === 0 && usedReferences.length > 0 ? random.pick(usedReferences) : random.int(3) === 0 ? `r${step}` : '';
      if (reference !== '') usedReferences.push(reference);
      const command = transfer({
        source: pickBalance(), destination: pickBalance(), currency: random.int(5) === 0 ? 'EUR' : 'USD',
        precise_amount: BigInt(1 + random.int(500)), reference, allow_overdraft: random.int(4) === 0, skip_queue: random.int(3) === 0,
      });
      if (reference !== '') sentWithReference.push(command);
      const outcome = engine.run({ op: 'transaction.create', ...command });
      label = outcome.ok ? (outcome.value.created ? outcome.value.transaction.status : 'retry') : outcome.rejection.code;
    }
    count(label);
    const violations = zeroSumViolations(engine.state);
    if (violations.length > 0) {
      t.fail(`step ${step} (${label}) broke zero-sum: ${violations.join('; ')}`);
      return;
    }
  }
  engine.run({ op: 'queue.process', items_max: Number.MAX_SAFE_INTEGER }).value;
  t.equal(engine.view.queuedCount(), 0, 'the queue empties');
  t.comment(`outcomes: ${[...outcomes].map(([label, n]) => `${label}=${n}`).join(', ')}`);
  for (const code of ['APPLIED', 'QUEUED', 'retry', 'TXN_INSUFFICIENT_FUNDS', 'TXN_DUPLICATE_REFERENCE', 'TXN_SAME_SOURCE_DESTINATION', 'TXN_CURRENCY_MISMATCH', 'QUEUE_BACKPRESSURE']) {
    t.ok((outcomes.get(code) ?? 0) > 0, `the history exercised ${code}`);
  }

  await t.test('every balance equals the fold of its applied transactions', async (t) => {
    const folded = new Map<string, bigint>();
    for (const record of fixture.store.byId.values()) {
      if (record.status !== 'APPLIED') continue;
      folded.set(record.source, (folded.get(record.source) ?? 0n) - record.precise_amount);
      folded.set(record.destination, (folded.get(record.destination) ?? 0n) + record.precise_amount);
    }
    const mismatches = [...engine.state.balances.values()].filter((balance) => balanceOf(engine, balance.balance_id) !== (folded.get(balance.balance_id) ?? 0n));
    t.same(mismatches.map((balance) => balance.balance_id), []);
    const overdrawn = new Set<string>();
    for (const record of fixture.store.byId.values()) if (record.status === 'APPLIED' && record.allow_overdraft) overdrawn.add(record.source);
    const negative = [...engine.state.balances.keys()].filter((balanceId) => balanceOf(engine, balanceId) < 0n && !overdrawn.has(balanceId));
    t.same(negative, [], 'only overdrafts make balances negative');
  });

  await t.test('queued transactions were applied in arrival order per source', async (t) => {
    const arrival = new Map<string, string[]>();
    const applied = new Map<string, string[]>();
    for (const event of log.events) {
      for (const record of event.transactions ?? []) {
        if (!record.skip_queue) {
          const list = record.status === 'QUEUED' ? arrival : applied;
          list.set(record.source, [...(list.get(record.source) ?? []), record.transaction_id]);
        }
      }
    }
    const outOfOrder = [...arrival].filter(([source, order]) => (applied.get(source) ?? []).join() !== order.join());
    t.same(outOfOrder.map(([source]) => source), [], 'the order of final records matches the order of arrival');
  });

  await t.test('replaying the log gives the same state', async (t) => {
    const replayed = new LedgerEngine({ clock: new FakeClock(0), ids: new CountingIds(), log: new MemoryLog(), transactions: new MemoryTransactionStore() });
    for (const event of log.events) replayed.replay(event);
    t.same(balanceAmounts(replayed.state), balanceAmounts(engine.state), 'balances');
    t.same([...replayed.state.ledgers.keys()], [...engine.state.ledgers.keys()], 'ledgers');
    t.equal(replayed.view.queuedCount(), engine.view.queuedCount(), 'queue');
  });
});
