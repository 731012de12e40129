// The property-based HTTP fuzzer, seeded, against the real server: a few thousand cases over every route
// (bodies and queries generated from the routes' zod schemas, then mutated, plus raw garbage; see fuzz/).
// Every answer must be a 2xx or a 4xx in the error envelope, never a 5xx, a hang, a dropped connection or
// a stack trace; accepted transactions carry the exact amount their request implied. Afterwards the server
// is healthy, every currency sums to zero, and after a restart every acknowledged write is still there.
//
// The seed is printed; FOLIO_FUZZ_SEED=<seed> replays the run, FOLIO_FUZZ_CASES=<n> changes its length,
// and FOLIO_FUZZ_CASE=<i> sends only case i (after the set-up) to look at one failure. The long run is
// `npm run fuzz` (fuzz/fuzz-run.ts).

import fs from 'node:fs';
import t from 'tap';
import { LedgerRuntime } from '../runtime/ledger-runtime.js';
import { snapshotAdmin } from '../runtime/snapshot-admin.js';
import { ChangeFeed } from '../runtime/change-feed.js';
import { nodeInspector } from '../server/node-inspector.js';
import { createSender } from '../fuzz/fuzz-request.js';
import { FuzzSession } from '../fuzz/fuzz-session.js';
import { setUpLedger } from '../fuzz/ledger-setup.js';
import { indexCatchUpProblem, isHealthy, lostWrites, zeroSumViolations } from '../fuzz/ledger-checks.js';
import { FUZZ_ROUTES, routeKey } from '../fuzz/route-table.js';
import { checkZeroSum } from './helpers/http-fixture.js';
import { startTestServer, tempDataDir } from './helpers/test-server.js';
import { routerApp } from './helpers/router-app.js';

const CASES_DEFAULT = 4_000;
const CONCURRENCY = 4;
/** A request this slow is a hang (the biggest bodies take well under a second here). */
const REQUEST_TIMEOUT_MS = 30_000;
/** SRCH_INDEX_BEHIND during the run is allowed; an index still behind this long after it is not. */
const INDEX_CATCH_UP_MS = 60_000;

/** Stopping a server takes well under a second; past this it is stuck (reported, instead of a test left unfinished). */
const STOP_MS_MAX = 60_000;

async function stopWithin(server: { stop(): Promise<void> }, label: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${label}: the server did not stop within ${STOP_MS_MAX} ms (LedgerRuntime.close never resolved)`)), STOP_MS_MAX);
  });
  try {
    await Promise.race([server.stop(), stuck]);
  } finally {
    clearTimeout(timer);
  }
}

function envNumber(name: string): number | undefined {
  const text = process.env[name];
  return text === undefined || text === '' ? undefined : Number(text);
}

t.test('every route the router registers is in the fuzz table, and every table entry is a route', async (t) => {
  // Every optional part on, so every route is registered.
  const app = await routerApp(t, 'folio-fuzz-routes', (runtime, dataDir) => ({
    snapshots: snapshotAdmin(runtime, dataDir),
    feed: new ChangeFeed(runtime.log), inspector: nodeInspector(() => ({ runtime, status: () => ({ role: 'single', term: 0, applied_seq: runtime.visibleSeq() }) })),
  }));
  const registered = new Set<string>();
  for (const layer of app.router.stack) {
    for (const method of layer.methods) if (method !== 'HEAD') registered.add(`${method} ${String(layer.path)}`);
  }
  const table = new Set(FUZZ_ROUTES.map(routeKey));
  for (const route of registered) t.ok(table.has(route), `${route} is fuzzed (fuzz/route-table.ts)`);
  for (const route of table) t.ok(registered.has(route), `${route} in the fuzz table is a registered route`);
  t.ok(registered.size >= 40, `the router was enumerated (${registered.size} routes)`);
});

t.test('seeded fuzz run: no 5xx, hang, stack trace or inexact amount; ledger whole after a restart', async (t) => {
  const seed = (envNumber('FOLIO_FUZZ_SEED') ?? Math.floor(Math.random() * 2 ** 32)) >>> 0;
  const cases = envNumber('FOLIO_FUZZ_CASES') ?? CASES_DEFAULT;
  const onlyCase = envNumber('FOLIO_FUZZ_CASE');
  t.comment(`fuzz seed ${seed}; replay with FOLIO_FUZZ_SEED=${seed}`);
  const dataDir = tempDataDir('folio-fuzz');
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  const server = await startTestServer({ dataDir });
  const sender = createSender(server.url, { timeoutMs: REQUEST_TIMEOUT_MS, connections: CONCURRENCY });
  const session = new FuzzSession({ seed, routes: FUZZ_ROUTES, concurrency: CONCURRENCY, sender });
  const started = performance.now();
  try {
    await setUpLedger(session);
    if (onlyCase !== undefined) await session.run(onlyCase, onlyCase + 1);
    else await session.run(0, cases);
    const seconds = (performance.now() - started) / 1000;
    t.comment(`${session.casesRun} cases in ${seconds.toFixed(1)} s; ${session.writes.size} acknowledged writes`);
    t.comment(`answers: ${session.statusLines().join(', ')}`);
    if (session.failures.size > 0) t.comment(session.failureReport());
    for (const group of session.failures.values()) {
      t.fail(`${group.signature} (${group.count}x); replay with FOLIO_FUZZ_SEED=${seed} FOLIO_FUZZ_CASE=${group.example.caseIndex}`, { diagnostic: false });
    }
    t.ok(await isHealthy(sender), 'the server is still healthy');
    t.equal(await indexCatchUpProblem(sender, INDEX_CATCH_UP_MS), undefined, 'the query index catches up with the log, no poison event');
    t.same(await zeroSumViolations(sender), [], 'every currency sums to zero (over HTTP)');
    checkZeroSum(t, server, 'in the engine state');
  } finally {
    sender.close();
    await stopWithin(server, 'after the run');
  }

  const restarted = await startTestServer({ dataDir });
  const again = createSender(restarted.url, { timeoutMs: REQUEST_TIMEOUT_MS, connections: CONCURRENCY });
  try {
    t.same(await lostWrites(again, session.writes), [], `all ${session.writes.size} acknowledged writes are there after a restart`);
    t.same(await zeroSumViolations(again), [], 'every currency sums to zero after the restart');
  } finally {
    again.close();
    await stopWithin(restarted, 'after the restart');
  }
  if (!t.passing()) t.comment(`fuzz failed with seed ${seed}; replay with FOLIO_FUZZ_SEED=${seed}`);
});
