// The projector on its own, in process, over an in-memory log and a real SQLite file in a temp dir: it
// resumes from its checkpoint, notices an index that belongs to another history, starts over when an
// event contradicts its rows, reports a poison event instead of looping on it, and folds an event larger
// than a slice in parts.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import type { LedgerEvent, LoggedEvent } from '../engine/events.js';
import type { BalanceRecord } from '../engine/records.js';
import { ProjectionError } from '../index/event-fold.js';
import { IndexStore } from '../index/index-store.js';
import { POISON_ATTEMPTS, Projector, type LogSource, type PoisonReport, type ProjectorLimits } from '../index/projector.js';
import { engineRig, transfer } from './helpers/engine-rig.js';

class ArrayLog implements LogSource {
  readonly events: LedgerEvent[] = [];
  get durableSeq(): number {
    return this.events.length;
  }
  *read(fromSeq = 1, toSeq = Number.MAX_SAFE_INTEGER): Generator<LoggedEvent> {
    for (let seq = Math.max(1, fromSeq); seq <= Math.min(toSeq, this.events.length); seq += 1) yield { seq, event: this.events[seq - 1] as LedgerEvent };
  }
}

function balance(id: string, at: number): BalanceRecord {
  return {
    balance_id: id, ledger_id: 'general_ledger_id', identity_id: '', indicator: '', currency: 'USD', credit_balance: 0n, debit_balance: 0n,
    inflight_credit_balance: 0n, inflight_debit_balance: 0n, version: 0, created_at: at, meta_data: {},
  };
}

function history(log: ArrayLog, transfers: number, start = 1_000): void {
  log.events.push({ type: 'ledger.created', at: start, ledgers: [{ ledger_id: 'general_ledger_id', name: 'General', created_at: start, meta_data: {} }] });
  log.events.push({ type: 'balance.created', at: start + 1, balances: [balance('bln_a', start + 1), balance('bln_b', start + 1)] });
  for (let index = 0; index < transfers; index += 1) {
    log.events.push({
      type: 'transaction.applied', at: start + 2 + index,
      postings: [{ balance_id: 'bln_a', field: 'debit', amount: 5n }, { balance_id: 'bln_b', field: 'credit', amount: 5n }],
    });
  }
}

async function withStore(t: Test): Promise<{ file: string; open: () => Promise<IndexStore> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-projector-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'index.sqlite');
  return { file, open: () => IndexStore.openWriter(file) };
}

async function balanceRow(store: IndexStore, id: string): Promise<{ version: number; debit_balance: string } | undefined> {
  return store.writer.get(`SELECT version, debit_balance FROM balances WHERE balance_id = ?`, [id]);
}

t.test('resumes from its checkpoint across restarts, small batches or large', async (t) => {
  const { open } = await withStore(t);
  const log = new ArrayLog();
  history(log, 30);
  let store = await open();
  let projector = await Projector.create(store, log, { limits: { slice_events_max: 4, batch_rows_max: 10 } });
  await projector.catchUp();
  t.equal(projector.checkpoint, 32);
  t.match(await balanceRow(store, 'bln_a'), { version: 30, debit_balance: 'p03150' });
  await projector.stop();
  await store.close();

  for (let index = 0; index < 7; index += 1) {
    log.events.push({ type: 'transaction.applied', at: 9_000 + index, postings: [{ balance_id: 'bln_a', field: 'debit', amount: 1n }, { balance_id: 'bln_b', field: 'credit', amount: 1n }] });
  }
  store = await open();
  projector = await Projector.create(store, log);
  t.equal(projector.checkpoint, 32, 'the checkpoint survived the restart');
  await projector.catchUp();
  t.equal(projector.checkpoint, 39);
  t.match(await balanceRow(store, 'bln_a'), { version: 37, debit_balance: 'p03157' }, 'resumed from the stored amounts');
  await projector.stop();
  await store.close();
});

t.test('an index from another history is emptied and rebuilt', async (t) => {
  const { open } = await withStore(t);
  const first = new ArrayLog();
  history(first, 10);
  let store = await open();
  let projector = await Projector.create(store, first);
  await projector.catchUp();
  await projector.stop();
  await store.close();

  const other = new ArrayLog();
  history(other, 12, 50_000); // same length and more, but other times
  store = await open();
  projector = await Projector.create(store, other);
  t.equal(projector.checkpoint, 0, 'the checkpoint does not match this log: start over');
  await projector.catchUp();
  t.match(await balanceRow(store, 'bln_a'), { version: 12 });
  await projector.stop();
  await store.close();

  const shorter = new ArrayLog();
  history(shorter, 2, 50_000);
  store = await open();
  projector = await Projector.create(store, shorter);
  t.equal(projector.checkpoint, 0, 'a checkpoint past the end of the log: start over');
  await projector.stop();
  await store.close();
});

