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
import { NullTransactionStore } from '../snapshots/null-transaction-store.js';
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
