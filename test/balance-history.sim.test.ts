// Balance as of a time and balance history from the index, against the fold of the log (the definition:
// engine/balance-fold.ts), on seeded random histories with holds, partial commits, voids, expiries,
// auto-commits, refunds, splits, bulk, queued work and metadata patches. The index is built three
// ways: tailing the log with the default slices, in tiny slices and batches (events cut into parts,
// batches ending everywhere), and as a rebuild (bare tables, indexes sorted at the end). For every
// balance and a sample of the times the log mentions (an event's time, a millisecond before or after; before
// the first event and far in the future) the index answers exactly what the fold gives, including
// "did not exist yet"; and the pages of each balance's history are the fold's states after each event
// that created or moved it.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { foldBalance } from '../engine/balance-fold.js';
import type { LedgerEvent } from '../engine/events.js';
import type { BalanceRecord } from '../engine/records.js';
import { balanceAsOf, balanceChanges, type BalanceChange, type HistoryPosition } from '../index/balance-history.js';
import { IndexStore } from '../index/index-store.js';
import { Projector, type LogSource, type ProjectorLimits } from '../index/projector.js';
import { buildIndexFile } from '../index/secondary-index.js';
import { randomHistory } from './helpers/random-history.js';
import { SeededRandom, seededTest, seedsToRun } from './helpers/seeded-random.js';

const STEPS = 500;
const TIMES_PER_BALANCE = 250;

function tempFile(t: Test, name: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-history-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, name);
}

async function tailed(t: Test, source: LogSource, limits: Partial<ProjectorLimits>): Promise<IndexStore> {
  const store = await IndexStore.openWriter(tempFile(t, 'index.sqlite'));
  const projector = await Projector.create(store, source, { limits });
  await projector.catchUp();
  await projector.stop();
  t.teardown(() => store.close());
  return store;
}

async function rebuilt(t: Test, source: LogSource): Promise<IndexStore> {
  const file = await buildIndexFile(tempFile(t, 'index.sqlite'), source);
  const store = await IndexStore.openWriter(file);
  t.teardown(() => store.close());
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

async function allPages(store: IndexStore, balanceId: string, fromMs: number, toMs: number, limit: number): Promise<BalanceChange[]> {
  const changes: BalanceChange[] = [];
  let after: HistoryPosition | undefined;
  for (let pages = 0; pages < 10_000; pages += 1) {
    const page = await balanceChanges(store.writer, balanceId, { from_ms: fromMs, to_ms: toMs, limit, ...(after ? { after } : {}) });
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
    const source: LogSource = { get durableSeq() { return log.appendedSeq; }, read: (from, to) => log.read(from, to) };
    const events = [...log.read(1)];
    const plain = events.map((entry) => entry.event);
    // Times around the events (a millisecond before, at, after), a sample of them to keep the test short,
    // and the edges: before anything happened and far in the future.
    const random = new SeededRandom(seed);
    const times = new Set<number>([0, plain[0]!.at - 1, plain[plain.length - 1]!.at, Number.MAX_SAFE_INTEGER]);
    while (times.size < TIMES_PER_BALANCE) times.add(random.pick(plain).at + random.int(-1, 1));
    const balanceIds = [...engine.state.balances.keys()];
    t.ok(balanceIds.length > 5, `${balanceIds.length} balances over ${events.length} events`);

    const stores: Array<[string, IndexStore]> = [
      ['tailing', await tailed(t, source, {})],
      ['tiny slices', await tailed(t, source, { slice_events_max: 3, slice_rows_max: 5, batch_rows_max: 17, balance_cache_max: 4 })],
      ['rebuilt', await rebuilt(t, source)],
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
          const indexed = JSON.stringify(await balanceAsOf(store.writer, balanceId, at), bigints);
          const expected = folded.get(`${balanceId} ${at}`);
          if (wrong.length < 5 && indexed !== expected) wrong.push(`${balanceId} at ${at}: index ${indexed}, fold ${expected}`);
        }
        const expected = foldedHistories.get(balanceId) ?? [];
        const listed = await allPages(store, balanceId, 0, Number.MAX_SAFE_INTEGER, 7);
        if (JSON.stringify(listed, bigints) !== JSON.stringify(expected, bigints)) wrong.push(`${balanceId}: history differs from the fold's`);
        // A window in the middle holds exactly the changes inside it.
        const middle = plain[Math.floor(plain.length / 2)]!.at;
        const inWindow = await allPages(store, balanceId, middle - 2_000, middle + 2_000, 3);
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
