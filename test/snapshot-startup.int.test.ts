// Start-up from snapshots on a real server and a real LMDB log: the newest usable snapshot plus the log
// after it gives the state a full replay gives; damaged or torn snapshots are passed over (with a log
// line saying why) for the next older one; a snapshot ahead of a cut-short log is passed over too; a
// damaged log record that start-up has to read stops it, naming the record; verify agrees on each case.

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import t from 'tap';
import { CorruptRecordError } from '../wal/log-record-codec.js';
import { listSnapshots, snapshotDirectoryIn } from '../snapshots/snapshot-directory.js';
import { stateHash } from '../snapshots/state-hash.js';
import { verifyDataDir } from '../ops/verify.js';
import { flipRecordByte, recordKeys, removeRecordsFrom, truncateRecord } from './helpers/log-surgery.js';
import { snapshotNow, startTestServer, tempDataDir, type TestServer } from './helpers/test-server.js';

interface Captured {
  warnings: Array<{ fields: any; message: string }>;
  logger: { info(): void; warn(fields: object, message: string): void; error(fields: object, message: string): void };
}

function capture(): Captured {
  const warnings: Captured['warnings'] = [];
  return {
    warnings,
    logger: {
      info: () => undefined,
      warn: (fields, message) => warnings.push({ fields, message }),
      error: (fields, message) => warnings.push({ fields, message }),
    },
  };
}

async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

const SCHEDULE = { every_events: 0, every_seconds: 0, keep: 5 };

async function transfers(server: TestServer, count: number, start: number): Promise<void> {
  for (let index = start; index < start + count; index += 1) {
    const response = await server.request('POST', '/transactions', {
      description: 'test', precise_amount: 1000 + index, currency: 'USD', source: '@world', destination: `@user${index % 7}`,
      allow_overdraft: true, skip_queue: true, inflight: index % 5 === 0,
    });
    if (response.status !== 201) throw new Error(`transfer ${index}: ${response.status} ${response.text}`);
  }
}

interface Prepared {
  dataDir: string;
  olderSeq: number;
  newerSeq: number;
  endSeq: number;
  hash: string;
}

/** A data dir with two snapshots and a tail of log records after the newer one. */
async function prepare(t: { teardown(cleanup: () => unknown): void }): Promise<Prepared> {
  const dataDir = tempDataDir('folio-snapstart');
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const server = await startTestServer({ dataDir, snapshots: SCHEDULE });
  await transfers(server, 20, 0);
  const older = await snapshotNow(server);
  await transfers(server, 20, 20);
  const newer = await snapshotNow(server);
  await transfers(server, 10, 40);
  const endSeq = server.runtime.log.appendedSeq;
  const hash = stateHash(server.runtime.engine.state);
  await server.stop();
  return { dataDir, olderSeq: older.seq, newerSeq: newer.seq, endSeq, hash };
}

t.test('start-up = newest snapshot + the log after it, and equals a full replay', async (t) => {
  const prepared = await prepare(t);
  const log = capture();
  const server = await startTestServer({ dataDir: prepared.dataDir, logger: log.logger });
  t.equal(server.runtime.startup.snapshotSeq, prepared.newerSeq);
  t.equal(server.runtime.startup.replayedEvents, prepared.endSeq - prepared.newerSeq);
  t.equal(stateHash(server.runtime.engine.state), prepared.hash);
  const balance = await server.request('GET', '/balances/indicator/@user3/currency/USD');
  t.equal(balance.status, 200);
  await server.stop();
  t.same(log.warnings, []);
  const report = verifyDataDir({ dataDir: prepared.dataDir });
  t.ok(report.ok, JSON.stringify(report.faults));
  t.equal(report.stateHash, prepared.hash);
  t.equal(report.snapshots.filter((check) => check.ok).length, 2);
});

/**
 * Gives the snapshot's header another state hash (checksum made good): the file then restores, without
 * a decoding error, into a state other than the one it records, which is what a misread restore looks like.
 */
function recordOtherStateHash(file: string): void {
  const bytes = fs.readFileSync(file);
  const length = bytes.readUInt32LE(8);
  const header = JSON.parse(bytes.subarray(12, 12 + length).toString('utf8'));
  header.state_hash = createHash('sha256').update('another state').digest('hex');
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  bytes.fill(0, 8, 4096);
  bytes.writeUInt32LE(json.length, 8);
  json.copy(bytes, 12);
  createHash('sha256').update(bytes.subarray(0, 4096)).digest().copy(bytes, 4096);
  fs.writeFileSync(file, bytes);
}

const DAMAGE_NAMES = { flip: 'corrupt', truncate: 'torn', misread: 'misread' } as const;
const DAMAGE_REASONS = { flip: /is corrupt: body checksum mismatch/, truncate: /is torn/, misread: /is corrupt: it restores into a state hashing to [0-9a-f]{64}, not the/ };

