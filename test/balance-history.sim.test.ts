// Balance as of a time and balance history from the balance history store (index/history-store.ts),
// against the fold of the log (the definition: engine/balance-fold.ts), on seeded random histories with
// holds, partial commits, voids, expiries, auto-commits, refunds, splits, bulk, back-dated transfers,
// identity changes, queued work and metadata patches. The store is followed three ways: the whole log in
// one batch; batches of one to five events with at most two balances kept in memory (the rest read back
// from the store); and half the log, a restart of the follower on the same store, the rest, then the
// store emptied and followed again from the start. For every balance and a sample of the times the log
// mentions (an event's time, a millisecond before or after; before the first event and far in the
// future) the store answers exactly what the fold gives, including "did not exist yet"; and the pages of
// each balance's history are the fold's states after each event that created or moved it.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { foldBalance } from '../engine/balance-fold.js';
import type { LedgerEvent, LoggedEvent } from '../engine/events.js';
import type { BalanceRecord } from '../engine/records.js';
import { HistoryFollower, type HistoryFollowerLimits } from '../index/history-follower.js';
import { HistoryStore, type BalanceChange, type HistoryPosition } from '../index/history-store.js';
import { randomHistory } from './helpers/random-history.js';
import { SeededRandom, seededTest, seedsToRun } from './helpers/seeded-random.js';

const STEPS = 500;
const TIMES_PER_BALANCE = 250;

function tempDir(t: Test): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-history-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Follows `events` into a fresh store in batches of `sizes()` events each, with a follower of `limits`. */
async function followed(t: Test, events: LoggedEvent[], sizes: () => number, limits: Partial<HistoryFollowerLimits> = {}): Promise<HistoryStore> {
  const store = HistoryStore.open(tempDir(t));
  t.teardown(() => store.close());
  const follower = new HistoryFollower(store, limits);
  for (let from = 0; from < events.length;) {
    const size = sizes();
    await follower.apply(events.slice(from, from + size));
    from += size;
  }
  return store;
}

/**
 * Follows half the events, then a new follower on the same store (nothing in memory, as after a restart)
 * the rest; then empties the store and follows the whole log again, as after a rewound log.
 */
async function restartedAndRebuilt(t: Test, events: LoggedEvent[]): Promise<HistoryStore> {
  const dir = tempDir(t);
  const half = Math.floor(events.length / 2);
  let store = HistoryStore.open(dir);
  await new HistoryFollower(store).apply(events.slice(0, half));
  await store.close();
  store = HistoryStore.open(dir);
  t.teardown(() => store.close());
  const follower = new HistoryFollower(store, { balances_cached_max: 3 });
  if (follower.checkpoint.seq !== half) throw new Error(`restarted at ${follower.checkpoint.seq}, not ${half}`);
  await follower.apply(events.slice(half));
  await store.reset();
  follower.restart();
  for (let from = 0; from < events.length; from += 50) await follower.apply(events.slice(from, from + 50));
  return store;
}

/** The fold's state after each event that created or moved the balance, as the history lists them. */
function foldedChanges(balanceId: string, events: Array<{ seq: number; event: LedgerEvent }>): BalanceChange[] {
  const changes: BalanceChange[] = [];
  let balance: BalanceRecord | undefined;
  for (const { seq, event } of events) {
    const created = event.balances?.some((candidate) => candidate.balance_id === balanceId) ?? false;
    const moved = event.postings?.some((posting) => posting.balance_id === balanceId) ?? false;
    // The fold carries on from the state reached, handed over as a creation record (as runtime/balance-folds.ts does).
    const before: LedgerEvent[] = balance ? [{ type: 'balance.created', at: event.at, balances: [balance] }] : [];
    balance = foldBalance(balanceId, [...before, event]) ?? balance;
    if (!balance || (!created && !moved)) continue;
    changes.push({
      at: event.at, seq, version: balance.version, credit_balance: balance.credit_balance, debit_balance: balance.debit_balance,
      inflight_credit_balance: balance.inflight_credit_balance, inflight_debit_balance: balance.inflight_debit_balance,
    });
  }
  return changes;
}

