// The property-based HTTP fuzzer (fuzz/) against a real control plane and a real core: every core route
// through the proxy (with a proxy:write token, GETs also with a proxy:read token, operator routes
// included, which the proxy must refuse) and the control plane's own routes (users, OAuth clients, the
// sign-in page, the token endpoint, deployments), bodies and queries from schemas, mutated, plus raw
// garbage (odd framing, methods, headers and paths, odd paths through the proxy). Beside the fuzzer's
// own rules (a 2xx or a 4xx in the envelope, never a 5xx, a hang or a stack trace; HTML pages and
// redirects from the sign-in routes), every answer that comes from the core must carry the request id
// its own request sent (an answer meant for another request would mean the proxy's framing let a body
// be read as a request), and nothing sent with the read token may write. Afterwards both servers are
// healthy, every currency sums to zero, every acknowledged write is there, and the core was never fenced.
//
// The seed is printed; FOLIO_FUZZ_SEED=<seed> replays the run, FOLIO_FUZZ_CASES=<n> changes its length,
// FOLIO_FUZZ_CASE=<i> sends only case i (after the set-up).

import t from 'tap';
import { CLOUD_LIMITS } from '../cloud/cloud-config.js';
import { cloudFuzzRoutes, cloudOwnRouteKeys, type CloudFuzzCredentials } from '../fuzz/cloud-route-table.js';
import { createSender, viaSender, type FuzzAnswer, type FuzzRequest, type Sender } from '../fuzz/fuzz-request.js';
import { FuzzSession } from '../fuzz/fuzz-session.js';
import { indexCatchUpProblem, lostWrites, zeroSumViolations } from '../fuzz/ledger-checks.js';
import { setUpLedger } from '../fuzz/ledger-setup.js';
import type { RouteVia } from '../fuzz/route-table.js';
import {
  accessToken, CLOUD_API_KEY, coreOf, coreRequest, createClient, createDeployment, createUser, removeDir, startCloudRig, type CloudRig,
} from './helpers/cloud-rig.js';

const CASES_DEFAULT = 4_000;
const CONCURRENCY = 4;
/**
 * Longer than the proxy's own wait for a core (proxy_timeout_ms, checked every second): a core that does
 * not answer in time is then reported as the proxy's 504 PROXY_TIMEOUT, and no answer at all means the
 * control plane itself held the request.
 */
const REQUEST_TIMEOUT_MS = CLOUD_LIMITS.proxy_timeout_ms + 15_000;
const INDEX_CATCH_UP_MS = 60_000;
const REDIRECT = 'http://127.0.0.1:9/callback';

function envNumber(name: string): number | undefined {
  const text = process.env[name];
  return text === undefined || text === '' ? undefined : Number(text);
}

let rig: CloudRig;

t.before(async () => {
  rig = await startCloudRig();
});

t.teardown(async () => {
  await rig.stop();
  removeDir(rig.dataDir);
});

function headerOf(request: FuzzRequest, name: string): string | undefined {
  const key = Object.keys(request.headers).find((header) => header.toLowerCase() === name);
  return key === undefined ? undefined : request.headers[key];
}

/**
 * A sender that gives each request an id of its own (unless the case sends one) and keeps the answers
 * whose id is another's, and the writes answered 2xx to a read token.
 */
function attributingSender(sender: Sender, readToken: string): Sender & { misattributed: string[]; readTokenWrites: string[] } {
  const misattributed: string[] = [];
  const readTokenWrites: string[] = [];
  let next = 0;
  return {
    misattributed,
    readTokenWrites,
    close: () => sender.close(),
    send: async (request): Promise<FuzzAnswer> => {
      const own = headerOf(request, 'x-request-id') === undefined;
      next += 1;
      const id = `fuzz-${next}`;
      const answer = await sender.send(own ? { ...request, headers: { ...request.headers, 'x-request-id': id } } : request);
      if (answer.kind !== 'answer') return answer;
      const echoed = answer.headers['x-request-id'];
      if (own && echoed !== undefined && echoed !== id) misattributed.push(`${request.method} ${request.path.slice(0, 200)}: sent ${id}, the answer was for ${String(echoed)}`);
      const write = request.method !== 'GET' && request.method !== 'HEAD';
      if (write && request.path.startsWith('/proxy') && headerOf(request, 'authorization') === `Bearer ${readToken}` && headerOf(request, 'x-svc-key') === undefined
        && answer.status >= 200 && answer.status < 300) {
        readTokenWrites.push(`${request.method} ${request.path.slice(0, 200)}: ${answer.status}`);
      }
      return answer;
    },
  };
}

