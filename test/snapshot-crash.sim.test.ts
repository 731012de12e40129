// Crash points around snapshots, with the built server as a child process under write load:
//   - the process kills itself (SIGKILL) at each step of writing a snapshot (mid-body, before fsync,
//     before rename, before the directory fsync) and of pruning old ones;
//   - SIGKILL from outside at seeded random moments while snapshots are written every few dozen events.
// After every crash the server restarts on the same directory and must still hold every acknowledged
// transfer, keep every balance between what was acknowledged and what was attempted, and pass verify
// (chain, row hashes, every snapshot against the replay, zero-sum). Seeds are printed on failure.

import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { snapshotDirectoryIn } from '../snapshots/snapshot-directory.js';
import { verifyDataDir } from '../ops/verify.js';
import { startChildServer, type ChildServer } from './helpers/child-server.js';
import { seededRandom } from './helpers/random-history.js';
import { sendRequest, tempDataDir } from './helpers/test-server.js';

const DESTINATIONS = 6;

/** What clients were told (acknowledged) and what they merely tried, per destination. */
class Ledgerbook {
  readonly acknowledged = new Map<string, bigint>();
  readonly attempted = new Map<string, bigint>();
  readonly ids: string[] = [];
  sent = 0;

  add(map: Map<string, bigint>, destination: string, amount: bigint): void {
    map.set(destination, (map.get(destination) ?? 0n) + amount);
  }
}

/** Sends transfers with a few in flight until the server dies or `limit` were sent. */
async function load(server: ChildServer, book: Ledgerbook, random: () => number, limit: number): Promise<void> {
  let dead = false;
  void server.exited.then(() => (dead = true));
  const worker = async (): Promise<void> => {
    while (!dead && book.sent < limit) {
      book.sent += 1;
      const destination = `@crash${Math.floor(random() * DESTINATIONS)}`;
      const amount = BigInt(1 + Math.floor(random() * 1_000_000)) * (random() < 0.05 ? 10n ** 25n : 1n);
      book.add(book.attempted, destination, amount);
      try {
        const response = await sendRequest(server.url, 'POST', '/transactions', {
          description: 'test', precise_amount: amount, currency: 'USD', source: '@world', destination, allow_overdraft: true, skip_queue: true,
        });
        if (response.status === 201) {
          book.add(book.acknowledged, destination, amount);
          book.ids.push(response.body.transaction_id as string);
        }
      } catch {
        return; // the server is gone: this one is attempted, not acknowledged
      }
    }
  };
  await Promise.all(Array.from({ length: 6 }, worker));
}

/** Restarts on the directory and checks that nothing acknowledged was lost; then stops and verifies. */
async function checkAfterCrash(t: Tap, dataDir: string, book: Ledgerbook, label: string): Promise<void> {
  const server = await startChildServer(dataDir);
  try {
    for (let index = 0; index < DESTINATIONS; index += 1) {
      const destination = `@crash${index}`;
      const acknowledged = book.acknowledged.get(destination) ?? 0n;
      const attempted = book.attempted.get(destination) ?? 0n;
      const response = await sendRequest(server.url, 'GET', `/balances/indicator/${destination}/currency/USD`);
      const balance = response.status === 200 ? BigInt(response.body.balance) : 0n;
      if (balance < acknowledged || balance > attempted) {
        t.fail(`${label}: ${destination} holds ${balance}, acknowledged ${acknowledged}, attempted ${attempted}`);
      }
    }
    const sample = book.ids.filter((_, index) => index % 7 === 0 || index === book.ids.length - 1);
    let missing = 0;
    for (const id of sample) if ((await sendRequest(server.url, 'GET', `/transactions/${id}`)).status !== 200) missing += 1;
    t.equal(missing, 0, `${label}: every acknowledged transaction sampled is there`);
  } finally {
    t.equal(await server.terminate(), 0, `${label}: clean stop after restart`);
  }
  const report = verifyDataDir({ dataDir });
  t.ok(report.ok, `${label}: verify passes ${JSON.stringify(report.faults)}`);
  t.ok(report.totals.every((total) => total.settled === 0n && total.inflight === 0n), `${label}: zero-sum`);
}

interface Tap {
  fail(message: string): unknown;
  ok(value: unknown, message: string): unknown;
  equal(actual: unknown, expected: unknown, message: string): unknown;
}

function snapshotFiles(dataDir: string): { finals: string[]; temps: string[] } {
  const names = fs.existsSync(snapshotDirectoryIn(dataDir)) ? fs.readdirSync(snapshotDirectoryIn(dataDir)) : [];
  return { finals: names.filter((name) => name.endsWith('.fsnap')), temps: names.filter((name) => name.endsWith('.tmp')) };
}

