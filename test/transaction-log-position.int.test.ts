// GET /transactions/:id/log-position against a real server: the record that first held a transaction
// and the later one holding its newest whole version, each checked against the log's own bytes (the
// record's SHA-256, the previous record's, and the event at the seq holding the transaction); the same
// answer at once (the lookups still in memory), after a metadata change (a patch, not counted), after
// a restart (read from LMDB), and after the lookups are rebuilt, including from lookups written before
// they kept where a transaction was created; 404 in the error envelope for an id the log does not hold.

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { open } from 'lmdb';
import t, { type Test } from 'tap';
import { startTestServer, tempDataDir, type TestServer } from './helpers/test-server.js';

async function position(server: TestServer, transactionId: string): Promise<any> {
  const answer = await server.request('GET', `/transactions/${transactionId}/log-position`);
  if (answer.status !== 200) throw new Error(`log-position of ${transactionId}: ${answer.status} ${answer.text}`);
  return answer.body;
}

/** Checks a position against the log: checksums from the stored bytes, and the transaction in the event at `seq`. */
function checkAgainstLog(t: Test, server: TestServer, transactionId: string, at: any, label: string): void {
  const log = server.runtime.log;
  const bytes = log.rawRecord(at.record_first_seq);
  t.ok(bytes, `${label}: a record is stored under record_first_seq`);
  if (!bytes) return;
  t.equal(at.record_checksum, createHash('sha256').update(bytes.subarray(32)).digest('hex'), `${label}: record_checksum is the SHA-256 of the record's payload`);
  t.equal(at.record_checksum, bytes.subarray(0, 32).toString('hex'), `${label}: and the checksum stored at its front`);
  const [previous] = at.record_first_seq === 1 ? [] : [...log.logRecordsFrom(at.record_first_seq - 1)];
  const expectedPrev = previous ? previous.checksum.toString('hex') : '0'.repeat(64);
  t.equal(at.prev_checksum, expectedPrev, `${label}: prev_checksum is the record before it's checksum`);
  const decoded = log.logRecordAt(at.record_first_seq);
  t.equal(at.record_last_seq, decoded?.last_seq, `${label}: record_last_seq`);
  t.ok(at.seq >= at.record_first_seq && at.seq <= at.record_last_seq, `${label}: seq lies in the record`);
  const [event] = [...log.read(at.seq, at.seq)];
  t.ok(event?.event.transactions?.some((record) => record.transaction_id === transactionId), `${label}: the event at seq holds the transaction`);
}

t.test('a transaction\'s position in the log\'s checksum chain', async (t) => {
  const dataDir = tempDataDir('log-position');
  let server = await startTestServer({ dataDir });
  t.teardown(() => server.stop());

  const transfer = await server.request('POST', '/transactions', {
    source: '@world', destination: '@alice', precise_amount: 5000, precision: 100, currency: 'USD', allow_overdraft: true, skip_queue: true, reference: 'log-position-1', description: 'transfer',
  });
  t.equal(transfer.status, 201, transfer.text);
  const transferId = transfer.body.transaction_id as string;
  const hold = await server.request('POST', '/transactions', {
    source: '@world', destination: '@bob', precise_amount: 9000, precision: 100, currency: 'USD', allow_overdraft: true, skip_queue: true, inflight: true, reference: 'log-position-hold', description: 'hold',
  });
  t.equal(hold.status, 201, hold.text);
  const holdId = hold.body.transaction_id as string;

  // Asked at once: the lookups have not written these to LMDB yet.
  const fresh = await position(server, transferId);
  t.equal(fresh.transaction_id, transferId);
  t.equal(fresh.last_changed, null, 'a transfer never changed: last_changed is null');
  checkAgainstLog(t, server, transferId, fresh, 'transfer');
  const holdBefore = await position(server, holdId);
  t.equal(holdBefore.last_changed, null, 'a hold not yet acted on: last_changed is null');

  const commit = await server.request('PUT', `/transactions/inflight/${holdId}`, { status: 'commit', precise_amount: 4000, skip_queue: true });
  t.equal(commit.status, 200, commit.text);
  const holdAfter = await position(server, holdId);
  t.same({ ...holdAfter, last_changed: null }, { ...holdBefore, last_changed: null }, 'a partial commit does not move where the hold was created');
  t.ok(holdAfter.last_changed, 'the partial commit changed the hold: last_changed names its record');
  t.ok(holdAfter.last_changed.seq > holdAfter.seq, 'after the creation');
  checkAgainstLog(t, server, holdId, holdAfter, 'hold');
  checkAgainstLog(t, server, holdId, holdAfter.last_changed, 'hold changed');
  const changedEvent = [...server.runtime.log.read(holdAfter.last_changed.seq, holdAfter.last_changed.seq)][0];
  const changedHold = changedEvent?.event.transactions?.find((record) => record.transaction_id === holdId);
  t.equal(changedHold?.committed_amount, 4000n, 'the record last_changed names holds the hold with its committed amount');

  // A metadata change is a patch in the log, not a new whole version: the position does not move.
  const patched = await server.request('POST', `/${transferId}/metadata`, { meta_data: { checked: 'yes' } });
  t.equal(patched.status, 201, patched.text);
  t.same(await position(server, transferId), fresh, 'a metadata change moves neither record');

  const unknown = await server.request('GET', '/transactions/txn_00000000-0000-7000-8000-000000000000/log-position');
  t.equal(unknown.status, 404);
  t.equal(unknown.body.error_detail?.code, 'TXN_NOT_FOUND', 'an unknown id: 404 TXN_NOT_FOUND in the envelope');

  const answers = async (): Promise<unknown[]> => [await position(server, transferId), await position(server, holdId)];
  const before = await answers();

  await server.stop();
  server = await startTestServer({ dataDir });
  t.same(await answers(), before, 'after a restart (read from LMDB): the same');

  await server.stop();
  fs.rmSync(path.join(dataDir, 'lookup'), { recursive: true, force: true });
  server = await startTestServer({ dataDir });
  t.same(await answers(), before, 'after the lookups are rebuilt from the log: the same');

  // Lookups written before they kept creation records: no marker and no entries. They are rebuilt once.
  await server.stop();
  const lookup = open({ path: path.join(dataDir, 'lookup'), maxDbs: 8 });
  await lookup.openDB({ name: 'created', encoding: 'ordered-binary' }).clearAsync();
  await lookup.openDB({ name: 'meta', encoding: 'msgpack' }).remove('created_complete');
  await lookup.close();
  server = await startTestServer({ dataDir });
  t.same(await answers(), before, 'after lookups of an older release: rebuilt, the same');
});
