// `folio verify` finds each kind of fault while the chain itself stays intact: a transaction row whose
// hash does not match its fields, balances that do not sum to zero, a snapshot whose header hash is not
// the replayed state, and a snapshot whose contents are not what its header says.

import fs from 'node:fs';
import t from 'tap';
import type { LedgerEvent } from '../engine/events.js';
import { LogReader } from '../wal/log-reader.js';
import { snapshotDirectoryIn, writeSnapshotFile } from '../snapshots/snapshot-directory.js';
import { StateReplica } from '../runtime/state-replica.js';
import { verifyDataDir } from '../ops/verify.js';
import { decodeLogRecord, encodeLogRecord } from '../wal/log-record-codec.js';
import { readRecord, recordKeys, writeRecord } from './helpers/log-surgery.js';
import { startTestServer, tempDataDir } from './helpers/test-server.js';

async function history(t: { teardown(cleanup: () => unknown): void; ok(value: unknown, message: string): unknown }): Promise<string> {
  const dataDir = tempDataDir('folio-verify');
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const server = await startTestServer({ dataDir });
  for (let index = 0; index < 15; index += 1) {
    await server.request('POST', '/transactions', {
      description: 'test', precise_amount: 50 + index, currency: index % 2 ? 'USD' : 'EUR', source: '@world', destination: `@v${index % 3}`,
      allow_overdraft: true, skip_queue: true,
    });
  }
  await server.stop();
  t.ok(verifyDataDir({ dataDir }).ok, 'clean before the damage');
  return dataDir;
}

/** Re-seals the last record after `change` edits its events; the chain to it stays valid. */
async function editLastRecord(dataDir: string, change: (events: LedgerEvent[]) => void): Promise<number> {
  const keys = await recordKeys(dataDir);
  const last = keys[keys.length - 1] as number;
  const logRecord = decodeLogRecord(last, await readRecord(dataDir, last));
  change(logRecord.events);
  await writeRecord(dataDir, last, encodeLogRecord({ first_seq: logRecord.first_seq, prev_checksum: logRecord.prev_checksum, events: logRecord.events }));
  return last;
}

t.test('a row hash that does not match its fields', async (t) => {
  const dataDir = await history(t);
  const last = await editLastRecord(dataDir, (events) => {
    const row = events[0]?.transactions?.[0];
    if (row) row.precise_amount += 1n; // the amount changed after hashing
  });
  const report = verifyDataDir({ dataDir });
  t.notOk(report.ok);
  t.equal(report.faults.length, 1);
  t.equal(report.faults[0]?.kind, 'row-hash');
  t.equal(report.faults[0]?.record, last);
});

t.test('balances that do not sum to zero', async (t) => {
  const dataDir = await history(t);
  const last = await editLastRecord(dataDir, (events) => {
    const at = (events[events.length - 1] as LedgerEvent).at;
    events.push({
      type: 'balance.created', at,
      balances: [{
        balance_id: 'bln_forged', ledger_id: 'general_ledger_id', identity_id: '', indicator: '', currency: 'USD',
        credit_balance: 999n, debit_balance: 0n, inflight_credit_balance: 0n, inflight_debit_balance: 0n, version: 0, created_at: at, meta_data: {},
      }],
    });
  });
  const report = verifyDataDir({ dataDir });
  t.notOk(report.ok);
  t.same(report.faults.map((fault) => fault.kind), ['zero-sum']);
  t.match(report.faults[0]?.message, 'USD does not sum to zero: settled 999');
  t.ok(last > 0);
});

t.test('snapshots that disagree with the replay, in the header or in the contents', async (t) => {
  const dataDir = await history(t);
  const reader = LogReader.open(dataDir);
  const replica = StateReplica.from(undefined);
  replica.catchUp(reader, 8);
  const atEight = replica.identity(Date.now());
  writeSnapshotFile(snapshotDirectoryIn(dataDir), replica.state, { ...atEight, state_hash: 'f'.repeat(64) });
  replica.catchUp(reader, 12);
  const atTwelve = replica.identity(Date.now());
  const balance = [...replica.state.balances.values()][1];
  if (balance) balance.credit_balance += 1n; // contents differ from the state the header describes
  writeSnapshotFile(snapshotDirectoryIn(dataDir), replica.state, atTwelve);
  await reader.close();

  const report = verifyDataDir({ dataDir });
  t.notOk(report.ok);
  t.same(report.faults.map((fault) => [fault.kind, fault.seq]), [['snapshot', 8], ['snapshot', 12]]);
  t.match(report.faults[0]?.message, /records state hash f+, the replay gives/);
  t.match(report.faults[1]?.message, /holds a state hashing to/);
});
