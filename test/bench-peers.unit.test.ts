// The peers bench's plan and figures (bench/peers): the loads issue 39 names are all in a run, each
// measured once (a sweep point a row already has is that row); the sides take turns going first; the
// hot pair is one pair and random pairs reach the whole set (request bodies drawn as they are sent, not
// a few thousand sent in turn); each figure carries the target, the sweep is judged at every
// point, and the CPU growth is judged against its target only over a million balances. Plus the split
// of a server's CPU by kind of thread.

import t from 'tap';
import { serverCpuUsed } from '../bench/load.js';
import {
  cpuFigures, directRatioTarget, peersFigures, rowFigures, sweepFigures, type CpuAtBalances, type RowFigures, type SweepPoint,
} from '../bench/peers/peer-figures.js';
import { requestBody, requestPath } from '../bench/peers/http-peer-load.js';
import {
  BALANCE_COUNTS, HOT_PAIR, loadLabel, pairSource, peerRows, SIDES, sideOrder, SINGLE, SWEEP_CONNECTIONS, sweepLoads, BATCH_1000,
} from '../bench/peers/peer-workloads.js';

t.test('a run measures every load issue 39 names, the sweep\'s points once each', async (t) => {
  const rows = peerRows();
  const labels = rows.map(loadLabel);
  t.same(labels, [
    'single, 1,000 balances, 64 clients', 'batch-10, 1,000 balances, 64 clients', 'batch-1000, 1,000 balances, 8 clients',
    'single, 100,000 balances, 64 clients', 'batch-10, 100,000 balances, 64 clients', 'batch-1000, 100,000 balances, 8 clients',
    'hot pair, 64 clients', 'single, 1,000 balances, 1 client',
  ]);
  const sweep = sweepLoads(rows);
  t.same(sweep.map((load) => load.clients), [4, 16, 256], 'one client and 64 clients are rows already');
  const covered = [...rows, ...sweep].filter((load) => load.workload === SINGLE && load.balances === BALANCE_COUNTS[0]).map((load) => load.clients).sort((a, b) => a - b);
  t.same(covered, [...SWEEP_CONNECTIONS], 'every point of the sweep is measured, none twice');
});

t.test('the sides take turns: over a run each goes first, second and last as often', async (t) => {
  const loads = 9;
  for (let position = 0; position < SIDES.length; position += 1) {
    const counts = new Map<string, number>();
    for (let index = 0; index < loads; index += 1) {
      const side = sideOrder(index)[position]!;
      counts.set(side, (counts.get(side) ?? 0) + 1);
    }
    t.same([...counts.values()], [3, 3, 3], `position ${position + 1}`);
  }
  for (let index = 0; index < 5; index += 1) t.same([...sideOrder(index)].sort(), [...SIDES].sort(), 'every side in every load');
});

t.test('the hot pair is one pair; random pairs are two different balances drawn over the whole set', async (t) => {
  const hot = pairSource(HOT_PAIR, 1_000, 5);
  const first = hot();
  t.ok(Array.from({ length: 100 }, hot).every((pair) => pair.source === first.source && pair.destination === first.destination), 'the same pair every time');
  t.not(first.source, first.destination);

  const balances = 1_000_000;
  const body = { workload: SINGLE, balances, clients: 64 };
  const next = pairSource(SINGLE, balances, 7);
  const touched = new Set<string>();
  let malformed = 0;
  for (let request = 0; request < 10_000; request += 1) {
    const transfer = JSON.parse(requestBody(body, next)) as { source: string; destination: string; precise_amount: number };
    if (transfer.source === transfer.destination || transfer.precise_amount !== 1) malformed += 1;
    touched.add(transfer.source).add(transfer.destination);
  }
  t.equal(malformed, 0, 'each a transfer of 1 between two different balances');
  t.ok(touched.size > 19_000, `10,000 requests over a million balances touch ${touched.size} of them, not a few thousand sent in turn`);
  t.equal(requestPath(body), '/transactions');

  const batch = { workload: BATCH_1000, balances, clients: 8 };
  const bulk = JSON.parse(requestBody(batch, pairSource(BATCH_1000, balances, 7))) as { transactions: unknown[]; atomic: boolean };
  t.equal(bulk.transactions.length, 1_000);
  t.equal(bulk.atomic, true);
  t.equal(requestPath(batch), '/transactions/bulk');
});

function row(workload: RowFigures['workload'], balances: number, clients: number, folio: number, direct: number, koa: number): RowFigures {
  const label = loadLabel({ workload: { ...SINGLE, name: workload, pairs: workload === 'hot-pair' ? 'hot' : 'random' }, balances, clients });
  return {
    label, workload, balances, clients,
    folio_http: { transfersPerSecond: folio, latencyP50Ms: 2, latencyP99Ms: 9 },
    peer_direct: { transfersPerSecond: direct, latencyMs: { p50: 1.5, p90: 3, p99: 7, max: 20, mean: 2 } },
    peer_koa: { transfersPerSecond: koa, latencyP50Ms: 3, latencyP99Ms: 11 },
  };
}

