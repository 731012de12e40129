// One conformance suite run over every implementation of the engine's storage ports (as Hono runs all
// its routers through one suite): the event log (wal/lmdb-log.ts, wal/memory-log.ts) and the
// transaction store (lookups/lmdb-transaction-store.ts, lookups/memory-transaction-store.ts). Each is
// driven through the real engine, the only thing that writes to them, and must answer the same.
// Persistence across a reopen is checked for the implementations that promise it.

import fs from 'node:fs';
import t from 'tap';
import type { LoggedEvent } from '../engine/events.js';
import { LedgerEngine } from '../engine/ledger-engine.js';
import type { EventLog, TransactionStore } from '../engine/ports.js';
import { LmdbTransactionStore } from '../lookups/lmdb-transaction-store.js';
import { MemoryTransactionStore } from '../lookups/memory-transaction-store.js';
import { LmdbLog } from '../wal/lmdb-log.js';
import { MemoryLog } from '../wal/memory-log.js';
import { CountingIds, FakeClock, transfer } from './helpers/engine-rig.js';
import { tempDataDir } from './helpers/test-server.js';

interface Storage {
  log: EventLog & { read(fromSeq: number, toSeq?: number): Iterable<LoggedEvent>; durable(seq: number): Promise<void> };
  store: TransactionStore;
  /**
   * Closes and opens the same storage again, for implementations that keep data (undefined otherwise);
   * `rebuild` deletes what can be rebuilt from the log first.
   */
  reopen?: (rebuild?: boolean) => Promise<Storage>;
  close(): Promise<void>;
}

interface Implementation {
  name: string;
  open(): Promise<Storage>;
}

function openLmdb(dataDir: string): Storage {
  const log = LmdbLog.open({ dir: LmdbLog.directoryIn(dataDir) });
  const store = LmdbTransactionStore.open(LmdbTransactionStore.directoryIn(dataDir), log);
  // As the runtime wires them (runtime/ledger-runtime.ts): sealed records feed the lookups, commits release them.
  log.onSeal((lastSeq) => store.sealed(lastSeq));
  log.onCommit(() => store.logDurable(log.durableSeq));
  const close = async (): Promise<void> => {
    await log.close();
    await store.close();
  };
  return {
    log, store, close,
    async reopen(rebuild = false) {
      await close();
      if (rebuild) fs.rmSync(LmdbTransactionStore.directoryIn(dataDir), { recursive: true, force: true });
      const reopened = openLmdb(dataDir);
      await (reopened.store as LmdbTransactionStore).catchUp(reopened.log.appendedSeq);
      return reopened;
    },
  };
}

const IMPLEMENTATIONS: Implementation[] = [
  { name: 'memory', open: async () => ({ log: new MemoryLog(), store: new MemoryTransactionStore(), close: async () => undefined }) },
  { name: 'lmdb', open: async () => openLmdb(tempDataDir('folio-conformance')) },
];

function engineOver(storage: Storage, clock = new FakeClock(), ids = new CountingIds()): LedgerEngine {
  const engine = new LedgerEngine({ clock, ids, log: storage.log, transactions: storage.store });
  for (const { event } of storage.log.read(1)) engine.replay(event);
  engine.run({ op: 'genesis.ensure' });
  return engine;
}

/** The same history on every implementation: transfers with client and generated references, a hold, a metadata patch. */
function writeHistory(engine: LedgerEngine): { ids: string[]; references: string[] } {
  const ids: string[] = [];
  const references: string[] = [];
  for (let index = 0; index < 25; index += 1) {
    const reference = index % 2 === 0 ? `client-${index}` : '';
    const outcome = engine.run({ op: 'transaction.create', ...transfer({
      source: '@world', destination: `@payee-${index % 4}`, precise_amount: BigInt(index + 1), allow_overdraft: true, skip_queue: index % 3 !== 0, reference,
    }) });
    if (!outcome.ok) throw new Error(outcome.rejection.message);
    ids.push(outcome.value.transaction.transaction_id);
    references.push(outcome.value.transaction.reference);
  }
  engine.run({ op: 'queue.process', items_max: 100 }).value;
  const hold = engine.run({ op: 'transaction.create', ...transfer({ source: '@world', destination: '@held', precise_amount: 9n, allow_overdraft: true, inflight: true, skip_queue: true }) });
  if (!hold.ok) throw new Error(hold.rejection.message);
  ids.push(hold.value.transaction.transaction_id);
  references.push(hold.value.transaction.reference);
  engine.run({ op: 'hold.act', transaction_id: hold.value.transaction.transaction_id, action: 'commit', precise_amount: 4n, skip_queue: true });
  engine.run({ op: 'metadata.update', entity_id: ids[2] as string, meta_data: { patched: true } });
  refundTakeover(engine, ids, references);
  return { ids, references };
}

/**
 * Patches of transactions settled long ago (their records already written out): the LMDB store keeps
 * these as merged patches over the record instead of reading the record back (lookups/
 * lmdb-transaction-store.ts), including over a version it kept whole.
 */
function patchSettledTransactions(engine: LedgerEngine, ids: string[]): void {
  engine.run({ op: 'metadata.update', entity_id: ids[4] as string, meta_data: { first: 1, replaced: 'no' } });
  engine.run({ op: 'metadata.update', entity_id: ids[4] as string, meta_data: { second: 2, replaced: 'yes' } });
  engine.run({ op: 'metadata.update', entity_id: ids[2] as string, meta_data: { again: true } });
  engine.run({ op: 'metadata.update', entity_id: ids[6] as string, meta_data: { reconciliation_id: 'recon_x', beyond_64_bits: 123456789012345678901234567890n } });
}

