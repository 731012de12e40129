// Point-in-time restore: a snapshot plus the log up to seq N, into a fresh directory, gives a server
// whose balances are exactly those the API showed when the log stood at N, including N inside a
// record written by one group commit (checked against balances folded from the log alone). A
// snapshot later than N, or a target that is not empty, is refused.

import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { foldBalance } from '../engine/balance-fold.js';
import type { LedgerEvent } from '../engine/events.js';
import { LogReader } from '../wal/log-reader.js';
import { restoreDataDir, RestoreError } from '../ops/restore.js';
import type { SnapshotInfo } from '../runtime/snapshot-service.js';
import { snapshotNow, startTestServer, tempDataDir, type TestServer } from './helpers/test-server.js';

const SCHEDULE = { every_events: 0, every_seconds: 0, keep: 5 };

interface Point {
  seq: number;
  balances: Map<string, unknown>;
}

async function balances(server: TestServer): Promise<Map<string, unknown>> {
  const found = new Map<string, unknown>();
  for (let offset = 0; ; offset += 100) {
    const page = await server.request('GET', `/balances?limit=100&offset=${offset}`);
    for (const balance of page.body as any[]) found.set(balance.balance_id, amountsOf(balance));
    if ((page.body as any[]).length < 100) return found;
  }
}

function amountsOf(balance: any): unknown {
  const { balance_id, balance: total, credit_balance, debit_balance, inflight_balance, inflight_credit_balance, inflight_debit_balance, version } = balance;
  return { balance_id, total, credit_balance, debit_balance, inflight_balance, inflight_credit_balance, inflight_debit_balance, version };
}

/** Transfers decided back to back in one turn (as concurrent requests would be), then made durable. */
async function burst(server: TestServer, count: number, transfer: (index: number) => { source: string; destination: string; amount: bigint }): Promise<void> {
  for (let index = 0; index < count; index += 1) {
    const { source, destination, amount } = transfer(index);
    const outcome = server.runtime.engine.run({ op: 'transaction.create', ...{
      source, destination, precise_amount: amount, precision: 1n, currency: 'USD', reference: '', description: '', meta_data: {},
      allow_overdraft: true, skip_queue: true, inflight: false, inflight_expiry_date: 0, inflight_commit_date: 0, scheduled_for: 0, atomic: false,
    } });
    if (!outcome.ok) throw new Error(outcome.rejection.message);
  }
  await server.runtime.durable(server.runtime.log.appendedSeq);
}

async function step(server: TestServer, index: number, points: Point[]): Promise<void> {
  const holdId = (points as any).lastHold as string | undefined;
  let response;
  if (index % 6 === 5 && holdId) {
    response = await server.request('PUT', `/transactions/inflight/${holdId}`, { status: index % 12 === 5 ? 'commit' : 'void', skip_queue: true });
  } else {
    response = await server.request('POST', '/transactions', {
      description: 'test', precise_amount: 100 + index, currency: 'USD', source: index % 3 === 0 ? '@world' : `@r${index % 4}`,
      destination: `@r${(index + 1) % 4}`, allow_overdraft: true, skip_queue: true, inflight: index % 6 === 2,
    });
    if (index % 6 === 2) (points as any).lastHold = response.body.transaction_id;
  }
  if (response.status >= 300) throw new Error(`step ${index}: ${response.status} ${response.text}`);
  points.push({ seq: server.runtime.log.appendedSeq, balances: await balances(server) });
}

t.test('restore to a seq in the middle gives exactly the balances at that point', async (t) => {
  const source = tempDataDir('folio-restore-src');
  t.teardown(() => fs.rmSync(source, { recursive: true, force: true }));
  const server = await startTestServer({ dataDir: source, snapshots: SCHEDULE });
  t.teardown(() => server.stop().catch(() => undefined));
  const points: Point[] = [];
  for (let index = 0; index < 12; index += 1) await step(server, index, points);
  const early: SnapshotInfo = await snapshotNow(server);
  for (let index = 12; index < 30; index += 1) await step(server, index, points);
  // A burst decided in one event-loop turn is sealed into one record by group commit.
  await burst(server, 40, (index) => ({ source: '@world', destination: `@burst${index % 5}`, amount: 7n }));
  const late: SnapshotInfo = await snapshotNow(server);
  for (let index = 30; index < 40; index += 1) await step(server, index, points);
  await server.stop();

  const chosen = [points[12], points[20], points[29], points[35], points[39]] as Point[];
  for (const point of chosen) {
    const snapshot = point.seq >= late.seq ? late : early;
    const target = path.join(tempDataDir('folio-restore-dst'), 'data');
    t.teardown(() => fs.rmSync(path.dirname(target), { recursive: true, force: true }));
    const report = await restoreDataDir({ snapshotFile: snapshot.file, targetDir: target, toSeq: point.seq });
    t.ok(report.verify.ok, `restore to ${point.seq} verifies: ${JSON.stringify(report.verify.faults)}`);
    t.equal(report.verify.endSeq, point.seq);
    const restored = await startTestServer({ dataDir: target });
    t.teardown(() => restored.stop().catch(() => undefined));
    t.equal(restored.runtime.startup.snapshotSeq, snapshot.seq, `restore to ${point.seq} starts from its snapshot`);
    t.equal(restored.runtime.log.appendedSeq, point.seq);
    t.same(await balances(restored), point.balances, `balances at seq ${point.seq}`);
    await restored.stop();
  }
});

