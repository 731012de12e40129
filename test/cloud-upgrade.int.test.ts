// Upgrades (../shared/spec/interface.md 4.14) with the cutover that must not lose a write:
//   - under load: writers post transfers through the proxy (queued and synchronous) while a forced
//     upgrade runs; afterwards every acknowledged transfer is on the new deployment by reference, none
//     twice (each balance equals the sum of what was acknowledged for it), each balance equals the fold
//     of its transactions, and `folio verify` passes on the new data directory;
//   - hook deliveries the old core had not made are made by the new one (progress carried over);
//   - a new core that dies after the old one was fenced leaves the old one unfenced and ACTIVE;
//   - the answers: 202 with new_deployment PENDING, 200 skipped, 409 DEPLOYMENT_NOT_ACTIVE, 404 for an
//     instance_id in the path; the old instance_id fails afterwards.

import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import type { CutoverStep } from '../cloud/upgrade.js';
import { coreOf, coreRequest, createDeployment, removeDir, startCloudRig, waitForStatus, waitUntil, type CloudRig } from './helpers/cloud-rig.js';
import { freePort, HookReceiver } from './helpers/hook-receiver.js';
import { SeededRandom } from './helpers/seeded-random.js';

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist/bin/folio.js');

let rig: CloudRig;
const steps: Array<{ step: CutoverStep; detail: { newCorePid?: number; error?: string } }> = [];
/** Set by a test to act at a step of the next cutover. */
let onStep: ((step: CutoverStep, detail: { newCorePid?: number }) => void | Promise<void>) | undefined;

t.before(async () => {
  rig = await startCloudRig({
    // The hook test's receiver is on loopback.
    config: { core_hooks_allow_private_networks: true },
    upgradeHooks: {
      onStep: async (step, detail) => {
        steps.push({ step, detail });
        await onStep?.(step, detail);
      },
    },
  });
});

t.teardown(async () => {
  await rig.stop();
  removeDir(rig.dataDir);
});

function verifyDataDir(dataDir: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, 'verify', '--data', dataDir], { maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, output: `${stdout}${stderr}` });
    });
  });
}

interface Acknowledged {
  reference: string;
  destination: string;
  amount: number;
}