const CRASH_POINTS: Array<{ point: string; after: (files: ReturnType<typeof snapshotFiles>) => string | undefined }> = [
  { point: 'snapshot-chunk#1', after: (files) => (files.temps.length === 1 ? undefined : 'a partial temp file') },
  { point: 'snapshot-chunk#3', after: (files) => (files.temps.length === 1 ? undefined : 'a partial temp file') },
  { point: 'snapshot-before-fsync', after: (files) => (files.temps.length === 1 ? undefined : 'a temp file') },
  { point: 'snapshot-before-rename', after: (files) => (files.temps.length === 1 && files.finals.length === 0 ? undefined : 'a temp file, no snapshot') },
  { point: 'snapshot-before-dir-fsync', after: (files) => (files.finals.length === 1 && files.temps.length === 0 ? undefined : 'the renamed snapshot') },
  { point: 'snapshot-before-rename#3', after: (files) => (files.temps.length === 1 && files.finals.length === 2 ? undefined : 'two snapshots and a temp file') },
];

for (const [index, { point, after }] of CRASH_POINTS.entries()) {
  t.test(`crash at ${point}`, async (t) => {
    const seed = 1000 + index;
    const dataDir = tempDataDir('folio-crashpoint');
    t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const book = new Ledgerbook();
    const server = await startChildServer(dataDir, { FOLIO_CRASH_POINT: point, FOLIO_SNAPSHOT_EVERY_EVENTS: '40', FOLIO_SNAPSHOT_KEEP: '3' });
    await load(server, book, seededRandom(seed), 2_000);
    t.equal(await server.exited, 'SIGKILL', `seed ${seed}: the server died at ${point}`);
    const shape = after(snapshotFiles(dataDir));
    t.equal(shape, undefined, `seed ${seed}: the crash left ${shape ?? 'what it should'} (${JSON.stringify(snapshotFiles(dataDir))})`);
    await checkAfterCrash(t, dataDir, book, `seed ${seed} ${point}`);
  });
}

t.test('crash while pruning many old snapshots', async (t) => {
  const dataDir = tempDataDir('folio-crashprune');
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const book = new Ledgerbook();
  const random = seededRandom(77);
  const first = await startChildServer(dataDir, { FOLIO_SNAPSHOT_EVERY_EVENTS: '0', FOLIO_SNAPSHOT_KEEP: '10' });
  for (let batch = 1; batch <= 6; batch += 1) {
    await load(first, book, random, batch * 20);
    t.equal((await sendRequest(first.url, 'POST', '/admin/snapshots')).status, 201);
  }
  t.equal(await first.terminate(), 0);
  const before = snapshotFiles(dataDir).finals.length;
  t.equal(before, 6, 'six snapshots to prune');
  // The operator lowers keep to 1: the next write prunes all but one, and the process dies mid-way.
  const second = await startChildServer(dataDir, { FOLIO_CRASH_POINT: 'prune-file#2', FOLIO_SNAPSHOT_EVERY_EVENTS: '30', FOLIO_SNAPSHOT_KEEP: '1' });
  await load(second, book, random, 2_000);
  t.equal(await second.exited, 'SIGKILL');
  const left = snapshotFiles(dataDir).finals.length;
  t.equal(left, before + 1 - 2, 'two old snapshots were removed when the process died');
  await checkAfterCrash(t, dataDir, book, 'prune-file#2');
});

t.test('SIGKILL at seeded random moments while snapshots are written', async (t) => {
  const seed = Number(process.env.FOLIO_CRASH_SEED ?? 4242);
  const random = seededRandom(seed);
  const dataDir = tempDataDir('folio-crashrandom');
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const book = new Ledgerbook();
  const rounds = 8;
  for (let round = 0; round < rounds; round += 1) {
    const server = await startChildServer(dataDir, { FOLIO_SNAPSHOT_EVERY_EVENTS: '25', FOLIO_SNAPSHOT_EVERY_SECONDS: '0.2', FOLIO_SNAPSHOT_KEEP: '2' });
    const running = load(server, book, random, Number.MAX_SAFE_INTEGER);
    await new Promise((resolve) => setTimeout(resolve, 100 + Math.floor(random() * 1_500)));
    await server.kill();
    await running;
    const label = `seed ${seed} round ${round}`;
    await checkAfterCrash(t, dataDir, book, label);
  }
  t.ok(snapshotFiles(dataDir).finals.length > 0, `seed ${seed}: snapshots were written along the way`);
  t.ok(path.isAbsolute(dataDir));
});
