// A short probe of what replication adds to a synchronous write's latency, for working on the commit
// path (not part of `npm run bench`): a single node and the leader of a two-node group (both on the default HTTP workers),
// loaded in turn for a few seconds each at `connections`, `rounds` times, printing each load's rate and
// percentiles. Run it built: `node dist/bench/replication/latency-probe.js [seconds] [rounds] [connections]`.

import { runLoad } from '../load.js';
import { expectJson, startFolio } from '../servers.js';
import { ReplicatedGroup, type GroupNode } from './replicated-group.js';

const TRANSFER = {
  source: '@probe-src', destination: '@probe-dst', precise_amount: 1, precision: 100, currency: 'USD', description: 'probe', skip_queue: true,
};
const FUNDING = {
  description: 'test', source: '@probe-world', destination: '@probe-src', precise_amount: '1000000000000000000', precision: 100,
  currency: 'USD', allow_overdraft: true, skip_queue: true,
};

const seconds = Number(process.argv[2] ?? 4);
const rounds = Number(process.argv[3] ?? 2);
const connections = Number(process.argv[4] ?? 64);

const single = await startFolio('probe-off');
const group = await ReplicatedGroup.start({ nodes: 2, label: 'probe-on' });
try {
  const leader = await group.waitForLeader(60_000);
  await group.waitForStandby(group.nodes.find((node) => node !== leader) as GroupNode, 60_000);
  for (const url of [single.url, leader.url as string]) {
    await expectJson(url, 'POST', '/transactions', 201, FUNDING);
  }
  const body = JSON.stringify(TRANSFER);
  const load = (title: string, url: string, duration: number) => runLoad({ title, url, path: '/transactions', body, connections, seconds: duration });
  await load('off warm-up', single.url, 2);
  await load('on warm-up', leader.url as string, 2);
  for (let round = 1; round <= rounds; round += 1) {
    for (const [title, url] of [['off', single.url], ['on', leader.url as string]] as const) {
      const summary = await load(title, url, seconds);
      console.log(`${title} round ${round}: ${summary.requestsPerSecond.toFixed(0)} req/s p50 ${summary.latencyP50Ms} p90 ${summary.latencyP90Ms} p99 ${summary.latencyP99Ms} max ${summary.latencyMaxMs} ms`);
    }
  }
} finally {
  await single.stop();
  await group.stop();
}
