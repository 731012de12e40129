// Snapshot equivalence over seeded random histories: for every k, a snapshot of the state after k
// events, read back and followed by a replay of the remaining events, gives the same state hash as a
// replay of the whole log from genesis, and the same as the live engine that made the history. Every
// transaction row in those histories also carries the hash of its own fields, as verify expects.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { applyEvent, LedgerState } from '../engine/ledger-state.js';
import type { LedgerEvent } from '../engine/events.js';
import { transactionHash } from '../engine/transaction-hash.js';
import { NullTransactionStore } from '../lookups/null-transaction-store.js';
import { readSnapshot } from '../snapshots/snapshot-file.js';
import { writeSnapshotFile } from '../snapshots/snapshot-directory.js';
import { stateHash } from '../snapshots/state-hash.js';
import { restoreState } from '../snapshots/state-restore.js';
import { randomHistory } from './helpers/random-history.js';

const SEEDS = (process.env.FOLIO_SIM_SEEDS ?? '1,2,3,4,5,6').split(',').map(Number);
const STEPS = 160;

function replay(events: LedgerEvent[], state = new LedgerState(new NullTransactionStore())): LedgerState {
  for (const event of events) applyEvent(state, event);
  return state;
}

for (const seed of SEEDS) {
  t.test(`seed ${seed}`, async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-snap-eq-'));
    t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
    const history = randomHistory(seed, STEPS);
    const events = history.log.events;
    const full = stateHash(replay(events));
    t.equal(stateHash(history.engine.state), full, `seed ${seed}: the live state and a full replay hash alike`);
    const rows = events.flatMap((event) => event.transactions ?? []);
    const badRows = rows.filter((row) => transactionHash(row) !== row.hash).map((row) => row.transaction_id);
    t.same(badRows, [], `seed ${seed}: every one of ${rows.length} rows carries the hash of its fields (what verify checks)`);

    const prefix = new LedgerState(new NullTransactionStore());
    let mismatches = 0;
    for (let k = 0; k <= events.length; k += 1) {
      if (k > 0) applyEvent(prefix, events[k - 1] as LedgerEvent);
      if (k === 0) continue; // an empty state has no snapshot (the worker never writes one)
      const written = writeSnapshotFile(dir, prefix, { seq: k, log_record_key: k, log_checksum: '00', state_hash: stateHash(prefix), created_at: 0 });
      const restored = new LedgerState(new NullTransactionStore());
      restoreState(restored, readSnapshot(written.file));
      fs.rmSync(written.file);
      if (stateHash(restored) !== written.header.state_hash) {
        mismatches += 1;
        t.fail(`seed ${seed}: snapshot at ${k} does not read back to the state it was taken from`);
        continue;
      }
      const resumed = stateHash(replay(events.slice(k), restored));
      if (resumed !== full) {
        mismatches += 1;
        t.fail(`seed ${seed}: snapshot at ${k} + replay differs from a full replay`);
      }
      if (mismatches > 3) break;
    }
    t.equal(mismatches, 0, `seed ${seed}: all ${events.length} snapshot points agree`);
  });
}

/** Every balance as text, in id order: an independent check on what the state hash claims. */
function balancesText(state: LedgerState): string {
  const balances = [...state.balances.values()].sort((a, b) => (a.balance_id < b.balance_id ? -1 : 1));
  return JSON.stringify(balances, (_key, value) => (typeof value === 'bigint' ? `${value}n` : value));
}

// A snapshot taken from a state that itself came from a snapshot: most balances still cold (in the
// first snapshot's bytes), some made hot by the events since. That is how every snapshot after the first
// is written (the job loads the newest one and replays the log after it), so the merge of cold and hot
// balances and of their indexes must give the same state as a replay from genesis.
for (const seed of SEEDS) {
  t.test(`seed ${seed}: snapshots of restored states (cold and hot balances mixed)`, async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-snap-chain-'));
    t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
    const events = randomHistory(seed + 100, STEPS).log.events;
    const full = replay(events);
    const cuts = [Math.floor(events.length / 4), Math.floor(events.length / 2), Math.floor((events.length * 3) / 4)];
    let state = replay(events.slice(0, cuts[0]));
    let at = cuts[0] as number;
    for (const cut of [...cuts.slice(1), events.length]) {
      const written = writeSnapshotFile(dir, state, { seq: at, log_record_key: at, log_checksum: '00', state_hash: stateHash(state), created_at: 0 });
      const restored = new LedgerState(new NullTransactionStore());
      restoreState(restored, readSnapshot(written.file));
      t.equal(stateHash(restored), written.header.state_hash, `seed ${seed}: the snapshot at ${at} reads back to its state`);
      t.equal(balancesText(restored), balancesText(state), `seed ${seed}: the snapshot at ${at} holds the same balances`);
      state = replay(events.slice(at, cut), restored);
      at = cut;
    }
    t.equal(stateHash(state), stateHash(full), `seed ${seed}: three snapshots deep, the state equals a full replay`);
    t.equal(balancesText(state), balancesText(full), `seed ${seed}: and so do the balances themselves`);
    t.equal(state.balances.size, full.balances.size, `seed ${seed}: as many balances`);
    for (const balance of full.balances.values()) {
      if (balance.indicator === '') continue;
      const found = state.balanceByIndicator(balance.indicator, balance.currency);
      if (found?.balance_id !== balance.balance_id) t.fail(`seed ${seed}: ${balance.indicator} ${balance.currency} not found by indicator`);
    }
  });
}