function allPages(store: HistoryStore, balanceId: string, fromMs: number, toMs: number, limit: number): BalanceChange[] {
  const changes: BalanceChange[] = [];
  let after: HistoryPosition | undefined;
  for (let pages = 0; pages < 10_000; pages += 1) {
    const page = store.read((transaction) => store.changes(transaction, balanceId, { from_ms: fromMs, to_ms: toMs, limit, ...(after ? { after } : {}) }));
    if (!page) throw new Error(`the index does not hold ${balanceId}`);
    changes.push(...page.changes);
    if (!page.next) return changes;
    after = page.next;
  }
  throw new Error('the pages never end');
}

for (const seed of seedsToRun([1, 17])) {
  void seededTest(t, 'balance as of any time and its history equal the fold', seed, async (t) => {
    const { engine, log } = randomHistory(seed, STEPS);
    const events = [...log.read(1)];
    const plain = events.map((entry) => entry.event);
    // Times around the events (a millisecond before, at, after), a sample of them to keep the test short,
    // and the edges: before anything happened and far in the future.
    const random = new SeededRandom(seed);
    const times = new Set<number>([0, plain[0]!.at - 1, plain[plain.length - 1]!.at, Number.MAX_SAFE_INTEGER]);
    while (times.size < TIMES_PER_BALANCE) times.add(random.pick(plain).at + random.int(-1, 1));
    const balanceIds = [...engine.state.balances.keys()];
    t.ok(balanceIds.length > 5, `${balanceIds.length} balances over ${events.length} events`);

    const stores: Array<[string, HistoryStore]> = [
      ['one batch', await followed(t, events, () => events.length)],
      ['tiny batches, few balances in memory', await followed(t, events, () => random.int(1, 5), { balances_cached_max: 2 })],
      ['restarted, then emptied and rebuilt', await restartedAndRebuilt(t, events)],
    ];
    // The fold's answers, once: each balance at each time, and each balance's changes.
    const folded = new Map<string, string>();
    const foldedHistories = new Map<string, BalanceChange[]>();
    let absent = 0;
    for (const balanceId of balanceIds) {
      for (const at of times) {
        const balance = foldBalance(balanceId, plain, at);
        if (!balance) absent += 1;
        folded.set(`${balanceId} ${at}`, JSON.stringify(balance, bigints));
      }
      foldedHistories.set(balanceId, foldedChanges(balanceId, events));
    }
    for (const [how, store] of stores) {
      const wrong: string[] = [];
      for (const balanceId of balanceIds) {
        for (const at of times) {
          const stored = JSON.stringify(store.read((transaction) => store.balanceAsOf(transaction, balanceId, at)), bigints);
          const expected = folded.get(`${balanceId} ${at}`);
          if (wrong.length < 5 && stored !== expected) wrong.push(`${balanceId} at ${at}: history ${stored}, fold ${expected}`);
        }
        const expected = foldedHistories.get(balanceId) ?? [];
        const listed = allPages(store, balanceId, 0, Number.MAX_SAFE_INTEGER, 7);
        if (JSON.stringify(listed, bigints) !== JSON.stringify(expected, bigints)) wrong.push(`${balanceId}: history differs from the fold's`);
        // A window in the middle holds exactly the changes inside it.
        const middle = plain[Math.floor(plain.length / 2)]!.at;
        const inWindow = allPages(store, balanceId, middle - 2_000, middle + 2_000, 3);
        const expectedInWindow = expected.filter((change) => change.at >= middle - 2_000 && change.at <= middle + 2_000);
        if (JSON.stringify(inWindow, bigints) !== JSON.stringify(expectedInWindow, bigints)) wrong.push(`${balanceId}: window differs`);
      }
      t.same(wrong, [], `${how}: ${folded.size} balances as of a time (${absent} before they existed) and every history as the fold gives them`);
    }
  });
}

function bigints(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? `${value}n` : value;
}
