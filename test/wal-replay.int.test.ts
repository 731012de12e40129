// The running ledger over LMDB comes back exactly as it was: a seeded history is written through
// LedgerRuntime on a temp dir, the runtime is closed and reopened, and balances, transactions (by id,
// by reference, in the listing) and the queued work still pending must be the same; the pending work
// must then be applied as a fresh replay of the same log applies it. The transaction lookups in
// data/lookup are derived data: deleted, or rolled back to an older copy, they are rebuilt from the log
// identical to before. A failure names its seed; FOLIO_SEED=<seed> replays exactly that history.

import fs from 'node:fs';
import path from 'node:path';
import { foldBalance } from '../engine/balance-fold.js';
import t, { type Test } from 'tap';
import { LedgerRuntime } from '../runtime/ledger-runtime.js';
import type { CreateTransactionCommand } from '../engine/commands.js';
import { LedgerEngine } from '../engine/ledger-engine.js';
import { MemoryTransactionStore } from '../lookups/memory-transaction-store.js';
import { MemoryLog } from '../wal/memory-log.js';
import { CountingIds, ManualClock, SeededRandom, stableText, testSeeds } from './helpers/deterministic.js';
import { tempDataDir } from './helpers/test-server.js';

const OPERATIONS = 1500;
/** Transfers queued in one go right before closing, so some are certainly still pending. */
const FINAL_QUEUED_BURST = 40;
const CURRENCIES = ['USD', 'EUR'];
const NAMES = ['@world', '@ann', '@ben', '@cat', '@dan'];