t.test('upgrade under load: every acknowledged write is on the new deployment, once', async (t) => {
  const random = new SeededRandom(Number(process.env.FOLIO_TEST_SEED ?? Date.now() % 1_000_000));
  t.comment(`seed ${random.seed}`);
  const deployment = await createDeployment(rig, 'under-load');
  let instanceId = deployment.instance_id as string;
  const acknowledged: Acknowledged[] = [];
  const retried = { unavailable: 0, notFound: 0, failed: 0 };
  let stop = false;
  let nextInstance: (() => Promise<string | undefined>) | undefined;

  const writer = async (index: number): Promise<void> => {
    for (let n = 0; !stop; n += 1) {
      const destination = `@acct-${random.int(0, 19)}`;
      const body = {
        description: 'test', source: `@world-${index}`, destination, precise_amount: random.int(1, 10_000), currency: 'USD', allow_overdraft: true,
        reference: `w${index}-${n}`, skip_queue: n % 2 === 0,
      };
      for (let attempt = 0; ; attempt += 1) {
        if (attempt > 200) throw new Error(`reference ${body.reference} never went through`);
        let response;
        try {
          response = await rig.operator('POST', `/proxy/transactions?instance_id=${instanceId}`, body);
        } catch {
          retried.failed += 1;
          await new Promise((resolve) => setTimeout(resolve, 20));
          continue;
        }
        if (response.status === 201 || response.status === 200) {
          acknowledged.push({ reference: body.reference, destination, amount: body.precise_amount });
          break;
        }
        if (response.status === 503) retried.unavailable += 1;
        else if (response.status === 404 && response.body?.error_detail?.code === 'INSTANCE_NOT_FOUND') {
          retried.notFound += 1;
          const moved = await nextInstance?.();
          if (moved) instanceId = moved;
        } else throw new Error(`unexpected ${response.status} for ${body.reference}: ${response.text}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  };
  const writers = Array.from({ length: 6 }, (_, index) => writer(index));
  await waitUntil(() => acknowledged.length >= 200, 60_000, 'writes before the upgrade');

  const started = await rig.operator('POST', `/deployments/${deployment.deployment_id}/upgrade`, { force: true });
  t.equal(started.status, 202);
  t.match(started.body, {
    old_deployment_id: deployment.deployment_id, previous_version: deployment.version, new_version: deployment.version, upgrade_status: 'in_progress',
    new_deployment: { status: 'PENDING' },
  });
  t.not(started.body.new_deployment.deployment_id, deployment.deployment_id, 'new ids');
  t.not(started.body.new_deployment.instance_id, deployment.instance_id);
  t.equal((await rig.operator('GET', `/deployments/${deployment.deployment_id}`)).body.status, 'UPGRADING');
  const newId = started.body.new_deployment.deployment_id as string;
  nextInstance = async () => {
    const details = (await rig.operator('GET', `/deployments/${newId}`)).body;
    return details.status === 'ACTIVE' ? details.instance_id : undefined;
  };
  let upgraded = await waitForStatus(rig, newId, 'ACTIVE');
  await waitUntil(async () => {
    upgraded = (await rig.operator('GET', `/deployments/${newId}`)).body;
    return upgraded.cutover !== null; // written just after the switch
  }, 30_000, 'the cutover figures');
  const countAtSwitch = acknowledged.length;
  await waitUntil(() => acknowledged.length >= countAtSwitch + 200, 60_000, 'writes after the upgrade');
  stop = true;
  await Promise.all(writers);
  t.comment(`${acknowledged.length} transfers acknowledged; retried: ${JSON.stringify(retried)}; cutover ${JSON.stringify(upgraded.cutover)}`);

  const old = (await rig.operator('GET', `/deployments/${deployment.deployment_id}`)).body;
  t.equal(old.status, 'RETIRED', 'the old deployment is retired');
  t.equal(old.replaced_by, newId);
  t.ok(upgraded.cutover.write_pause_ms >= 0, 'the cutover reports its write pause');
  const oldInstance = await rig.operator('GET', `/proxy/ledgers?instance_id=${deployment.instance_id}`);
  t.equal(oldInstance.status, 404, 'the old instance_id fails');
  t.equal(oldInstance.body.error_detail.code, 'INSTANCE_NOT_FOUND');
  const again = await rig.operator('POST', `/deployments/${deployment.deployment_id}/upgrade`, { force: true });
  t.equal(again.status, 409, 'a retired deployment cannot be upgraded');
  t.equal(again.body.error_detail.code, 'DEPLOYMENT_NOT_ACTIVE');

  const on = (route: string) => rig.operator('GET', `/proxy${route}${route.includes('?') ? '&' : '?'}instance_id=${upgraded.instance_id}`);
  await waitUntil(async () => {
    const last = acknowledged[acknowledged.length - 1]!;
    return (await on(`/transactions/reference/${last.reference}`)).body?.status === 'APPLIED';
  }, 60_000, 'queued transfers to be applied');
  let missing = 0;
  let wrong = 0;
  for (const write of acknowledged) {
    const found = await on(`/transactions/reference/${write.reference}`);
    if (found.status !== 200) missing += 1;
    else if (Number(found.body.precise_amount) !== write.amount || found.body.status !== 'APPLIED') wrong += 1;
  }
  t.equal(missing, 0, 'every acknowledged transfer is found by reference on the new deployment');
  t.equal(wrong, 0, 'each with its amount, applied');
  const expected = new Map<string, number>();
  for (const write of acknowledged) expected.set(write.destination, (expected.get(write.destination) ?? 0) + write.amount);
  for (const [destination, total] of expected) {
    const balance = (await on(`/balances/indicator/${destination}/currency/USD`)).body;
    t.equal(Number(balance.balance), total, `${destination}: balance = the acknowledged transfers to it (none twice)`);
    const folded = (await on(`/balances/${balance.balance_id}?from_source=true`)).body.balance;
    t.equal(Number(folded.balance), Number(balance.balance), `${destination}: balance = the fold of its transactions`);
  }
  const verified = await verifyDataDir(path.join(rig.dataDir, 'instances', upgraded.instance_id));
  t.equal(verified.code, 0, 'folio verify passes on the new data directory');
  t.match(verified.output, /verify: OK/);
});

t.test('hook deliveries, the proxy\'s API keys and the tokenization secret carry over to the new core', async (t) => {
  const deployment = await createDeployment(rig, 'hooks');
  const port = await freePort();
  const receiver = new HookReceiver();
  const on = (id: string) => `instance_id=${id}`;
  const core = coreOf(rig, deployment);
  // Hooks are the operator's: made on the core with its master key (the proxy does not forward them).
  const hook = await coreRequest(core, 'POST', '/hooks', {
    name: 'after', url: `http://127.0.0.1:${port}/hook`, type: 'POST_TRANSACTION', active: true, timeout: 1, retry_count: 10,
  });
  t.equal(hook.status, 201);
  const made = await rig.operator('POST', `/proxy/transactions?${on(deployment.instance_id)}`, {
    description: 'test', source: '@world', destination: '@hooked', precise_amount: 7, currency: 'USD', allow_overdraft: true, skip_queue: true, reference: 'hooked-1',
  });
  t.equal(made.status, 201, 'a transfer made while the receiver is down');
  const identity = await rig.operator('POST', `/proxy/identities?${on(deployment.instance_id)}`, { identity_type: 'individual', first_name: 'Grace' });
  t.equal((await rig.operator('POST', `/proxy/identities/${identity.body.identity_id}/tokenize/firstName?${on(deployment.instance_id)}`)).status, 200, 'a field tokenized on the old core');
  const liveKeys = async (which: { url: string; masterKey: string }): Promise<string[]> => ((await coreRequest(which, 'GET', '/api-keys')).body as Array<{ api_key_id: string; is_revoked: boolean }>)
    .filter((key) => !key.is_revoked).map((key) => key.api_key_id).sort();
  const keysBefore = await liveKeys(core);
  t.equal(keysBefore.length, 2, 'the proxy\'s two keys on the old core');

  const started = await rig.operator('POST', `/deployments/${deployment.deployment_id}/upgrade`, { force: true });
  const upgraded = await waitForStatus(rig, started.body.new_deployment.deployment_id, 'ACTIVE');
  t.equal((await rig.operator('GET', `/deployments/${deployment.deployment_id}`)).body.status, 'RETIRED');
  await receiver.start(port);
  t.teardown(() => receiver.stop());
  await receiver.waitFor((received) => received.some((delivery) => delivery.body.data?.transaction_id === made.body.transaction_id), 60_000);
  t.pass('the delivery of a transfer made before the upgrade arrived after it, from the new core');
  const newCore = coreOf(rig, upgraded);
  t.equal((await coreRequest(newCore, 'GET', '/hooks')).body.length, 1, 'the hook itself carried over');
  t.same(await liveKeys(newCore), keysBefore, 'the proxy\'s keys carried over in the log: the new core uses them and made none');
  const opened = await rig.operator('GET', `/proxy/identities/${identity.body.identity_id}/detokenize/firstName?${on(upgraded.instance_id)}`);
  t.same(opened.body, { field: 'firstName', value: 'Grace' }, 'the new core opens what the old one tokenized: the secret carried over');
  t.equal((await rig.operator('POST', `/proxy/ledgers?${on(upgraded.instance_id)}`, { name: 'after the upgrade' })).status, 201, 'writes through the proxy reach the new core');
});

t.test('a new core that fails after the fence leaves the old one unfenced and ACTIVE', async (t) => {
  const deployment = await createDeployment(rig, 'fails');
  const write = (reference: string) => rig.operator('POST', `/proxy/transactions?instance_id=${deployment.instance_id}`, {
    description: 'test', source: '@world', destination: '@kept', precise_amount: 5, currency: 'USD', allow_overdraft: true, skip_queue: true, reference,
  });
  t.equal((await write('before')).status, 201);
  let heldWrite: Promise<Awaited<ReturnType<typeof write>>> | undefined;
  onStep = async (step, detail) => {
    if (step !== 'fenced' || !detail.newCorePid) return;
    heldWrite = write('during'); // arrives while the gate is closed: held, then sent to the old core
    process.kill(detail.newCorePid, 'SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 200));
  };
  t.teardown(() => {
    onStep = undefined;
  });
  const started = await rig.operator('POST', `/deployments/${deployment.deployment_id}/upgrade`, { force: true });
  t.equal(started.status, 202);
  const failed = await waitForStatus(rig, started.body.new_deployment.deployment_id, 'FAILED');
  t.match(failed.problem, /upgrade abandoned/);
  t.ok(steps.some((entry) => entry.step === 'abandoned'), 'the cutover was abandoned');
  const old = (await rig.operator('GET', `/deployments/${deployment.deployment_id}`)).body;
  t.equal(old.status, 'ACTIVE', 'the old deployment is ACTIVE again');
  const held = await heldWrite!;
  t.equal(held.status, 201, 'the write held during the failed cutover went to the old core');
  t.equal((await write('after')).status, 201, 'the old core takes writes: it was unfenced');
  const balance = await rig.operator('GET', `/proxy/balances/indicator/@kept/currency/USD?instance_id=${deployment.instance_id}`);
  t.equal(balance.body.balance, 15, 'all three writes are there');
  t.equal((await rig.operator('GET', `/proxy/ledgers?instance_id=${failed.instance_id}`)).status, 404, 'the failed instance is not reachable');
});

t.test('the other answers of the upgrade route', async (t) => {
  const deployment = await createDeployment(rig, 'answers');
  const skipped = await rig.operator('POST', `/deployments/${deployment.deployment_id}/upgrade`);
  t.equal(skipped.status, 200, 'already current and not forced');
  t.match(skipped.body, { upgrade_status: 'skipped', previous_version: deployment.version, new_version: deployment.version, message: /force/ });
  const byInstance = await rig.operator('POST', `/deployments/${deployment.instance_id}/upgrade`, { force: true });
  t.equal(byInstance.status, 404, 'an instance_id in the path');
  t.match(byInstance.body.error_detail.message, /instance_id/);
  t.equal((await rig.operator('POST', '/deployments/dep_nope/upgrade')).status, 404);
  t.equal((await rig.operator('POST', `/deployments/${deployment.deployment_id}/upgrade`, { force: 'yes' })).status, 400);
  const first = await rig.operator('POST', `/deployments/${deployment.deployment_id}/upgrade`, { force: true });
  t.equal(first.status, 202);
  const second = await rig.operator('POST', `/deployments/${deployment.deployment_id}/upgrade`, { force: true });
  t.equal(second.status, 409, 'an upgrade while one runs');
  t.equal(second.body.error_detail.code, 'DEPLOYMENT_NOT_ACTIVE');
  await waitForStatus(rig, first.body.new_deployment.deployment_id, 'ACTIVE');
});