async function credentialsFor(rig: CloudRig): Promise<CloudFuzzCredentials> {
  const user = await createUser(rig, 'fuzz-owner@example.com');
  const deployment = await createDeployment(rig, 'fuzzed', user.user_id);
  const client = await createClient(rig, ['proxy:read', 'proxy:write'], [REDIRECT]);
  const revocable = await createClient(rig, ['proxy:read'], [REDIRECT]);
  return {
    operatorKey: CLOUD_API_KEY, instanceId: deployment.instance_id, deploymentId: deployment.deployment_id,
    readToken: await accessToken(rig, user, ['proxy:read']), writeToken: await accessToken(rig, user, ['proxy:write']),
    client, revocableClientId: revocable.client_id, redirectUri: REDIRECT,
  };
}

t.test('every route of the control plane is in the cloud fuzz table, and every own entry is a route', async (t) => {
  const table = cloudOwnRouteKeys(cloudFuzzRoutes({
    operatorKey: 'k', instanceId: 'ins_x', deploymentId: 'dep_x', readToken: 'r', writeToken: 'w', client: { client_id: 'c', client_secret: 's' },
    revocableClientId: 'c2', redirectUri: REDIRECT,
  }));
  const registered = new Set(rig.cloud.routes);
  for (const route of registered) t.ok(table.has(route), `${route} is fuzzed (fuzz/cloud-route-table.ts)`);
  for (const route of table) t.ok(registered.has(route), `${route} in the cloud fuzz table is a route of the control plane`);
  t.ok(registered.size >= 10, `the router was enumerated (${registered.size} routes)`);
});

t.test('seeded fuzz run through the proxy and the control plane: no 5xx, hang, misattributed answer or write by a read token', async (t) => {
  const seed = (envNumber('FOLIO_FUZZ_SEED') ?? Math.floor(Math.random() * 2 ** 32)) >>> 0;
  const cases = envNumber('FOLIO_FUZZ_CASES') ?? CASES_DEFAULT;
  const onlyCase = envNumber('FOLIO_FUZZ_CASE');
  t.comment(`cloud fuzz seed ${seed}; replay with FOLIO_FUZZ_SEED=${seed}`);
  const credentials = await credentialsFor(rig);
  const routes = cloudFuzzRoutes(credentials);
  const writeVia: RouteVia = { prefix: '/proxy', query: `instance_id=${credentials.instanceId}`, headers: { authorization: `Bearer ${credentials.writeToken}` } };
  const base = createSender(rig.url, { timeoutMs: REQUEST_TIMEOUT_MS, connections: CONCURRENCY });
  const sender = attributingSender(base, credentials.readToken);
  const session = new FuzzSession({ seed, routes, concurrency: CONCURRENCY, sender, oddPathVia: writeVia });
  const started = performance.now();
  try {
    await setUpLedger(session, writeVia);
    if (onlyCase !== undefined) await session.run(onlyCase, onlyCase + 1);
    else await session.run(0, cases);
    t.comment(`${session.casesRun} cases in ${((performance.now() - started) / 1000).toFixed(1)} s; ${session.writes.size} acknowledged writes`);
    t.comment(`answers: ${session.statusLines().join(', ')}`);
    if (session.failures.size > 0) t.comment(session.failureReport());
    for (const group of session.failures.values()) {
      t.fail(`${group.signature} (${group.count}x); replay with FOLIO_FUZZ_SEED=${seed} FOLIO_FUZZ_CASE=${group.example.caseIndex}`, { diagnostic: false });
    }
    t.same(sender.misattributed.slice(0, 20), [], 'every answer from the core is its own request\'s');
    t.same(sender.readTokenWrites.slice(0, 20), [], 'nothing sent with a proxy:read token wrote');
    t.equal((await rig.request('GET', '/health')).status, 200, 'the control plane is healthy');
    const proxied = viaSender(base, writeVia);
    t.equal(await indexCatchUpProblem(proxied, INDEX_CATCH_UP_MS), undefined, 'the core\'s query index catches up');
    t.same(await zeroSumViolations(proxied), [], 'every currency sums to zero (through the proxy)');
    t.same(await lostWrites(proxied, session.writes), [], `all ${session.writes.size} acknowledged writes are there`);
    const core = coreOf(rig, { deployment_id: credentials.deploymentId, instance_id: credentials.instanceId });
    t.equal((await coreRequest(core, 'GET', '/admin/cutover/status')).body.fenced, false, 'the core was never fenced');
    const keys = ((await coreRequest(core, 'GET', '/api-keys')).body as Array<{ is_revoked: boolean }>).filter((key) => !key.is_revoked);
    t.equal(keys.length, 2, 'its only API keys are still the proxy\'s two: none was made or revoked through the proxy');
  } finally {
    base.close();
  }
  if (!t.passing()) t.comment(`cloud fuzz failed with seed ${seed}; replay with FOLIO_FUZZ_SEED=${seed}`);
});