/** What the history wrote and was told: every transaction id and reference the engine answered with. */
interface Written {
  transactionIds: string[];
  references: string[];
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function writeHistory(runtime: LedgerRuntime, rng: SeededRandom, clock: ManualClock, written: Written): Promise<void> {
  const engine = runtime.engine;
  const balanceIds: string[] = [];
  const ledgerIds = ['general_ledger_id'];
  let referenceCount = 0;
  for (let step = 0; step < OPERATIONS; step += 1) {
    clock.advance(rng.between(0, 2));
    const roll = rng.next();
    let seq: number | undefined;
    if (roll < 0.02) {
      const outcome = engine.run({ op: 'ledger.create', name: `ledger ${step}`, meta_data: { step } });
      if (outcome.ok) {
        ledgerIds.push(outcome.value.ledger_id);
        seq = outcome.seq;
      }
    } else if (roll < 0.03) {
      const outcome = engine.run({ op: 'ledger.update', ledger_id: rng.pick(ledgerIds), name: `renamed ${step}`, meta_data: { step } });
      if (outcome.ok) seq = outcome.seq;
    } else if (roll < 0.08) {
      const outcome = engine.run({ op: 'balance.create', ...{
        ledger_id: rng.pick(ledgerIds), currency: rng.pick(CURRENCIES), identity_id: '', indicator: '', meta_data: {},
      } });
      if (outcome.ok) {
        balanceIds.push(outcome.value.balance_id);
        seq = outcome.seq;
      }
    } else {
      const currency = rng.pick(CURRENCIES);
      const endpoint = (): string => (balanceIds.length > 0 && rng.chance(0.25) ? rng.pick(balanceIds) : rng.pick(NAMES));
      const source = rng.chance(0.3) ? '@world' : endpoint();
      referenceCount += 1;
      const command: CreateTransactionCommand = {
        source,
        destination: endpoint(),
        precise_amount: rng.chance(0.05) ? rng.bigAmount(38) : BigInt(rng.between(1, 900)),
        precision: 100n,
        currency,
        reference: rng.chance(0.7) ? `wal-${rng.seed}-${referenceCount}` : '',
        description: rng.pick(['', 'salary', 'refund']),
        meta_data: rng.chance(0.1) ? { big: 2n ** 80n, step } : {},
        allow_overdraft: source === '@world' || rng.chance(0.05),
        skip_queue: rng.chance(0.5),
        inflight: false, inflight_expiry_date: 0, inflight_commit_date: 0, scheduled_for: 0, atomic: false,
      };
      const outcome = engine.run({ op: 'transaction.create', ...command });
      if (outcome.ok) {
        if (outcome.value.created) {
          written.transactionIds.push(outcome.value.transaction.transaction_id);
          written.references.push(outcome.value.transaction.reference);
        }
        seq = outcome.seq;
      }
    }
    // Now and then wait as a client would: for durability, for the queue runner, for lookup writes.
    if (seq !== undefined && rng.chance(0.02)) await runtime.durable(seq);
    if (rng.chance(0.01)) await sleep(rng.pick([0, 60]));
  }
}

/** Queues transfers and returns at once: the caller closes in the same turn, before the runner runs. */
function queueBurst(runtime: LedgerRuntime, rng: SeededRandom, written: Written): void {
  for (let index = 0; index < FINAL_QUEUED_BURST; index += 1) {
    const source = rng.pick(NAMES);
    const outcome = runtime.engine.run({ op: 'transaction.create', ...{
      source, destination: rng.pick(NAMES.filter((name) => name !== source)), precise_amount: BigInt(rng.between(1, 5000)),
      precision: 100n, currency: rng.pick(CURRENCIES), reference: '', description: 'burst', meta_data: {},
      allow_overdraft: source === '@world', skip_queue: false, inflight: false, inflight_expiry_date: 0, inflight_commit_date: 0, scheduled_for: 0, atomic: false,
    } });
    if (outcome.ok && outcome.value.created) {
      written.transactionIds.push(outcome.value.transaction.transaction_id);
      written.references.push(outcome.value.transaction.reference);
    }
  }
}

/** The whole visible state of a runtime as comparable text. */
function snapshot(runtime: LedgerRuntime, written: Written): Record<string, string> {
  const state = runtime.engine.state;
  return {
    ledgers: stableText(state.ledgers),
    balances: stableText(state.balances),
    indicators: stableText(state.balanceIdByIndicator),
    queued: stableText([...state.mailboxes.all()].map(([balanceId, record]) => [balanceId, record.transaction_id])),
    lastEventAt: String(state.lastEventAt),
    seq: String(runtime.log.appendedSeq),
    ...lookups(runtime, written),
  };
}

/** Transactions by id, by reference and as listed, read the way the HTTP routes read them. */
function lookups(runtime: LedgerRuntime, written: Written): Record<string, string> {
  const state = runtime.engine.state;
  return {
    byId: stableText(written.transactionIds.map((id) => state.transaction(id))),
    byReference: stableText(written.references.map((reference) => state.transactions.idForReference(reference))),
    listing: stableText(runtime.listTransactions(0, Number.MAX_SAFE_INTEGER).map((record) => [record.transaction_id, record.status])),
  };
}

function sameSnapshot(t: Test, label: string, actual: Record<string, string>, expected: Record<string, string>): void {
  const differing = Object.keys(expected).filter((key) => actual[key] !== expected[key]);
  t.same(differing, [], `${label}: ${differing.length === 0 ? 'identical' : `${differing.join(', ')} differ`}`);
}

/** Zero-sum per currency, every balance equal to its fold over the log, nothing written left out. */
function checkConsistent(t: Test, runtime: LedgerRuntime, written: Written): void {
  const sums = new Map<string, bigint>();
  const wrongFolds: string[] = [];
  for (const [id, balance] of runtime.engine.state.balances) {
    sums.set(balance.currency, (sums.get(balance.currency) ?? 0n) + balance.credit_balance - balance.debit_balance);
    const folded = foldBalance(id, (function* () {
      for (const { event } of runtime.log.read(1)) yield event;
    })());
    if (stableText(folded) !== stableText(balance)) wrongFolds.push(id);
  }
  t.same([...sums].filter(([, sum]) => sum !== 0n).map(([currency]) => currency), [], 'every currency sums to zero');
  t.same(wrongFolds, [], 'every balance equals the fold of its postings in the log');
  const missing = written.transactionIds.filter((id) => runtime.engine.state.transaction(id) === undefined);
  t.same(missing, [], 'every transaction written is there');
  const listed = runtime.listTransactions(0, Number.MAX_SAFE_INTEGER);
  t.equal(new Set(listed.map((record) => record.transaction_id)).size, listed.length, 'the listing holds each transaction once');
  t.equal(listed.length, written.transactionIds.length, 'the listing holds every transaction');
}

async function waitForQueue(runtime: LedgerRuntime): Promise<void> {
  // A guard against a queue that never drains, not a timing assertion.
  for (let waited = 0; runtime.engine.view.queuedCount() > 0; waited += 5) {
    if (waited > 60_000) throw new Error(`queue still holds ${runtime.engine.view.queuedCount()} after a minute`);
    await sleep(5);
  }
  await runtime.durable(runtime.log.appendedSeq);
}

/** What applying the pending queue should give: the same log replayed into an in-memory engine. */
function expectedAfterQueue(runtime: LedgerRuntime, written: Written): { balances: string; transactions: string } {
  const store = new MemoryTransactionStore();
  const engine = new LedgerEngine({ clock: new ManualClock(), ids: new CountingIds('expected-'), log: new MemoryLog(), transactions: store });
  for (const { event } of runtime.log.read(1)) engine.replay(event);
  engine.run({ op: 'queue.process', items_max: Number.MAX_SAFE_INTEGER }).value;
  return {
    balances: stableText(engine.state.balances),
    transactions: stableText(written.transactionIds.map((id) => engine.state.transaction(id))),
  };
}

for (const seed of testSeeds([11, 4242])) {
  t.test(`close and reopen keep everything, seed ${seed}`, async (t) => {
    t.comment(`replay with FOLIO_SEED=${seed}`);
    const dataDir = tempDataDir('folio-wal-replay');
    t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const lookupDir = path.join(dataDir, 'lookup');
    const olderLookupDir = path.join(dataDir, 'lookup-older');
    const rng = new SeededRandom(seed);
    const clock = new ManualClock();
    const written: Written = { transactionIds: [], references: [] };
    const open = (tag: string) => LedgerRuntime.open({ dataDir, clock, ids: new CountingIds(tag) });

    // A first stretch of history, closed cleanly; its lookups are kept aside for the roll-back case.
    let runtime = await open('a');
    let closing = false;
    t.teardown(async () => {
      if (!closing) await runtime.close();
    });
    await writeHistory(runtime, rng, clock, written);
    await runtime.close();
    fs.cpSync(lookupDir, olderLookupDir, { recursive: true });

    // A second stretch ending with queued work that has not run when the runtime closes.
    runtime = await open('b');
    await writeHistory(runtime, rng, clock, written);
    queueBurst(runtime, rng, written);
    const before = snapshot(runtime, written);
    t.ok(runtime.engine.view.queuedCount() > 0, `${runtime.engine.view.queuedCount()} transfers still queued at close`);
    const queuedAtClose = [...runtime.engine.state.mailboxes.all()].map(([, record]) => record.transaction_id);
    await runtime.close();

    runtime = await open('c');
    // Compared before the queue runner's first turn: open() only schedules it.
    sameSnapshot(t, 'state after reopening', snapshot(runtime, written), before);
    t.equal(runtime.startup.replayedEvents, runtime.log.appendedSeq, 'start-up replayed the whole log');
    t.doesNotThrow(() => {
      for (const _frame of runtime.log.logRecords()) void _frame;
    }, 'every log record checks out and chains to the one before');

    const expected = expectedAfterQueue(runtime, written);
    await waitForQueue(runtime);
    const stillQueued = queuedAtClose.filter((id) => runtime.engine.state.transaction(id)?.status === 'QUEUED');
    t.same(stillQueued, [], 'the work queued at close was applied after reopening');
    t.equal(stableText(runtime.engine.state.balances), expected.balances, 'balances after the queue ran are as a replay predicts');
    t.equal(
      stableText(written.transactionIds.map((id) => runtime.engine.state.transaction(id))), expected.transactions,
      'transactions after the queue ran are as a replay predicts',
    );
    checkConsistent(t, runtime, written);
    const settled = snapshot(runtime, written);
    await runtime.close();

    // Lookups deleted: rebuilt from the whole log.
    fs.rmSync(lookupDir, { recursive: true, force: true });
    runtime = await open('d');
    sameSnapshot(t, 'state after rebuilding deleted lookups', snapshot(runtime, written), settled);
    t.equal(runtime.startup.lookupRecordsCaughtUp, countLoggedRecords(runtime), 'every logged transaction record was re-read');
    t.equal(runtime.store.checkpoint, runtime.log.appendedSeq, 'the rebuilt lookups cover the whole log');
    await runtime.close();

    // Lookups rolled back to an older copy (as a crash between log and lookup writes leaves them):
    // caught up from their checkpoint.
    fs.rmSync(lookupDir, { recursive: true, force: true });
    fs.renameSync(olderLookupDir, lookupDir);
    runtime = await open('e');
    sameSnapshot(t, 'state after catching up older lookups', snapshot(runtime, written), settled);
    t.ok(runtime.startup.lookupRecordsCaughtUp < countLoggedRecords(runtime), 'only the records after the older checkpoint were re-read');
    t.equal(runtime.store.checkpoint, runtime.log.appendedSeq, 'the caught-up lookups cover the whole log');
    checkConsistent(t, runtime, written);
    closing = true;
    await runtime.close();
  });
}

function countLoggedRecords(runtime: LedgerRuntime): number {
  let count = 0;
  for (const { event } of runtime.log.read(1)) count += event.transactions?.length ?? 0;
  return count;
}
