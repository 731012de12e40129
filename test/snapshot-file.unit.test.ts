// The snapshot file format on its own: a state written and read back is the same state (bigints of any
// size included); a cut-off file is reported torn and a flipped byte corrupt, in the header or the body;
// the fast canonical writer produces exactly engine/exact-json.ts's text.

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { canonicalJson } from '../engine/exact-json.js';
import { LedgerState } from '../engine/ledger-state.js';
import { CanonicalHasher } from '../snapshots/canonical-writer.js';
import { NullTransactionStore } from '../lookups/null-transaction-store.js';
import { listSnapshots, pruneSnapshots, snapshotFileName, writeSnapshotFile } from '../snapshots/snapshot-directory.js';
import { BODY_OFFSET, readHeader, readSnapshot, SnapshotFileError } from '../snapshots/snapshot-file.js';
import { stateHash } from '../snapshots/state-hash.js';
import { restoreState } from '../snapshots/state-restore.js';
import { randomHistory } from './helpers/random-history.js';
import { checkReadsBack } from '../runtime/state-replica.js';

function tempDir(t: { teardown(cleanup: () => void): void }): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-snapfile-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function faultOf(file: string): string {
  try {
    readSnapshot(file);
    return 'none';
  } catch (error) {
    return error instanceof SnapshotFileError ? error.fault : String(error);
  }
}

function sampleState(): LedgerState {
  return randomHistory(7, 200).engine.state;
}

function writeSample(dir: string, seq = 42): { file: string; hash: string } {
  const state = sampleState();
  const hash = stateHash(state);
  const written = writeSnapshotFile(dir, state, { seq, log_record_key: seq, log_checksum: 'ab', state_hash: hash, created_at: 1 });
  return { file: written.file, hash };
}

t.test('a state written and read back hashes the same', async (t) => {
  const dir = tempDir(t);
  const state = sampleState();
  const huge = [...state.balances.values()][0];
  if (huge) huge.credit_balance = 10n ** 60n + 7n; // beyond 64 bits, beyond the engine's own limits
  const hash = stateHash(state);
  const written = writeSnapshotFile(dir, state, { seq: 9, log_record_key: 3, log_checksum: 'cd', state_hash: hash, created_at: 5 });
  t.equal(path.basename(written.file), snapshotFileName(9));
  const image = readSnapshot(written.file);
  t.equal(image.header.seq, 9);
  t.equal(image.header.log_record_key, 3);
  t.equal(image.header.counts.balances, state.balances.size);
  const restored = new LedgerState(new NullTransactionStore());
  restoreState(restored, image);
  t.equal(stateHash(restored), hash);
  if (huge) t.equal(restored.balances.get(huge.balance_id)?.credit_balance, 10n ** 60n + 7n);
  t.same(readHeader(written.file), image.header);
});

t.test('a snapshot that does not read back into its state is never published', async (t) => {
  const dir = tempDir(t);
  const { engine, log } = randomHistory(7, 200);
  const state = engine.state;
  const sample = log.events.flatMap((event) => event.transactions ?? [])[0];
  if (!sample) throw new Error('the sample history has no transaction');
  // A value the snapshot encoding does not carry (the API refuses such keys; built here by hand): its key
  // is dropped on the way back, as the long fuzz run saw records garbled on the way back.
  const record = { ...sample, status: 'SCHEDULED' as const, meta_data: JSON.parse('{"k2":{"__proto__":false}}') };
  state.scheduled.set(record.transaction_id, record);
  const hash = stateHash(state);
  const identity = { seq: 11, log_record_key: 11, log_checksum: 'ef', state_hash: hash, created_at: 1 };
  t.throws(() => writeSnapshotFile(dir, state, identity, undefined, checkReadsBack), SnapshotFileError);
  t.same(fs.readdirSync(dir), [], 'no file left, not even a temp file');
});

t.test('a truncated file is torn', async (t) => {
  const dir = tempDir(t);
  const { file } = writeSample(dir);
  const size = fs.statSync(file).size;
  for (const length of [0, 100, BODY_OFFSET - 1, BODY_OFFSET + 10, size - 1]) {
    fs.truncateSync(file, length);
    t.equal(faultOf(file), 'torn', `cut at ${length}`);
    const { file: again } = writeSample(dir);
    t.equal(again, file);
  }
});

t.test('a flipped byte anywhere is corrupt', async (t) => {
  const dir = tempDir(t);
  const { file } = writeSample(dir);
  const size = fs.statSync(file).size;
  for (const offset of [0, 9, 20, 200, 4100, BODY_OFFSET, BODY_OFFSET + 7, Math.floor(size / 2), size - 1]) {
    const bytes = fs.readFileSync(file);
    bytes[offset] = (bytes[offset] as number) ^ 0x40;
    fs.writeFileSync(file, bytes);
    t.equal(faultOf(file), 'corrupt', `byte ${offset}`);
    writeSample(dir);
  }
});

t.test('pruning keeps the newest K and removes temp files', async (t) => {
  const dir = tempDir(t);
  for (const seq of [5, 10, 15, 20]) writeSample(dir, seq);
  fs.writeFileSync(path.join(dir, '.' + snapshotFileName(25) + '.tmp'), 'partial');
  pruneSnapshots(dir, 2);
  t.same(listSnapshots(dir).map((entry) => entry.seq), [20, 15]);
  t.same(fs.readdirSync(dir).sort(), [snapshotFileName(15), snapshotFileName(20)]);
});

t.test('the canonical text is pinned: state hashes of existing snapshots depend on it', async (t) => {
  // Written out by hand: keys sorted, undefined dropped (as null in arrays), bigints tagged, strings
  // escaped as JSON.stringify does. A change here changes every state hash ever recorded.
  const value = { b: 1, a: [1n, 'x', null, undefined, true], c: { z: undefined, y: -0.5 }, d: 'quote"d', e: -12345678901234567890n };
  const expected = '{"a":["1n","x",null,null,true],"b":1,"c":{"y":-0.5},"d":"quote\\"d","e":"-12345678901234567890n"}';
  t.equal(canonicalJson(value), expected);
  const hasher = new CanonicalHasher();
  hasher.add(value);
  t.equal(hasher.digestHex(), createHash('sha256').update(expected + '\n').digest('hex'), 'and the hasher hashes that text, a line per value');
});