for (const damage of ['flip', 'truncate', 'misread'] as const) {
  t.test(`a ${DAMAGE_NAMES[damage]} newest snapshot is skipped for the next older one`, async (t) => {
    const prepared = await prepare(t);
    const newest = listSnapshots(snapshotDirectoryIn(prepared.dataDir))[0]?.file as string;
    if (damage === 'misread') {
      recordOtherStateHash(newest);
    } else if (damage === 'flip') {
      const bytes = fs.readFileSync(newest);
      const at = Math.floor(bytes.length * 0.7);
      bytes[at] = (bytes[at] as number) ^ 1;
      fs.writeFileSync(newest, bytes);
    } else {
      fs.truncateSync(newest, Math.floor(fs.statSync(newest).size / 2));
    }
    const log = capture();
    const server = await startTestServer({ dataDir: prepared.dataDir, logger: log.logger });
    t.equal(server.runtime.startup.snapshotSeq, prepared.olderSeq, 'started from the older snapshot');
    t.equal(server.runtime.startup.skippedSnapshots, 1);
    t.equal(stateHash(server.runtime.engine.state), prepared.hash, 'same state all the same');
    await server.stop();
    t.equal(log.warnings.length, 1);
    t.match(log.warnings[0]?.fields.reason, DAMAGE_REASONS[damage]);
    t.equal(log.warnings[0]?.fields.file, newest);
    const report = verifyDataDir({ dataDir: prepared.dataDir });
    t.notOk(report.ok);
    t.equal(report.faults.length, 1);
    t.equal(report.faults[0]?.kind, 'snapshot');
    t.equal(report.faults[0]?.file, newest);
    t.equal(report.stateHash, prepared.hash);
  });
}

t.test('a snapshot job passes over a newest snapshot that restores into another state', async (t) => {
  const prepared = await prepare(t);
  const newest = listSnapshots(snapshotDirectoryIn(prepared.dataDir))[0]?.file as string;
  const log = capture();
  const server = await startTestServer({ dataDir: prepared.dataDir, snapshots: SCHEDULE, logger: log.logger });
  recordOtherStateHash(newest); // after start-up: the job is the first to restore it
  await transfers(server, 3, 50);
  const written = await snapshotNow(server);
  t.equal(written.seq, server.runtime.log.appendedSeq, 'written at the log end');
  t.equal(written.state_hash, stateHash(server.runtime.engine.state), 'from the older snapshot and the log after it');
  t.same(log.warnings.map((warning) => [warning.fields.file, String(warning.fields.reason).includes('restores into a state hashing to')]), [[newest, true]]);
  await server.stop();
});

for (const damage of ['flip', 'truncate'] as const) {
  t.test(`a ${damage === 'flip' ? 'corrupt' : 'cut-off'} record at the log's tail stops start-up, naming it`, async (t) => {
    const prepared = await prepare(t);
    const keys = await recordKeys(prepared.dataDir);
    const last = keys[keys.length - 1] as number;
    if (damage === 'flip') await flipRecordByte(prepared.dataDir, last, -3);
    else await truncateRecord(prepared.dataDir, last, 20);
    const error = await failureOf(startTestServer({ dataDir: prepared.dataDir }));
    t.ok(error instanceof CorruptRecordError, String(error));
    t.equal((error as CorruptRecordError).recordKey, last);
    t.match((error as Error).message, `log record ${last} is corrupt`);
    const report = verifyDataDir({ dataDir: prepared.dataDir });
    t.notOk(report.ok);
    const logFault = report.faults.find((fault) => fault.kind === 'log');
    t.equal(logFault?.record, last);
    t.equal(report.endSeq, last - 1, 'verify replayed everything before the broken record');
  });
}

t.test('a corrupt record that start-up must replay stops it; verify names the same record', async (t) => {
  const prepared = await prepare(t);
  const keys = await recordKeys(prepared.dataDir);
  const inTail = keys.find((key) => key > prepared.newerSeq + 2) as number;
  await flipRecordByte(prepared.dataDir, inTail, 40);
  await t.rejects(startTestServer({ dataDir: prepared.dataDir }), { name: 'CorruptRecordError', recordKey: inTail });
  const report = verifyDataDir({ dataDir: prepared.dataDir });
  t.equal(report.faults.find((fault) => fault.kind === 'log')?.record, inTail);
});

t.test('a corrupt record behind the newest snapshot is not read at start-up, but verify finds it', async (t) => {
  const prepared = await prepare(t);
  const keys = await recordKeys(prepared.dataDir);
  const behind = keys.find((key) => key > prepared.olderSeq && key < prepared.newerSeq) as number;
  await flipRecordByte(prepared.dataDir, behind, 40);
  const server = await startTestServer({ dataDir: prepared.dataDir });
  t.equal(server.runtime.startup.snapshotSeq, prepared.newerSeq);
  await server.stop();
  const report = verifyDataDir({ dataDir: prepared.dataDir });
  t.notOk(report.ok);
  t.equal(report.faults.find((fault) => fault.kind === 'log')?.record, behind);
});

t.test('a snapshot ahead of a cut-short log is skipped', async (t) => {
  const prepared = await prepare(t);
  const removed = await removeRecordsFrom(prepared.dataDir, prepared.olderSeq + 5);
  t.ok(removed > 0);
  const log = capture();
  const server = await startTestServer({ dataDir: prepared.dataDir, logger: log.logger });
  t.equal(server.runtime.startup.snapshotSeq, prepared.olderSeq);
  t.equal(server.runtime.log.appendedSeq, prepared.olderSeq + 4 + 0, 'the log ends where it was cut (genesis is already there)');
  await server.stop();
  t.match(log.warnings[0]?.fields.reason, /ahead of the log/);
  const report = verifyDataDir({ dataDir: prepared.dataDir });
  t.notOk(report.ok);
  t.match(report.faults[0]?.message, /past the last replayed seq/);
});