t.test('an event that contradicts the rows makes the index start over', async (t) => {
  const { open } = await withStore(t);
  const log = new ArrayLog();
  history(log, 3);
  log.events.push({ type: 'transaction.applied', at: 99_999, postings: [{ balance_id: 'bln_ghost', field: 'credit', amount: 1n }, { balance_id: 'bln_a', field: 'debit', amount: 1n }] });
  const store = await open();
  const errors: Error[] = [];
  const projector = await Projector.create(store, log, { onError: (error) => errors.push(error), limits: { slice_events_max: 2 } });
  projector.wake();
  for (let attempt = 0; attempt < 100 && errors.length === 0; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 10));
  t.ok(errors[0] instanceof ProjectionError, 'the contradiction is reported');
  t.equal(projector.checkpoint, 0, 'and the index starts over');
  t.equal((await store.writer.all('SELECT * FROM balances')).length, 0, 'with its rows emptied');
  await projector.stop();
  await store.close();
});

t.test('a poison event is reported after repeated failures, not retried every second nor rebuilt for ever', async (t) => {
  const { open } = await withStore(t);
  const log = new ArrayLog();
  history(log, 3);
  log.events.push({ type: 'transaction.applied', at: 99_999, postings: [{ balance_id: 'bln_ghost', field: 'credit', amount: 1n }, { balance_id: 'bln_a', field: 'debit', amount: 1n }] });
  log.events.push({ type: 'transaction.applied', at: 100_000, postings: [{ balance_id: 'bln_b', field: 'credit', amount: 1n }, { balance_id: 'bln_a', field: 'debit', amount: 1n }] });
  const store = await open();
  const errors: Error[] = [];
  const reports: Array<PoisonReport | undefined> = [];
  const projector = await Projector.create(store, log, {
    onError: (error) => errors.push(error),
    onPoison: (poison) => reports.push(poison),
    limits: { slice_events_max: 2, retry_first_ms: 5, retry_max_ms: 40 },
  });
  projector.wake();
  for (let attempt = 0; attempt < 400 && reports.length === 0; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 10));
  t.equal(reports.length, 1, 'one poison report');
  t.match(reports[0], { seq: 6, attempts: POISON_ATTEMPTS });
  t.match(reports[0]?.message, /bln_ghost/, 'naming what went wrong');
  t.same(projector.poison, reports[0]);
  t.equal(projector.checkpoint, 5, 'the index stays at the event before the poison one');
  t.match(await balanceRow(store, 'bln_a'), { version: 3 }, 'with the rows of every event before it');
  t.equal(errors.length, POISON_ATTEMPTS + 1, 'one start-over for the first contradiction, then the failures that made it poison');
  const seen = errors.length;
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.ok(errors.length - seen <= 3, `retries back off (${errors.length - seen} in 100 ms at up to 40 ms apart)`);
  await projector.stop();
  await store.close();
});

t.test('an event larger than a slice is folded and written in parts, giving the rows of the whole', async (t) => {
  const { engine, log } = engineRig();
  const items = Array.from({ length: 700 }, (_, index) => transfer({
    source: index % 3 === 0 ? '@world' : '@pool', destination: `@payee-${index % 5}`, allow_overdraft: true, precise_amount: BigInt(index + 1),
  }));
  const bulk = engine.run({ op: 'transaction.bulk', transactions: items, atomic: true, inflight: false, skip_queue: true });
  t.ok(bulk.ok, 'one atomic bulk: one event of 700 transactions and 1,400 postings');
  const source: LogSource = { get durableSeq() { return log.appendedSeq; }, read: (from, to) => log.read(from, to) };
  const rowsOf = async (limits: Partial<ProjectorLimits>): Promise<unknown[][]> => {
    const { open } = await withStore(t);
    const store = await open();
    const projector = await Projector.create(store, source, { limits });
    await projector.catchUp();
    t.equal(projector.checkpoint, log.appendedSeq, `${JSON.stringify(limits)}: caught up`);
    const tables = [
      await store.writer.all('SELECT balance_id, credit_balance, debit_balance, version FROM balances ORDER BY balance_id'),
      await store.writer.all('SELECT transaction_id, status, precise_amount FROM transactions ORDER BY transaction_id'),
    ];
    await projector.stop();
    await store.close();
    return tables;
  };
  const whole = await rowsOf({});
  const parts = await rowsOf({ slice_rows_max: 37, slice_events_max: 3, batch_rows_max: 50 });
  t.equal((whole[1] as unknown[]).length, 700);
  t.same(parts, whole, 'cut into parts of 37 rows (batches of 50 rows cannot end inside the event)');
  const world = engine.state.balanceByIndicator('@world', 'USD');
  const row = (whole[0] as Array<{ balance_id: string; version: number }>).find((entry) => entry.balance_id === world?.balance_id);
  t.equal(row?.version, world?.version, 'a balance moved many times in one event rose one version, as in the engine');
});