t.test('restore to a seq inside a group-commit record cuts that record there', async (t) => {
  const source = tempDataDir('folio-restore-mid');
  t.teardown(() => fs.rmSync(source, { recursive: true, force: true }));
  const server = await startTestServer({ dataDir: source, snapshots: SCHEDULE });
  t.teardown(() => server.stop().catch(() => undefined));
  await server.request('POST', '/transactions', { description: 'test', precise_amount: 1, currency: 'USD', source: '@world', destination: '@m0', allow_overdraft: true, skip_queue: true });
  const snapshot = await snapshotNow(server);
  await burst(server, 60, (index) => ({ source: index % 2 ? '@m0' : '@world', destination: `@m${1 + (index % 6)}`, amount: BigInt(10 + index) }));
  await server.stop();

  const reader = LogReader.open(source);
  const logRecords = [...reader.logRecords()];
  const shared = logRecords.find((logRecord) => logRecord.first_seq > snapshot.seq && logRecord.events.length >= 3);
  t.ok(shared, 'group commit put several events in one record');
  const toSeq = (shared?.first_seq ?? 0) + 1;
  const events: LedgerEvent[] = [...reader.events(1, toSeq)].map((logged) => logged.event);
  const balanceIds = new Set(events.flatMap((event) => (event.balances ?? []).map((balance) => balance.balance_id)));
  await reader.close();

  const target = path.join(tempDataDir('folio-restore-middst'), 'data');
  t.teardown(() => fs.rmSync(path.dirname(target), { recursive: true, force: true }));
  const report = await restoreDataDir({ snapshotFile: snapshot.file, targetDir: target, toSeq });
  t.ok(report.verify.ok, JSON.stringify(report.verify.faults));
  const restored = await startTestServer({ dataDir: target });
  t.teardown(() => restored.stop().catch(() => undefined));
  t.equal(restored.runtime.log.appendedSeq, toSeq);
  for (const balanceId of balanceIds) {
    const folded = foldBalance(balanceId, events);
    const live = restored.runtime.engine.state.balances.get(balanceId);
    t.same(
      live && [live.credit_balance, live.debit_balance, live.inflight_credit_balance, live.inflight_debit_balance, live.version],
      folded && [folded.credit_balance, folded.debit_balance, folded.inflight_credit_balance, folded.inflight_debit_balance, folded.version],
      `balance ${balanceId} at seq ${toSeq}`,
    );
  }
  t.equal(restored.runtime.engine.state.balances.size, balanceIds.size);
  // The restored log takes new writes after the cut record.
  const more = await restored.request('POST', '/transactions', { description: 'test', precise_amount: 5, currency: 'USD', source: '@world', destination: '@m1', allow_overdraft: true, skip_queue: true });
  t.equal(more.status, 201);
  await restored.stop();
});

t.test('restore refuses a snapshot later than the seq, and a target that is not empty', async (t) => {
  const source = tempDataDir('folio-restore-refuse');
  t.teardown(() => fs.rmSync(source, { recursive: true, force: true }));
  const server = await startTestServer({ dataDir: source, snapshots: SCHEDULE });
  t.teardown(() => server.stop().catch(() => undefined));
  for (let index = 0; index < 5; index += 1) {
    await server.request('POST', '/transactions', { description: 'test', precise_amount: 3, currency: 'USD', source: '@world', destination: '@x', allow_overdraft: true, skip_queue: true });
  }
  const snapshot = await snapshotNow(server);
  await server.stop();
  const target = tempDataDir('folio-restore-refuse-dst');
  t.teardown(() => fs.rmSync(target, { recursive: true, force: true }));
  await t.rejects(restoreDataDir({ snapshotFile: snapshot.file, targetDir: path.join(target, 'a'), toSeq: snapshot.seq - 1 }), RestoreError);
  t.notOk(fs.existsSync(path.join(target, 'a')), 'nothing was written');
  fs.writeFileSync(path.join(target, 'stray'), 'x');
  await t.rejects(restoreDataDir({ snapshotFile: snapshot.file, targetDir: target }), /not empty/);
});
