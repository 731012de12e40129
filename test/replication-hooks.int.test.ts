// Hook delivery across a failover: deliveries are derived from the log, and the leader publishes how far
// it has got in PostgreSQL; the node that takes over resumes there (repeats allowed, never a gap), signing
// with the group's one hook sealing key. Here the receiver refuses everything while the first leader
// leads, the leader is killed, the receiver comes back: every transfer's delivery arrives from the new
// leader, signed with the hook's own secret. A node whose sealing key is not the group's is refused
// (the key is given to every node as configuration, hooks.seal_key / FOLIO_HOOK_SEAL_KEY).

import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { ReplicatedGroup, type GroupNode } from '../bench/replication/replicated-group.js';
import { HookReceiver, signatureValid } from './helpers/hook-receiver.js';
import { call, GroupWriter } from './helpers/replication-client.js';

t.test('hook deliveries the old leader never made are made by the new one, signed with the same key', async (t) => {
  let accepting = false;
  const receiver = new HookReceiver(() => ({ status: accepting ? 200 : 503 }));
  await receiver.start(0);
  t.teardown(() => receiver.stop());
  const group = await ReplicatedGroup.start({ nodes: 2, label: 'repl-hooks', env: { FOLIO_HOOKS_ALLOW_PRIVATE_NETWORKS: 'true' } });
  t.teardown(() => group.stop());
  const [a, b] = group.nodes as [GroupNode, GroupNode];
  await group.waitForStandby(b, 60_000);
  const hook = await call(a.url as string, 'POST', '/hooks', { name: 'post', url: `${receiver.url}/post`, type: 'POST_TRANSACTION', active: true, timeout: 5, retry_count: 10 });
  t.equal(hook.status, 201, 'a hook is registered on the leader');
  const secret = hook.body.signing_secret as string;
  const writer = new GroupWriter(group);
  const sent: string[] = [];
  for (let index = 0; index < 12; index += 1) {
    const ack = await writer.transfer({
      description: 'test', source: '@world', destination: '@hooked', currency: 'USD', precise_amount: BigInt(100 + index), reference: `hook-${index}`, allow_overdraft: true, skip_queue: true,
    });
    sent.push(ack!.transaction_id);
  }
  await receiver.waitFor((received) => received.length >= 1);
  t.ok(receiver.received.length >= 1, 'the old leader tried to deliver (and was refused)');
  await group.kill(a);
  accepting = true;
  t.equal(await group.waitForLeader(60_000, a), b, 'the standby takes over');
  await receiver.waitFor((received) => sent.every((id) => received.some((delivery) => delivery.headers['x-hook-id'] === hook.body.hook_id
    && delivery.body.data.transaction_id === id && accepting)), 60_000);
  const delivered = receiver.received.filter((delivery) => sent.includes(delivery.body.data.transaction_id as string));
  t.ok(sent.every((id) => delivered.some((delivery) => delivery.body.data.transaction_id === id)), `all ${sent.length} transfers were delivered after the failover`);
  t.ok(delivered.every((delivery) => signatureValid(secret, delivery)), 'every delivery is signed with the hook\'s own secret');
});

t.test('a node whose hook sealing key is not its group\'s is refused when it joins', async (t) => {
  const group = await ReplicatedGroup.start({ nodes: 2, label: 'repl-seal', startAll: false });
  t.teardown(() => group.stop());
  const [a, b] = group.nodes as [GroupNode, GroupNode];
  await group.startNode(a);
  await group.waitForLeader(60_000);
  await group.startNode(b, { FOLIO_HOOK_SEAL_KEY: '07'.repeat(32) });
  t.equal(await b.child!.exited, 78, 'a node configured with another key stops');
  t.match(b.stderr, /is not the group's hook sealing key/, 'and says why');
  await group.startNode(b, { FOLIO_HOOK_SEAL_KEY: '' });
  t.equal(await b.child!.exited, 78, 'so does one with none, once its own key file is another');
  fs.rmSync(path.join(b.dataDir, 'secrets'), { recursive: true, force: true });
  await group.startNode(b, { FOLIO_HOOK_SEAL_KEY: '' });
  t.equal(await b.child!.exited, 78, 'and a new one with no key at all');
  t.match(b.stderr, /has no hook sealing key and its group has one/, 'told to set the group\'s');
  await group.startNode(b);
  await group.waitForStandby(b, 60_000);
  t.pass('with the group\'s key it joins');
});
