// Every route's real answers against its documentation: a seeded fuzz session over every route of the
// fuzzer's table (fuzz/route-table.ts; bodies and queries from the routes' schemas, mutated, and raw
// garbage) against the real server with every optional part on and authentication on, each answer
// checked against the OpenAPI document that same server serves (GET /openapi.json) by
// fuzz/documented-answers.ts: a documented status, a body that fits the documented schema, and an
// error code the route lists for that status. The answers every fuzz run checks (no 5xx, hang or stack
// trace) are checked too. Each mismatch is printed once per operation, status, code and problem, with
// its count and the smallest example, the seed and the case that replays it.
//
// Routes are drawn by the table's weights with a floor, so that the rarely drawn ones (the operator
// routes, the docs files) still get a score of cases each. FOLIO_FUZZ_SEED=<seed> replays the run,
// FOLIO_FUZZ_CASES=<n> changes its length, FOLIO_FUZZ_CASE=<i> sends only case i after the set-up.

import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { backupDataDir } from '../ops/backup.js';
import { DocumentedAnswers } from '../fuzz/documented-answers.js';
import { createSender, viaSender } from '../fuzz/fuzz-request.js';
import { FuzzSession } from '../fuzz/fuzz-session.js';
import { setUpLedger } from '../fuzz/ledger-setup.js';
import { FUZZ_ROUTES, routeKey, type FuzzRoute } from '../fuzz/route-table.js';
import { openApiPath } from '../http/openapi/openapi-document.js';
import { startTestServer, tempDataDir } from './helpers/test-server.js';

const CASES_DEFAULT = 2_500;
const CONCURRENCY = 4;
/** A request this slow is a hang (the biggest bodies take well under a second here). */
const REQUEST_TIMEOUT_MS = 30_000;
/** The least weight a route is drawn with: 2,500 cases then give every route about twenty. */
const ROUTE_WEIGHT_MIN = 8;
/** Answers each route must have had, or the run did not cover it. */
const ROUTE_ANSWERS_MIN = 3;
const MASTER_KEY = 'm'.repeat(40);
/** Snapshots taken only when asked (POST /admin/snapshots), so that route answers as it does in service. */
const SNAPSHOTS_ON_REQUEST = { every_events: 0, every_seconds: 0, keep: 2 };
const TOKENIZATION_KEY = Buffer.alloc(32, 7);

function envNumber(name: string): number | undefined {
  const text = process.env[name];
  return text === undefined || text === '' ? undefined : Number(text);
}

const ROUTES: readonly FuzzRoute[] = FUZZ_ROUTES.map((route) => ({ ...route, weight: Math.max(route.weight, ROUTE_WEIGHT_MIN) }));

// Both ways the server runs: HTTP on the engine's thread, and on a worker thread in front of it (the default).
for (const workers of [0, 1]) t.test(`every answer of a seeded fuzz run over every route is one its API reference documents (${workers === 0 ? 'one thread' : 'an HTTP worker'})`, async (t) => {
  const seed = (envNumber('FOLIO_FUZZ_SEED') ?? Math.floor(Math.random() * 2 ** 32)) >>> 0;
  const cases = envNumber('FOLIO_FUZZ_CASES') ?? CASES_DEFAULT;
  const onlyCase = envNumber('FOLIO_FUZZ_CASE');
  t.comment(`route answers seed ${seed}; replay with FOLIO_FUZZ_SEED=${seed}`);
  const dataDir = tempDataDir('folio-route-answers');
  const backupRoot = tempDataDir('folio-route-answers-backups');
  t.teardown(() => {
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(backupRoot, { recursive: true, force: true });
  });

  let backups = 0;
  const server = await startTestServer({ dataDir, snapshots: SNAPSHOTS_ON_REQUEST }, {
    secretKey: MASTER_KEY,
    tokenizationKey: TOKENIZATION_KEY,
    snapshotRoutes: true,
    workers,
    backup: {
      dir: backupRoot,
      run: async () => {
        backups += 1;
        const report = await backupDataDir(dataDir, path.join(backupRoot, `backup_${backups}`));
        return { out_dir: report.outDir, log_end_seq: report.logEndSeq };
      },
    },
  });
  const connection = createSender(server.url, { timeoutMs: REQUEST_TIMEOUT_MS, connections: CONCURRENCY });
  // Every request carries the master key unless the case sends a key of its own (raw header cases do).
  const sender = viaSender(connection, { prefix: '', headers: { 'x-svc-key': MASTER_KEY } });
  try {
    const served = await sender.send({ method: 'GET', path: '/openapi.json', headers: {} });
    if (served.kind !== 'answer' || served.status !== 200) throw new Error(`GET /openapi.json: ${served.kind === 'answer' ? served.status : served.error}`);
    const documented = new DocumentedAnswers(JSON.parse(served.text) as Record<string, unknown>);
    for (const route of ROUTES) {
      const operations = documented.operationsFor(route.method, route.path.replace(/:([A-Za-z_]+)/g, 'x'));
      t.ok(operations.some((operation) => operation.key === `${route.method} ${openApiPath(route.path)}`), `${routeKey(route)} is in the served document`);
    }

    const answersByRoute = new Map<string, number>();
    const session = new FuzzSession({
      seed, routes: ROUTES, concurrency: CONCURRENCY, sender,
      oracles: [
        documented.oracle,
        (sent) => {
          answersByRoute.set(sent.routeKey, (answersByRoute.get(sent.routeKey) ?? 0) + 1);
          return [];
        },
      ],
    });
    const started = performance.now();
    await setUpLedger(session);
    if (onlyCase !== undefined) await session.run(onlyCase, onlyCase + 1);
    else await session.run(0, cases);
    const seconds = (performance.now() - started) / 1000;
    t.comment(`${session.casesRun} cases in ${seconds.toFixed(1)} s`);
    t.comment(`answers: ${session.statusLines().join(', ')}`);
    if (session.failures.size > 0) t.comment(session.failureReport());
    for (const group of session.failures.values()) {
      t.fail(`${group.signature} (${group.count}x); replay with FOLIO_FUZZ_SEED=${seed} FOLIO_FUZZ_CASE=${group.example.caseIndex}`, { diagnostic: false });
    }
    if (onlyCase === undefined && cases >= CASES_DEFAULT) {
      const thin = ROUTES.map(routeKey).filter((key) => (answersByRoute.get(key) ?? 0) < ROUTE_ANSWERS_MIN);
      t.same(thin, [], `every route had at least ${ROUTE_ANSWERS_MIN} answers checked`);
    }
  } finally {
    connection.close();
    await server.stop();
  }
  if (!t.passing()) t.comment(`route answers failed with seed ${seed}; replay with FOLIO_FUZZ_SEED=${seed}`);
});