t.test('each ratio against the peer called directly carries issue 39\'s target', async (t) => {
  t.same(directRatioTarget({ workload: 'single', clients: 64 }), { op: '>=', value: 2 });
  t.same(directRatioTarget({ workload: 'batch-1000', clients: 8 }), { op: '>=', value: 5 });
  t.same(directRatioTarget({ workload: 'single', clients: 1 }), { op: '>=', value: 1 });
  t.same(directRatioTarget({ workload: 'hot-pair', clients: 64 }), { op: '>=', value: 10 });
  t.equal(directRatioTarget({ workload: 'batch-10', clients: 64 }), undefined, 'the issue sets none for batches of 10');

  const figures = rowFigures(row('single', 100_000, 64, 5_000, 2_000, 1_000));
  const direct = figures.find((figure) => figure.label === 'Folio HTTP / peer direct (single, 100,000 balances, 64 clients)');
  t.equal(direct?.value, 2.5);
  t.same(direct?.target, { op: '>=', value: 2 });
  const koa = figures.find((figure) => figure.label === 'Folio HTTP / peer behind Koa (single, 100,000 balances, 64 clients)');
  t.equal(koa?.value, 5);
  t.equal(koa?.target, undefined);
  t.match(figures.map((figure) => figure.label), [/^Folio over HTTP transfers/, /^Postgres peer direct transfers/, /^Postgres peer behind Koa transfers/, /./, /./]);
});

t.test('the sweep is judged at every point: Folio over HTTP ahead of the peer behind Koa', async (t) => {
  const point = (connections: number, folio: number, koa: number): SweepPoint => ({
    connections, folio_http: folio, peer_direct: 1, peer_koa: koa, bare_koa: 1, folio_p50_ms: 1, peer_direct_p50_ms: 1, peer_koa_p50_ms: 1,
  });
  const figures = sweepFigures([point(1, 500, 1_000), point(64, 3_000, 2_000)]);
  t.same(figures.map((figure) => [figure.label, figure.value, figure.target]), [
    ['sweep, 1 client: Folio HTTP / peer behind Koa', 0.5, { op: '>=', value: 1 }],
    ['sweep, 64 clients: Folio HTTP / peer behind Koa', 1.5, { op: '>=', value: 1 }],
  ]);
});

t.test('CPU per transfer by size and kind of thread; the growth judged only over a million balances', async (t) => {
  const cpu = (total: number): CpuAtBalances['cpu'] => ({ total, engine: total / 4, http: total / 2, other: total / 4 });
  const full = cpuFigures([{ balances: 1_000, cpu: cpu(200) }, { balances: 100_000, cpu: cpu(300) }, { balances: 1_000_000, cpu: cpu(240) }]);
  t.equal(full.length, 3 * 4 + 1);
  const growth = full[full.length - 1]!;
  t.equal(growth.label, 'server CPU per single transfer, 1,000,000 / 1,000 balances');
  t.equal(growth.value, 1.2);
  t.same(growth.target, { op: '<=', value: 1.25 });
  t.ok(full.some((figure) => figure.label === 'server CPU per single transfer, 100,000 balances: engine thread' && figure.value === 75));

  const quick = cpuFigures([{ balances: 1_000, cpu: cpu(200) }, { balances: 100_000, cpu: cpu(500) }]);
  const quickGrowth = quick[quick.length - 1]!;
  t.equal(quickGrowth.value, 2.5);
  t.equal(quickGrowth.target, undefined, 'no target below a million balances');
  t.match(quickGrowth.note, 'the target is for 1,000,000 balances');
});

t.test('a run\'s figures: the rows, the latencies of both single-transfer rows, the sweep and the CPU', async (t) => {
  const rows = [row('single', 1_000, 64, 4_000, 2_000, 1_500), row('hot-pair', 1_000, 64, 3_000, 300, 250), row('single', 1_000, 1, 300, 600, 400)];
  const figures = peersFigures(rows, [], [{ balances: 1_000, cpu: { total: 1, engine: 1, http: 0, other: 0 } }], 1_000);
  const labels = figures.map((figure) => figure.label);
  t.ok(labels.includes('Folio over HTTP p50 (single, 1,000 balances, 64 clients)'));
  t.ok(labels.includes('Postgres peer behind Koa p99 (single, 1,000 balances, 1 client)'));
  const hot = figures.find((figure) => figure.label === 'Folio HTTP / peer direct (hot pair, 64 clients)');
  t.same([hot?.value, hot?.target], [10, { op: '>=', value: 10 }]);
  t.equal(new Set(labels).size, labels.length, 'no label twice');
});

t.test('a server\'s CPU by kind of thread: the engine\'s, the HTTP workers\', and the rest including threads that ended', async (t) => {
  const before = { total: 1_000, threads: new Map([['MainThread', 400], ['folio-http-0', 100], ['folio-http-1', 100], ['libuv-worker', 50]]) };
  const after = { total: 2_500, threads: new Map([['MainThread', 900], ['folio-http-0', 400], ['folio-http-1', 300], ['libuv-worker', 150]]) };
  t.same(serverCpuUsed(before, after), { total: 1_500, engine: 500, http: 500, other: 500 });
});
