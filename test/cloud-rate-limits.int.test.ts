// Fair use per deployment, through a real control plane and real cores: a deployment's own rate_limit
// (set when it is created, shown on it) and the control plane's default for the others, enforced by the
// proxy before anything is forwarded: the burst admitted, the rest 429 GEN_RATE_LIMITED with Retry-After
// and the RateLimit-* headers, which forwarded answers carry too; a wait of Retry-After admits again.
// Counts are bounded allowing for the refill (1 request a second) over the burst's measured duration.

import { performance } from 'node:perf_hooks';
import t, { type Test } from 'tap';
import { createDeployment, removeDir, startCloudRig, waitForStatus, type CloudRig } from './helpers/cloud-rig.js';
import type { TestResponse } from './helpers/test-server.js';

let rig: CloudRig;

t.before(async () => {
  rig = await startCloudRig({ config: { deployment_rate_limit_default: { requests_per_second: 1, burst: 3 } } });
});

t.teardown(async () => {
  await rig.stop();
  removeDir(rig.dataDir);
});

async function burst(instanceId: string, count: number): Promise<{ answers: TestResponse[]; seconds: number }> {
  const started = performance.now();
  const answers = await Promise.all(Array.from({ length: count }, () => rig.operator('GET', `/proxy/ledgers?instance_id=${instanceId}`, undefined, { connection: 'close' })));
  return { answers, seconds: (performance.now() - started) / 1000 };
}

function check(t: Test, answers: TestResponse[], limit: number, seconds: number): void {
  const admitted = answers.filter((answer) => answer.status === 200);
  const refused = answers.filter((answer) => answer.status === 429);
  t.equal(admitted.length + refused.length, answers.length, 'every answer is 200 or 429');
  const bound = limit + Math.ceil(seconds) + 1;
  t.ok(admitted.length >= limit && admitted.length <= bound, `${admitted.length} admitted: the burst (${limit}) and the refill at most (${bound}, ${seconds.toFixed(2)} s)`);
  for (const answer of admitted) {
    t.equal(answer.headers['ratelimit-limit'], String(limit), 'a forwarded answer carries the deployment\'s RateLimit-*');
    t.match(answer.headers['ratelimit-remaining'], /^[0-9]+$/);
  }
  for (const answer of refused) {
    t.equal(answer.body.error_detail.code, 'GEN_RATE_LIMITED');
    t.match(answer.headers['retry-after'], /^[1-9][0-9]*$/);
    t.equal(answer.headers['ratelimit-limit'], String(limit));
    t.equal(answer.headers['ratelimit-remaining'], '0');
    t.match(answer.headers['ratelimit-reset'], /^[0-9]+$/);
  }
}

t.test('a deployment\'s own rate, and the default for one created without', async (t) => {
  const refused = await rig.operator('POST', '/deployments', { name: 'too fast', rate_limit: { requests_per_second: 0, burst: 1 } });
  t.equal(refused.status, 400);
  const created = await rig.operator('POST', '/deployments', { name: 'limited', rate_limit: { requests_per_second: 1, burst: 30 } });
  t.equal(created.status, 201, created.text);
  t.same(created.body.rate_limit, { requests_per_second: 1, burst: 30 });
  const own = await waitForStatus(rig, created.body.deployment_id, 'ACTIVE');
  const plain = await createDeployment(rig, 'default');
  t.same(plain.rate_limit, { requests_per_second: 1, burst: 3 }, 'the default shows on a deployment without its own');

  const ownBurst = await burst(own.instance_id, 80);
  check(t, ownBurst.answers, 30, ownBurst.seconds);
  const plainBurst = await burst(plain.instance_id, 20);
  check(t, plainBurst.answers, 3, plainBurst.seconds);

  const wait = Number(plainBurst.answers.find((answer) => answer.status === 429)?.headers['retry-after'] ?? 1);
  await new Promise((resolve) => setTimeout(resolve, wait * 1000 + 200));
  const again = await rig.operator('GET', `/proxy/ledgers?instance_id=${plain.instance_id}`);
  t.equal(again.status, 200, 'admitted again after Retry-After');
});