/**
 * A queued refund rejected for funds, a second refund that takes over its reference, then a metadata
 * patch of the rejected one: the reference stays with the second (a patch never moves a reference).
 */
function refundTakeover(engine: LedgerEngine, ids: string[], references: string[]): void {
  const mustSucceed = <T>(outcome: { ok: true; value: T } | { ok: false; rejection: { message: string } }): T => {
    if (!outcome.ok) throw new Error(outcome.rejection.message);
    return outcome.value;
  };
  const paid = mustSucceed(engine.run({ op: 'transaction.create', ...transfer({ source: '@world', destination: '@refundee', precise_amount: 10n, allow_overdraft: true, skip_queue: true }) }));
  mustSucceed(engine.run({ op: 'transaction.create', ...transfer({ source: '@refundee', destination: '@spent', precise_amount: 10n, skip_queue: true }) }));
  const original = paid.transaction.transaction_id;
  const rejected = mustSucceed(engine.run({ op: 'transaction.refund', transaction_id: original, skip_queue: false, description: '', meta_data: {} })).transaction;
  engine.run({ op: 'queue.process', items_max: 10 }).value;
  if (engine.state.transactions.get(rejected.transaction_id)?.status !== 'REJECTED') throw new Error('the first refund should be rejected for funds');
  mustSucceed(engine.run({ op: 'transaction.create', ...transfer({ source: '@world', destination: '@refundee', precise_amount: 10n, allow_overdraft: true, skip_queue: true }) }));
  const applied = mustSucceed(engine.run({ op: 'transaction.refund', transaction_id: original, skip_queue: true, description: '', meta_data: {} })).transaction;
  mustSucceed(engine.run({ op: 'metadata.update', entity_id: rejected.transaction_id, meta_data: { after_takeover: true } }));
  // Found by its reference: the second refund, not the rejected first one that was patched last.
  ids.push(applied.transaction_id);
  references.push(applied.reference);
}

/** What the storage says of the history, in a form every implementation must match exactly. */
function observe(storage: Storage, written: { ids: string[]; references: string[] }): unknown {
  const events = [...storage.log.read(1)].map(({ seq, event }) => [seq, event.type, event.transactions?.length ?? 0, event.postings?.length ?? 0]);
  const records = written.ids.map((id) => {
    const record = storage.store.get(id);
    return record && [record.transaction_id, record.status, String(record.precise_amount), String(record.committed_amount ?? ''), JSON.stringify(record.meta_data, (_key, value: unknown) => (typeof value === 'bigint' ? `${value}n` : value))];
  });
  const byReference = written.references.map((reference) => storage.store.idForReference(reference));
  return { appended: storage.log.appendedSeq, events, records, byReference, unknown: [storage.store.get('txn_none'), storage.store.idForReference('none')] };
}

t.test('every log and transaction store implementation answers the same', async (t) => {
  const observations = new Map<string, unknown>();
  for (const implementation of IMPLEMENTATIONS) {
    await t.test(implementation.name, async (t) => {
      let storage = await implementation.open();
      const engine = engineOver(storage);
      const written = writeHistory(engine);
      await storage.log.durable(storage.log.appendedSeq);
      // Let the LMDB store write its records out (it does so behind the log), then patch old ones.
      await new Promise((resolve) => setTimeout(resolve, 200));
      patchSettledTransactions(engine, written.ids);
      t.match(storage.store.get(written.ids[4] as string)?.meta_data, { first: 1, second: 2, replaced: 'yes' }, 'patches are seen at once, merged');
      await storage.log.durable(storage.log.appendedSeq);
      await new Promise((resolve) => setTimeout(resolve, 200));
      t.ok(written.ids.every((id) => storage.store.has(id)) && !storage.store.has('txn_none'), 'has() knows every transaction and only those');
      const seen = observe(storage, written);
      observations.set(implementation.name, seen);
      t.same((seen as { records: unknown[] }).records.filter((record) => record === undefined), [], 'every transaction is found by id');
      t.same((seen as { byReference: unknown[] }).byReference, written.ids, 'and by its reference, client-chosen or generated');
      t.match(storage.store.get(written.ids[2] as string)?.meta_data, { patched: true }, 'a metadata patch reaches the stored record');
      t.same([...storage.log.read(3, 5)].map(({ seq }) => seq), [3, 4, 5], 'a range of the log reads in order');
      const reopen = storage.reopen;
      if (reopen) {
        storage = await reopen();
        t.same(observe(storage, written), seen, 'the same after closing and opening again');
        storage = await (storage.reopen ?? reopen)(true);
        t.same(observe(storage, written), seen, 'the same when the lookups are rebuilt from the log');
        const again = engineOver(storage);
        t.same(again.state.balanceByIndicator('@held', 'USD')?.credit_balance, 4n, 'and replays to the same state');
      }
      await storage.close();
    });
  }
  const [first, ...others] = [...observations.values()];
  for (const other of others) t.same(other, first, 'implementations agree');
});

t.teardown(() => {
  for (const dir of fs.readdirSync('/tmp').filter((name) => name.startsWith('folio-conformance-'))) fs.rmSync(`/tmp/${dir}`, { recursive: true, force: true });
});
